"""Sample: stencil masking — a hexagon is drawn into the stencil buffer only (color and depth writes off,
stencil op replace with 1); then a horizontal color ramp is drawn where stencil == 1 and a blue-gray fill where
stencil != 1."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame, rect, solid


def hexagon(cx: float, cy: float, r: float) -> np.ndarray:
    """A triangle fan: centre then 7 rim points (closed), (8, 4) float32."""
    angles = np.radians(np.arange(0, 361, 60))
    rim = [[cx + r * np.cos(a), cy + r * np.sin(a), 0.5, 1.0] for a in angles]
    return np.array([[cx, cy, 0.5, 1.0], *rim], np.float32)


def build() -> pica.Capture:
    b = CaptureBuilder(name="stencil")
    color_frame(b, (0, 0, 0, 0xFF))
    ramp = rect(0, 0, 400, 240)
    ramp_col = np.array([[x / 400, 1 - x / 400, 0.5, 1] for x, *_ in ramp], np.float32)
    pos = np.concatenate([hexagon(200, 120, 100), ramp, rect(0, 0, 400, 240)])
    col = np.concatenate([solid(8, (1, 1, 1, 1)), ramp_col, solid(6, (0.25, 0.3, 0.45, 1))])
    b.vertices([pos, col])
    b.depth_test(False, write=False, color=False)
    b.stencil(True, "always", 1, depth_pass="replace", fail="replace", depth_fail="replace")
    b.draw(8, "triangle fan")
    b.depth_test(False, write=False, color=True)
    b.stencil(True, "equal", 1, write_mask=0)
    b.draw(6, first=8)
    b.stencil(True, "not equal", 1, write_mask=0)
    b.draw(6, first=14)
    b.end_frame()
    return b.capture()
