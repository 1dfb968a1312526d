"""Sample: depth fog — five orange bars at depths from near to far fade toward the gray-blue fog color through a
linear fog LUT (factor = depth: depth 1 (near) keeps the color, depth 0 (far) is all fog)."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from samples._common import color_frame, rect, solid

FOG = (0x70, 0x80, 0x98)


def build() -> pica.Capture:
    b = CaptureBuilder(name="fog")
    color_frame(b, (*FOG, 0xFF))
    depths = (0.9, 0.5, 0.1, -0.3, -0.7)  # z; depth = (z + 1) / 2 with the landscape projection
    pos = np.concatenate([rect(30 + 72 * i, 30, 90 + 72 * i, 210, z) for i, z in enumerate(depths)])
    b.vertices([pos, solid(len(pos), (1.0, 0.55, 0.1, 1.0))])
    b.fog(FOG, np.linspace(0.0, 1.0, 129))
    b.draw(len(pos))
    b.end_frame()
    return b.capture()
