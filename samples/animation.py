"""Sample: a four-frame animation — a colored triangle rotates by 30 degrees per frame about the screen centre;
each frame is cleared, drawn, transferred to the other LCD buffer and presented."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame

FRAMES = 4


def build() -> pica.Capture:
    b = CaptureBuilder(name="animation")
    col = np.array([[1, 0.8, 0, 1], [0, 0.6, 1, 1], [1, 0, 0.5, 1]], np.float32)
    for frame in range(FRAMES):
        color_frame(b, (0x18, 0x18, 0x18, 0xFF))
        angles = np.radians(90 + 120 * np.arange(3) + 30 * frame)
        pos = np.stack([200 + 100 * np.cos(angles), 120 + 100 * np.sin(angles), np.full(3, 0.5), np.ones(3)], 1)
        b.vertices([pos.astype(np.float32), col])
        b.draw(3)
        b.end_frame()
    return b.capture()
