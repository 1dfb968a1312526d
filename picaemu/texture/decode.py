"""Texture decoding: emulated memory (or a byte buffer) -> (H, W, 4) uint8 RGBA, row 0 = top of the image.

Receives a source (``PhysicalMemory`` or bytes-like), a byte address (a physical address, or an offset into the
bytes), the level-0 size, the format (code 0-13 or name, see ``formats``) and a mip level. Returns the image in
memory-row order: memory row 0 is the top of the picture, texture coordinate v = 0 is its last row.

Tiling: the image is cut into 8x8 tiles stored row-major from the top; inside a tile the 64 texels are in Morton
order, ``i = x0 | y0<<1 | x1<<2 | y1<<3 | x2<<4 | y2<<5``. Texel (x, y) is memory texel
``(y & ~7)*W + (x & ~7)*8 + morton(x & 7, y & 7)``. 4-bit formats keep texel i in byte i/2, low nibble first.
ETC1/ETC1A4 (four 4x4 blocks per tile, Z order) are decoded in ``etc1``. All of it is whole-image numpy: one
gather of the texel words through a cached index image, then one shift/mask/expand per channel.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from picaemu.errors import FormatError
from picaemu.memory import PhysicalMemory
from picaemu.texture import etc1
from picaemu.texture.formats import (
    ETC_FORMATS,
    PACKED,
    TILE,
    Packed,
    TextureFormat,
    level_bytes,
    level_offset,
    level_size,
    texture_format,
)

Source = PhysicalMemory | bytes | bytearray | memoryview | np.ndarray
CHANNELS = {"r": 0, "g": 1, "b": 2, "a": 3}
MISSING = (0, 0, 0, 255)  # value of a channel the format does not store


def _morton8() -> np.ndarray:
    """(8, 8) in-tile index [y, x]."""
    y, x = np.mgrid[0:TILE, 0:TILE]
    out = np.zeros((TILE, TILE), np.int64)
    for bit in range(3):
        out |= ((x >> bit) & 1) << (2 * bit) | ((y >> bit) & 1) << (2 * bit + 1)
    return out


MORTON8 = _morton8()


@cache
def tile_order(width: int, height: int) -> np.ndarray:
    """(H, W) int64: the memory texel index of image texel [y, x] (y = memory row). Read-only, cached."""
    y, x = np.mgrid[0:height, 0:width]
    order = (y & ~7) * width + (x & ~7) * TILE + MORTON8[y & 7, x & 7]
    order.setflags(write=False)
    return order


@cache
def expand_lut(bits: int) -> np.ndarray:
    """(2**bits,) uint8: an n-bit value expanded to 8 bits by bit replication (1 bit -> 0 or 255)."""
    v = np.arange(1 << bits, dtype=np.int32)
    if bits == 1:
        return (v * 255).astype(np.uint8)
    out = np.zeros_like(v)
    filled = 0
    while filled < 8:
        out |= (v << (8 - bits - filled)) if 8 - bits - filled >= 0 else (v >> (bits + filled - 8))
        filled += bits
    return out.astype(np.uint8)


def read_source(source: Source, address: int, size: int, what: str = "texture") -> np.ndarray:
    """``size`` bytes at ``address`` as uint8: ``MemoryFault`` from memory, ``FormatError`` past a buffer's end."""
    if isinstance(source, PhysicalMemory):
        return source.bytes(address, size, what)
    buf = np.frombuffer(source, np.uint8) if not isinstance(source, np.ndarray) else source.view(np.uint8).ravel()
    if address < 0 or address + size > buf.size:
        raise FormatError(f"{what} needs {size} bytes at offset {address}, the data holds {buf.size}", offset=address)
    return buf[address : address + size]


def texel_words(data: np.ndarray, word_bits: int, order: np.ndarray) -> np.ndarray:
    """Texel words gathered into image order: (H, W) unsigned words (4-bit texels as 0-15); ``order`` (H, W) holds
    each image texel's index in memory (``tile_order``, or row-major for linear data)."""
    if word_bits == 4:
        return (data[order >> 1] >> ((order & 1) << 2).astype(np.uint8)) & np.uint8(0xF)
    if word_bits == 24:
        triples = data.reshape(-1, 3)[order].astype(np.uint32)
        return triples[..., 0] | triples[..., 1] << 8 | triples[..., 2] << 16
    return data.view(np.dtype(f"<u{word_bits // 8}"))[order]


def decode_packed(data: np.ndarray, spec: Packed, width: int, height: int) -> np.ndarray:
    """One level of a non-ETC format: raw bytes -> (H, W, 4) uint8."""
    return unpack_words(texel_words(data, spec.word_bits, tile_order(width, height)), spec)


def unpack_words(words: np.ndarray, spec: Packed) -> np.ndarray:
    """(H, W) texel words of a non-ETC format -> (H, W, 4) uint8 RGBA (missing channels as ``MISSING``)."""
    out = np.empty((*words.shape, 4), np.uint8)
    out[...] = MISSING
    for channel, shift, bits in spec.fields:
        field = (words >> shift) & ((1 << bits) - 1) if shift or bits < spec.word_bits else words
        value = field.astype(np.uint8) if bits == 8 else expand_lut(bits)[field]
        if channel == "i":
            out[..., :3] = value[..., None]
        else:
            out[..., CHANNELS[channel]] = value
    return out


def decode_level(data: np.ndarray, fmt: TextureFormat, width: int, height: int) -> np.ndarray:
    """Decode exactly one level's bytes (``level_bytes`` long) of size width x height."""
    if fmt in ETC_FORMATS:
        return etc1.decode_etc(data, width, height, with_alpha=fmt is TextureFormat.ETC1A4)
    return decode_packed(data, PACKED[fmt.name], width, height)


def decode_texture(
    source: Source, address: int, width: int, height: int, format: int | str, level: int = 0
) -> np.ndarray:
    """Decode mip ``level`` of a texture whose level 0 is ``width`` x ``height`` at ``address``: (H>>level, W>>level,
    4) uint8 RGBA, row 0 = top. Errors: ``InvalidTextureFormat``, ``InvalidTextureSize``, ``MemoryFault``,
    ``FormatError`` (buffer too short)."""
    fmt = texture_format(format)
    w, h = level_size(width, height, level)
    size = level_bytes(w, h, fmt)
    data = read_source(source, address + level_offset(width, height, fmt, level), size)
    return decode_level(data, fmt, w, h)
