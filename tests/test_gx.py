"""External engines and LCD, driven through their memory-mapped registers; expected bytes worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor
from picaemu.errors import MemoryFault
from picaemu.gx import Gx, GxError, lcd, lower
from picaemu.gx.engines import memory_fill
from tests.reference_tables import MORTON as REFERENCE_MORTON

VRAM, FCRAM = 0x18000000, 0x20000000
MORTON = np.array(REFERENCE_MORTON)  # pica-formats.md §1.2, typed by hand in tests/reference_tables.py


@pytest.fixture
def gx() -> Gx:
    return Gx(CommandProcessor())


def _tiled_offset(x: int, y: int, width: int) -> int:
    return (y // 8) * width * 8 + (x // 8) * 64 + MORTON[y % 8, x % 8]


def _put_tiled_rgba8(gx: Gx, address: int, image: np.ndarray) -> None:
    """image (H, W, 4) r g b a -> tiled RGBA8 bytes A, B, G, R."""
    h, w = image.shape[:2]
    for y in range(h):
        for x in range(w):
            r, g, b, a = image[y, x]
            gx.memory.write(address + 4 * _tiled_offset(x, y, w), bytes([a, b, g, r]))


def _transfer(gx: Gx, src: int, dst: int, in_wh: tuple[int, int], out_wh: tuple[int, int], flags: int) -> None:
    gx.apply(pica.DisplayTransfer(src, dst, in_wh[0] | in_wh[1] << 16, out_wh[0] | out_wh[1] << 16, flags))


def _image(w: int, h: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 8, y * 16, (x + y) % 256, np.full_like(x, 0x80)], -1).astype(np.uint8)


@pytest.mark.parametrize(
    ("control", "pattern"), [(0x001, b"\x44\x33"), (0x101, b"\x44\x33\x22"), (0x201, b"\x44\x33\x22\x11")]
)
def test_memory_fill_widths(gx: Gx, control: int, pattern: bytes) -> None:
    for offset, value in ((0x0, VRAM >> 3), (0x4, (VRAM + 24) >> 3), (0x8, 0x11223344), (0xC, control)):
        gx.write(0x10400010 + offset, value)
    assert gx.memory.read(VRAM, 28) == (pattern * 12)[:24] + bytes(4)
    assert gx.gpu_word(0x1040001C) & 3 == 2  # finished set, busy cleared


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 24, 1000, 4099, 400 * 240 * 3 + 1])
@pytest.mark.parametrize(("width_code", "pattern"), [(0, b"\x44\x33"), (1, b"\x44\x33\x22"), (2, b"\x44\x33\x22\x11")])
def test_memory_fill_repeats_the_pattern_over_any_length(gx: Gx, size: int, width_code: int, pattern: bytes) -> None:
    """Byte i of the range is pattern[i % len(pattern)] (the fill copies its filled prefix in doubling blocks);
    the bytes after the range keep their contents."""
    start = VRAM + 5
    before = bytes(range(256)) * (size // 256 + 2)
    gx.memory.write(start, before)
    memory_fill(gx.memory, start, start + size, 0x11223344, width_code)
    assert gx.memory.read(start, size) == (pattern * (size // len(pattern) + 1))[:size]
    assert gx.memory.read(start + size, 7) == before[size : size + 7]


def test_display_transfer_tiled_rgba8_to_linear_rgb8(gx: Gx) -> None:
    img = _image(16, 8)
    _put_tiled_rgba8(gx, VRAM, img)
    _transfer(gx, VRAM, FCRAM, (16, 8), (16, 8), 0x1000)  # in RGBA8, out RGB8, tiled -> linear
    out = np.frombuffer(gx.memory.read(FCRAM, 16 * 8 * 3), np.uint8).reshape(8, 16, 3)
    np.testing.assert_array_equal(out[..., ::-1], img[..., :3])  # bytes B, G, R
    assert gx.gpu_word(0x10400C18) == 0x100  # done bit 8, start cleared


def test_display_transfer_flip_and_2x2_downscale(gx: Gx) -> None:
    img = _image(16, 16)
    _put_tiled_rgba8(gx, VRAM, img)
    _transfer(gx, VRAM, FCRAM, (16, 16), (16, 16), 0x02000001)  # flip, 2x2, RGBA8 -> RGBA8
    out = np.frombuffer(gx.memory.read(FCRAM, 8 * 8 * 4), np.uint8).reshape(8, 8, 4)[..., ::-1]  # -> r g b a
    for oy in range(8):
        for ox in range(8):
            block = img[2 * oy : 2 * oy + 2, 2 * ox : 2 * ox + 2].astype(int)
            expect = block.sum(axis=(0, 1)) // 4
            np.testing.assert_array_equal(out[7 - oy, ox], expect)


def test_display_transfer_linear_to_tiled_round_trip(gx: Gx) -> None:
    img = _image(16, 8)
    linear = img[..., ::-1].tobytes()  # RGBA8 pixel bytes A, B, G, R
    gx.memory.write(FCRAM, linear)
    _transfer(gx, FCRAM, VRAM, (16, 8), (16, 8), 0x0002)  # linear -> tiled
    r, g, b, a = img[3, 9]
    assert gx.memory.read(VRAM + 4 * _tiled_offset(9, 3, 16), 4) == bytes([a, b, g, r])
    _transfer(gx, VRAM, FCRAM + 0x1000, (16, 8), (16, 8), 0x0000)  # tiled -> linear
    assert gx.memory.read(FCRAM + 0x1000, len(linear)) == linear


def test_display_transfer_rejects_growth(gx: Gx) -> None:
    with pytest.raises(GxError, match="larger than the input"):
        _transfer(gx, VRAM, FCRAM, (8, 8), (16, 8), 0)


def test_display_transfer_names_a_bad_output_format_with_flip_and_crop(gx: Gx) -> None:
    """Output format 6 with flip + crop (fuzz capture seed 304275: a KeyError in the crop skew, read before the
    format was checked) is the named error."""
    with pytest.raises(GxError, match="output format 6 is not a pixel format"):
        _transfer(gx, VRAM, FCRAM, (16, 8), (16, 8), 0x6005)  # flip, crop, RGBA8 -> format 6


def test_block32_bit_changes_nothing(gx: Gx) -> None:
    """Bit 16 set: the same bytes as without it (the console draws the same picture)."""
    img = _image(16, 8)
    _put_tiled_rgba8(gx, VRAM, img)
    _transfer(gx, VRAM, FCRAM, (16, 8), (16, 8), 0x1000)
    _transfer(gx, VRAM, FCRAM + 0x1000, (16, 8), (16, 8), 0x1000 | 1 << 16)
    assert gx.memory.read(FCRAM + 0x1000, 16 * 8 * 3) == gx.memory.read(FCRAM, 16 * 8 * 3)


def test_raw_copy_bit_copies_bytes_unchanged(gx: Gx) -> None:
    """Bit 3 on a display transfer: out_w x out_h x bpp(out format) bytes copied as they are — here RGB8 out, so
    8 x 8 x 3 = 192 bytes of the tiled RGBA8 input, untiled, unconverted, unflipped (flip bit set too)."""
    src = bytes(range(256)) * 2
    gx.memory.write(VRAM, src)
    gx.memory.write(FCRAM, b"\xee" * 512)
    _transfer(gx, VRAM, FCRAM, (8, 8), (8, 8), 0x1000 | 1 << 3 | 1)
    assert gx.memory.read(FCRAM, 256) == src[:192] + b"\xee" * 64
    _transfer(gx, VRAM, FCRAM, (16, 16), (16, 16), 1 << 3 | 0x02000000)  # 2x2 downscale: 8 x 8 x 4 bytes
    assert gx.memory.read(FCRAM, 256) == src[:256]


def test_raw_copy_lowers_to_a_contiguous_texture_copy() -> None:
    writes = dict((a, v) for a, v, _ in lower(pica.DisplayTransfer(VRAM, FCRAM, 8 | 8 << 16, 8 | 8 << 16, 0x1008)))
    assert writes[0x10400C20] == 192 and writes[0x10400C24] == writes[0x10400C28] == 0
    assert writes[0x10400C10] == 0x1008


def test_flip_skew_needs_the_crop_bit(gx: Gx) -> None:
    """Flip with a narrower output: without bit 2 the output starts at its address; with bit 2 it starts
    (in_w - out_w) (out_h - 1) pixels later (16 - 8) * 7 * 3 = 168 bytes, the hardware's skew."""
    img = _image(16, 8)
    _put_tiled_rgba8(gx, VRAM, img)
    _transfer(gx, VRAM, FCRAM, (16, 8), (8, 8), 0x1001)
    plain = gx.memory.read(FCRAM, 8 * 8 * 3)
    assert plain[:3] == bytes(img[7, 0, 2::-1])  # first output row = last input row (flipped), bytes B, G, R
    _transfer(gx, VRAM, FCRAM + 0x1000, (16, 8), (8, 8), 0x1005)
    assert gx.memory.read(FCRAM + 0x1000 + 168, 8 * 8 * 3) == plain


