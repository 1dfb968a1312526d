"""Replay checkpoints: everything one replay position depends on, copied, so a replay can return to it.

Memory is kept as a page table of 4 KiB pages shared between checkpoints (copy-on-write in effect): a
``PageStore`` (one per replay) remembers memory as its last checkpoint saw it (a shadow copy, backed by the OS only
where pages were touched) and the saved page object of each page. ``PageStore.snapshot() -> Pages`` compares the
live pages (``PhysicalMemory.live_pages``: the only ones that may be non-zero) with the shadow in one numpy pass,
copies only the pages that changed since the previous checkpoint (one (k, PAGE) uint8 block; each page is a
read-only row view of it) and references the saved page objects of every other page. So a capture's checkpoints
cost the pages the GPU, the engines and the CPU wrote between them, not a copy of all used memory each. A draw or
a transfer writes memory through numpy views (the compiled kernels included), so dirtiness is found by comparing,
not by tracking writes: no writer needs to report what it wrote.

``restore_pages(memory, pages)`` zeroes the live pages the checkpoint does not name and writes back those it does.
``Checkpoint`` bundles the pages with the GPU state, the external GPU / LCD registers, the draw count, the
command processor's partially received input and, inside a command list, where the list continues.
``picaemu.replay.Replay.checkpoint()`` / ``restore(cp)`` take and apply them.

Where a replay takes them is its policy (``picaemu.replay``); ``draw_work(stats)`` prices a draw for it from its
counters, in fragment-equivalents, so that the replay can take a checkpoint after each expensive draw rather than
after a fixed number of draws: since checkpoints share pages, one after a wide draw costs the pages that draw wrote.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from picaemu.command.results import PendingInput
from picaemu.memory import PAGE, PhysicalMemory
from picaemu.state import GpuState, frozen_copy

# a vertex shaded costs about six fragments rasterized (bench/RESULTS.md, work model: 248 ns vs 42 ns, compiled)
VERTEX_WORK = 6
# an event's own replay (a memory upload, a fill, a list's packets besides its draws: ~5 us) in fragment-equivalents
EVENT_WORK = 128
# work (fragment-equivalents) between two checkpoints: about 3 400x240 screens of draws or 2048 events without draws,
# ~10 ms of compiled replay (42 ns a fragment), where a checkpoint costs 0.3-0.7 ms (the debugger's session asks
# for an eighth)
CHECKPOINT_WORK = 262144

_ZERO = np.zeros(PAGE, np.uint8)
_ZERO.flags.writeable = False


@dataclass(frozen=True)
class RegionPages:
    """The saved pages of one region: page numbers (n,) int64 ascending and (n,) object, each a read-only
    (PAGE,) uint8 array that later checkpoints share while the page stays unchanged."""

    index: np.ndarray
    pages: np.ndarray
    fresh: int  # bytes this checkpoint copied (pages that changed since the store's previous checkpoint)


Pages = dict[str, RegionPages]  # region name -> its saved pages


def _pages(memory: PhysicalMemory, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(the region as (pages, PAGE) uint8 rows, indices of its live pages); a partial last page is left out."""
    data = memory.region_bytes(name)
    full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
    live = memory.live_pages(name)
    return full, live[live < full.shape[0]]


def _runs(index: np.ndarray) -> list[tuple[int, int, int]]:
    """(first position in ``index``, first page, end page) of each run of consecutive page numbers."""
    starts = np.flatnonzero(np.diff(index) != 1) + 1
    bounds = np.concatenate(([0], starts, [index.size])).tolist()
    return [(a, int(index[a]), int(index[b - 1]) + 1) for a, b in itertools.pairwise(bounds) if b > a]


WORK_COUNTERS = ("fragments_rasterized", "vertices_shaded")  # what ``draw_work`` weighs


def draw_work(stats: dict[str, int | float]) -> int:
    """A draw's replay work in fragment-equivalents, from its counters (``DrawCall.stats``): fragments rasterized
    plus ``VERTEX_WORK`` per vertex shaded (0 for a counter a pipeline did not fill)."""
    return work_of(*(int(stats.get(name, 0)) for name in WORK_COUNTERS))


