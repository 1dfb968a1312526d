"""Sample: the same 32x32 test image uploaded in twelve texture formats (RGBA8 ... A4), one textured quad each,
in a 4 x 3 grid (row by row from the top-left: RGBA8 RGB8 RGBA5551 RGB565 / RGBA4 IA8 HILO8 I8 / A8 IA4 I4 A4).
TEV: texture 0 replaces; blending off (src one, dst zero) so alpha-only formats show black."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import SCREEN, VS_TEX, rect, rect_uv, solid

FORMATS = ("RGBA8", "RGB8", "RGBA5551", "RGB565", "RGBA4", "IA8", "HILO8", "I8", "A8", "IA4", "I4", "A4")


def test_image(size: int = 32) -> np.ndarray:
    """Red grows to the right, green downwards, blue in a checkerboard, alpha in vertical bands."""
    y, x = np.mgrid[0:size, 0:size]
    img = np.zeros((size, size, 4), np.uint8)
    img[..., 0] = x * 255 // (size - 1)
    img[..., 1] = y * 255 // (size - 1)
    img[..., 2] = np.where((x // 8 + y // 8) % 2, 255, 40)
    img[..., 3] = np.where(x < size // 2, 255, 96)
    return img


def build() -> pica.Capture:
    b = CaptureBuilder(name="texture formats")
    b.begin_frame(clear=(0x20, 0x20, 0x40, 0xFF))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("texture 0",))
    b.passthrough_tev()
    b.blend(src="one", dst="zero")
    img = test_image()
    for i, fmt in enumerate(FORMATS):
        col, row = i % 4, i // 4
        x0, y0 = 20 + col * 95, 240 - 75 - row * 75
        b.texture(0, img, fmt)
        b.vertices([rect(x0, y0, x0 + 64, y0 + 64), rect_uv(), solid(6, (1, 1, 1, 1))])
        b.draw(6)
    b.end_frame()
    return b.capture()
