"""Sample: alpha test — a 64 x 64 texture whose alpha is 255 inside a disc and 0 outside is drawn (blending off)
over a green/blue striped background with the alpha test GREATER 128, so only the disc (a radial color ramp)
replaces the background."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import SCREEN, VS_TEX, rect, rect_uv, solid


def disc(size: int = 64) -> np.ndarray:
    y, x = np.mgrid[0:size, 0:size]
    r = np.hypot(x - (size - 1) / 2, y - (size - 1) / 2) / (size / 2)
    img = np.zeros((size, size, 4), np.uint8)
    img[..., 0] = 255
    img[..., 1] = np.clip(r * 255, 0, 255).astype(np.uint8)
    img[..., 2] = 64
    img[..., 3] = np.where(r < 0.9, 255, 0)
    return img


def build() -> pica.Capture:
    b = CaptureBuilder(name="alpha test")
    b.begin_frame(clear=(0, 0, 0, 0xFF))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.blend(src="one", dst="zero")
    b.passthrough_tev()
    stripes = [rect(0, 40 * i, 400, 40 * i + 40, 0.2) for i in range(6)]
    colors = [solid(6, (0.1, 0.6, 0.2, 1) if i % 2 else (0.1, 0.3, 0.7, 1)) for i in range(6)]
    b.tev(0, rgb=("primary color",))
    b.vertices([np.concatenate(stripes), np.zeros((36, 2), np.float32), np.concatenate(colors)])
    b.draw(36)
    b.tev(0, rgb=("texture 0",))
    b.texture(0, disc(), "RGBA8")
    b.alpha_test(True, "greater", 128)
    b.vertices([rect(100, 20, 300, 220, 0.6), rect_uv(), solid(6, (1, 1, 1, 1))])
    b.draw(6)
    b.end_frame()
    return b.capture()
