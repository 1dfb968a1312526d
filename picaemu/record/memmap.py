"""The 3DS application address map as the GPU sees it: virtual address ranges of an application and the physical
addresses behind them (data only, plus the lookup).

Sources: 3dbrew "Memory layout". An application reaches GPU-visible memory through:

- the linear heap at 0x14000000 (applications built for system versions before 8.0) and at 0x30000000 (8.0 and
  later; 256 MiB on the New 3DS), both mapped linearly onto FCRAM at physical 0x20000000;
- VRAM at 0x1F000000 (6 MiB), physical 0x18000000;
- DSP RAM at 0x1FF00000 (512 KiB), physical 0x1FF00000.

Anything else (the ELF's own sections, the stack, the ordinary heap) is not linear memory: the GPU cannot read
it through a physical address, and libctru refuses to hand it to GX commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.errors import RecordError


@dataclass(frozen=True)
class Mapping:
    """``size`` bytes of virtual memory at ``virtual`` that the GPU sees at ``physical``."""

    name: str
    virtual: int
    physical: int
    size: int


MAPPINGS = (
    Mapping("linear heap (system 8.0+)", 0x30000000, 0x20000000, 0x10000000),
    Mapping("linear heap (before 8.0)", 0x14000000, 0x20000000, 0x08000000),
    Mapping("VRAM", 0x1F000000, 0x18000000, 0x00600000),
    Mapping("DSP RAM", 0x1FF00000, 0x1FF00000, 0x00080000),
)


def to_physical(virtual: int, size: int = 1, what: str = "address") -> int:
    """The physical address of ``[virtual, virtual + size)``; ``RecordError`` when no mapping holds it all."""
    for m in MAPPINGS:
        if m.virtual <= virtual and virtual + size <= m.virtual + m.size:
            return m.physical + virtual - m.virtual
    raise RecordError(f"{what} 0x{virtual:08X} (+{size} bytes) is not in the linear heap, VRAM or DSP RAM")


def to_virtual(physical: int, size: int = 1, *, linear_base: int = MAPPINGS[0].virtual) -> int:
    """A virtual address of physical ``[physical, physical + size)``; FCRAM through the linear heap at
    ``linear_base`` (the one the program uses)."""
    for m in MAPPINGS:
        if (
            m.physical <= physical
            and physical + size <= m.physical + m.size
            and (m.physical != MAPPINGS[0].physical or m.virtual == linear_base)
        ):
            return m.virtual + physical - m.physical
    raise RecordError(f"physical 0x{physical:08X} (+{size} bytes) is not FCRAM, VRAM or DSP RAM")


def linear_base_of(virtual: int) -> int | None:
    """The virtual base of the linear heap holding ``virtual`` (None outside both linear heaps)."""
    for m in MAPPINGS:
        if m.physical == MAPPINGS[0].physical and m.virtual <= virtual < m.virtual + m.size:
            return m.virtual
    return None