def work_of(fragments: int, vertices: int) -> int:
    """``draw_work`` of ``fragments`` rasterized and ``vertices`` shaded (one draw's, or several draws' sums)."""
    return fragments + VERTEX_WORK * vertices


class PageStore:
    """One replay's page table: the shadow of memory at the last checkpoint and each page's saved object (see the
    module docstring). Invariant: ``table[name][i]`` holds the bytes of ``shadow[name][i]``."""

    def __init__(self, memory: PhysicalMemory) -> None:
        self.memory = memory
        self._live: dict[str, np.ndarray] = {}  # the live page numbers the last snapshot named (shared while equal)
        self._shadow: dict[str, np.ndarray] = {}
        self._table: dict[str, np.ndarray] = {}
        for region in memory.regions:
            count = region.size // PAGE
            self._shadow[region.name] = np.zeros((count, PAGE), np.uint8)  # untouched pages cost no RSS
            table = np.empty(count, object)
            table.fill(_ZERO)
            self._table[region.name] = table

    def _changed(self, name: str, full: np.ndarray, live: np.ndarray) -> np.ndarray:
        """(len(live),) bool: which live pages differ from the shadow (compared a run of pages at a time, as u64)."""
        shadow = self._shadow[name]
        changed = np.zeros(live.size, bool)
        for at, first, end in _runs(live):
            now, then = full[first:end].view(np.uint64), shadow[first:end].view(np.uint64)
            changed[at : at + end - first] = (now != then).any(axis=1)
        return changed

    def snapshot(self) -> Pages:
        """The live pages of every region: the changed ones copied, the rest shared with earlier checkpoints."""
        out: Pages = {}
        for region in self.memory.regions:
            full, live = _pages(self.memory, region.name)
            table = self._table[region.name]
            dirty = live[self._changed(region.name, full, live)]
            if dirty.size:
                block = full[dirty]
                block.flags.writeable = False
                self._shadow[region.name][dirty] = block
                for i, row in zip(dirty.tolist(), block, strict=True):
                    table[i] = row
            live = frozen_copy(live, self._live.get(region.name))
            self._live[region.name] = live
            out[region.name] = RegionPages(live, table[live], int(dirty.size) * PAGE)
        return out


def restore_pages(memory: PhysicalMemory, pages: Pages) -> None:
    """Memory as the checkpoint saw it (every page it does not name is zero)."""
    for region in memory.regions:
        full, live = _pages(memory, region.name)
        saved = pages[region.name]
        full[np.setdiff1d(live, saved.index, assume_unique=True)] = 0
        for i, page in zip(saved.index.tolist(), saved.pages, strict=True):
            full[i] = page
        memory.mark_live(region.name, saved.index)  # a checkpoint of another replay (an edit's fork) names new pages


def distinct_page_bytes(checkpoints: list[Checkpoint]) -> int:
    """Bytes of the distinct saved pages ``checkpoints`` hold together (pages they share count once)."""
    seen = {id(p) for cp in checkpoints for saved in cp.pages.values() for p in saved.pages}
    seen.discard(id(_ZERO))
    return len(seen) * PAGE


@dataclass(frozen=True)
class Checkpoint:
    """A replay position, copied: ``position`` events applied plus the first ``packets`` packets of command-list
    event ``position`` (0 = none). Arrays are private copies or shared read-only pages; ``Replay.restore`` copies
    them again."""

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
        """Bytes of memory the checkpoint stands for (pages shared with other checkpoints included; the GPU state
        adds ~70 KiB)."""
        return sum(int(saved.index.size) * PAGE for saved in self.pages.values())

    @property
    def fresh_bytes(self) -> int:
        """Bytes of pages this checkpoint copied: those that changed since the previous checkpoint was taken."""
        return sum(saved.fresh for saved in self.pages.values())
