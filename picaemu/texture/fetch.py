"""Compiled decoding of texture levels straight from emulated memory: the texels of the fused fragment path
(``picaemu.fused.fragments``), decoded into the memory's ``level_cache`` — a whole level (``decode_level``) once
draws tap more of it than it holds, else just the 4x4 blocks a draw taps (``decode_blocks``), which
``filtering.filter_2d`` / ``nearest_u8`` then filter as they filter any decoded level.

A level in memory is a memory region's (R,) uint8 bytes with a layout, a tuple of 12 ints: ``start`` (the byte
offset in the region of one level of a tiled texture), ``width_log2`` (its width, a power of two, at least 8),
``word_bits`` (4, 8, 16, 24 or 32), then per channel R G B A the field's shift in the texel word and its width in
bits (0: the format lacks the channel, which reads ``decode.MISSING``) — ``channel_fields`` of the format's
``formats.Packed`` entry, the table ``decode.unpack_words`` reads — and the kind: ``KIND_PACKED``, or
``KIND_ETC1`` / ``KIND_ETC1A4`` (word and fields unused: a block decodes by ``etc1.block_texels``, the rule
``etc1`` decodes whole levels by). A field widens to 8 bits by bit replication
(``decode.expand_lut``'s rule, looked up in ``EXPANDED``). Decoded texel ``idx``
is image row ``idx >> width_log2`` (0 = top, memory-row order as the decoded images) and column
``idx & (width - 1)``, found in memory by the 8x8 Morton tiling of ``decode``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from picaemu import numba_link
from picaemu.texture import etc1
from picaemu.texture.decode import CHANNELS, MISSING, MORTON8, expand_lut
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


# row b: each b-bit field value bit-replicated to 8 bits (``decode.expand_lut``; row 8 the identity), the lookup
# ``_packed_blocks`` makes per channel: built once here, not per decode (a decode of a few tapped blocks is ~100 texels)
EXPANDED = np.zeros((9, 256), np.uint8)
for _bits in range(1, 9):
    EXPANDED[_bits, : 1 << _bits] = expand_lut(_bits)


# a 4x4 block's texels are 16 consecutive ones of its 8x8 tile: the column and row in the block of each of them
BLOCK_X = np.array([x for k in range(16) for y in range(4) for x in range(4) if MORTON8[y, x] == k], np.int64)
BLOCK_Y = np.array([y for k in range(16) for y in range(4) for x in range(4) if MORTON8[y, x] == k], np.int64)


@numba_link.kernel(inline="always")  # two shifts: no library of its own
def block_origin(b: int, width_log2: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """The top-left texel (x0, y0), row 0 = top, of block number ``b`` of a level ``1 << width_log2`` texels wide.
    ``decode_blocks`` numbers a level's 4x4 blocks row by row of blocks from the top: b = (y0 / 4) * (W / 4) +
    x0 / 4 (``block_number``), whatever the memory order of the format (tiles, ``etc1.block_index``)."""
    row_blocks = width_log2 - 2  # log2 of the blocks a row of them holds
    return (b & ((1 << row_blocks) - 1)) << 2, (b >> row_blocks) << 2


@numba_link.kernel(inline="always")
def block_number(col: int, row: int, width: int) -> int:  # pragma: no cover - compiled
    """The number of the block in block column ``col`` and block row ``row`` (texels 4 col.. and 4 row.., row 0 =
    top) of a level ``width`` texels wide: ``block_origin``'s inverse."""
    return row * (width >> 2) + col


