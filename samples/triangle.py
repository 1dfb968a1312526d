"""Sample: one Gouraud-shaded triangle (red apex, green and blue base corners) on dark gray — scene 1 rebuilt."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame


def build() -> pica.Capture:
    b = CaptureBuilder(name="triangle")
    color_frame(b, (0x30, 0x30, 0x30, 0xFF))
    pos = np.array([[200, 210, 0.5, 1], [80, 30, 0.5, 1], [320, 30, 0.5, 1]], np.float32)
    col = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]], np.float32)
    b.vertices([pos, col])
    b.draw(3)
    b.end_frame()
    return b.capture()
