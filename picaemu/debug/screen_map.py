"""Screen pixels to render-target pixels: which colour-buffer pixel a pixel of the picture ``picaemu render``
writes for a screen came from. Qt-free.

A screen shows the linear LCD framebuffer its PDC registers name (``picaemu.gx.lcd``); a display transfer
(``picaemu.gx.engines.display_transfer``) wrote that framebuffer from a render target. ``screen_to_buffer`` walks
the chain back, one byte address at a time, with the rules those modules own:

1. screen picture pixel (column x, row y from the top) -> (pixel in its memory row, memory row) of the LCD
   framebuffer (``lcd.lcd_to_memory``) -> byte address (``ScreenConfig`` address, stride, format);
2. the last display transfer before the position whose linear output holds that address -> output (column, row)
   -> the row before the vertical flip -> the input pixel (downscale: the first, top-left sample of the 2x1 / 2x2
   box it averaged; ``samples`` says how many) -> its byte address in the input image (8x8 tiled Morton order,
   or linear);
3. the render target (``FramebufferState``) whose colour buffer holds that address -> its pixel (x, memory row)
   -> (column, row from the top) as ``picaemu render --target color`` writes it (``fragment.framebuffer``: memory
   row = picture row, reversed in the flipped orientation).

A pixel no transfer wrote, a tiled LCD output, or an input address outside every render target of the frame
raises ``ScreenMapError`` naming the address. ``RenderTarget`` names a colour buffer (address, format, size) for
the JSON answers of pixel history and fragment debugging.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from picaemu.errors import PicaError
from picaemu.fragment.framebuffer import FramebufferState, morton8
from picaemu.gx import lcd
from picaemu.gx.engines import BYTES_PER_PIXEL, SCALE_SHIFTS, TILE, TransferRecord, output_start

SPACES = ("buffer", "screen")  # coordinate spaces a picked pixel may be given in
TILE_PIXELS = TILE * TILE
# in-tile index -> (x, y) of the 8x8 Morton order (morton8's inverse)
_TILE_Y, _TILE_X = np.divmod(np.argsort(morton8(*np.meshgrid(np.arange(TILE), np.arange(TILE))).ravel()), TILE)


class ScreenMapError(PicaError):
    """A screen pixel that cannot be traced back to a render-target pixel (names the screen, pixel and why)."""


@dataclass(frozen=True)
class RenderTarget:
    """A colour buffer: physical address, colour format, size in pixels (width x height, portrait as stored)."""

    address: int
    format: str
    width: int
    height: int

    @classmethod
    def of(cls, fb: FramebufferState) -> RenderTarget:
        return cls(fb.color_address, fb.color_format.name, fb.width, fb.height)

    def as_dict(self) -> dict[str, object]:
        return {"address": f"0x{self.address:08X}", "format": self.format, "width": self.width, "height": self.height}

    def text(self) -> str:
        return f"{self.width}x{self.height} {self.format} @ 0x{self.address:08X}"


@dataclass(frozen=True)
class BufferPixel:
    """Where a screen pixel came from: the render target, its (column, row from the top) in the colour buffer
    PNG, how many render-target pixels the transfer averaged into it (1, or 2 / 4 with downscale) and the
    transfer's event (the picture is the colour buffer as it was right before that event)."""

    target: RenderTarget
    x: int
    y: int
    samples: int = 1
    event: int = -1  # the event of the display transfer that showed it (-1: a colour-buffer pick, no transfer)


