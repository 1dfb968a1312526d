"""Decoded texture levels kept between draws: the fused fragment path's texel cache, one per emulated memory.

A draw of a few dozen fragments taps fewer texels than its texture's levels hold, so on its own it decodes just
the 4x4 blocks its taps fall in (``tapped_level``: ``filtering.tapped_blocks``, ``fetch.decode_blocks``) into the
cache's ``scratch`` and filters them there, as the filters read any decoded level; the thousand such draws of a
game frame sampling one atlas decode its texels many times over. The cache keeps a level once decoded, for every
later draw that samples it, in whatever compiled call (the command processor's draw loop or the pipeline's fused
fragment side).

The one rule of when a level is decoded (``level_at``), rent or buy: the draws that left it in memory paid
for the blocks they decoded (``tapped_level`` books each draw's blocks, 16 texels each, on the level's row), and a
draw decodes the whole level once what they paid since it was last decoded or changed, plus what this draw would
decode of it left in memory (``texels_left``: at most the 4 blocks around each tap, the blocks of the box its
coordinates span with a texel of margin, the level), reaches the level's texels. So a draw alone that would decode
about as much as the level decodes it at once, and a run of small draws decodes it once their blocks add up to it,
having spent at most about what decoding costs (the rent-or-buy rule: never more than about twice the better choice
made in hindsight). A block decode and a level decode cost the same work a texel (``fetch``), whatever the format.
A texture unit asks once per level (and cube face) it taps, with that level's taps. A minified draw taps up to four
blocks per fragment: booking a texel per tap, as this rule once did, let a frame of 300 draws minifying 128 x 128
textures decode most of a level in blocks at every draw (97 us a draw; bench/RESULTS.md).

Exact by construction: a decoded level is used only while the level's bytes in memory equal the copy taken
when it was decoded (compared at each lookup: ~0.2 us for 8 KiB, tens of us for the 256 KiB of a 256 x 256
RGBA8 level), so anything that wrote them since — a draw rendering into the texture, a CPU upload, a memory fill,
a display transfer, a checkpoint restore — makes the next lookup decode the level again; nothing has to tell the
cache.
With one exception, which only shortens the comparing: while the command processor's compiled loop runs
(``trusted``: ``picaemu.fused.driver``), its draws are the only writers of memory, and each tells the cache which
bytes it may have written (``wrote``: its depth and color buffers, ``features.wrote``). A level compared (or
decoded) during that loop call is not compared again in it unless a draw's buffers overlapped it since the call
began: the 300 draws of a frame sampling one large texture compare it once, not 300 times.

Layout (``new``): a tuple of five arrays, held by every fragment plan drawing into the memory (``for_memory``):
``entries`` (ENTRIES, ENTRY_INTS) int64, a row per level: the key (memory region code, the level's
``picaemu.texture.fetch`` layout tuple, its height), the texels its tapped blocks cost since it was last decoded
or changed, where its decoded texels start in ``pool`` (-1: not decoded) and its bytes in ``raw``, its size in
bytes, and the trusted call in which its bytes were last found equal; ``top`` (TOP_INTS,) int64: entries in use,
texels and raw bytes allocated, the number of the last trusted call and whether it runs, and per region code the
range of bytes written during it (``T_WRITTEN``); ``pool`` (POOL_TEXELS, 4) uint8 decoded texels (memory-row order,
as ``fetch.decode_level``); ``raw`` (RAW_BYTES,) uint8 the decoded levels' bytes; ``scratch`` (SCRATCH_TEXELS,
4) uint8, the blocks a draw taps of a level not decoded (``tapped_level``; its pages are touched only as blocks are
decoded into them). Space in the pool is handed out in order and taken back all at once: a level that does not fit
empties the cache first.
A level larger than the whole pool (over 512 x 1024 texels) is never kept: its tapped blocks are decoded at each
draw (a draw taps at most a few texels per pixel of a 400 x 240 target: rarely more than such a level holds).
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Iterator

import numpy as np

from picaemu import numba_link
from picaemu.texture.fetch import (
    LAYOUT_INTS,
    LAYOUT_START,
    LAYOUT_WIDTH_LOG2,
    decode_blocks,
    decode_level,
)
from picaemu.texture.filtering import EXACT, TAPPED_BLOCKS, tapped_blocks
from picaemu.texture.formats import MAX_SIZE

ENTRIES, POOL_TEXELS, RAW_BYTES = 256, 1 << 19, 1 << 21  # 2 MiB of decoded texels, 2 MiB of raw bytes
SCRATCH_TEXELS = MAX_SIZE * MAX_SIZE  # the largest level
K_REGION, K_LAYOUT = 0, 1  # key columns: the region code, then the layout tuple
K_HEIGHT = K_LAYOUT + LAYOUT_INTS
KEY_INTS = K_HEIGHT + 1
E_SPENT, E_TEXELS, E_RAW, E_BYTES, E_CHECKED = range(KEY_INTS, KEY_INTS + 5)
ENTRY_INTS = E_CHECKED + 1
REGIONS = 2  # region codes the callers key levels by: 0 .. REGIONS - 1 (``picaemu.fused.features.IN_VRAM`` ...)
T_ENTRIES, T_TEXELS, T_RAW, T_CALL, T_TRUSTED = range(5)  # ``top`` slots
T_WRITTEN = 5  # + 2 * region code: the first and the end offset written during the trusted call (equal: none)
TOP_INTS = T_WRITTEN + 2 * REGIONS
NOT_DECODED = -1  # ``level_at``: not decoded and no row to book the tapped blocks on; below it: ``-2 - row``
BLOCK_TEXELS = 16  # a 4x4 block, what a tap decodes at most when its level is left in memory


Cache = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def new() -> Cache:
    """An empty cache (module docstring); the pools' pages are touched only as levels are decoded into them."""
    return (
        np.zeros((ENTRIES, ENTRY_INTS), np.int64),
        np.zeros(TOP_INTS, np.int64),
        np.empty((POOL_TEXELS, 4), np.uint8),
        np.empty(RAW_BYTES, np.uint8),
        np.empty((SCRATCH_TEXELS, 4), np.uint8),
    )


