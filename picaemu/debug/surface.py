"""The surface / memory viewer's engine: any memory as a picture, with the values behind each pixel. Qt-free.

``decode_surface(memory, address, fmt, width, height, tiled=True) -> Surface`` reads ``width`` x ``height`` pixels
of format ``fmt`` at physical ``address``:

- formats: the 14 texture formats by name or alias (``picaemu.texture.formats``: RGBA8 ... ETC1A4; the color buffer
  formats RGBA8, RGB8, RGB5A1, RGB565, RGBA4 are the same bit layouts), and the depth formats D16, D24, D24S8
  (``picaemu.fragment.framebuffer``: depth 16/24 bits, stencil in bits 31-24 of D24S8);
- ``tiled``: 8x8 tiles row-major from the first row, Morton order inside (textures and render targets share
  this map: pica-pipeline.md §9.6); width and height must be multiples of 8. Linear: rows of ``width`` pixels
  one after the other, any size (not ETC, which is tiled by nature);
- sizes 1..``MAX_SIDE``; bytes that leave mapped memory raise ``MemoryFault``, other bad input ``SurfaceError``.

Row 0 of every array is the first row in memory: for a render target the top of the picture (as ``picaemu render
--target color`` writes it, non-flipped orientation). ``Surface`` keeps the raw pixel words (H, W) uint32 (None
for ETC) and the decoded values: ``rgba`` (H, W, 4) uint8 for color formats, ``depth`` (H, W) float64 0..1 and
``stencil`` (H, W) uint8 for depth formats.

``render_surface(surface, channels, depth_range, plane, lcd)`` -> (H, W, 4) uint8 opaque RGBA for display: color
channels not in ``channels`` read 0; one channel alone (or alpha alone) shows as grey; depth formats show
``plane`` ("depth" or "stencil") as grey over ``depth_range`` (lo, hi) in the plane's units (depth 0..1, stencil
0..255), by default the surface's own min..max (auto-range). With ``lcd`` the picture is turned as the LCD shows a
render target (``picaemu.gx.lcd.upright``: (W, H) out); ``picaemu.gx.lcd.lcd_to_memory`` / ``memory_to_lcd`` map
pixels between the two orientations. ``readout(surface, x, y)`` gives one pixel's raw word and decoded value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.gx import lcd
from picaemu.memory import PhysicalMemory
from picaemu.texture import etc1
from picaemu.texture.decode import CHANNELS, texel_words, tile_order, unpack_words
from picaemu.texture.formats import BITS_PER_TEXEL, ETC_FORMATS, PACKED, TILE, TextureError, texture_format

MAX_SIDE = 4096
DEPTH_FORMATS = {f.name: f for f in fbm.DepthFormat}
PLANES = ("depth", "stencil")


class SurfaceError(PicaError):
    """A surface that cannot be read as asked (size, format, tiling)."""


@dataclass(frozen=True)
class Surface:
    """Decoded memory (module docstring): ``words`` (H, W) uint32 or None (ETC); ``rgba`` (H, W, 4) uint8 for color
    formats; ``depth`` (H, W) float64 0..1 and ``stencil`` (H, W) uint8 for depth formats."""

    address: int
    format: str
    width: int
    height: int
    tiled: bool
    words: np.ndarray | None
    rgba: np.ndarray | None = None
    depth: np.ndarray | None = None
    stencil: np.ndarray | None = None

    @property
    def is_depth(self) -> bool:
        return self.depth is not None


def _check(width: int, height: int, tiled: bool, etc: bool) -> None:
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise SurfaceError(f"surface size {width}x{height}: each side must be 1..{MAX_SIDE}")
    if tiled and (width % TILE or height % TILE):
        raise SurfaceError(f"tiled surface size {width}x{height}: width and height must be multiples of {TILE}")
    if etc and not tiled:
        raise SurfaceError("ETC1 / ETC1A4 data is tiled by nature: there is no linear ETC surface")


def _order(width: int, height: int, tiled: bool) -> np.ndarray:
    """(H, W) memory pixel index of each image pixel."""
    return tile_order(width, height) if tiled else np.arange(width * height, dtype=np.int64).reshape(height, width)


def decode_surface(
    memory: PhysicalMemory, address: int, fmt: str, width: int, height: int, tiled: bool = True
) -> Surface:
    """``width`` x ``height`` pixels of ``fmt`` at ``address`` (module docstring)."""
    if address < 0:
        raise SurfaceError(f"negative address {address}")
    name = fmt.strip().upper()
    if name in DEPTH_FORMATS:
        dfmt = DEPTH_FORMATS[name]
        _check(width, height, tiled, False)
        bpp = fbm.DEPTH_BPP[dfmt]
        data = memory.bytes(address, width * height * bpp, f"{name} surface")
        words = texel_words(data, 8 * bpp, _order(width, height, tiled)).astype(np.uint32)
        depth, stencil = fbm.split_depth_word(words.ravel(), dfmt)
        scale = fbm.depth_max(dfmt)
        return Surface(
            address,
            name,
            width,
            height,
            tiled,
            words,
            depth=(depth.astype(np.float64) / scale).reshape(height, width),
            stencil=stencil.astype(np.uint8).reshape(height, width),
        )
    try:
        tfmt = texture_format(name)
    except TextureError as err:
        raise SurfaceError(f"{err}; depth formats: {', '.join(DEPTH_FORMATS)}") from None
    etc = tfmt in ETC_FORMATS
    _check(width, height, tiled, etc)
    data = memory.bytes(address, -(-width * height * BITS_PER_TEXEL[tfmt.name] // 8), f"{tfmt.name} surface")
    if etc:
        rgba = etc1.decode_etc(data, width, height, with_alpha=tfmt.name == "ETC1A4")
        return Surface(address, tfmt.name, width, height, tiled, None, rgba=rgba)
    spec = PACKED[tfmt.name]
    words = texel_words(data, spec.word_bits, _order(width, height, tiled)).astype(np.uint32)
    return Surface(address, tfmt.name, width, height, tiled, words, rgba=unpack_words(words, spec))


def auto_range(surface: Surface, plane: str = "depth") -> tuple[float, float]:
    """(min, max) of a depth surface's ``plane`` (depth 0..1 or stencil 0..255)."""
    values = _plane(surface, plane)
    return float(values.min()), float(values.max())