def test_unknown_flag_bits_warn_once_and_run(gx: Gx, caplog: pytest.LogCaptureFixture) -> None:
    img = _image(8, 8)
    _put_tiled_rgba8(gx, VRAM, img)
    with caplog.at_level("WARNING", logger="picaemu.gx"):
        for _ in range(3):
            _transfer(gx, VRAM, FCRAM, (8, 8), (8, 8), 0x1000 | 1 << 20 | 1 << 7)
    assert [r.getMessage() for r in caplog.records].count(
        "transfer flags 0x00101080 set bits 0x00100080 of unknown meaning; they are ignored"
    ) == 1
    out = np.frombuffer(gx.memory.read(FCRAM, 8 * 8 * 3), np.uint8).reshape(8, 8, 3)
    np.testing.assert_array_equal(out[..., ::-1], img[..., :3])
    assert gx.counts["display transfers"] == 3


def test_texture_copy_with_gaps(gx: Gx) -> None:
    src = bytes(range(256)) * 2
    gx.memory.write(FCRAM, src)
    # input: lines of 32 bytes, 16-byte gap; output: lines of 16 bytes, 32-byte gap; 64 bytes copied
    gx.apply(pica.TextureCopy(FCRAM, VRAM, 64, 2 | 1 << 16, 1 | 2 << 16, 0))
    read = src[0:32] + src[48:80]
    out = gx.memory.read(VRAM, 4 * 48)
    assert [out[i * 48 : i * 48 + 16] for i in range(4)] == [read[i * 16 : i * 16 + 16] for i in range(4)]
    assert out[16:48] == bytes(32)


