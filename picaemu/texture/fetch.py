"""Compiled texel reads straight from emulated memory (no decoded copy): the texel source of the fused fragment
path (``picaemu.fused.fragments``), which ``filtering.filter_2d`` / ``fetch`` read through
``filtering.texel_channel``.

A memory source is the tuple ``(data, start, width, word_bits, shifts, masks, luts)``: ``data`` (R,) uint8 a
memory region's bytes, ``start`` the byte offset in it of one level of a tiled non-ETC texture ``width`` texels
wide, ``word_bits`` its texel word size (4, 8, 16, 24 or 32), and per channel R G B A (``channel_tables`` of the
format's ``formats.Packed`` entry, the table ``decode.unpack_words`` reads): the field's shift and mask in the
word and a (256,) uint8 table from field value to 8-bit channel (bit replication; a channel the format lacks has
mask 0 and reads ``decode.MISSING``). Texel ``idx`` is image row ``idx // width`` (0 = top, memory-row order as
the decoded images) and column ``idx % width``, found in memory by the 8x8 Morton tiling of ``decode``.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from picaemu.texture.decode import CHANNELS, MISSING, expand_lut
from picaemu.texture.formats import TILE, Packed

FIELD_VALUES = 256  # table entries per channel: every field is at most 8 bits wide


@cache
def channel_tables(spec: Packed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shifts (4,) int64, masks (4,) int64, luts (4, 256) uint8) of a format (module docstring); read-only."""
    shifts, masks = np.zeros(4, np.int64), np.zeros(4, np.int64)
    luts = np.empty((4, FIELD_VALUES), np.uint8)
    luts[:] = np.array(MISSING, np.uint8)[:, None]
    for channel, shift, bits in spec.fields:
        values = np.arange(1 << bits, dtype=np.uint8) if bits == 8 else expand_lut(bits)
        for c in ((0, 1, 2) if channel == "i" else (CHANNELS[channel],)):
            shifts[c], masks[c] = shift, (1 << bits) - 1
            luts[c, : 1 << bits] = values
    for table in (shifts, masks, luts):
        table.setflags(write=False)
    return shifts, masks, luts


@numba.njit(cache=True, inline="always")
def _morton(x: int, y: int) -> int:  # pragma: no cover - compiled
    """In-tile index of texel (x, y) of its 8x8 tile: x0 | y0<<1 | x1<<2 | y1<<3 | x2<<4 | y2<<5."""
    return ((x & 1) | (y & 1) << 1 | (x & 2) << 1 | (y & 2) << 2 | (x & 4) << 2 | (y & 4) << 3)


@numba.njit(cache=True)
def memory_channel(src, idx: int, c: int):  # pragma: no cover - compiled
    """Channel c (uint8) of texel ``idx`` of the memory source ``src`` (module docstring)."""
    data, start, width, word_bits, shifts, masks, luts = src
    y = idx // width
    x = idx - y * width
    n = (y & ~(TILE - 1)) * width + (x & ~(TILE - 1)) * TILE + _morton(x & (TILE - 1), y & (TILE - 1))
    if word_bits == 4:
        word = (np.int64(data[start + (n >> 1)]) >> ((n & 1) << 2)) & 0xF
    else:
        size = word_bits >> 3
        at = start + n * size
        word = np.int64(0)
        for b in range(size):
            word |= np.int64(data[at + b]) << (8 * b)
    return luts[c, (word >> shifts[c]) & masks[c]]
