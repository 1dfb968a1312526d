"""Texture decoding against bytes built by hand from pica-formats.md §1 (tiling table, byte orders, ETC1 layout)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from picaemu.errors import FormatError, MemoryFault
from picaemu.memory import PhysicalMemory
from picaemu.texture import InvalidTextureFormat, InvalidTextureSize, decode_texture
from tests.reference_tables import MORTON

# format, bytes of one texel, decoded RGBA (worked out by hand from §1.1)
TEXELS = [
    ("RGBA8", bytes([0x44, 0x33, 0x22, 0x11]), (0x11, 0x22, 0x33, 0x44)),
    ("RGB8", bytes([0x33, 0x22, 0x11]), (0x11, 0x22, 0x33, 255)),
    ("RGBA5551", bytes([0x21, 0xF8]), (255, 0, 132, 255)),  # R 31, G 0, B 16, A 1
    ("RGBA5551", bytes([0x42, 0x08]), (8, 8, 8, 0)),  # 0x0842 = R 1, G 1, B 1, A 0: 1 -> 1<<3 | 1>>2 = 8
    ("RGB565", bytes([0xE1, 0x87]), (132, 255, 8, 255)),  # R 16, G 63, B 1
    ("RGBA4", bytes([0x34, 0x12]), (0x11, 0x22, 0x33, 0x44)),
    ("IA8", bytes([0x80, 0x40]), (0x40, 0x40, 0x40, 0x80)),
    ("HILO8", bytes([0x22, 0x11]), (0x11, 0x22, 0, 255)),
    ("I8", bytes([0x5A]), (0x5A, 0x5A, 0x5A, 255)),
    ("A8", bytes([0x5A]), (0, 0, 0, 0x5A)),
    ("IA4", bytes([0xC3]), (0xCC, 0xCC, 0xCC, 0x33)),
]


def _image_with(texel: bytes, index: int, count: int = 64) -> bytes:
    data = bytearray(len(texel) * count)
    data[index * len(texel) : (index + 1) * len(texel)] = texel
    return bytes(data)


@pytest.mark.parametrize(("fmt", "texel", "rgba"), TEXELS)
@pytest.mark.parametrize(("x", "y"), [(0, 0), (3, 2), (4, 0), (1, 5), (7, 7)])
def test_every_byte_format_at_tiled_positions(fmt: str, texel: bytes, rgba: tuple, x: int, y: int) -> None:
    img = decode_texture(_image_with(texel, MORTON[y][x]), 0, 8, 8, fmt)
    assert img.shape == (8, 8, 4) and img.dtype == np.uint8
    assert tuple(img[y, x]) == rgba
    others = np.ones((8, 8), bool)
    others[y, x] = False
    zero = (0, 0, 0, 0) if fmt in ("RGBA8", "RGBA5551", "RGBA4", "IA8", "A8", "IA4") else (0, 0, 0, 255)
    assert (img[others] == zero).all()


@pytest.mark.parametrize(
    ("fmt", "lo", "hi"),
    [("I4", (0xAA, 0xAA, 0xAA, 255), (0x77, 0x77, 0x77, 255)), ("A4", (0, 0, 0, 0xAA), (0, 0, 0, 0x77))],
)
def test_4bit_low_nibble_is_the_even_texel(fmt: str, lo: tuple, hi: tuple) -> None:
    data = bytearray(32)
    data[6] = 0x7A  # texels 12 (low nibble) and 13 (high nibble)
    img = decode_texture(bytes(data), 0, 8, 8, fmt)
    assert tuple(img[2, 2]) == lo  # MORTON[2][2] == 12
    assert tuple(img[2, 3]) == hi  # MORTON[2][3] == 13


def test_tiles_are_row_major_from_the_top() -> None:
    # 16x16 I8: tile 0 = texels 0-63, tile 1 (x 8-15, y 0-7) = 64-127, tile 2 (x 0-7, y 8-15) = 128-191
    data = bytearray(256)
    data[64 + 0] = 1  # (8, 0)
    data[128 + 0] = 2  # (0, 8)
    data[192 + 63] = 3  # (15, 15)
    data[128 + 13] = 4  # (3, 10)
    img = decode_texture(bytes(data), 0, 16, 16, "I8")[..., 0]
    assert img[0, 8] == 1 and img[8, 0] == 2 and img[15, 15] == 3 and img[10, 3] == 4
    assert img.sum() == 10


def test_non_square_and_format_by_code() -> None:
    data = bytearray(32 * 8)
    data[64 * 3 + 5] = 9  # fourth tile of a 32x8 image, texel 5 = (3, 0) -> x 27
    img = decode_texture(bytes(data), 0, 32, 8, 7)
    assert img[0, 27, 0] == 9 and img[..., 0].sum() == 9


def test_mip_level_follows_the_previous_level() -> None:
    data = bytearray(16 * 16 * 4 + 8 * 8 * 4)
    data[1024 : 1024 + 4] = bytes([0x44, 0x33, 0x22, 0x11])  # level 1, texel (0, 0)
    lvl1 = decode_texture(bytes(data), 0, 16, 16, "RGBA8", level=1)
    assert lvl1.shape == (8, 8, 4)
    assert tuple(lvl1[0, 0]) == (0x11, 0x22, 0x33, 0x44)


def test_reads_from_emulated_memory() -> None:
    mem = PhysicalMemory()
    mem.write(0x18000100, _image_with(bytes([0x5A]), 13))
    img = decode_texture(mem, 0x18000100, 8, 8, "A8")
    assert img[2, 3, 3] == 0x5A


# --- ETC1 -------------------------------------------------------------------------------------------------------


def _bits(pixels: list[int]) -> int:
    return sum(1 << n for n in pixels)


def _etc_individual() -> int:
    # R1 A, R2 5, G1 3, G2 C, B1 0, B2 F, table 0 / 7, diff 0, flip 0; MSB set for pixels 13, 11; LSB for 13, 6
    return (
        0xA << 60
        | 0x5 << 56
        | 0x3 << 52
        | 0xC << 48
        | 0x0 << 44
        | 0xF << 40
        | 0 << 37
        | 7 << 34
        | _bits([13, 11]) << 16
        | _bits([13, 6])
    )


def _etc_differential_flipped() -> int:
    # R 31 dR -1, G 16 dG +3, B 0 dB +2, tables 3 / 1, diff 1, flip 1; MSB 15, 6; LSB 15, 9
    return (
        31 << 59
        | 0b111 << 56
        | 16 << 51
        | 3 << 48
        | 0 << 43
        | 2 << 40
        | 3 << 37
        | 1 << 34
        | 1 << 33
        | 1 << 32
        | _bits([15, 6]) << 16
        | _bits([15, 9])
    )


def _solid(k: int) -> int:
    """Individual mode, both halves base k*17, table 0, every pixel +2."""
    return k << 60 | k << 56


def _etc1_texture(first_block: int) -> bytes:
    return struct.pack("<4Q", first_block, _solid(1), _solid(2), _solid(3))


@pytest.mark.parametrize(
    ("x", "y", "rgb"),
    [
        (0, 0, (172, 53, 2)),  # sub-block 1 (x < 2), table 0, +2: 0xAA+2, 0x33+2, 0x00+2
        (3, 1, (0, 21, 72)),  # n = 13, sub-block 2, table 7, -183: 0x55, 0xCC, 0xFF
        (2, 3, (38, 157, 208)),  # n = 11, -47
        (1, 2, (178, 59, 8)),  # n = 6, +8
    ],
)
def test_etc1_individual_mode(x: int, y: int, rgb: tuple) -> None:
    img = decode_texture(_etc1_texture(_etc_individual()), 0, 8, 8, "ETC1")
    assert tuple(img[y, x]) == (*rgb, 255)


@pytest.mark.parametrize(
    ("x", "y", "rgb"),
    [
        (0, 0, (255, 145, 13)),  # sub-block 1 (y < 2): 255, 132, 0 with +13
        (3, 3, (230, 139, 0)),  # n = 15, sub-block 2: 247, 156, 16 with -17
        (2, 1, (255, 174, 42)),  # n = 9, +42
        (1, 2, (242, 151, 11)),  # n = 6, -5
    ],
)
def test_etc1_differential_flipped(x: int, y: int, rgb: tuple) -> None:
    img = decode_texture(_etc1_texture(_etc_differential_flipped()), 0, 8, 8, "ETC1")
    assert tuple(img[y, x]) == (*rgb, 255)


def test_etc1_blocks_in_z_order_inside_a_tile() -> None:
    img = decode_texture(_etc1_texture(_solid(0)), 0, 8, 8, "ETC1")
    assert img[0, 0, 0] == 2 and img[0, 4, 0] == 19 and img[4, 0, 0] == 36 and img[7, 7, 0] == 53
    assert img[3, 3, 0] == 2 and img[3, 4, 0] == 19


def test_etc1_second_tile() -> None:
    data = _etc1_texture(_solid(0)) + struct.pack("<4Q", _solid(4), _solid(5), _solid(6), _solid(7))
    img = decode_texture(data, 0, 16, 8, "ETC1")
    assert img[0, 8, 0] == 4 * 17 + 2 and img[7, 15, 0] == 7 * 17 + 2


def test_etc1a4_alpha_block_precedes_color() -> None:
    alpha = 0xF << (4 * 6) | 0x9 << (4 * 13)  # pixel n = 4x + y: (1, 2) -> 0xFF, (3, 1) -> 0x99, rest 0
    blocks = [alpha, _etc_individual(), 0, _solid(1), 0, _solid(2), 0, _solid(3)]
    img = decode_texture(struct.pack("<8Q", *blocks), 0, 8, 8, "ETC1A4")
    assert tuple(img[2, 1]) == (178, 59, 8, 0xFF)
    assert tuple(img[1, 3]) == (0, 21, 72, 0x99)
    assert img[0, 0, 3] == 0 and img[0, 4, 0] == 19


# --- bad input --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("w", "h"), [(12, 8), (8, 4), (2048, 8), (0, 8), (8, 24)])
def test_illegal_sizes(w: int, h: int) -> None:
    with pytest.raises(InvalidTextureSize):
        decode_texture(bytes(1 << 16), 0, w, h, "I8")


@pytest.mark.parametrize("fmt", [14, 15, -1, "RGBA9", "ETC2"])
def test_undefined_formats(fmt: int | str) -> None:
    with pytest.raises(InvalidTextureFormat):
        decode_texture(bytes(256), 0, 8, 8, fmt)


def test_level_smaller_than_a_tile() -> None:
    with pytest.raises(InvalidTextureSize):
        decode_texture(bytes(1 << 12), 0, 16, 16, "I8", level=2)


def test_buffer_too_short() -> None:
    with pytest.raises(FormatError):
        decode_texture(bytes(255), 0, 8, 8, "RGBA8")


def test_unmapped_and_past_the_end() -> None:
    mem = PhysicalMemory()
    with pytest.raises(MemoryFault):
        decode_texture(mem, 0x00001000, 8, 8, "RGBA8")
    with pytest.raises(MemoryFault):
        decode_texture(mem, 0x18000000 + 6 * 1024 * 1024 - 128, 8, 8, "RGBA8")


def test_scene2_capture_checkerboard(captures_dir) -> None:
    blob = (captures_dir / "scene2_textured_quad" / "blobs" / "448ff2b1e5621025_4000.bin").read_bytes()
    img = decode_texture(blob, 0, 64, 64, "RGBA8")
    assert tuple(img[0, 0]) == (255, 255, 0, 255)  # cell (0, 0): the yellow marker, top-left
    for cx, cy in [(1, 0), (0, 1), (3, 6), (7, 2)]:
        assert tuple(img[cy * 8 + 4, cx * 8 + 4]) == (36 * cx, 36 * (7 - cy), 160, 255)
    for cx, cy in [(1, 1), (2, 0), (7, 7)]:
        assert tuple(img[cy * 8 + 4, cx * 8 + 4]) == (255, 255, 255, 255)
