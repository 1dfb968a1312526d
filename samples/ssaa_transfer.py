"""Sample: supersampling through the display transfer — a star is rendered at 480 x 800 and the transfer engine's
2x2 box downscale (flags bits 24-25 = 2) writes the 240 x 400 RGB8 LCD framebuffer, smoothing the edges."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame, solid


def star(cx: float, cy: float, r_out: float, r_in: float, points: int = 5) -> np.ndarray:
    """Triangle fan: centre, then alternating outer/inner rim points, closed; (2 * points + 2, 4) float32."""
    angles = np.radians(90 + np.arange(2 * points + 1) * 180 / points)
    radii = np.where(np.arange(2 * points + 1) % 2, r_in, r_out)
    rim = np.stack([cx + radii * np.cos(angles), cy + radii * np.sin(angles)], 1)
    verts = np.vstack([[cx, cy], rim])
    return np.hstack([verts, np.full((len(verts), 1), 0.5), np.ones((len(verts), 1))]).astype(np.float32)


def build() -> pica.Capture:
    b = CaptureBuilder(width=480, height=800, downscale=2, name="ssaa transfer")
    color_frame(b, (0x08, 0x10, 0x30, 0xFF))
    pos = star(200, 120, 110, 45)
    b.vertices([pos, solid(len(pos), (1.0, 0.85, 0.2, 1.0))])
    b.draw(len(pos), "triangle fan")
    b.end_frame()
    return b.capture()
