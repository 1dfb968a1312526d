"""Framebuffer formats and tiled addressing, against byte layouts typed from pica-formats.md §1.2 / §2.1."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.framebuffer import ColorFormat, DepthFormat
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from tests.reference_tables import MORTON as MORTON_TABLE


def test_morton_matches_reference_table():
    y, x = np.mgrid[0:8, 0:8]
    assert fbm.morton8(x, y).tolist() == MORTON_TABLE


def test_pixel_index_bottom_up_rows_and_tiles():
    # 16x16 buffer; window (9, 5) -> memory row 10 -> tile row 1, tile column 1 -> tile 3; in-tile (1, 2) = 9
    assert int(fbm.pixel_index(np.array(9), np.array(5), 16, 16)) == 3 * 64 + 9
    # top-left pixel of the picture (window y = H - 1) is the first pixel in memory
    assert int(fbm.pixel_index(np.array(0), np.array(15), 16, 16)) == 0
    # flipped orientation: memory row = y
    assert int(fbm.pixel_index(np.array(9), np.array(10), 16, 16, flipped=True)) == 3 * 64 + 9


# (format, r g b a in, bytes in memory lowest address first)
COLOR_BYTES = [
    (ColorFormat.RGBA8, (0x11, 0x22, 0x33, 0x44), [0x44, 0x33, 0x22, 0x11]),
    (ColorFormat.RGB8, (0x11, 0x22, 0x33, 0x44), [0x33, 0x22, 0x11]),
    (ColorFormat.RGB5A1, (0xFF, 0x00, 0xFF, 0xFF), [0x3F, 0xF8]),  # R31 G0 B31 A1 = 0xF83F
    (ColorFormat.RGB565, (0x80, 0x40, 0x20, 0xFF), [0x04, 0x82]),  # R16 G16 B4 = 0x8204
    (ColorFormat.RGBA4, (0x12, 0x34, 0x56, 0x78), [0x57, 0x13]),  # R1 G3 B5 A7 = 0x1357
]


@pytest.mark.parametrize(("fmt", "rgba", "expected"), COLOR_BYTES)
def test_color_encoding_byte_layout(fmt, rgba, expected):
    buf = np.zeros(8, np.uint8)
    word = fbm.encode_color(np.array([rgba], np.uint8), fmt)
    fbm.scatter_words(buf, np.array([0]), word, fbm.COLOR_BPP[fmt])
    assert buf[: len(expected)].tolist() == expected
    assert buf[len(expected) :].tolist() == [0] * (8 - len(expected))


# (format, bytes in memory, decoded r g b a: expansion by bit replication, alpha 255 when absent)
COLOR_DECODE = [
    (ColorFormat.RGBA8, [0x44, 0x33, 0x22, 0x11], (0x11, 0x22, 0x33, 0x44)),
    (ColorFormat.RGB8, [0x33, 0x22, 0x11], (0x11, 0x22, 0x33, 0xFF)),
    (ColorFormat.RGB565, [0x04, 0x82], (132, 65, 33, 0xFF)),  # 16 -> 128|4, 16 (6 bit) -> 64|1, 4 -> 32|1
    (ColorFormat.RGBA4, [0x57, 0x13], (0x11, 0x33, 0x55, 0x77)),
    (ColorFormat.RGB5A1, [0x3E, 0xF8], (0xFF, 0x00, 0xFF, 0x00)),
    (ColorFormat.RGB5A1, [0x01, 0x00], (0x00, 0x00, 0x00, 0xFF)),
]


@pytest.mark.parametrize(("fmt", "raw", "rgba"), COLOR_DECODE)
def test_color_decoding(fmt, raw, rgba):
    words = fbm.gather_words(np.array(raw, np.uint8), np.array([0]), fbm.COLOR_BPP[fmt])
    assert tuple(fbm.decode_color(words, fmt)[0]) == rgba


@pytest.mark.parametrize(
    ("fmt", "depth", "stencil", "expected"),
    [
        (DepthFormat.D16, 0xBEEF, 0, [0xEF, 0xBE]),
        (DepthFormat.D24, 0x123456, 0, [0x56, 0x34, 0x12]),
        (DepthFormat.D24S8, 0x123456, 0xAB, [0x56, 0x34, 0x12, 0xAB]),
    ],
)
def test_depth_byte_layout_round_trip(fmt, depth, stencil, expected):
    buf = np.zeros(4, np.uint8)
    bpp = fbm.DEPTH_BPP[fmt]
    fbm.scatter_words(buf, np.array([0]), fbm.join_depth_word(np.array([depth]), np.array([stencil]), fmt), bpp)
    assert buf[:bpp].tolist() == expected
    d, s = fbm.split_depth_word(fbm.gather_words(buf, np.array([0]), bpp), fmt)
    assert (int(d[0]), int(s[0])) == (depth, stencil)


def test_quantize_depth_truncates_and_clamps():
    q = fbm.quantize_depth(np.array([0.0, 0.5, 1.0, 2.0, -1.0, np.nan], np.float32), DepthFormat.D16)
    assert q.tolist() == [0, 32767, 65535, 65535, 0, 0]
    assert fbm.quantize_depth(np.array([1.0]), DepthFormat.D24S8).tolist() == [0xFFFFFF]


def fb_regs(width=16, height=16, color_fmt=0, depth_fmt=3, color_addr=0x18000000, depth_addr=0x18100000):
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("FRAMEBUFFER_DIM")] = access.compose(
        "FRAMEBUFFER_DIM", width=width, height_minus_1=height - 1, orientation=1
    )
    regs[id_of("COLORBUFFER_FORMAT")] = access.compose("COLORBUFFER_FORMAT", format=color_fmt)
    regs[id_of("DEPTHBUFFER_FORMAT")] = access.compose("DEPTHBUFFER_FORMAT", format=depth_fmt)
    regs[id_of("COLORBUFFER_LOC")] = color_addr >> 3
    regs[id_of("DEPTHBUFFER_LOC")] = depth_addr >> 3
    return regs


def test_state_from_registers_and_image_orientation():
    regs = fb_regs(color_fmt=0)
    fb = fbm.FramebufferState.from_regs(regs)
    assert (fb.width, fb.height, fb.color_format, fb.depth_format) == (16, 16, ColorFormat.RGBA8, DepthFormat.D24S8)
    mem = PhysicalMemory()
    # first pixel in memory = top-left of the picture; bytes A B G R
    mem.write(0x18000000, bytes([0xFF, 0x03, 0x02, 0x01]))
    # pixel 64 (tile 1) in memory = picture (8, 0)
    mem.write(0x18000000 + 64 * 4, bytes([0xFF, 0x30, 0x20, 0x10]))
    img = fbm.read_color_image(mem, fb)
    assert tuple(img[0, 0]) == (1, 2, 3, 255)
    assert tuple(img[0, 8]) == (0x10, 0x20, 0x30, 255)
    assert tuple(img[15, 15]) == (0, 0, 0, 0)


def test_bad_framebuffer_registers_raise_named_errors():
    regs = fb_regs()
    regs[id_of("FRAMEBUFFER_BLOCK32")] = 1
    with pytest.raises(UnsupportedFeature, match="32x32"):
        fbm.FramebufferState.from_regs(regs)
    with pytest.raises(UnsupportedFeature, match="depth buffer format"):
        fbm.FramebufferState.from_regs(fb_regs(depth_fmt=1))
    with pytest.raises(UnsupportedFeature, match="color buffer format"):
        fbm.FramebufferState.from_regs(fb_regs(color_fmt=5))
    with pytest.raises(PipelineError, match="8x8"):
        fbm.FramebufferState.from_regs(fb_regs(width=12)).check_size()


@pytest.mark.parametrize("color_fmt", [f.value for f in ColorFormat])
@pytest.mark.parametrize("depth_fmt", [f.value for f in DepthFormat])
def test_images_read_whole_words_as_the_bytes_say(color_fmt, depth_fmt):
    """``read_color_image`` / ``read_depth_image`` read aligned 2- and 4-byte pixels as words: the same pixels as
    assembling every pixel byte by byte (``gather_words``), for every format, at an address 8 bytes past a word."""
    fb = fbm.FramebufferState.from_regs(
        fb_regs(color_fmt=color_fmt, depth_fmt=depth_fmt, color_addr=0x18000008, depth_addr=0x18100008)
    )
    mem = PhysicalMemory()
    rng = np.random.default_rng(color_fmt * 8 + depth_fmt)
    mem.write(0x18000000, rng.integers(0, 256, 0x101000, np.uint8).tobytes())
    yy, x = np.mgrid[0:16, 0:16]
    index = fbm.pixel_index(x, 15 - yy, 16, 16, fb.flipped).ravel()  # row 0 = the top
    color = fbm.gather_words(fb.color_bytes(mem), index * fb.color_bpp, fb.color_bpp)
    expected = fbm.decode_color(color, fb.color_format).reshape(16, 16, 4)
    assert np.array_equal(fbm.read_color_image(mem, fb), expected)
    depth = fbm.gather_words(fb.depth_bytes(mem), index * fb.depth_bpp, fb.depth_bpp)
    z, s = fbm.split_depth_word(depth, fb.depth_format)
    got_z, got_s = fbm.read_depth_image(mem, fb)
    assert np.array_equal(got_z, z.reshape(16, 16)) and np.array_equal(got_s, s.reshape(16, 16))
