"""Compiled texel reads straight from emulated memory (no decoded copy): the texel source of the fused fragment
path (``picaemu.fused.fragments``), which ``filtering.filter_2d`` / ``fetch`` read through
``filtering.texel_rgba``.

A memory source is a memory region's (R,) uint8 bytes with a layout, a tuple of 12 ints: ``start`` (the byte
offset in the region of one level of a tiled texture), ``width_log2`` (its width, a power of two),
``word_bits`` (4, 8, 16, 24 or 32), then per channel R G B A the field's shift in the texel word and its width in
bits (0: the format lacks the channel, which reads ``decode.MISSING``) — ``channel_fields`` of the format's
``formats.Packed`` entry, the table ``decode.unpack_words`` reads — and the kind: ``KIND_PACKED``, or
``KIND_ETC1`` / ``KIND_ETC1A4`` (word and fields unused: the texel is ``etc1.memory_texel``'s, the rule
``etc1`` decodes whole levels by). A field widens to 8 bits by bit replication
(``decode.expand_lut``'s rule, computed by ``fragment.kernels._expand``, the framebuffer's). Texel ``idx`` is
image row ``idx >> width_log2`` (0 = top, memory-row order as the decoded images) and column
``idx & (width - 1)``, found in memory by the 8x8 Morton tiling of ``decode``. ``decode_level`` decodes a whole
level this way (into ``level_cache``, for the levels draws tap more texels of than they hold).
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from picaemu.fragment.kernels import _expand
from picaemu.texture import etc1
from picaemu.texture.decode import CHANNELS, MISSING, MORTON8
from picaemu.texture.formats import TILE, Packed, TextureFormat

LAYOUT_START, LAYOUT_WIDTH_LOG2, LAYOUT_WORD_BITS, LAYOUT_SHIFTS, LAYOUT_BITS, LAYOUT_KIND = 0, 1, 2, 3, 7, 11
LAYOUT_INTS = 12
KIND_PACKED, KIND_ETC1, KIND_ETC1A4 = range(3)  # layout[LAYOUT_KIND]
KIND_OF_ETC = {TextureFormat.ETC1: KIND_ETC1, TextureFormat.ETC1A4: KIND_ETC1A4}


@cache
def channel_fields(spec: Packed) -> tuple[int, ...]:
    """(shift R, G, B, A, bits R, G, B, A) of a format's fields (channel "i" feeds R, G and B; bits 0: missing)."""
    shifts, bits = [0] * 4, [0] * 4
    for channel, shift, width in spec.fields:
        for c in (0, 1, 2) if channel == "i" else (CHANNELS[channel],):
            shifts[c], bits[c] = shift, width
    return (*shifts, *bits)


@numba.njit(cache=True)
def _channel(word: int, layout, c: int):  # pragma: no cover - compiled
    """Channel c (uint8) of a texel word (scalars only: LLVM inlines it, branches and all)."""
    bits = layout[LAYOUT_BITS + c]
    if bits == 0:
        return np.uint8(MISSING[c])
    field = (word >> layout[LAYOUT_SHIFTS + c]) & ((1 << bits) - 1)
    return np.uint8(field if bits == 8 else _expand(field, bits))


@numba.njit(cache=True)
def memory_rgba(data, layout, idx: int):  # pragma: no cover - compiled
    """The four uint8 channels of texel ``idx`` of the memory source ``data``, ``layout`` (module docstring).
    Not inlined by numba (its inliner wants one return); LLVM inlines it into the filter's loop."""
    kind = layout[LAYOUT_KIND]
    if kind != KIND_PACKED:
        log2 = layout[LAYOUT_WIDTH_LOG2]
        y, x = idx >> log2, idx & ((1 << log2) - 1)
        return etc1.memory_texel(data, layout[LAYOUT_START], log2, kind == KIND_ETC1A4, x, y)
    return _packed_rgba(data, layout, idx)


@numba.njit(cache=True, inline="always")
def _packed_rgba(data, layout, idx: int):  # pragma: no cover - compiled
    """``memory_rgba`` of a packed (non-ETC) format."""
    # no branches (numba's inliner wants each variable assigned once; a select costs less than a misprediction)
    start, log2, word_bits = layout[LAYOUT_START], layout[LAYOUT_WIDTH_LOG2], layout[LAYOUT_WORD_BITS]
    y = idx >> log2  # no division
    x = idx & ((1 << log2) - 1)
    n = ((y & ~(TILE - 1)) << log2) + (x & ~(TILE - 1)) * TILE + MORTON8[y & (TILE - 1), x & (TILE - 1)]
    nibble = np.int64(word_bits == 4)
    size = max(word_bits >> 3, 1)
    at = start + ((n * size) >> nibble)
    last = data.shape[0] - 1  # the bytes past a small texel are read (and dropped) without leaving the region
    word = (
        np.int64(data[at])
        | np.int64(data[min(at + 1, last)]) * (size > 1) << 8
        | np.int64(data[min(at + 2, last)]) * (size > 2) << 16
        | np.int64(data[min(at + 3, last)]) * (size > 3) << 24
    )
    word = (word >> (((n & 1) << 2) * nibble)) & ((1 << word_bits) - 1)
    return _channel(word, layout, 0), _channel(word, layout, 1), _channel(word, layout, 2), _channel(word, layout, 3)


@numba.njit(cache=True)
def decode_level(data, layout, texels) -> None:  # pragma: no cover - compiled
    """Every texel of the memory source's level into ``texels`` (W * H, 4) uint8, memory-row order (as
    ``decode.decode_level``). An ETC level is decoded a block at a time by ``etc1.decode_blocks`` (its words read
    once for its 16 texels: ~3x fewer cycles than a texel at a time)."""
    kind, log2 = layout[LAYOUT_KIND], layout[LAYOUT_WIDTH_LOG2]
    if kind == KIND_PACKED:  # ``_packed_rgba``, not ``memory_rgba``: no per-texel ETC path compiled in here
        for idx in range(texels.shape[0]):
            texels[idx, 0], texels[idx, 1], texels[idx, 2], texels[idx, 3] = _packed_rgba(data, layout, idx)
        return
    with_alpha = kind == KIND_ETC1A4
    size = texels.shape[0] if with_alpha else texels.shape[0] >> 1  # 8 or 4 bits a texel
    start, width = layout[LAYOUT_START], 1 << log2
    words = data[start : start + size].view(np.uint64)
    etc1.decode_blocks(words, with_alpha, width, texels.shape[0] >> log2, texels.reshape(-1, width, 4))
