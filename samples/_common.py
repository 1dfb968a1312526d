"""Shared pieces of the sample scenes: vertex shaders (picasso assembly, assembled by picaemu.shader.asm) and
small geometry helpers. Every sample module defines ``build() -> picaemu.formats.pica.Capture``."""

from __future__ import annotations

import numpy as np

from picaemu.builder import CaptureBuilder, tilt_ortho

# position through a 4x4 matrix (c0-c3), color passed through
VS_COLOR = """
.fvec projection[4]
.out outpos position
.out outclr color
.alias inpos v0
.alias inclr v1
.proc main
    dp4 outpos.x, projection[0], inpos
    dp4 outpos.y, projection[1], inpos
    dp4 outpos.z, projection[2], inpos
    dp4 outpos.w, projection[3], inpos
    mov outclr, inclr
    end
.end
"""

# position through c0-c3, texture coordinate 0 and color passed through
VS_TEX = """
.fvec projection[4]
.out outpos position
.out outtc texcoord0
.out outclr color
.alias inpos v0
.alias intc v1
.alias inclr v2
.proc main
    dp4 outpos.x, projection[0], inpos
    dp4 outpos.y, projection[1], inpos
    dp4 outpos.z, projection[2], inpos
    dp4 outpos.w, projection[3], inpos
    mov outtc, intc
    mov outclr, inclr
    end
.end
"""

SCREEN = tilt_ortho(0, 400, 0, 240, -1, 1)  # landscape pixels, origin bottom-left; larger z in front


def rect(x0: float, y0: float, x1: float, y1: float, z: float = 0.5) -> np.ndarray:
    """Two triangles (6 vertices, (6, 4) float32 x y z 1) covering a landscape rectangle, counter-clockwise."""
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
    return np.array([[x, y, z, 1.0] for x, y in corners], np.float32)


def rect_uv() -> np.ndarray:
    """Texture coordinates matching ``rect`` (v = 1 at the top)."""
    return np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)


def color_frame(b: CaptureBuilder, clear: tuple[int, int, int, int]) -> None:
    """Open a frame drawing interpolated vertex colors through VS_COLOR with the landscape projection."""
    b.begin_frame(clear=clear)
    b.shader(VS_COLOR)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()


def solid(n: int, rgba: tuple[float, float, float, float]) -> np.ndarray:
    return np.tile(np.array(rgba, np.float32), (n, 1))
