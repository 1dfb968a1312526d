"""Decoded texture levels kept between draws: the fused fragment path's texel cache, one per emulated memory.

A draw of a few dozen fragments taps fewer texels than its texture's levels hold, so on its own it decodes just
the 4x4 blocks its taps fall in (``tapped_level``: ``filtering.tapped_blocks``, ``fetch.decode_blocks``) into the
cache's ``scratch`` and filters them there, as the filters read any decoded level; the thousand such draws of a
game frame sampling one atlas decode its texels many times over. The cache keeps a level once decoded, for every
later draw that samples it, in whatever compiled call (the command processor's draw loop or the pipeline's fused
fragment side).

The one rule of when a level is decoded (``level_at``): when the taps asked of it — this draw's, plus those of
earlier draws since it was last decoded or changed — cost more served from memory than decoding the level would
(``TAP_COST``, weighed when each tap read its texel from memory: a tap costs about as much as decoding one texel
of a packed format, about three of an ETC format; served from the tapped blocks, a tap decodes at most a block,
whose 16 texels neighbouring taps share): a draw alone that taps that much decodes the level at
once; a run of small draws decodes it once their taps add up to that, having spent at most what decoding costs
(the rent-or-buy rule: never more than twice the better choice made in hindsight). A texture unit asks once per
level (and cube face) it taps, with that level's taps.

Exact by construction: a decoded level is used only while the level's bytes in memory equal the copy taken
when it was decoded (compared at each lookup: ~0.2 us for 8 KiB), so anything that wrote them since — a draw
rendering into the texture, a CPU upload, a memory fill, a display transfer, a checkpoint restore — makes the
next lookup decode the level again; nothing has to tell the cache.

Layout (``new``): a tuple of five arrays, held by every fragment plan drawing into the memory (``for_memory``):
``entries`` (ENTRIES, ENTRY_INTS) int64, a row per level: the key (memory region code, the level's
``picaemu.texture.fetch`` layout tuple, its height), the taps asked since it was last decoded, where its decoded
texels start in ``pool`` (-1: not decoded) and its bytes in ``raw``, and its size in bytes; ``top`` (3,) int64:
entries in use, texels and raw bytes allocated; ``pool`` (POOL_TEXELS, 4) uint8 decoded texels (memory-row order,
as ``fetch.decode_level``); ``raw`` (RAW_BYTES,) uint8 the decoded levels' bytes; ``scratch`` (SCRATCH_TEXELS,
4) uint8, the blocks a draw taps of a level not decoded (``tapped_level``; its pages are touched only as blocks are
decoded into them). Space in the pool is handed out in order and taken back all at once: a level that does not fit
empties the cache first.
A level larger than the whole pool (over 512 x 1024 texels) is never kept: its tapped blocks are decoded at each
draw (a draw taps at most a few texels per pixel of a 400 x 240 target: rarely more than such a level holds).
"""

from __future__ import annotations

import weakref

import numpy as np

from picaemu import numba_link
from picaemu.texture.fetch import (
    KIND_ETC1,
    KIND_ETC1A4,
    KIND_PACKED,
    LAYOUT_INTS,
    LAYOUT_KIND,
    LAYOUT_START,
    LAYOUT_WIDTH_LOG2,
    decode_blocks,
    decode_level,
)
from picaemu.texture.filtering import TAPPED_BLOCKS, tapped_blocks
from picaemu.texture.formats import MAX_SIZE

ENTRIES, POOL_TEXELS, RAW_BYTES = 256, 1 << 19, 1 << 21  # 2 MiB of decoded texels, 2 MiB of raw bytes
SCRATCH_TEXELS = MAX_SIZE * MAX_SIZE  # the largest level
K_REGION, K_LAYOUT = 0, 1  # key columns: the region code, then the layout tuple
K_HEIGHT = K_LAYOUT + LAYOUT_INTS
KEY_INTS = K_HEIGHT + 1
E_TAPS, E_TEXELS, E_RAW, E_BYTES = range(KEY_INTS, KEY_INTS + 4)
ENTRY_INTS = E_BYTES + 1
T_ENTRIES, T_TEXELS, T_RAW = range(3)  # ``top`` slots
NOT_DECODED = -1
# a tap's cost in texels of ``decode_level``, weighed when taps read memory one by one (a tap served from the tapped
# blocks costs no more: its block's other texels serve its neighbours); not weighed again for the blocks
TAP_COST_OF = {KIND_PACKED: 1, KIND_ETC1: 3, KIND_ETC1A4: 3}
TAP_COST = np.array([TAP_COST_OF[kind] for kind in sorted(TAP_COST_OF)], np.int64)  # by ``fetch`` layout kind


