"""Sample: texture sampling modes — an 8 x 8 red/white checker texture on two quads with texture coordinates
0..3 (repeat wrap): nearest filtering on the left, bilinear on the right."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import SCREEN, VS_TEX, rect, rect_uv, solid


def checker(size: int = 8) -> np.ndarray:
    y, x = np.mgrid[0:size, 0:size]
    img = np.full((size, size, 4), 255, np.uint8)
    odd = (x + y) % 2 == 1
    img[odd, 1:3] = 0  # red cells
    return img


def build() -> pica.Capture:
    b = CaptureBuilder(name="texture filtering")
    b.begin_frame(clear=(0x20, 0x20, 0x20, 0xFF))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("texture 0",))
    b.passthrough_tev()
    uv = rect_uv() * 3
    for x0, filt in ((15, "nearest"), (210, "linear")):
        b.texture(0, checker(), "RGBA8", filter=filt, wrap="repeat")
        b.vertices([rect(x0, 25, x0 + 175, 215), uv, solid(6, (1, 1, 1, 1))])
        b.draw(6)
    b.end_frame()
    return b.capture()