_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def for_memory(memory: object) -> Cache:
    """The cache of levels read from ``memory`` (a ``PhysicalMemory``), made on first use, gone with it."""
    cache = _CACHES.get(memory)
    if cache is None:
        cache = _CACHES[memory] = new()
    return cache


@contextlib.contextmanager
def trusted(memory: object) -> Iterator[None]:
    """While the block runs, the draws of one compiled call are the only writers of ``memory`` and report the bytes
    they may write (``wrote``): a level found equal in it is not compared again until a draw's bytes overlap it
    (module docstring). Nothing else may write the memory meanwhile."""
    top = for_memory(memory)[1]
    top[T_CALL] += 1
    top[T_WRITTEN:] = 0
    top[T_TRUSTED] = 1
    try:
        yield
    finally:
        top[T_TRUSTED] = 0


@numba_link.kernel(inline="always")  # small: no library of its own
def wrote(cache, region: int, start: int, end: int) -> None:  # pragma: no cover - compiled
    """A draw may have written bytes [start, end) of the region of code ``region`` (others: no level lives there)."""
    if not 0 <= region < REGIONS or end <= start:
        return
    top, at = cache[1], T_WRITTEN + 2 * region
    if top[at] == top[at + 1]:
        top[at], top[at + 1] = start, end
    else:
        top[at], top[at + 1] = min(top[at], start), max(top[at + 1], end)


@numba_link.kernel(inline="always")  # small: no library of its own
def _unwritten(top, row, region: int, start: int, size: int) -> bool:  # pragma: no cover - compiled
    """Whether ``row``'s level, found equal earlier in the running trusted call, is still: no draw of the call wrote
    its bytes [start, start + size) of region ``region``."""
    if not top[T_TRUSTED] or row[E_CHECKED] != top[T_CALL] or not 0 <= region < REGIONS:
        return False
    at = T_WRITTEN + 2 * region
    return top[at] == top[at + 1] or start + size <= top[at] or top[at + 1] <= start