def test_texture_copy_rejects_hangs(gx: Gx) -> None:
    with pytest.raises(GxError, match="0 bytes"):
        gx.apply(pica.TextureCopy(FCRAM, VRAM, 15, 0, 0, 0))
    with pytest.raises(GxError, match="zero line width"):
        gx.apply(pica.TextureCopy(FCRAM, VRAM, 64, 1 << 16, 0, 0))


def test_command_list_kick_through_mmio(gx: Gx) -> None:
    b = CommandBuilder()
    b.write("GPUREG_VIEWPORT_WIDTH", 0x0045E000)
    b.finalize()
    gx.memory.write(FCRAM + 0x100, b.tobytes())
    gx.apply(pica.CommandList(FCRAM + 0x100, len(b.tobytes())))
    assert gx.processor.state.regs[0x41] == 0x0045E000
    assert gx.counts["command lists"] == 1
    writes = lower(pica.CommandList(FCRAM + 0x100, 32))
    assert writes == [(0x104018E0, 4, 4), (0x104018E8, (FCRAM + 0x100) >> 3, 4), (0x104018F0, 1, 4)]


def test_byte_lane_writes_and_unmapped_addresses(gx: Gx) -> None:
    gx.write(0x10400C10, 0x11223344)
    gx.write(0x10400C11, 0xAB, 1)
    gx.write(0x10400C12, 0xBEEF, 2)
    assert gx.gpu_word(0x10400C10) == 0xBEEFAB44
    with pytest.raises(GxError, match="no GPU or LCD register"):
        gx.write(0x10300000, 1)
    with pytest.raises(MemoryFault):
        gx.apply(pica.MemoryFill((pica.FillUnit(0x08000000, 0x08000100, 0, 0x201), pica.FillUnit(0, 0, 0, 0))))


