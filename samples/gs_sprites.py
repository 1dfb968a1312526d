"""Sample: geometry-shader sprites — 24 points on a spiral go through the vertex shader (projection, color) and a
point-mode geometry shader that emits a square of two triangles around each point (half size from the float
uniform ``size``, in clip units), so every point becomes a flat-colored sprite."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import SCREEN, VS_COLOR

GS_SPRITE = """
.gsh point
.fvec size
.constf corner0(-1.0, -1.0, 0.0, 0.0)
.constf corner1(1.0, -1.0, 0.0, 0.0)
.constf corner2(-1.0, 1.0, 0.0, 0.0)
.constf corner3(1.0, 1.0, 0.0, 0.0)
.out opos position
.out oclr color
.alias ipos v0
.alias iclr v1
.proc main
    mov r0, corner0
    mul r1, size, r0
    mov r0, corner1
    mul r2, size, r0
    mov r0, corner2
    mul r3, size, r0
    mov r0, corner3
    mul r4, size, r0
    setemit 0
    add opos, ipos, r1
    mov oclr, iclr
    emit
    setemit 1
    add opos, ipos, r2
    mov oclr, iclr
    emit
    setemit 2, prim
    add opos, ipos, r3
    mov oclr, iclr
    emit
    setemit 0, prim inv
    add opos, ipos, r4
    mov oclr, iclr
    emit
    end
.end
"""
POINTS = 24
HALF_PIXELS = 6  # sprite half size in landscape pixels


def spiral() -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(POINTS) / POINTS
    angle = 4 * np.pi * t
    radius = 20 + 90 * t
    pos = np.stack(
        [200 + radius * np.cos(angle), 120 + radius * np.sin(angle), np.full(POINTS, 0.5), np.ones(POINTS)], 1
    ).astype(np.float32)
    col = np.stack([t, 1 - t, np.full(POINTS, 0.8), np.ones(POINTS)], 1).astype(np.float32)
    return pos, col


def build() -> pica.Capture:
    b = CaptureBuilder(name="gs sprites")
    b.begin_frame(clear=(0x18, 0x10, 0x20, 0xFF))
    b.shader(VS_COLOR)
    b.uniforms(0, SCREEN)
    b.geometry_shader(GS_SPRITE)
    # clip x follows landscape y (240 px), clip y follows landscape x (400 px)
    b.uniforms(0, [[2 * HALF_PIXELS / 240, 2 * HALF_PIXELS / 400, 0, 0]], unit="gs")
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    pos, col = spiral()
    b.vertices([pos, col])
    b.draw(POINTS, "geometry primitive")
    b.end_frame()
    return b.capture()