@numba_link.kernel()
def _find(entries, count: int, region: int, layout, height: int) -> int:  # pragma: no cover - compiled
    """The row of ``entries[:count]`` whose key is (region, layout, height), or -1."""
    for e in range(count):
        row = entries[e]
        if row[K_REGION] != region or row[K_HEIGHT] != height or row[K_LAYOUT] != layout[LAYOUT_START]:
            continue
        same = True
        for k in range(1, LAYOUT_INTS):
            same &= row[K_LAYOUT + k] == layout[k]
        if same:
            return e
    return -1


@numba_link.kernel()
def _same_bytes(raw, at: int, data, start: int, size: int) -> bool:  # pragma: no cover - compiled
    """``raw[at:at + size] == data[start:start + size]``, 8 bytes a step (as uint64 views: LLVM does not always
    merge byte loads into words once this is inlined) and no early exit."""
    whole = size & ~7
    mine, theirs = raw[at : at + whole].view(np.uint64), data[start : start + whole].view(np.uint64)
    diff = np.uint64(0)
    for i in range(whole >> 3):
        diff |= mine[i] ^ theirs[i]
    for i in range(whole, size):  # a level under 8 bytes (a hostile level count)
        diff |= np.uint64(raw[at + i] ^ data[start + i])
    return diff == 0


@numba_link.kernel()
def _keep(entries, top, e: int, region: int, layout, height: int) -> int:  # pragma: no cover - compiled
    """Row ``e``, or a new row keyed (region, layout, height) when ``e`` < 0 (-1 when every row is in use)."""
    if e >= 0:
        return e
    e = top[T_ENTRIES]
    if e == entries.shape[0]:
        return -1
    top[T_ENTRIES] += 1
    row = entries[e]
    row[K_REGION], row[K_HEIGHT] = region, height
    for k in range(LAYOUT_INTS):
        row[K_LAYOUT + k] = layout[k]
    row[E_SPENT], row[E_TEXELS] = 0, NOT_DECODED
    return e


@numba_link.kernel()
def coordinate_box(st) -> tuple[float, float, float, float]:  # pragma: no cover - compiled
    """(lowest s, highest s, lowest t, highest t) of the coordinates ``st`` (F, 2), float64; a NaN one makes the box
    infinite."""
    lo_s, hi_s, lo_t, hi_t = np.inf, -np.inf, np.inf, -np.inf
    for i in range(st.shape[0]):
        s, t = np.float64(st[i, 0]), np.float64(st[i, 1])
        if s != s or t != t:
            return -np.inf, np.inf, -np.inf, np.inf
        lo_s, hi_s, lo_t, hi_t = min(lo_s, s), max(hi_s, s), min(lo_t, t), max(hi_t, t)
    return lo_s, hi_s, lo_t, hi_t


@numba_link.kernel(inline="always")  # small: no library of its own
def _blocks_across(lo: float, hi: float, n: int) -> int:  # pragma: no cover - compiled
    """The 4-texel blocks of an axis of ``n`` texels that coordinates from ``lo`` to ``hi`` reach with a texel of
    margin either side (the taps of k - 1 .. k + 1: ``filtering.tapped_blocks``), at most all of them."""
    a, b = lo * n, hi * n
    if not (abs(a) < EXACT and abs(b) < EXACT):
        return n >> 2
    return min(((math.floor(b) + 1) >> 2) - ((math.floor(a) - 1) >> 2) + 1, n >> 2)


@numba_link.kernel()
def texels_left(box, width: int, height: int, taps: int) -> int:  # pragma: no cover - compiled
    """The most texels a draw of ``taps`` taps at coordinates spanning ``box`` (``coordinate_box``) would decode of
    a ``width`` x ``height`` level left in memory (``tapped_level``): the 4 blocks around each tap, the blocks the
    box reaches, the level, whichever is fewest."""
    box_blocks = _blocks_across(box[0], box[1], width) * _blocks_across(box[2], box[3], height)
    return min(taps * 4 * BLOCK_TEXELS, box_blocks * BLOCK_TEXELS, width * height)


