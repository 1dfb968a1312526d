"""Replay checkpoints: everything one replay position depends on, copied, so a replay can return to it.

``snapshot_pages(memory) -> Pages`` copies the non-zero 4 KiB pages of every memory region (region name ->
(page indices (n,) int64, (n, PAGE) uint8)); ``restore_pages(memory, pages)`` zeroes every other page and writes
them back. ``Checkpoint`` bundles the pages with the GPU state, the external GPU / LCD registers, the draw count,
the command processor's partially received input and, inside a command list, where the list continues.
``picaemu.replay.Replay.checkpoint()`` / ``restore(cp)`` take and apply them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.command.processor import PendingInput
from picaemu.memory import PhysicalMemory
from picaemu.state import GpuState

PAGE = 4096
Pages = dict[str, tuple[np.ndarray, np.ndarray]]  # region -> (indices of non-zero 4 KiB pages, (n, PAGE) uint8)


def snapshot_pages(memory: PhysicalMemory) -> Pages:
    """Copies of the non-zero 4 KiB pages of every memory region."""
    out = {}
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
        used = np.flatnonzero(full.any(axis=1))
        out[region.name] = (used, full[used].copy())
    return out


def restore_pages(memory: PhysicalMemory, pages: Pages) -> None:
    """Memory as ``snapshot_pages`` saw it (every other page zero)."""
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
        full[np.flatnonzero(full.any(axis=1))] = 0
        used, saved = pages[region.name]
        full[used] = saved


@dataclass(frozen=True)
class Checkpoint:
    """A replay position, copied: ``position`` events applied plus the first ``packets`` packets of command-list
    event ``position`` (0 = none). Arrays are private copies; ``Replay.restore`` copies them again."""

    position: int
    packets: int
    state: GpuState
    pages: Pages
    gpu: np.ndarray  # external GPU registers (uint32)
    lcd: np.ndarray  # LCD registers (uint32)
    draw_count: int
    pending: PendingInput  # data-port words and immediate vertices received but not consumed
    resume: tuple[int, int] | None = None  # (address, bytes left) where the half-run list continues

    @property
    def at(self) -> tuple[int, int]:
        return self.position, self.packets

    @property
    def nbytes(self) -> int:
        """Bytes of memory pages the checkpoint holds (the GPU state adds ~70 KiB)."""
        return sum(int(saved.nbytes) for _, saved in self.pages.values())