def test_lcd_landscape_orientation(gx: Gx) -> None:
    """Memory row x = screen column x from the left; pixel 0 of a row = bottom of that column."""
    fb = np.zeros((400, 240, 3), np.uint8)
    fb[0, 0] = (1, 2, 3)  # bytes B, G, R -> bottom-left pixel is (3, 2, 1)
    fb[399, 239] = (9, 8, 7)  # last row, last pixel -> top-right
    gx.memory.write(FCRAM, fb.tobytes())
    gx.apply(pica.Present(0, FCRAM, FCRAM, 0x141, 720, 0))
    gx.write(0x1040045C, 0x019000F0)
    img = lcd.screen_image(gx.memory, gx.gpu, "top")
    assert img.shape == (240, 400, 3)
    assert tuple(img[239, 0]) == (3, 2, 1) and tuple(img[0, 399]) == (7, 8, 9)
    gx.write(0x10400470, 7)
    with pytest.raises(lcd.LcdError, match="format 7"):
        lcd.screen_image(gx.memory, gx.gpu, "top")


def test_display_transfer_linear_rgb565_to_rgba4(gx: Gx) -> None:
    """Linear -> linear (flags bits 1 + 5), RGB565 in (format 2), RGBA4 out (format 4): by hand, red 0xF800 ->
    0xF00F, green 0x07E0 -> 0x0F0F, blue 0x001F -> 0x00FF, white 0xFFFF -> 0xFFFF (alpha 255 -> 0xF)."""
    src = np.tile(np.array([0xF800, 0x07E0, 0x001F, 0xFFFF], "<u2"), 16)  # 8 x 8 pixels
    gx.memory.write(FCRAM, src.tobytes())
    _transfer(gx, FCRAM, VRAM, (8, 8), (8, 8), 0x4222)
    out = np.frombuffer(gx.memory.read(VRAM, 128), "<u2")
    np.testing.assert_array_equal(out, np.tile(np.array([0xF00F, 0x0F0F, 0x00FF, 0xFFFF], "<u2"), 16))


@pytest.mark.parametrize("seed", range(6))
def test_transfer_addressing_matches_scalar_restatement(gx: Gx, seed: int) -> None:
    """Tiled RGBA8 -> linear RGBA8 (bytes copied per pixel, no conversion), random sizes, flip and crop bits:
    output pixel (x, y) at ``dst + skew + (x + y' w_out) 4`` with y' = out_h - 1 - y when flipped, read from
    input pixel (x, y) of the tiled image; skew = (in_w - out_w)(out_h - 1) 4 bytes only with flip and crop."""
    rng = np.random.default_rng(seed)
    in_w, in_h = 8 * int(rng.integers(1, 5)), 8 * int(rng.integers(1, 4))
    out_w, out_h = 8 * int(rng.integers(1, in_w // 8 + 1)), int(rng.integers(1, in_h + 1))
    flip, crop = int(rng.integers(2)), int(rng.integers(2))
    src = rng.integers(0, 256, in_w * in_h * 4, dtype=np.uint8).tobytes()
    gx.memory.write(VRAM, src)
    gx.memory.write(FCRAM, bytes(0x4000))
    _transfer(gx, VRAM, FCRAM, (in_w, in_h), (out_w, out_h), flip | crop << 2)
    skew = (in_w - out_w) * (out_h - 1) * 4 if flip and crop else 0
    out = gx.memory.read(FCRAM, 0x4000)
    for y in range(out_h):
        oy = out_h - 1 - y if flip else y
        for x in range(out_w):
            s = 4 * _tiled_offset(x, y, in_w)
            d = skew + 4 * (x + oy * out_w)
            assert out[d : d + 4] == src[s : s + 4], (x, y)
