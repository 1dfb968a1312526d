"""Texture format table: codes, names, texel sizes and the bit layout of every non-ETC format (stage data).

A format is named by its TYPE-register code (0-13) or by name ("RGBA8", ..., "ETC1A4", case-insensitive; common
aliases such as "RGB5A1", "LA8", "RG8", "L8", "LA4", "L4" are accepted). ``PACKED`` describes each non-ETC format as
one little-endian word per texel (``word_bits`` = 4, 8, 16, 24 or 32) holding fields ``(channel, shift, bits)``;
channel "i" (intensity) feeds R, G and B. A channel with no field reads 0 (R, G, B) or 255 (A). Widths expand to 8
bits by bit replication (1 bit -> 0/255). Also here: the texture size rules and the errors of the texture package.
``TextureFormat`` (the enum of the format codes) is defined with the register table, ``picaemu.regs.blocks.texturing``.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.errors import PicaError
from picaemu.regs.blocks.texturing import TEXTURE_FORMATS, TextureFormat

ALIASES = {
    "RGBA8888": "RGBA8",
    "RGB888": "RGB8",
    "RGB5A1": "RGBA5551",
    "RGBA4444": "RGBA4",
    "LA8": "IA8",
    "RG8": "HILO8",
    "L8": "I8",
    "LA4": "IA4",
    "L4": "I4",
}
BITS_PER_TEXEL = {
    "RGBA8": 32,
    "RGB8": 24,
    "RGBA5551": 16,
    "RGB565": 16,
    "RGBA4": 16,
    "IA8": 16,
    "HILO8": 16,
    "I8": 8,
    "A8": 8,
    "IA4": 8,
    "I4": 4,
    "A4": 4,
    "ETC1": 4,
    "ETC1A4": 8,
}
ETC_FORMATS = frozenset({TextureFormat.ETC1, TextureFormat.ETC1A4})
MIN_SIZE, MAX_SIZE, TILE = 8, 1024, 8


@dataclass(frozen=True)
class Packed:
    """One texel = one little-endian word of ``word_bits`` bits holding ``fields`` (channel, shift, bits)."""

    word_bits: int
    fields: tuple[tuple[str, int, int], ...]


PACKED: dict[str, Packed] = {
    "RGBA8": Packed(32, (("r", 24, 8), ("g", 16, 8), ("b", 8, 8), ("a", 0, 8))),
    "RGB8": Packed(24, (("r", 16, 8), ("g", 8, 8), ("b", 0, 8))),
    "RGBA5551": Packed(16, (("r", 11, 5), ("g", 6, 5), ("b", 1, 5), ("a", 0, 1))),
    "RGB565": Packed(16, (("r", 11, 5), ("g", 5, 6), ("b", 0, 5))),
    "RGBA4": Packed(16, (("r", 12, 4), ("g", 8, 4), ("b", 4, 4), ("a", 0, 4))),
    "IA8": Packed(16, (("i", 8, 8), ("a", 0, 8))),
    "HILO8": Packed(16, (("r", 8, 8), ("g", 0, 8))),
    "I8": Packed(8, (("i", 0, 8),)),
    "A8": Packed(8, (("a", 0, 8),)),
    "IA4": Packed(8, (("i", 4, 4), ("a", 0, 4))),
    "I4": Packed(4, (("i", 0, 4),)),
    "A4": Packed(4, (("a", 0, 4),)),
}


class TextureError(PicaError):
    """A texture that cannot be decoded or encoded as described (bad size, format, level or data length)."""


class InvalidTextureFormat(TextureError):
    """A format code outside 0-13, or an unknown format name."""


class InvalidTextureSize(TextureError):
    """A width/height that is not a power of two in 8..1024, or a mip level smaller than 8x8."""


def texture_format(fmt: int | str | TextureFormat) -> TextureFormat:
    """The TextureFormat named by a code (0-13) or a name/alias; ``InvalidTextureFormat`` otherwise."""
    if isinstance(fmt, str):
        key = fmt.strip().upper()
        key = ALIASES.get(key, key)
        if key in TextureFormat.__members__:
            return TextureFormat[key]
        if not key.isdigit():
            known = ", ".join(TextureFormat.__members__)
            raise InvalidTextureFormat(f"unknown texture format {fmt!r} (known: {known})")
        fmt = int(key)
    if int(fmt) not in TEXTURE_FORMATS:
        raise InvalidTextureFormat(f"undefined texture format code {int(fmt)} (valid: 0-13)")
    return TextureFormat(int(fmt))


def check_size(width: int, height: int) -> None:
    """Raise ``InvalidTextureSize`` unless both sides are powers of two in 8..1024."""
    for what, n in (("width", width), ("height", height)):
        if not (MIN_SIZE <= n <= MAX_SIZE and n & (n - 1) == 0):
            raise InvalidTextureSize(f"texture {what} {n} is not a power of two in {MIN_SIZE}..{MAX_SIZE}")


def level_size(width: int, height: int, level: int) -> tuple[int, int]:
    """(width, height) of mip ``level``; ``InvalidTextureSize`` when it would be smaller than one 8x8 tile."""
    check_size(width, height)
    if level < 0 or min(width, height) >> level < MIN_SIZE:
        raise InvalidTextureSize(f"mip level {level} of a {width}x{height} texture is smaller than 8x8")
    return width >> level, height >> level


def level_bytes(width: int, height: int, fmt: TextureFormat) -> int:
    """Byte size of one image of ``width`` x ``height`` texels."""
    return width * height * BITS_PER_TEXEL[fmt.name] // 8


def level_offset(width: int, height: int, fmt: TextureFormat, level: int) -> int:
    """Byte offset of mip ``level`` from the texture's base address (levels follow each other, no padding)."""
    level_size(width, height, level)
    return sum(level_bytes(width >> j, height >> j, fmt) for j in range(level))
