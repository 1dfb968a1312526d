"""The event stream of the ``.pica`` capture format (version 1): typed events and their byte layouts.

Each event is a frozen dataclass; on disk it is ``u8 type`` (``EventType``) + a body (``BODIES``, construct
structs, little-endian). ``event_fields`` / ``event_from`` convert between the two. Semantics: docs/pica-format.md.
Part of ``picaemu.formats.pica`` (which re-exports every name here); bytes <-> typed objects only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Any

import construct as cs

from picaemu.errors import FormatError


class EventType(IntEnum):
    MEMORY_WRITE = 1
    REG_WRITE = 2
    COMMAND_LIST = 3
    MEMORY_FILL = 4
    DISPLAY_TRANSFER = 5
    TEXTURE_COPY = 6
    PRESENT = 7
    FRAME_END = 8
    MARKER = 9
    REQUEST_DMA = 10  # minor version 1
    FLUSH_CACHE_REGIONS = 11  # minor version 1


@dataclass(frozen=True)
class MemoryWrite:
    """CPU bytes (blob ``blob``) copied to physical ``address``."""

    address: int
    blob: int


@dataclass(frozen=True)
class RegWrite:
    """A write of ``width`` bytes (1, 2, 4, 8) to the memory-mapped register at physical ``address``."""

    address: int
    value: int
    width: int = 4


@dataclass(frozen=True)
class CommandList:
    """GX ProcessCommandList: ``size`` bytes of command buffer at physical ``address``."""

    address: int
    size: int
    flags: int = 0


@dataclass(frozen=True)
class FillUnit:
    """One memory-fill unit as its registers hold it: physical start/end (end exclusive), value, control."""

    start: int
    end: int
    value: int
    control: int


@dataclass(frozen=True)
class MemoryFill:
    """GX MemoryFill: both units (a unit whose control bit 0 is clear does nothing)."""

    units: tuple[FillUnit, FillUnit]


@dataclass(frozen=True)
class DisplayTransfer:
    """GX DisplayTransfer: physical addresses, dims as (w | h << 16) register words, transfer flags."""

    src: int
    dst: int
    in_dim: int
    out_dim: int
    flags: int


@dataclass(frozen=True)
class TextureCopy:
    """GX TextureCopy: raw copy of ``size`` bytes; lines as (width | gap << 16) in 16-byte units."""

    src: int
    dst: int
    size: int
    in_line: int
    out_line: int
    flags: int


@dataclass(frozen=True)
class RequestDma:
    """GX RequestDma: ``size`` bytes copied from physical ``src`` to ``dst`` by the CPU-side DMA engine (no GPU
    register is involved; usually linear heap -> VRAM). ``flush``: non-zero when the application flushed the
    source from the CPU data cache first (kept for the record; a replay has no cache)."""

    src: int
    dst: int
    size: int
    flush: int = 0


CACHE_REGIONS = 3  # FlushCacheRegions carries three (address, size) pairs


@dataclass(frozen=True)
class FlushCacheRegions:
    """GX FlushCacheRegions: three (physical address, bytes) ranges flushed from the CPU data cache (a pair of
    size 0 is unused). No GPU work: a replay does nothing; kept so a capture lists every GX command."""

    regions: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Present:
    """A screen (0 top, 1 bottom) scans out: left/right-eye framebuffers, FB_FORMAT word, stride, select."""

    screen: int
    left: int
    right: int
    format: int
    stride: int
    select: int


@dataclass(frozen=True)
class FrameEnd:
    """A VBlank: what the screens show now is one frame."""


@dataclass(frozen=True)
class Marker:
    """A free-form user marker (ATTILA's annotations)."""

    text: str


Event = (
    MemoryWrite
    | RegWrite
    | CommandList
    | MemoryFill
    | DisplayTransfer
    | TextureCopy
    | Present
    | FrameEnd
    | Marker
    | RequestDma
    | FlushCacheRegions
)

_U32 = cs.Int32ul
_FILL_UNIT = cs.Struct("start" / _U32, "end" / _U32, "value" / _U32, "control" / _U32)
BODIES: dict[EventType, tuple[type, cs.Construct]] = {
    EventType.MEMORY_WRITE: (MemoryWrite, cs.Struct("address" / _U32, "blob" / _U32)),
    EventType.REG_WRITE: (RegWrite, cs.Struct("address" / _U32, "width" / cs.Int8ul, "value" / cs.Int64ul)),
    EventType.COMMAND_LIST: (CommandList, cs.Struct("address" / _U32, "size" / _U32, "flags" / _U32)),
    EventType.MEMORY_FILL: (MemoryFill, cs.Struct("units" / cs.Array(2, _FILL_UNIT))),
    EventType.DISPLAY_TRANSFER: (
        DisplayTransfer,
        cs.Struct("src" / _U32, "dst" / _U32, "in_dim" / _U32, "out_dim" / _U32, "flags" / _U32),
    ),
    EventType.TEXTURE_COPY: (
        TextureCopy,
        cs.Struct("src" / _U32, "dst" / _U32, "size" / _U32, "in_line" / _U32, "out_line" / _U32, "flags" / _U32),
    ),
    EventType.PRESENT: (
        Present,
        cs.Struct(
            "screen" / cs.Int8ul, "left" / _U32, "right" / _U32, "format" / _U32, "stride" / _U32, "select" / cs.Int8ul
        ),
    ),
    EventType.FRAME_END: (FrameEnd, cs.Struct()),
    EventType.MARKER: (Marker, cs.Struct("text" / cs.PascalString(cs.Int16ul, "utf8"))),
    EventType.REQUEST_DMA: (
        RequestDma,
        cs.Struct("src" / _U32, "dst" / _U32, "size" / _U32, "flush" / cs.Int8ul),
    ),
    EventType.FLUSH_CACHE_REGIONS: (
        FlushCacheRegions,
        cs.Struct("regions" / cs.Array(CACHE_REGIONS, cs.Struct("address" / _U32, "size" / _U32))),
    ),
}
TYPE_OF = {cls: kind for kind, (cls, _) in BODIES.items()}


@functools.cache
def compiled_body(kind: EventType) -> tuple[cs.Construct, int] | None:
    """A fixed-size body's construct compiled to Python (construct's ``compile()``: the same grammar, parsed ~3x
    faster) and its size in bytes; None for a variable-size body (a Marker's text). The compiled parser is only for
    a whole body: on fewer bytes it fails with ``struct.error``, so a short tail goes through ``BODIES`` for its
    named ``StreamError``."""
    con = BODIES[kind][1]
    try:
        size = con.sizeof()
    except cs.SizeofError:
        return None
    return con.compile(), size


REG_WIDTHS = (1, 2, 4, 8)


def event_fields(event: Event) -> dict[str, Any]:
    values = {f.name: getattr(event, f.name) for f in fields(event)}
    if isinstance(event, MemoryFill):
        values["units"] = [vars(u) for u in event.units]
    if isinstance(event, FlushCacheRegions):  # a count other than CACHE_REGIONS fails in the builder
        values["regions"] = [{"address": a, "size": n} for a, n in event.regions]
    return values


def event_from(kind: EventType, body: cs.Container, offset: int) -> Event:
    cls, _ = BODIES[kind]
    values = {k: v for k, v in body.items() if not k.startswith("_")}
    if cls is MemoryFill:
        values["units"] = tuple(FillUnit(u.start, u.end, u.value, u.control) for u in values["units"])
    if cls is FlushCacheRegions:
        values["regions"] = tuple((r.address, r.size) for r in values["regions"])
    if cls is RegWrite and values["width"] not in REG_WIDTHS:
        raise FormatError(f"register write of width {values['width']}", offset=offset)
    return cls(**values)