def _plane(surface: Surface, plane: str) -> np.ndarray:
    depth, stencil = surface.depth, surface.stencil
    if depth is None or stencil is None:
        raise SurfaceError(f"{surface.format} is a color format: it has no {plane} plane")
    if plane not in PLANES:
        raise SurfaceError(f"unknown plane {plane!r}: depth or stencil")
    if plane == "stencil" and surface.format != "D24S8":
        raise SurfaceError(f"{surface.format} holds no stencil")
    return depth if plane == "depth" else stencil.astype(np.float64)


def render_surface(
    surface: Surface,
    channels: str = "rgba",
    depth_range: tuple[float, float] | None = None,
    plane: str = "depth",
    lcd_view: bool = False,
) -> np.ndarray:
    """The picture to display (module docstring): (H, W, 4) uint8, or (W, H, 4) with ``lcd_view``."""
    rgba = surface.rgba
    if rgba is None:  # a depth surface
        values = _plane(surface, plane)
        lo, hi = depth_range if depth_range is not None else auto_range(surface, plane)
        span = hi - lo if hi > lo else 1.0
        grey = (np.clip((values - lo) / span, 0.0, 1.0) * 255 + 0.5).astype(np.uint8)
        out = np.repeat(grey[..., None], 4, axis=2)
    else:
        if not channels or set(channels) - set(CHANNELS):
            raise SurfaceError(f"channels {channels!r}: a non-empty subset of r, g, b, a")
        wanted = sorted({CHANNELS[c] for c in channels})
        out = np.zeros_like(rgba)
        if len(wanted) == 1:  # one channel alone reads best as grey
            out[..., :3] = rgba[..., wanted[0], None]
        else:
            rgb = [c for c in wanted if c < 3]
            out[..., rgb] = rgba[..., rgb]
    out[..., 3] = 255
    return lcd.upright(out) if lcd_view else out


def readout(surface: Surface, x: int, y: int) -> dict[str, Any]:
    """Pixel (x = column, y = row of the memory-order image): {"x", "y", "raw" (the pixel word, None for ETC),
    "rgba"} for color formats, {"x", "y", "raw", "depth" (0..1), "depth_raw", "stencil"} for depth formats."""
    if not (0 <= x < surface.width and 0 <= y < surface.height):
        raise SurfaceError(f"pixel ({x}, {y}) is outside the {surface.width}x{surface.height} surface")
    raw = None if surface.words is None else int(surface.words[y, x])
    out: dict[str, Any] = {"x": x, "y": y, "raw": raw}
    if surface.rgba is not None:
        return out | {"rgba": tuple(int(v) for v in surface.rgba[y, x])}
    depth = _plane(surface, "depth")
    dfmt = DEPTH_FORMATS[surface.format]
    depth_raw, stencil = (int(v[0]) for v in fbm.split_depth_word(np.array([raw], np.uint32), dfmt))
    return out | {
        "depth": float(depth[y, x]),
        "depth_raw": depth_raw,
        "stencil": stencil if surface.format == "D24S8" else None,
    }
