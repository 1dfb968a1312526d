"""Replay checkpoints: everything one replay position depends on, copied, so a replay can return to it.

``snapshot_pages(memory) -> Pages`` copies the non-zero 4 KiB pages of every memory region (region name ->
(page indices (n,) int64, (n, PAGE) uint8)); ``restore_pages(memory, pages)`` zeroes every other page and writes
them back. Both look only at the pages some access has reached (``PhysicalMemory.live_pages``): the rest are
zero, so a checkpoint costs in proportion to the memory a capture uses, not to the size of FCRAM. ``Checkpoint``
bundles the pages with the GPU state, the external GPU / LCD registers, the draw count,
the command processor's partially received input and, inside a command list, where the list continues.
``picaemu.replay.Replay.checkpoint()`` / ``restore(cp)`` take and apply them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.command.processor import PendingInput
from picaemu.memory import PAGE, PhysicalMemory
from picaemu.state import GpuState

Pages = dict[str, tuple[np.ndarray, np.ndarray]]  # region -> (indices of non-zero 4 KiB pages, (n, PAGE) uint8)


def _pages(memory: PhysicalMemory, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(the region as (pages, PAGE) uint8 rows, indices of its live pages); a partial last page is left out."""
    data = memory.region_bytes(name)
    full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
    live = memory.live_pages(name)
    return full, live[live < full.shape[0]]


def snapshot_pages(memory: PhysicalMemory) -> Pages:
    """Copies of the non-zero 4 KiB pages of every memory region."""
    out = {}
    for region in memory.regions:
        full, live = _pages(memory, region.name)
        rows = full[live]
        used = rows.view(np.uint64).any(axis=1)
        out[region.name] = (live[used], rows[used])
    return out


def restore_pages(memory: PhysicalMemory, pages: Pages) -> None:
    """Memory as ``snapshot_pages`` saw it (every other page zero)."""
    for region in memory.regions:
        full, live = _pages(memory, region.name)
        full[live] = 0
        used, saved = pages[region.name]
        full[used] = saved
        memory.mark_live(region.name, used)  # a checkpoint of another replay (an edit's fork) names new pages


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
