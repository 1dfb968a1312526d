"""Sample: alpha blending — three overlapping half-transparent rectangles (red, green, blue at alpha 0.5) over a
white and black background split, blended src alpha / one minus src alpha."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame, rect, solid


def build() -> pica.Capture:
    b = CaptureBuilder(name="blending")
    color_frame(b, (0, 0, 0, 0xFF))
    b.depth_test(False)
    b.blend()
    quads = [
        (rect(200, 0, 400, 240), (1, 1, 1, 1)),
        (rect(60, 40, 220, 160), (1, 0, 0, 0.5)),
        (rect(140, 80, 300, 200), (0, 1, 0, 0.5)),
        (rect(220, 20, 360, 140), (0, 0, 1, 0.5)),
    ]
    pos = np.concatenate([q for q, _ in quads])
    col = np.concatenate([solid(6, c) for _, c in quads])
    b.vertices([pos, col])
    for i in range(len(quads)):
        b.draw(6, first=6 * i)
    b.end_frame()
    return b.capture()