@numba_link.kernel()
def _packed_blocks(data, layout, blocks, count: int, texels) -> None:  # pragma: no cover - compiled
    """``decode_blocks`` of a packed level: each block's 16 texel words read in memory order (the block is a
    quarter of its tile, in Morton order) as the size of word they are (uint32 / uint16 views made once, 24-bit
    little-endian, bytes, nibbles low first), then each channel for the 16 of them: an 8-bit field is the word's
    byte, a narrower one looked up in ``EXPANDED``, a channel the format lacks reads ``MISSING`` (against a word
    read and a lookup per texel and channel: RGBA8 8.6 -> 2.6 ns a texel, RGB8 8.5 -> 2.8, RGB565 8.5 -> 6.8, I4
    13 -> 11; the word reads in a helper of their own, even inlined, cost twice as much)."""
    log2 = layout[LAYOUT_WIDTH_LOG2]
    width, start, word_bits = 1 << log2, layout[LAYOUT_START], layout[LAYOUT_WORD_BITS]
    level = data[start : start + ((texels.shape[0] * word_bits) >> 3)]
    wide, half = level[: level.shape[0] & ~3].view(np.uint32), level[: level.shape[0] & ~1].view(np.uint16)
    words = numba_link.empty(16, np.int64)
    for k in range(count):
        x0, y0 = block_origin(blocks[k], log2)
        first = y0 * width + x0
        n0 = ((y0 & ~(TILE - 1)) << log2) + (x0 & ~(TILE - 1)) * TILE + MORTON8[y0 & (TILE - 1), x0 & (TILE - 1)]
        if word_bits == 32:
            for j in range(16):
                words[j] = wide[n0 + j]
        elif word_bits == 16:
            for j in range(16):
                words[j] = half[n0 + j]
        elif word_bits == 24:
            for j in range(16):
                at = 3 * (n0 + j)
                words[j] = np.int64(level[at]) | np.int64(level[at + 1]) << 8 | np.int64(level[at + 2]) << 16
        elif word_bits == 8:
            for j in range(16):
                words[j] = level[n0 + j]
        else:  # 4 bits
            for j in range(16):
                words[j] = (np.int64(level[(n0 + j) >> 1]) >> ((j & 1) << 2)) & 0xF
        for c in range(4):
            shift, bits = layout[LAYOUT_SHIFTS + c], layout[LAYOUT_BITS + c]
            mask = (1 << bits) - 1
            if bits == 8:
                for j in range(16):
                    texels[first + BLOCK_Y[j] * width + BLOCK_X[j], c] = (words[j] >> shift) & 0xFF
            elif bits:
                for j in range(16):
                    texels[first + BLOCK_Y[j] * width + BLOCK_X[j], c] = EXPANDED[bits, (words[j] >> shift) & mask]
            else:
                for j in range(16):
                    texels[first + BLOCK_Y[j] * width + BLOCK_X[j], c] = MISSING[c]


@numba_link.kernel()
def decode_blocks(data, layout, blocks, count: int, texels) -> None:  # pragma: no cover - compiled
    """The 4x4 blocks ``blocks[:count]`` of the memory source's level into ``texels`` (W * H, 4) uint8, memory-row
    order (as ``decode.decode_level``); block b covers the 4x4 texels from ``block_origin(b)`` (an ETC block; 16
    texels of a packed format's 8x8 tile: ``_packed_blocks``). Other texels are left as they were. An ETC block is
    decoded by ``etc1.block_texels`` (its words read once for its 16 texels: ~3x fewer cycles than a texel at a
    time)."""
    kind, log2 = layout[LAYOUT_KIND], layout[LAYOUT_WIDTH_LOG2]
    if kind == KIND_PACKED:
        _packed_blocks(data, layout, blocks, count, texels)
        return
    width, start = 1 << log2, layout[LAYOUT_START]
    step = 2 if kind == KIND_ETC1A4 else 1  # ETC1A4: the alpha word, then the color word
    words = data[start : start + (texels.shape[0] * step >> 1)].view(np.uint64)  # 4 or 8 bits a texel
    for k in range(count):
        x0, y0 = block_origin(blocks[k], log2)
        at = etc1.block_index(x0, y0, log2) * step
        alpha = words[at] if step == 2 else np.uint64(0)
        etc1.block_texels(words[at + step - 1], alpha, step == 2, texels, y0 * width + x0, width)


@numba_link.kernel(inline="always")  # small: no library of its own
def decode_level(data, layout, texels) -> None:  # pragma: no cover - compiled
    """Every texel of the memory source's level into ``texels`` (W * H, 4) uint8, memory-row order
    (``decode_blocks`` of all its blocks)."""
    count = texels.shape[0] >> 4
    decode_blocks(data, layout, numba_link.indices(count), count, texels)