@numba_link.kernel()
def level_at(cache, region: int, data, layout, height: int, size: int, want: int) -> int:  # pragma: no cover
    """Where in ``pool`` (``cache[2]``) the level of ``data`` (memory region ``region``'s bytes) at the ``fetch``
    layout ``layout``, ``height`` rows, ``size`` bytes, of which a draw would decode ``want`` texels left in memory
    (``texels_left``), starts decoded (module docstring: the rule), or a negative answer: decode its tapped blocks
    (``tapped_level``, given the answer: it books them on the level's row ``-2 - answer``; ``NOT_DECODED``: no row
    free)."""
    entries, top, pool, raw, _ = cache
    texels = (1 << layout[LAYOUT_WIDTH_LOG2]) * height
    start = layout[LAYOUT_START]
    e = _find(entries, top[T_ENTRIES], region, layout, height)
    spent = 0
    if e >= 0:
        row = entries[e]
        if row[E_TEXELS] != NOT_DECODED:
            if _unwritten(top, row, region, start, size) or _same_bytes(raw, row[E_RAW], data, start, size):
                row[E_CHECKED] = top[T_CALL]
                return row[E_TEXELS]
            row[E_TEXELS], row[E_SPENT] = NOT_DECODED, 0  # written since: decoded again on demand
        spent = row[E_SPENT]
    worth = spent + want >= texels
    if not worth or texels > pool.shape[0] or size > raw.shape[0]:  # not yet worth it, or never kept
        return -2 - _keep(entries, top, e, region, layout, height)  # _keep's -1 (no row free): NOT_DECODED
    no_row = e < 0 and top[T_ENTRIES] == entries.shape[0]
    if no_row or top[T_TEXELS] + texels > pool.shape[0] or top[T_RAW] + size > raw.shape[0]:
        top[T_ENTRIES] = top[T_TEXELS] = top[T_RAW] = 0  # full: start over
        e = -1
    e = _keep(entries, top, e, region, layout, height)
    row = entries[e]
    row[E_TEXELS], row[E_RAW], row[E_BYTES], row[E_SPENT] = top[T_TEXELS], top[T_RAW], size, 0
    row[E_CHECKED] = top[T_CALL]
    top[T_TEXELS] += texels
    top[T_RAW] += size
    for i in range(size):
        raw[row[E_RAW] + i] = data[start + i]
    decode_level(data, layout, pool[row[E_TEXELS] : row[E_TEXELS] + texels])
    return row[E_TEXELS]


@numba_link.kernel()
def tapped_level(cache, at: int, data, layout, height: int, st, wrap_s: int, wrap_t: int) -> None:  # pragma: no cover
    """The blocks of the level of ``data`` at the ``fetch`` layout ``layout``, ``height`` rows, that the filters
    tap at the coordinates ``st`` (F, 2) with these wrap modes (``filtering.tapped_blocks``; every block when any
    may be) decoded into ``scratch`` (``cache[4]``) from texel 0: the texels of a level ``level_at`` left in memory,
    its answer ``at`` naming the row the blocks' texels are booked on. Its other texels are stale."""
    width = 1 << layout[LAYOUT_WIDTH_LOG2]
    texels = cache[4][: width * height]
    count = texels.shape[0] >> 4  # 4x4 blocks
    blocks = numba_link.empty(min(count, st.shape[0] * TAPPED_BLOCKS), np.int64)
    tapped = tapped_blocks(st, width, height, wrap_s, wrap_t, numba_link.zeros(count, np.uint8), blocks)
    if tapped < 0:
        blocks, tapped = numba_link.indices(count), count
    decode_blocks(data, layout, blocks, tapped, texels)
    if at < NOT_DECODED:
        cache[0][-2 - at, E_SPENT] += tapped * BLOCK_TEXELS
