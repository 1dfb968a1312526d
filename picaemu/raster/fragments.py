"""Fragments as struct-of-arrays: what the rasterizer produces and every fragment stage consumes.

All arrays share the first dimension F (one entry per covered pixel sample of one draw, in rasterization
order). Coordinates are window pixels with y growing upward (row 0 of memory is the top of the buffer, see the
framebuffer module). Interpolated varyings are perspective-correct.

=============  ==========  =========================================================================
field          shape       meaning
=============  ==========  =========================================================================
x, y           (F,) int32  window pixel coordinates (y up)
depth          (F,) f32    depth after the depth map (0x04D/0x04E, W-buffer mode applied), clamped 0..1
w              (F,) f32    interpolated clip-space w (positive inside the clip volume)
color          (F,4) f32   primary vertex color r g b a, 0..1 (made absolute and clamped per vertex)
texcoord0      (F,2) f32   u v of texcoord0 (v = 0 is the bottom row of a texture)
texcoord0_w    (F,) f32    texcoord0.w (cube maps, shadow textures, projective mapping)
texcoord1      (F,2) f32
texcoord2      (F,2) f32
quat           (F,4) f32   normal quaternion x y z w (fragment lighting)
view           (F,3) f32   view vector x y z (fragment lighting)
primitive      (F,) int32  index of the triangle within its draw
=============  ==========  =========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass
class Fragments:
    """A batch of fragments; ``select(mask)`` compacts it to the fragments where mask is True."""

    x: np.ndarray
    y: np.ndarray
    depth: np.ndarray
    w: np.ndarray
    color: np.ndarray
    texcoord0: np.ndarray
    texcoord0_w: np.ndarray
    texcoord1: np.ndarray
    texcoord2: np.ndarray
    quat: np.ndarray
    view: np.ndarray
    primitive: np.ndarray

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def select(self, mask_or_index: np.ndarray) -> Fragments:
        return Fragments(**{f.name: getattr(self, f.name)[mask_or_index] for f in fields(self)})

    @classmethod
    def concat(cls, parts: list[Fragments]) -> Fragments:
        """The batches one after the other (the one batch itself when there is one)."""
        if len(parts) == 1:
            return parts[0]
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)})

    @classmethod
    def empty(cls, n: int = 0) -> Fragments:
        """``n`` fragments with every varying zero (tests build on it)."""
        z1 = lambda: np.zeros(n, np.float32)  # noqa: E731
        return cls(
            x=np.zeros(n, np.int32),
            y=np.zeros(n, np.int32),
            depth=z1(),
            w=np.ones(n, np.float32),
            color=np.zeros((n, 4), np.float32),
            texcoord0=np.zeros((n, 2), np.float32),
            texcoord0_w=z1(),
            texcoord1=np.zeros((n, 2), np.float32),
            texcoord2=np.zeros((n, 2), np.float32),
            quat=np.zeros((n, 4), np.float32),
            view=np.zeros((n, 3), np.float32),
            primitive=np.zeros(n, np.int32),
        )
