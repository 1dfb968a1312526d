"""Compiled vertex loading of the fused vertex side (``picaemu.fused.vertices``, ``picaemu.fused.geometry``): a draw's
index stream, its distinct vertices and their attributes, read straight from the memory regions.

Loading follows ``picaemu.geometry.vertex_loader``'s rules (no second layout rule: the read table comes from
``VertexLoaderState.reads``, which walked the loaders' slots and padding, ``read_table``; no second element rule:
the element sizes and signs are ``vertex_loader.ELEMENT_FORMATS``'s tables): draw-arrays loads vertices
``first .. first + count - 1``; draw-elements reads u8/u16 indices (``_stream``) and loads (and shades) each distinct
index once, in increasing order, with ``inverse`` giving each submitted vertex's row (``_unique``); elements
convert to float without normalisation, missing components come from ``DEFAULT_COMPONENTS``, fixed attributes from
the state's store (``_load``). f32 elements are moved as bytes (NaN payloads kept, as the staged path's byte copy).
Reads go straight to the region arrays and do not mark pages live (``PhysicalMemory.live_pages``): a read changes
no page, and every writer marks the pages it writes. A read not wholly inside VRAM or FCRAM answers ok False (the
staged path then raises its named ``MemoryFault``, or reads another region).
"""

from __future__ import annotations

import numpy as np

from picaemu import numba_link
from picaemu.geometry.vertex_loader import (
    DEFAULT_COMPONENTS,
    ELEMENT_SIGNED,
    ELEMENT_SIZES,
    F32_FORMAT,
    VertexLoaderState,
)

# columns of the (R, 7) int64 read table: one row per loaded attribute (the loop rewrites ADDRESS from the live
# ATTRIBBUFFERS_LOC and the loader's OFFSET before each draw, keeping LOADER and OFFSET: bytes into its vertex)
ATTRIBUTE, ADDRESS, STRIDE, FORMAT, COMPONENTS, LOADER, OFFSET = range(7)


def read_table(loader: VertexLoaderState) -> np.ndarray:
    """(R, 7) int64: one row per loaded attribute of ``loader``'s layout, columns ``ATTRIBUTE`` .. ``OFFSET``
    (addresses in bytes, of vertex index 0; formats as ``vertex_loader.ELEMENT_FORMATS`` codes)."""
    rows = [(r.attribute, r.address, r.stride, r.format, r.components, r.loader, r.offset) for r in loader.reads]
    return np.array(rows, np.int64).reshape(-1, 7)


@numba_link.kernel(inline="always")
def _region(address, size, vram, vram_base, fcram, fcram_base):  # pragma: no cover - compiled
    """(region bytes, offset of ``address``) of the region holding ``[address, address + size)``; offset -1 when
    neither VRAM nor FCRAM holds it wholly."""
    for region, base in ((vram, vram_base), (fcram, fcram_base)):
        off = address - base
        if off >= 0 and off + size <= region.shape[0]:
            return region, off
    return vram, -1


@numba_link.kernel(inline="always")
def _stream(
    kind_elements, count, first, index_address, index_u16, vram, vram_base, fcram, fcram_base
):  # pragma: no cover - compiled
    """(ok, (N,) int64 vertex indices in submission order); ok False: the index buffer is outside VRAM/FCRAM."""
    stream = numba_link.empty(count, np.int64)
    if not kind_elements:
        for i in range(count):  # not np.arange(first, first + count): another compiled variant of arange
            stream[i] = first + i
        return True, stream
    size = 2 if index_u16 else 1
    region, off = _region(index_address, count * size, vram, vram_base, fcram, fcram_base)
    if off < 0:
        return False, stream
    for i in range(count):
        p = off + i * size
        stream[i] = np.int64(region[p]) | (np.int64(region[p + 1]) << 8 if index_u16 else 0)
    return True, stream


@numba_link.kernel(inline="always")
def _unique(stream):  # pragma: no cover - compiled
    """(sorted distinct values (U,), inverse (N,) int64): ``np.unique(stream, return_inverse=True)`` for u8 / u16
    indices (a presence table over their range: no sort, whose compiled code costs seconds of compile time; the range
    and the table by loops, not ``min`` / ``max`` / ``np.full``, for the same reason)."""
    lo = hi = stream[0]
    for i in range(stream.shape[0]):
        lo, hi = min(lo, stream[i]), max(hi, stream[i])
    slot = numba_link.empty(hi - lo + 1, np.int64)
    for v in range(slot.shape[0]):
        slot[v] = -1
    for i in range(stream.shape[0]):
        slot[stream[i] - lo] = 0
    u = 0
    for v in range(slot.shape[0]):
        if slot[v] == 0:
            slot[v] = u
            u += 1
    unique = numba_link.empty(u, np.int64)
    inverse = numba_link.empty(stream.shape[0], np.int64)
    for i in range(stream.shape[0]):
        inverse[i] = slot[stream[i] - lo]
        unique[inverse[i]] = stream[i]
    return unique, inverse


@numba_link.kernel(inline="always")
def _element(region, p, code):  # pragma: no cover - compiled
    """The integer element of format ``code`` at byte ``p`` of ``region``, as float32: ``ELEMENT_SIZES[code]``
    little-endian bytes, two's complement when ``ELEMENT_SIGNED[code]`` (``vertex_loader.ELEMENT_FORMATS``)."""
    size = ELEMENT_SIZES[code]
    value = np.int64(0)
    for b in range(size):
        value |= np.int64(region[p + b]) << (8 * b)
    if ELEMENT_SIGNED[code] and value >= np.int64(1) << (8 * size - 1):
        value -= np.int64(1) << (8 * size)
    return np.float32(value)


@numba_link.kernel()
def _load(
    unique, reads, fixed, fixed_values, num_attributes, vram, vram_base, fcram, fcram_base
):  # pragma: no cover - compiled
    """(ok, (U, K, 4) float32 attributes of the ``unique`` (increasing) vertex indices); ok False: an attribute's
    span of vertices is not wholly inside VRAM or FCRAM."""
    u, k = unique.shape[0], num_attributes
    flat = numba_link.zeros(u * k * 4, np.float32)
    raw = flat.view(np.uint8)  # f32 elements land as their bytes
    lo, hi = unique[0], unique[u - 1]
    for r in range(reads.shape[0]):
        a, address, stride = reads[r, ATTRIBUTE], reads[r, ADDRESS], reads[r, STRIDE]
        code, comps = reads[r, FORMAT], reads[r, COMPONENTS]
        item = ELEMENT_SIZES[code]
        region, off = _region(
            address + stride * lo, stride * (hi - lo) + item * comps, vram, vram_base, fcram, fcram_base
        )
        if off < 0:
            return False, flat.reshape((u, k, 4))
        zero = off - stride * lo  # offset of vertex index 0 (only indices lo..hi are read)
        for i in range(u):
            src = zero + stride * unique[i]
            dst = (i * k + a) * 4
            for c in range(comps):
                if code == F32_FORMAT:
                    for b in range(4):
                        raw[(dst + c) * 4 + b] = region[src + 4 * c + b]
                else:
                    flat[dst + c] = _element(region, src + item * c, code)
            for c in range(comps, 4):
                flat[dst + c] = DEFAULT_COMPONENTS[c]
    for f in range(fixed.shape[0]):
        a = fixed[f]
        for i in range(u):
            for c in range(4):
                flat[(i * k + a) * 4 + c] = fixed_values[a, c]
    return True, flat.reshape((u, k, 4))
