"""LCD scan-out: every framebuffer format and every mode the PDC format register allows (2D doubled, wide, AA, AB,
BA), per eye, checked on hand-worked pixels and, for random setups, against a scalar restatement of the rules
(3dbrew "GPU/External Registers": bits 4-5 interlace, bit 6 row doubling; the top panel has 800 columns)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica
from PIL import Image

from picaemu.cli import main
from picaemu.command.processor import CommandProcessor
from picaemu.gx import Gx, lcd
from picaemu.gx.convert import reset_gpu_regs, reset_regs

FCRAM, RIGHT = 0x20000000, 0x20100000
TOP, BOTTOM = 0x10400400, 0x10400500
SIZE, FORMAT = 0x5C, 0x70


@pytest.fixture
def gx() -> Gx:
    return Gx(CommandProcessor())


def _setup(gx: Gx, base: int, rows: int, row_length: int, fmt_word: int, bpp: int, right: int = RIGHT) -> None:
    gx.apply(pica.Present(0 if base == TOP else 1, FCRAM, right, fmt_word, row_length * bpp, 0))
    gx.write(base + SIZE, row_length | rows << 16)


def _rows(count: int, row_length: int, seed: int) -> np.ndarray:
    """(count, row_length, 3) distinct B, G, R bytes."""
    return np.random.default_rng(seed).integers(0, 256, (count, row_length, 3), dtype=np.uint8)


def test_wide_mode_shows_800_columns(gx: Gx) -> None:
    """Top screen, mode A without bit 6 (libctru's wide mode, FB_SIZE still 400 rows): 800 rows, one per column."""
    fb = _rows(800, 240, 0)
    gx.memory.write(FCRAM, fb.tobytes())
    _setup(gx, TOP, 400, 240, 0x101, 3)
    img = lcd.screen_image(gx.memory, gx.gpu, "top")
    assert img.shape == (240, 800, 3)
    assert img[239, 799].tolist() == fb[799, 0, ::-1].tolist()  # last row, pixel 0 -> bottom-right, bytes B G R
    assert img[0, 400].tolist() == fb[400, 239, ::-1].tolist()


def test_2d_mode_shows_each_row_once(gx: Gx) -> None:
    fb = _rows(400, 240, 1)
    gx.memory.write(FCRAM, fb.tobytes())
    _setup(gx, TOP, 400, 240, 0x141, 3)
    img = lcd.screen_image(gx.memory, gx.gpu, "top", "right")  # mode A: the right eye sees the left buffer too
    assert img.shape == (240, 400, 3) and img[239, 399].tolist() == fb[399, 0, ::-1].tolist()


@pytest.mark.parametrize(("mode", "right_eye_buffer"), [(0x1, "left"), (0x2, "right"), (0x3, "right")])
def test_interlaced_modes_per_eye(gx: Gx, mode: int, right_eye_buffer: str) -> None:
    """AA scans the left buffer twice; AB / BA alternate the left and right buffers: 400 columns per eye."""
    left, right = _rows(400, 240, 2), _rows(400, 240, 3)
    gx.memory.write(FCRAM, left.tobytes())
    gx.memory.write(RIGHT, right.tobytes())
    _setup(gx, TOP, 400, 240, 0x101 | mode << 4, 3)
    seen_left = lcd.screen_image(gx.memory, gx.gpu, "top", "left")
    seen_right = lcd.screen_image(gx.memory, gx.gpu, "top", "right")
    assert seen_left.shape == seen_right.shape == (240, 400, 3)
    assert seen_left[239, 7].tolist() == left[7, 0, ::-1].tolist()
    want = right if right_eye_buffer == "right" else left
    assert seen_right[239, 7].tolist() == want[7, 0, ::-1].tolist()


def test_bottom_screen_320_columns(gx: Gx) -> None:
    fb = _rows(320, 240, 4)
    gx.memory.write(FCRAM, fb.tobytes())
    _setup(gx, BOTTOM, 320, 240, 0x101, 3)
    img = lcd.screen_image(gx.memory, gx.gpu, "bottom")
    assert img.shape == (240, 320, 3) and img[0, 319].tolist() == fb[319, 239, ::-1].tolist()


def test_doubling_with_interlace_is_refused(gx: Gx) -> None:
    _setup(gx, TOP, 400, 240, 0x161, 3)
    with pytest.raises(lcd.LcdError, match="interlace mode AB"):
        lcd.screen_image(gx.memory, gx.gpu, "top")


# one pixel per format, bytes in memory order -> the RGB the screen shows (worked out by hand from the layouts)
FORMAT_PIXELS = [
    (0, bytes([0x80, 3, 2, 1]), (1, 2, 3)),  # RGBA8: bytes A, B, G, R
    (1, bytes([3, 2, 1]), (1, 2, 3)),  # RGB8: bytes B, G, R
    (2, (0xF81F).to_bytes(2, "little"), (255, 0, 255)),  # RGB565: R 31, G 0, B 31
    (3, (0x07C1).to_bytes(2, "little"), (0, 255, 0)),  # RGB5A1: G 31 (bits 6-10), A 1
    (4, (0x0F0F).to_bytes(2, "little"), (0, 255, 0)),  # RGBA4: G 15 (bits 8-11), A 15
]


@pytest.mark.parametrize(("fmt", "pixel", "rgb"), FORMAT_PIXELS)
def test_every_pixel_format(gx: Gx, fmt: int, pixel: bytes, rgb: tuple[int, int, int]) -> None:
    gx.memory.write(FCRAM, pixel * (8 * 16))
    _setup(gx, BOTTOM, 16, 8, 0x100 | fmt, len(pixel))
    img = lcd.screen_image(gx.memory, gx.gpu, "bottom")
    assert img.shape == (8, 16, 3) and {tuple(p) for p in img.reshape(-1, 3).tolist()} == {rgb}


def _scalar_pixel(fmt: int, b: bytes) -> tuple[int, int, int]:
    """One pixel's RGB from its bytes, per the layouts of pica-formats.md §2.3 (n-bit fields widened to 8 bits by
    repeating their top bits)."""
    word = int.from_bytes(b, "little")
    if fmt == 0:
        return word >> 24, word >> 16 & 0xFF, word >> 8 & 0xFF
    if fmt == 1:
        return b[2], b[1], b[0]
    five = lambda v: (v & 0x1F) << 3 | (v & 0x1F) >> 2  # noqa: E731 - bit replication to 8 bits
    if fmt == 2:
        g = word >> 5 & 0x3F
        return five(word >> 11), g << 2 | g >> 4, five(word)
    if fmt == 3:
        return five(word >> 11), five(word >> 6), five(word >> 1)
    return tuple((word >> s & 0xF) * 17 for s in (12, 8, 4))  # type: ignore[return-value]


def _scalar_screen(
    mem: bytes, right_mem: bytes, fmt_word: int, rows_reg: int, row_length: int, top: bool, eye: str
) -> list[list[tuple[int, int, int]]]:
    """The picture restated: scanlines = rows_reg x (2 on the top panel); doubled or interlaced modes show half
    that many distinct rows per eye; the right eye reads its own buffer only in AB / BA; column x = memory row x,
    image row y = pixel row_length - 1 - y of that memory row."""
    fmt, mode, doubled = fmt_word & 7, fmt_word >> 4 & 3, fmt_word >> 6 & 1
    scanlines = rows_reg * (2 if top else 1)
    columns = scanlines // 2 if doubled or mode else scanlines
    source = right_mem if eye == "right" and mode in (2, 3) else mem
    bpp = (4, 3, 2, 2, 2)[fmt]
    stride = row_length * bpp
    return [
        [
            _scalar_pixel(fmt, source[x * stride + p * bpp : x * stride + p * bpp + bpp])
            for x in range(columns)
            for p in [row_length - 1 - y]
        ]
        for y in range(row_length)
    ]


@pytest.mark.parametrize("seed", range(8))
def test_matches_scalar_restatement(gx: Gx, seed: int) -> None:
    rng = random.Random(seed)
    fmt = rng.randrange(5)
    mode_bits = rng.choice([0x00, 0x10, 0x20, 0x30, 0x40])
    top = rng.randrange(2) == 0
    eye = rng.choice(["left", "right"])
    rows_reg, row_length = 8 * rng.randrange(1, 4), 8
    bpp = (4, 3, 2, 2, 2)[fmt]
    nbytes = rows_reg * 2 * row_length * bpp
    mem = bytes(rng.randrange(256) for _ in range(nbytes))
    right_mem = bytes(rng.randrange(256) for _ in range(nbytes))
    gx.memory.write(FCRAM, mem)
    gx.memory.write(RIGHT, right_mem)
    _setup(gx, TOP if top else BOTTOM, rows_reg, row_length, 0x100 | mode_bits | fmt, bpp)
    img = lcd.screen_image(gx.memory, gx.gpu, "top" if top else "bottom", eye)
    want = _scalar_screen(mem, right_mem, 0x100 | mode_bits | fmt, rows_reg, row_length, top, eye)
    assert [[tuple(p) for p in row] for row in img.tolist()] == want


def test_wide_capture_renders_800_by_240(tmp_path) -> None:
    """End to end: a capture that presents a wide-mode top screen renders as an 800x240 PNG."""

    fb = _rows(800, 240, 5)
    cap = pica.Capture(meta={}, state=pica.InitialState(regs=reset_regs(), gpu_regs=reset_gpu_regs()))
    cap.events.append(pica.MemoryWrite(FCRAM, cap.blobs.add(fb.tobytes())))
    cap.events.append(pica.Present(0, FCRAM, FCRAM, 0x101, 720, 0))
    cap.events.append(pica.FrameEnd())
    pica.write(tmp_path / "wide.pica", cap)
    result = CliRunner().invoke(main, ["render", str(tmp_path / "wide.pica"), "-o", str(tmp_path / "w.png")])
    assert result.exit_code == 0, result.output
    img = np.asarray(Image.open(tmp_path / "w.png").convert("RGB"))
    assert img.shape == (240, 800, 3) and img[239, 799].tolist() == fb[799, 0, ::-1].tolist()
