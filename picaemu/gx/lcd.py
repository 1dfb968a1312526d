"""What each LCD shows: the linear framebuffer the PDC registers name, as the picture a person sees.

Receives the external GPU register file (``gpu`` (0x1000,) uint32, physical 0x10400000 + 4i) and emulated
memory. ``ScreenConfig.from_regs`` decodes one screen's PDC registers through the register table
(``picaemu.regs.external``: PDCn_FB_SIZE row length and row count; PDCn_FORMAT the transfer format enum 0 RGBA8,
1 RGB8 (bytes B, G, R), 2 RGB565, 3 RGB5A1, 4 RGBA4, the interlace mode A, AA, AB, BA and row doubling;
PDCn_SELECT the first/second address pair; PDCn_STRIDE bytes per row; left/right-eye addresses).

Each scanline of a panel is one screen column; a panel scans ``SCANLINES_PER_ROW`` x FB_SIZE rows of them (800 on
the top screen, 320 on the bottom). How many distinct memory rows that shows, per eye:

- mode A with bit 6 (the top screen's 2D mode): each row feeds two scanlines -> scanlines / 2 rows (400);
- mode A without bit 6 (the top screen's wide mode, and the bottom screen): one row per scanline (800 / 320);
- AA (A's rows twice), AB / BA (left and right rows alternate): scanlines / 2 rows from each eye's buffer.

In modes A and AA only the left (A) buffer is scanned, so both eyes see it; in AB / BA the right eye sees the
right-eye address. Row doubling together with an interlaced mode (which GSP never sets) raises ``LcdError``, and so does
a screen whose framebuffer address is still 0: no present (and no PDC write) ever named a picture for it.
``screen_image`` returns (row_length, rows, 3) uint8 RGB — (240, 400, 3) for the top screen in 2D or 3D mode,
(240, 800, 3) in wide mode, (240, 320, 3) for the bottom — upright and landscape: memory row x is screen column x
from the left and pixel 0 of a row is the bottom of the column, so the image is ``np.rot90`` of the (rows, row
length) memory array. The image's width is what the screen shows: distinct columns, doubled ones counted once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.errors import PicaError
from picaemu.fragment.framebuffer import decode_color
from picaemu.gx.engines import BYTES_PER_PIXEL, TRANSFER_FORMATS
from picaemu.memory import PhysicalMemory
from picaemu.regs import access
from picaemu.regs.external import SCREENS as PDC

SCREENS = {"top": 0, "bottom": 1}
EYES = ("left", "right")
MODES_WITH_RIGHT_EYE = frozenset({"AB", "BA"})
# scanlines (screen columns) a panel shows per FB_SIZE row: the top LCD has 800 columns for its 400-row size (two
# per row: doubled in 2D, left/right eyes in 3D, 800 distinct rows in wide mode); the bottom LCD 320 for 320
SCANLINES_PER_ROW = {0: 2, 1: 1}
# Citra's reset values of the LCD registers (citrace.md): 240-pixel rows, 400 (top) / 320 (bottom) of them, RGB8,
# stride 720 (the top's format word has no mode bits: the wide 800-row layout, until the first present sets the
# app's mode)
RESET_ROWS = {0: 400, 1: 320}
RESET_ROW_LENGTH, RESET_FORMAT, RESET_STRIDE = 240, 1, 720


def reset_values(screen: int) -> dict[str, int]:
    """Register name -> Citra's reset value, for one screen's PDC registers."""
    pdc = PDC[screen]
    return {
        f"{pdc}_FB_SIZE": access.compose(f"{pdc}_FB_SIZE", width=RESET_ROW_LENGTH, height=RESET_ROWS[screen]),
        f"{pdc}_FORMAT": access.put(f"{pdc}_FORMAT", "pixel_format", RESET_FORMAT),
        f"{pdc}_STRIDE": access.put(f"{pdc}_STRIDE", "stride", RESET_STRIDE),
    }


class LcdError(PicaError):
    """The LCD registers describe a framebuffer that cannot be shown (bad format, size, stride or mode)."""


@dataclass(frozen=True)
class ScreenConfig:
    """One screen's scan-out setup (for one eye), decoded from its PDC registers."""

    screen: int
    row_length: int  # pixels per memory row (240): the screen's height
    rows: int  # distinct memory rows scanned for this eye: the screen's width in pixels
    format: int
    stride: int
    address: int
    mode: str  # interlace mode name (INTERLACE_MODES)
    doubled: bool  # FB_FORMAT bit 6: each row feeds two scanlines

    @classmethod
    def from_regs(cls, gpu: np.ndarray, screen: int, eye: str = "left") -> ScreenConfig:
        pdc = PDC[screen]

        def field(reg: str, name: str) -> int | float | bool | str:
            return access.ext_value(gpu, f"{pdc}_{reg}", name)

        mode, doubled = str(field("FORMAT", "interlace")), bool(field("FORMAT", "double"))
        if doubled and mode != "A":
            raise LcdError(
                f"screen {screen}: FB_FORMAT 0x{access.ext_word(gpu, f'{pdc}_FORMAT'):X} doubles rows in "
                f"interlace mode {mode}, a combination GSP never sets and whose picture is not known"
            )
        right = eye == "right" and mode in MODES_WITH_RIGHT_EYE
        slot = f"{'RIGHT' if right else 'LEFT'}_{'B' if field('SELECT', 'second') else 'A'}"
        scanlines = int(field("FB_SIZE", "height")) * SCANLINES_PER_ROW[screen]
        rows = scanlines // 2 if doubled or mode != "A" else scanlines
        fmt = access.bits(access.ext_word(gpu, f"{pdc}_FORMAT"), f"{pdc}_FORMAT", "pixel_format")
        return cls(
            screen,
            int(field("FB_SIZE", "width")),
            rows,
            fmt,
            int(field("STRIDE", "stride")),
            int(field(slot, "address")),
            mode,
            doubled,
        )


