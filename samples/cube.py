"""Sample: an indexed cube (24 vertices, 36 u16 indices, one color per face) in perspective, rotated so three
faces show, with back-face culling and the depth test (GREATER, depth cleared to 0)."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_perspective

FACES = [  # (normal axis, sign, color): +X red, -X cyan, +Y green, -Y magenta, +Z blue, -Z yellow
    (0, 1, (1, 0, 0)),
    (0, -1, (0, 1, 1)),
    (1, 1, (0, 1, 0)),
    (1, -1, (1, 0, 1)),
    (2, 1, (0, 0, 1)),
    (2, -1, (1, 1, 0)),
]


def cube() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (24, 4), colors (24, 4), indices (36,): each face counter-clockwise seen from outside."""
    pos, col, idx = [], [], []
    for axis, sign, color in FACES:
        u, v = (a for a in range(3) if a != axis)
        quad = []
        for cu, cv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            p = np.zeros(3)
            p[axis], p[u], p[v] = sign, cu, cv
            quad.append(p)
        if np.dot(np.cross(quad[1] - quad[0], quad[2] - quad[0]), quad[0] * (np.arange(3) == axis)) < 0:
            quad.reverse()  # make the face normal point outwards (counter-clockwise from outside)
        base = len(pos)
        pos += [[*p, 1.0] for p in quad]
        col += [[*color, 1.0]] * 4
        idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return np.array(pos, np.float32), np.array(col, np.float32), np.array(idx, np.uint16)


def rotation(ax: float, ay: float) -> np.ndarray:
    cx, sx, cy, sy = np.cos(ax), np.sin(ax), np.cos(ay), np.sin(ay)
    rx = np.array([[1, 0, 0, 0], [0, cx, -sx, 0], [0, sx, cx, 0], [0, 0, 0, 1]])
    ry = np.array([[cy, 0, sy, 0], [0, 1, 0, 0], [-sy, 0, cy, 0], [0, 0, 0, 1]])
    return rx @ ry


def mvp(ax: float, ay: float) -> np.ndarray:
    view = np.eye(4)
    view[2, 3] = -5.0
    return (tilt_perspective(np.radians(55), 400 / 240, 1.0, 10.0) @ view @ rotation(ax, ay)).astype(np.float32)


def build(cull: str = "cull clockwise (keep counter-clockwise)") -> pica.Capture:
    from samples._common import VS_COLOR

    b = CaptureBuilder(name="cube")
    b.begin_frame(clear=(0x10, 0x18, 0x28, 0xFF))
    b.shader(VS_COLOR)
    b.uniforms(0, mvp(0.5, 0.6))
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    b.cull(cull)
    pos, col, idx = cube()
    b.vertices([pos, col])
    b.draw_indexed(idx)
    b.end_frame()
    return b.capture()