Cache = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def new() -> Cache:
    """An empty cache (module docstring); the pools' pages are touched only as levels are decoded into them."""
    return (
        np.zeros((ENTRIES, ENTRY_INTS), np.int64),
        np.zeros(3, np.int64),
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
    row[E_TAPS], row[E_TEXELS] = 0, NOT_DECODED
    return e


@numba_link.kernel()
def level_at(cache, region: int, data, layout, height: int, size: int, taps: int) -> int:  # pragma: no cover
    """Where in ``pool`` (``cache[2]``) the level of ``data`` (memory region ``region``'s bytes) at the ``fetch``
    layout ``layout``, ``height`` rows, ``size`` bytes, that a draw taps ``taps`` times, starts decoded (module
    docstring: the rule), or ``NOT_DECODED``: decode its tapped blocks (``tapped_level``)."""
    entries, top, pool, raw, _ = cache
    texels = (1 << layout[LAYOUT_WIDTH_LOG2]) * height
    start = layout[LAYOUT_START]
    e = _find(entries, top[T_ENTRIES], region, layout, height)
    if e >= 0:
        row = entries[e]
        if row[E_TEXELS] != NOT_DECODED:
            if _same_bytes(raw, row[E_RAW], data, start, size):
                return row[E_TEXELS]
            row[E_TEXELS], row[E_TAPS] = NOT_DECODED, 0  # written since: decoded again on demand
        taps += row[E_TAPS]
    worth = taps * TAP_COST[layout[LAYOUT_KIND]] > texels
    if not worth or texels > pool.shape[0] or size > raw.shape[0]:  # not yet worth it, or never kept
        e = _keep(entries, top, e, region, layout, height)
        if e >= 0:
            entries[e, E_TAPS] = taps
        return NOT_DECODED
    no_row = e < 0 and top[T_ENTRIES] == entries.shape[0]
    if no_row or top[T_TEXELS] + texels > pool.shape[0] or top[T_RAW] + size > raw.shape[0]:
        top[T_ENTRIES] = top[T_TEXELS] = top[T_RAW] = 0  # full: start over
        e = -1
    e = _keep(entries, top, e, region, layout, height)
    row = entries[e]
    row[E_TEXELS], row[E_RAW], row[E_BYTES], row[E_TAPS] = top[T_TEXELS], top[T_RAW], size, 0
    top[T_TEXELS] += texels
    top[T_RAW] += size
    for i in range(size):
        raw[row[E_RAW] + i] = data[start + i]
    decode_level(data, layout, pool[row[E_TEXELS] : row[E_TEXELS] + texels])
    return row[E_TEXELS]


@numba_link.kernel()
def tapped_level(cache, data, layout, height: int, st, wrap_s: int, wrap_t: int) -> None:  # pragma: no cover
    """The blocks of the level of ``data`` at the ``fetch`` layout ``layout``, ``height`` rows, that the filters
    tap at the coordinates ``st`` (F, 2) with these wrap modes (``filtering.tapped_blocks``; every block when any
    may be) decoded into ``scratch`` (``cache[4]``) from texel 0: the texels of a level ``level_at`` left in memory.
    Its other texels are stale."""
    width = 1 << layout[LAYOUT_WIDTH_LOG2]
    texels = cache[4][: width * height]
    count = texels.shape[0] >> 4  # 4x4 blocks
    blocks = numba_link.empty(min(count, st.shape[0] * TAPPED_BLOCKS), np.int64)
    tapped = tapped_blocks(st, width, height, wrap_s, wrap_t, numba_link.zeros(count, np.uint8), blocks)
    if tapped < 0:
        blocks, tapped = numba_link.indices(count), count
    decode_blocks(data, layout, blocks, tapped, texels)
