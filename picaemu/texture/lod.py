"""Level of detail per fragment, from screen-space derivatives taken between neighbouring fragments of one draw.

Receives fragment window positions x, y (F,) int32, their primitive index (F,) int32 and per-fragment texel-space
coordinates (F, 2) float32 (s * W, t * H of level 0). The derivative along x of a fragment is the difference to
the fragment of the same primitive at x + 1 (or, missing that, from x - 1); likewise along y; with neither
neighbour it is 0. (GL "fine" derivatives per pixel rather than the hardware's 2x2 quads, which the reference does
not pin down.) ``lod = log2(max(|ds/dx|, |ds/dy|, |dt/dx|, |dt/dy|)) + bias``: -inf when nothing varies
(magnification). Returns (F,) float32.
"""

from __future__ import annotations

import numpy as np

COORD_BITS = 12  # window coordinates stay below 4096


def _keys(x: np.ndarray, y: np.ndarray, prim: np.ndarray) -> np.ndarray:
    return (prim.astype(np.int64) << (2 * COORD_BITS)) | (y.astype(np.int64) << COORD_BITS) | x.astype(np.int64)


def derivatives(x: np.ndarray, y: np.ndarray, prim: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d/dx, d/dy) of ``values`` (F, k), each (F, k) float32."""
    keys = _keys(x, y, prim)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]

    def neighbour(dx: int, dy: int) -> tuple[np.ndarray, np.ndarray]:
        want = _keys(x + dx, y + dy, prim)
        pos = np.minimum(np.searchsorted(sorted_keys, want), keys.size - 1)
        found = sorted_keys[pos] == want if keys.size else np.zeros(0, bool)
        return order[pos], found

    out = []
    for dx, dy in ((1, 0), (0, 1)):
        fwd, has_fwd = neighbour(dx, dy)
        back, has_back = neighbour(-dx, -dy)
        d = np.zeros(values.shape, np.float32)
        d[has_back] = values[has_back] - values[back[has_back]]
        d[has_fwd] = values[fwd[has_fwd]] - values[has_fwd]
        out.append(d)
    return out[0], out[1]


def compute_lod(x: np.ndarray, y: np.ndarray, prim: np.ndarray, texel_coords: np.ndarray, bias: float) -> np.ndarray:
    """(F,) float32 level of detail (see the module docstring)."""
    ddx, ddy = derivatives(x, y, prim, texel_coords)
    rho = np.maximum(np.abs(ddx).max(axis=1), np.abs(ddy).max(axis=1))
    with np.errstate(divide="ignore"):
        return (np.log2(rho) + np.float32(bias)).astype(np.float32)
