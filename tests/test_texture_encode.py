"""Texture encoding: hand-computed bytes at hand-computed tiled offsets, and decode(encode(x)) == x round trips."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import UnsupportedFeature
from picaemu.texture import InvalidTextureSize, TextureFormat, decode_texture, encode_texture

NON_ETC = [f.name for f in TextureFormat if not f.name.startswith("ETC")]


def _one_pixel(x: int, y: int, rgba: tuple[int, int, int, int], size: int = 8) -> np.ndarray:
    img = np.zeros((size, size, 4), np.uint8)
    img[y, x] = rgba
    return img


@pytest.mark.parametrize(
    ("fmt", "offset", "expected"),
    [
        ("RGBA8", 13 * 4, bytes([0x44, 0x33, 0x22, 0x11])),  # (3, 2) is Morton index 13; bytes A B G R
        ("RGB8", 13 * 3, bytes([0x33, 0x22, 0x11])),
        # R 0x11>>3 = 2, G 0x22>>3 = 4, B 0x33>>3 = 6, A 0x44>>7 = 0: 2<<11 | 4<<6 | 6<<1 | 0 = 0x110C
        ("RGBA5551", 13 * 2, bytes([0x0C, 0x11])),
        ("RGB565", 13 * 2, bytes([0x06, 0x11])),  # R 2 << 11 | G (0x22>>2 = 8) << 5 | B 6 = 0x1106
        ("RGBA4", 13 * 2, bytes([0x34, 0x12])),
        ("HILO8", 13 * 2, bytes([0x22, 0x11])),
        ("A8", 13, bytes([0x44])),
    ],
)
def test_known_texel_bytes(fmt: str, offset: int, expected: bytes) -> None:
    data = encode_texture(_one_pixel(3, 2, (0x11, 0x22, 0x33, 0x44)), fmt)
    assert data[offset : offset + len(expected)] == expected
    assert data.count(0) >= len(data) - len(expected)


def test_intensity_is_rec601_luma() -> None:
    # (10, 20, 30): (299*10 + 587*20 + 114*30 + 500) // 1000 = 18650 // 1000 = 18
    img = _one_pixel(3, 2, (10, 20, 30, 0xA0))
    assert encode_texture(img, "I8")[13] == 18
    assert encode_texture(img, "IA8")[26:28] == bytes([0xA0, 18])
    assert encode_texture(img, "IA4")[13] == (18 >> 4) << 4 | 0xA


def test_4bit_nibble_placement() -> None:
    img = np.zeros((8, 8, 4), np.uint8)
    img[2, 2, 3] = 0xA0  # Morton 12: low nibble of byte 6
    img[2, 3, 3] = 0x70  # Morton 13: high nibble of byte 6
    data = encode_texture(img, "A4")
    assert len(data) == 32 and data[6] == 0x7A and sum(data) == 0x7A


@pytest.mark.parametrize("fmt", NON_ETC)
def test_round_trip(fmt: str) -> None:
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (16, 32, 4), dtype=np.uint8)
    representable = decode_texture(encode_texture(img, fmt), 0, 32, 16, fmt)
    again = encode_texture(representable, fmt)
    assert np.array_equal(decode_texture(again, 0, 32, 16, fmt), representable)
    assert again == encode_texture(representable, fmt)


def test_etc_is_refused() -> None:
    with pytest.raises(UnsupportedFeature):
        encode_texture(np.zeros((8, 8, 4), np.uint8), "ETC1")


def test_bad_image_shapes() -> None:
    with pytest.raises(InvalidTextureSize):
        encode_texture(np.zeros((8, 12, 4), np.uint8), "RGBA8")
    with pytest.raises(InvalidTextureSize):
        encode_texture(np.zeros((8, 8, 3), np.uint8), "RGBA8")
