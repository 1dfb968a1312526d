"""Emulated physical memory of the 3DS as the GPU sees it.

Owns the byte arrays of every region the GPU can address and the one rule for reaching them: an access must lie
wholly inside one region, or it raises ``MemoryFault`` naming the address, the size and who asked. Reads return
numpy views (no copies), so stages gather vertices and texels straight from memory.

Regions (physical addresses): VRAM 0x18000000 (6 MiB), FCRAM 0x20000000 (128 MiB Old-3DS; 256 MiB New-3DS),
DSP RAM 0x1FF00000 (512 KiB), New-3DS QTM RAM 0x1F000000 (4 MiB). Arrays come from ``np.zeros``, which the OS
backs with pages only when they are first touched, so an untouched FCRAM costs no resident memory. Every access
marks the 4 KiB pages it reaches as live (``live_pages``), so that checkpoints copy and compare those pages only
instead of scanning 134 MiB of regions.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from picaemu.errors import MemoryFault


@dataclass(frozen=True)
class RegionSpec:
    """A mapped physical range."""

    name: str
    base: int
    size: int


VRAM = RegionSpec("vram", 0x18000000, 6 * 1024 * 1024)
FCRAM = RegionSpec("fcram", 0x20000000, 128 * 1024 * 1024)
FCRAM_NEW3DS = RegionSpec("fcram", 0x20000000, 256 * 1024 * 1024)
DSP_RAM = RegionSpec("dsp", 0x1FF00000, 512 * 1024)
QTM_RAM = RegionSpec("qtm", 0x1F000000, 4 * 1024 * 1024)
DEFAULT_REGIONS = (VRAM, FCRAM, DSP_RAM, QTM_RAM)
PAGE = 4096  # bytes: the unit in which accesses are remembered (``live_pages``) and checkpoints copy memory


class PhysicalMemory:
    """The GPU-visible physical address space: named regions of zero-initialised bytes."""

    def __init__(self, regions: tuple[RegionSpec, ...] = DEFAULT_REGIONS) -> None:
        self.regions = tuple(sorted(regions, key=lambda r: r.base))
        self._data: dict[str, np.ndarray] = {r.name: np.zeros(r.size, dtype=np.uint8) for r in self.regions}
        self._buffers = {name: data.data for name, data in self._data.items()}  # ``write``'s (the arrays stay)
        # pages any access has reached (a superset of the non-zero pages): checkpoints look at these only
        self._live: dict[str, np.ndarray] = {r.name: np.zeros(-(-r.size // PAGE), bool) for r in self.regions}

    def find(self, address: int, size: int, who: str = "access") -> tuple[RegionSpec, int]:
        """The region holding ``[address, address + size)`` and the offset in it; ``MemoryFault`` if none."""
        if size < 0:
            raise MemoryFault(address, size, who)
        for region in self.regions:
            off = address - region.base
            if off >= 0 and off + size <= region.size:
                return region, off
        raise MemoryFault(address, size, who)

    def contains(self, address: int, size: int = 1) -> bool:
        try:
            self.find(address, size)
        except MemoryFault:
            return False
        return True

    def region_bytes(self, name: str) -> np.ndarray:
        """The whole byte array of one region (a live view)."""
        return self._data[name]

    def bytes(self, address: int, size: int, who: str = "access") -> np.ndarray:
        """A live uint8 view of ``size`` bytes at ``address`` (its pages count as live from now on)."""
        name, off = self._reach(address, size, who)
        return self._data[name][off : off + size]

    def _reach(self, address: int, size: int, who: str) -> tuple[str, int]:
        """(region name, offset) of ``[address, address + size)``, its pages marked live (``find``'s faults)."""
        region, off = self.find(address, size, who)
        first, end = off // PAGE, -(-(off + size) // PAGE)
        if end - first == 1:  # most accesses: an item assignment costs a seventh of a slice's (~0.1 us)
            self._live[region.name][first] = True
        else:
            self._live[region.name][first:end] = True
        return region.name, off

    def mark_live(self, name: str, pages: np.ndarray) -> None:
        """Count pages ``pages`` (indices) of region ``name`` as live: a restore wrote them behind every view."""
        self._live[name][pages] = True

    def live_pages(self, name: str) -> np.ndarray:
        """(n,) int64 indices of the 4 KiB pages of region ``name`` that any access has reached: every other page
        still holds the zeros it started with."""
        return np.flatnonzero(self._live[name])

    def view(self, address: int, count: int, dtype: np.dtype | type, who: str = "access") -> np.ndarray:
        """A live little-endian view of ``count`` items of ``dtype`` at ``address`` (any alignment)."""
        dt = np.dtype(dtype).newbyteorder("<")
        raw = self.bytes(address, count * dt.itemsize, who)
        return raw.view(dt) if address % dt.alignment == 0 else raw.copy().view(dt)

    def read(self, address: int, size: int, who: str = "read") -> builtins.bytes:  # ``bytes`` names the method
        """A copy of ``size`` bytes at ``address``."""
        return self.bytes(address, size, who).tobytes()

    def write(
        self, address: int, data: builtins.bytes | bytearray | memoryview | np.ndarray, who: str = "write"
    ) -> None:
        """Copy ``data`` into memory at ``address`` (bytes-like data buffer to buffer: a capture's uploads are
        hundreds of small writes, and a numpy array made of each cost half of the write)."""
        if isinstance(data, np.ndarray):
            src = data.view(np.uint8).ravel()
            self.bytes(address, src.size, who)[:] = src
            return
        raw = data if type(data) is builtins.bytes else memoryview(data).cast("B")  # a capture's blobs are bytes
        size = len(raw)
        name, off = self._reach(address, size, who)
        self._buffers[name][off : off + size] = raw

    def u32(self, address: int, who: str = "read") -> int:
        return int(self.view(address, 1, np.uint32, who)[0])

    def fill(self, address: int, size: int, byte: int = 0, who: str = "fill") -> None:
        self.bytes(address, size, who)[:] = byte

    def snapshot(self) -> dict[str, np.ndarray]:
        """A copy of every region (for checkpoints); ``restore`` puts it back."""
        return {name: arr.copy() for name, arr in self._data.items()}

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        for name, arr in snap.items():
            self._data[name][:] = arr