def memory_image(memory: PhysicalMemory, cfg: ScreenConfig) -> np.ndarray:
    """(rows, row_length, 4) uint8 RGBA of the framebuffer, in memory order."""
    if cfg.format not in TRANSFER_FORMATS:
        raise LcdError(f"screen {cfg.screen}: framebuffer format {cfg.format} is not a pixel format")
    bpp = BYTES_PER_PIXEL[cfg.format]
    if cfg.rows == 0 or cfg.row_length == 0 or cfg.stride < cfg.row_length * bpp:
        raise LcdError(f"screen {cfg.screen}: framebuffer {cfg.row_length}x{cfg.rows} with stride {cfg.stride}")
    span = cfg.stride * (cfg.rows - 1) + cfg.row_length * bpp
    raw = memory.bytes(cfg.address, span, f"LCD {cfg.screen} framebuffer")
    rows = np.lib.stride_tricks.as_strided(raw, (cfg.rows, cfg.row_length * bpp), (cfg.stride, 1))
    pix = rows.reshape(cfg.rows, cfg.row_length, bpp).astype(np.uint32)
    words = np.zeros(pix.shape[:2], np.uint32)
    for i in range(bpp):
        words |= pix[:, :, i] << np.uint32(8 * i)
    return decode_color(words.ravel(), TRANSFER_FORMATS[cfg.format]).reshape(cfg.rows, cfg.row_length, 4)


def screen_image(memory: PhysicalMemory, gpu: np.ndarray, screen: str = "top", eye: str = "left") -> np.ndarray:
    """The upright landscape picture of ``screen`` ("top"/"bottom") as (height, width, 3) uint8 RGB."""
    return upright(screen_rows(memory, gpu, screen, eye)[:, :, :3])


def screen_rows(memory: PhysicalMemory, gpu: np.ndarray, screen: str = "top", eye: str = "left") -> np.ndarray:
    """The framebuffer ``screen`` shows, in memory order: a new (rows, row_length, 4) uint8 RGBA array whose RGB
    ``screen_image`` turns upright (the LCD shows no alpha). Compares two screens without turning them."""
    if screen not in SCREENS or eye not in EYES:
        raise LcdError(f"no screen {screen!r} / eye {eye!r}")
    cfg = ScreenConfig.from_regs(gpu, SCREENS[screen], eye)
    if cfg.address == 0:
        raise LcdError(
            f"the capture never set up the {screen} screen (no present names a framebuffer for it): nothing to show"
        )
    return memory_image(memory, cfg)


def upright(rows: np.ndarray) -> np.ndarray:
    """An image in memory order (rows, row_length, ...) as the LCD shows it: (row_length, rows, ...), memory row x
    = screen column x, pixel 0 of a row at the bottom of the column (``np.rot90``; ``lcd_to_memory`` maps pixels)."""
    return np.ascontiguousarray(np.rot90(rows))


def lcd_to_memory(x: int, y: int, row_length: int) -> tuple[int, int]:
    """Pixel (column x, row y from the top) of the upright picture -> (pixel in its row, memory row) of the
    memory-order image whose rows hold ``row_length`` pixels (``upright``'s inverse, pixel by pixel)."""
    return row_length - 1 - y, x


def memory_to_lcd(x: int, y: int, row_length: int) -> tuple[int, int]:
    """(pixel x in its row, memory row y) -> (column, row from the top) of the upright picture (``upright``)."""
    return y, row_length - 1 - x