def _lcd_address(gpu: np.ndarray, screen: str, eye: str, x: int, y: int) -> int:
    """Byte address of screen picture pixel (x, y) in the LCD framebuffer ``screen`` / ``eye`` scans."""
    if screen not in lcd.SCREENS or eye not in lcd.EYES:
        raise ScreenMapError(f"no screen {screen!r} / eye {eye!r} (screens: top, bottom; eyes: left, right)")
    cfg = lcd.ScreenConfig.from_regs(gpu, lcd.SCREENS[screen], eye)
    if cfg.address == 0 or cfg.format not in BYTES_PER_PIXEL:
        raise ScreenMapError(f"the {screen} screen shows no framebuffer at this point of the capture")
    if not (0 <= x < cfg.rows and 0 <= y < cfg.row_length):
        raise ScreenMapError(f"pixel ({x}, {y}) is outside the {cfg.rows}x{cfg.row_length} {screen} screen")
    in_row, row = lcd.lcd_to_memory(x, y, cfg.row_length)
    return cfg.address + row * cfg.stride + in_row * BYTES_PER_PIXEL[cfg.format]


def _transfer_input(t: TransferRecord, address: int) -> tuple[int, int] | None:
    """(input byte address, samples) of the transfer input pixel that output byte ``address`` came from; None
    when ``t`` did not write that address."""
    sx, sy = SCALE_SHIFTS.get(t.flags.scale, (0, 0))
    out_w, out_h = t.out_dim[0] >> sx, t.out_dim[1] >> sy
    bpp = BYTES_PER_PIXEL.get(t.flags.out_format, 0)
    offset = address - output_start(t.dst, t.in_dim, t.out_dim, t.flags) if bpp else -1
    if not 0 <= offset < out_w * out_h * bpp:
        return None
    if t.flags.tiled_out:
        raise ScreenMapError(f"the transfer at event {t.event} wrote the screen's framebuffer tiled")
    row, column = divmod(offset // bpp, out_w)
    row = out_h - 1 - row if t.flags.flip else row  # the row of the downscaled input before the flip
    in_x, in_y, in_w = column << sx, row << sy, t.in_dim[0]
    if t.flags.linear_in:
        pixel = in_y * in_w + in_x
    else:
        in_tile = int(morton8(np.int64(in_x & 7), np.int64(in_y & 7)))
        pixel = ((in_y >> 3) * (in_w >> 3) + (in_x >> 3)) * TILE_PIXELS + in_tile
    return t.src + pixel * BYTES_PER_PIXEL.get(t.flags.in_format, 4), 1 << (sx + sy)


def _target_pixel(fb: FramebufferState, address: int) -> tuple[int, int] | None:
    """(column, row from the top) of the colour-buffer pixel at byte ``address``; None outside the buffer."""
    offset = address - fb.color_address
    if not 0 <= offset < fb.width * fb.height * fb.color_bpp:
        return None
    tile, in_tile = divmod(offset // fb.color_bpp, TILE_PIXELS)
    tile_row, tile_column = divmod(tile, fb.width // TILE)
    x = tile_column * TILE + int(_TILE_X[in_tile])
    row = tile_row * TILE + int(_TILE_Y[in_tile])  # memory row
    return x, fb.height - 1 - row if fb.flipped else row


def screen_to_buffer(
    gpu: np.ndarray,
    transfers: Sequence[TransferRecord],
    targets: Sequence[FramebufferState],
    screen: str,
    eye: str,
    x: int,
    y: int,
) -> BufferPixel:
    """The render-target pixel behind pixel (x, y) of the ``screen`` / ``eye`` picture (see the module docstring).
    ``gpu``: the external registers (0x1000,) uint32 at the position the picture shows; ``transfers``: the display
    transfers run before it, oldest first; ``targets``: the render targets the frame drew into."""
    address = _lcd_address(gpu, screen, eye, x, y)
    for t in reversed(transfers):
        found = _transfer_input(t, address)
        if found is None:
            continue
        source, samples = found
        for fb in targets:
            pixel = _target_pixel(fb, source)
            if pixel is not None:
                return BufferPixel(RenderTarget.of(fb), *pixel, samples, t.event)
        raise ScreenMapError(
            f"{screen} screen pixel ({x}, {y}) came from 0x{source:08X} (transfer at event {t.event}), "
            "which no render target of the frame holds"
        )
    raise ScreenMapError(f"no display transfer wrote {screen} screen pixel ({x}, {y}) (0x{address:08X})")
