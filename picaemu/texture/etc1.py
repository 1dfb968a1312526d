"""ETC1 / ETC1A4 decoding as the PICA stores them: bytes -> (H, W, 4) uint8, row 0 = top.

Layout: every 8x8 tile (row-major tiles, top first) holds four 4x4 blocks in Z order (top-left, top-right,
bottom-left, bottom-right). ETC1 blocks are 8 bytes: one little-endian u64 color word. ETC1A4 blocks are 16 bytes:
a little-endian u64 alpha word (pixel n = 4x + y in nibble n, expanded 4->8) then the color word.

Color word (bit numbers of the u64): bit 33 diff flag, bit 32 flip flag, bits 39-37 / 36-34 modifier tables of
sub-blocks 1 / 2; individual mode: R1 63-60, R2 59-56, G1 55-52, G2 51-48, B1 47-44, B2 43-40 (4 bits, x17);
differential mode: R 63-59, dR 58-56, G 55-51, dG 50-48, B 47-43, dB 42-40 (5-bit base, signed 3-bit delta added
for sub-block 2 and wrapped to 5 bits, then 5->8 replication). Pixel n = 4x + y takes its modifier index from bit n
(LSB: small/large) and bit 16+n (MSB: negate). Flip 0: sub-block 1 is x < 2; flip 1: sub-block 1 is y < 2.
Every channel is clamp(base + modifier, 0, 255). One compiled loop over all blocks (numba, cached), calling the
block rule ``block_texels``, which ``picaemu.texture.fetch.decode_blocks`` calls too for the blocks of a level in
emulated memory (the fused fragment path's ETC texels).
"""

from __future__ import annotations

import numpy as np

from picaemu import numba_link
from picaemu.texture.formats import TILE

BLOCK = 4
MODIFIERS = np.array([[2, 8], [5, 17], [9, 29], [13, 42], [18, 60], [24, 80], [33, 106], [47, 183]], np.int32)
DIFF_BIT, FLIP_BIT, TABLE1_SHIFT, TABLE2_SHIFT, MSB_SHIFT = 33, 32, 37, 34, 16
INDIVIDUAL_SHIFTS = np.array([[60, 56], [52, 48], [44, 40]], np.int64)  # (sub-block 1, 2) of R, G, B: 4 bits
DIFFERENTIAL_SHIFTS = np.array([[59, 56], [51, 48], [43, 40]], np.int64)  # (5-bit base, 3-bit delta) of R, G, B
ALPHA_BITS = 4


@numba_link.kernel(inline="always")
def _field(word: np.uint64, shift: int, width: int) -> np.int64:
    return np.int64((word >> np.uint64(shift)) & np.uint64((1 << width) - 1))


@numba_link.kernel(inline="always")
def _expand5(v: int) -> int:
    return (v << 3) | (v >> 2)


@numba_link.kernel()
def _base(word: np.uint64, second: int, c: int) -> int:
    """Channel c's 8-bit base color of sub-block ``second`` (0 or 1) of a block's color word."""
    if _field(word, DIFF_BIT, 1):
        b = _field(word, DIFFERENTIAL_SHIFTS[c, 0], 5)
        if second:
            d = _field(word, DIFFERENTIAL_SHIFTS[c, 1], 3)
            b = (b + (d - 8 if d >= 4 else d)) & 0x1F
        return _expand5(b)
    return _field(word, INDIVIDUAL_SHIFTS[c, second], 4) * 0x11


@numba_link.kernel()
def block_texels(color: np.uint64, alpha: np.uint64, with_alpha: bool, out, first: int, stride: int) -> None:
    """The 16 (R, G, B, A) uint8 texels of one block (module docstring) into rows ``first + y * stride + x`` of
    ``out`` (N, 4) (x, y: the block's column and row, 0-3, row 0 = top)."""
    flip = _field(color, FLIP_BIT, 1)
    for y in range(BLOCK):
        for x in range(BLOCK):
            n = BLOCK * x + y
            second = int(y >= 2) if flip else int(x >= 2)
            table = _field(color, TABLE2_SHIFT if second else TABLE1_SHIFT, 3)
            mod = MODIFIERS[table, _field(color, n, 1)]
            if _field(color, MSB_SHIFT + n, 1):
                mod = -mod
            i = first + y * stride + x
            for c in range(3):  # c is no literal: one compile of ``_base``, not one per channel
                out[i, c] = np.uint8(min(max(_base(color, second, c) + mod, 0), 255))
            out[i, 3] = np.uint8(_field(alpha, ALPHA_BITS * n, ALPHA_BITS) * 0x11 if with_alpha else 255)


@numba_link.kernel()
def block_index(x: int, y: int, width_log2: int) -> int:
    """The block holding image column x, row y (row 0 = top) of a level ``1 << width_log2`` texels wide."""
    tile = ((y >> 3) << (width_log2 - 3)) + (x >> 3)
    return (tile << 2) + (((y >> 2) & 1) << 1) + ((x >> 2) & 1)


@numba_link.kernel()
def decode_blocks(words: np.ndarray, with_alpha: bool, width: int, height: int, out: np.ndarray) -> None:
    """Every block of a level's ``words`` (u64, alpha word first in ETC1A4) into ``out`` (H, W, 4) uint8, row 0 =
    top: ``decode_etc``'s loop (``texture.fetch.decode_blocks`` decodes a level's blocks in emulated memory by the
    same ``block_texels``)."""
    step = 2 if with_alpha else 1
    tiles_per_row = width // TILE
    flat = out.reshape(-1, 4)
    for b in range(words.size // step):
        alpha = words[b * step] if with_alpha else np.uint64(0)
        tile, sub = b >> 2, b & 3
        y0 = (tile // tiles_per_row) * TILE + (sub >> 1) * BLOCK
        x0 = (tile % tiles_per_row) * TILE + (sub & 1) * BLOCK
        block_texels(words[b * step + step - 1], alpha, with_alpha, flat, y0 * width + x0, width)


def decode_etc(data: np.ndarray, width: int, height: int, *, with_alpha: bool) -> np.ndarray:
    """One level of ETC1 (8-byte blocks) or ETC1A4 (16-byte blocks) -> (H, W, 4) uint8."""
    words = np.ascontiguousarray(data).view("<u8").astype(np.uint64)
    out = np.empty((height, width, 4), np.uint8)
    decode_blocks(words, with_alpha, width, height, out)
    return out
