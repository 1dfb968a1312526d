"""Texture encoding (every non-ETC format): (H, W, 4) uint8 RGBA, row 0 = top -> the PICA's tiled bytes.

The inverse of ``decode``: each channel is quantised by truncation (8 -> n bits keeps the top n bits, as the GPU
does when it writes a color buffer), packed into the format's little-endian word (``formats.PACKED``), and the
words are scattered into 8x8 Morton-order tiles. Intensity is Rec.601 luma ``(299 R + 587 G + 114 B + 500) //
1000`` (exact for gray input). Decoding an encoded image gives it back whenever the image is representable in the
format. ETC1/ETC1A4 encoding is not offered (``UnsupportedFeature``).
"""

from __future__ import annotations

import numpy as np

from picaemu.errors import UnsupportedFeature
from picaemu.texture.decode import CHANNELS, tile_order
from picaemu.texture.formats import ETC_FORMATS, PACKED, InvalidTextureSize, check_size, texture_format

LUMA_WEIGHTS = (299, 587, 114)
LUMA_SCALE = 1000


def intensity(rgba: np.ndarray) -> np.ndarray:
    """(H, W) uint32 Rec.601 luma of an RGBA8 image."""
    rgb = rgba[..., :3].astype(np.uint32)
    weights = np.array(LUMA_WEIGHTS, np.uint32)
    return (rgb @ weights + LUMA_SCALE // 2) // LUMA_SCALE


def encode_texture(rgba: np.ndarray, format: int | str) -> bytes:
    """Encode an (H, W, 4) uint8 image (row 0 = top) as one tiled level of ``format``."""
    fmt = texture_format(format)
    if fmt in ETC_FORMATS:
        raise UnsupportedFeature(f"encoding {fmt.name} (only non-ETC formats can be encoded)")
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise InvalidTextureSize(f"expected an (H, W, 4) uint8 image, got {rgba.shape} {rgba.dtype}")
    height, width = rgba.shape[:2]
    check_size(width, height)
    spec = PACKED[fmt.name]
    words = np.zeros((height, width), np.uint32)
    for channel, shift, bits in spec.fields:
        value = intensity(rgba) if channel == "i" else rgba[..., CHANNELS[channel]].astype(np.uint32)
        words |= (value >> (8 - bits)) << shift
    memory_order = np.empty(width * height, np.uint32)
    memory_order[tile_order(width, height).ravel()] = words.ravel()
    if spec.word_bits == 4:
        return (memory_order[0::2] | memory_order[1::2] << 4).astype(np.uint8).tobytes()
    if spec.word_bits == 24:
        return memory_order.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    return memory_order.astype(f"<u{spec.word_bits // 8}").tobytes()
