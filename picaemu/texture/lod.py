"""Level of detail per fragment, from screen-space derivatives taken between neighbouring fragments of one draw,
and the mip level(s) and filter a fragment's LOD selects. Compiled (numba, cached): the staged sampler and the fused
fragment kernel (``picaemu.fused.fragment_kernel``) call these same functions, so both follow one rule.

Receives fragment window positions x, y (F,) int32, their primitive index (F,) int32 and per-fragment texel-space
coordinates (F, 2) float32 (s * W, t * H of level 0). The derivative along x of a fragment is the difference to
the fragment of the same primitive at x + 1 (or, missing that, from x - 1); likewise along y; with neither
neighbour it is 0. (GL "fine" derivatives per pixel rather than the hardware's 2x2 quads, which the reference does
not pin down.) Where several fragments share a primitive and pixel, the first in draw order is the neighbour.
``lod = log2(max(|ds/dx|, |ds/dy|, |dt/dx|, |dt/dy|)) + bias`` in float32 (the log2 computed in float64 and
rounded to float32: the same in numpy and compiled code, unlike float32 log2 implementations): -inf when nothing
varies (magnification), NaN when a coordinate is NaN.

``neighbours(x, y, prim)`` -> (F, 4) int64 fragment indices of the neighbours at x + 1, x - 1, y + 1, y - 1 (-1:
none), found once per draw and shared by every unit; ``derivatives_of`` / ``lods_of`` read them.

Level selection (``mip_choice``, per fragment; texture.sampler's model): NaN -> -inf; lod <= 0 magnifies (level
``min_level``, the magnification filter); otherwise lod is clamped to [min, max] and minifies with the
minification filter: mip filter nearest -> level floor(lod + 0.5); linear -> levels floor(lod) and
min(floor(lod) + 1, max) blended by the fraction lod - floor(lod) (0 when magnified). Texel taps: 1 (nearest) or
4 (bilinear) per level sampled, two levels for a minified fragment with a linear mip filter.
"""

from __future__ import annotations

import math

import numpy as np

from picaemu import numba_link

COORD_BITS = 12  # window coordinates stay below 4096
TAPS_NEAREST, TAPS_LINEAR = 1, 4  # texels one 2D filter reads per level
# neighbours' columns: (dx, dy) of each, forward then backward per axis
NEIGHBOUR_STEPS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.int64)
FWD_X, BACK_X, FWD_Y, BACK_Y = range(4)
EMPTY = -1  # an empty slot of ``neighbours``' hash table (the fragments' own keys are >= 0)
FIBONACCI = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: multiplicative hashing spreads the packed keys


@numba_link.kernel()
def _key(x: int, y: int, prim: int) -> np.int64:
    return (np.int64(prim) << (2 * COORD_BITS)) | (np.int64(y) << COORD_BITS) | np.int64(x)


@numba_link.kernel()
def _slot(table, want, mask, shift):  # pragma: no cover - compiled
    """The slot of key ``want`` in the open-addressing ``table`` (linear probing from its Fibonacci hash), or of the
    first empty slot (``EMPTY``) on its probe path."""
    h = np.int64((np.uint64(want) * np.uint64(FIBONACCI)) >> np.uint64(shift))
    while table[h] != EMPTY and table[h] != want:
        h = (h + 1) & mask
    return h


@numba_link.kernel()
def neighbours(x, y, prim):  # pragma: no cover - compiled
    """(F, 4) int64: the index of each fragment's neighbour in the same primitive at x + 1, x - 1, y + 1, y - 1
    (``NEIGHBOUR_STEPS``), -1 where there is none; the first fragment in draw order where several share a pixel.
    A hash table of the fragments' keys (at most half full), filled in draw order keeping the first of each key."""
    n = x.shape[0]
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    mask, shift = (1 << bits) - 1, 64 - bits
    table = np.full(1 << bits, EMPTY, np.int64)  # keys of fragments are >= 0
    first = np.empty(1 << bits, np.int64)
    for i in range(n):
        k = _key(np.int64(x[i]), np.int64(y[i]), prim[i])  # the types of the neighbours' keys: one compile
        h = _slot(table, k, mask, shift)
        if table[h] == EMPTY:
            table[h], first[h] = k, i
    out = np.full((n, 4), -1, np.int64)
    for i in range(n):
        for j in range(4):
            want = _key(x[i] + NEIGHBOUR_STEPS[j, 0], y[i] + NEIGHBOUR_STEPS[j, 1], prim[i])
            if want >= 0:  # a step off the screen's left or bottom edge packs to a negative key: no fragment
                h = _slot(table, want, mask, shift)
                if table[h] == want:
                    out[i, j] = first[h]
    return out


@numba_link.kernel()
def _derivative(nb, values, i: int, k: int, fwd: int):  # pragma: no cover - compiled
    """d/dx (fwd = FWD_X) or d/dy (FWD_Y) of column k of ``values`` at fragment i, float32."""
    f, b = nb[i, fwd], nb[i, fwd + 1]
    if f >= 0:
        return np.float32(values[f, k] - values[i, k])
    if b >= 0:
        return np.float32(values[i, k] - values[b, k])
    return np.float32(0.0)


@numba_link.kernel()
def derivatives_of(nb, values, ddx, ddy) -> None:  # pragma: no cover - compiled
    """``ddx``, ``ddy`` (F, k) float32 = d/dx, d/dy of ``values`` (F, k) float32 over ``neighbours`` ``nb``."""
    for i in range(values.shape[0]):
        for k in range(values.shape[1]):
            ddx[i, k] = _derivative(nb, values, i, k, FWD_X)
            ddy[i, k] = _derivative(nb, values, i, k, FWD_Y)


@numba_link.kernel()
def _nan_max(a, b):  # pragma: no cover - compiled
    """max propagating NaN (as numpy's maximum)."""
    return a if a != a or a > b else b


@numba_link.kernel()
def lod_at(nb, texel, i: int, bias):  # pragma: no cover - compiled
    """The LOD (float32) of fragment i from its texel coordinates ``texel`` (F, 2) float32 and ``bias`` float32."""
    rho = np.float32(0.0)
    for k in range(2):
        rho = _nan_max(rho, abs(_derivative(nb, texel, i, k, FWD_X)))
        rho = _nan_max(rho, abs(_derivative(nb, texel, i, k, FWD_Y)))
    if rho != rho:
        return rho
    if rho == 0:
        return np.float32(-np.inf)
    return np.float32(np.float32(math.log2(np.float64(rho))) + bias)  # log2 rounded once (not float32 libm's)


@numba_link.kernel()
def lods_of(nb, texel, bias, out) -> None:  # pragma: no cover - compiled
    """``out`` (F,) float32 = ``lod_at`` of every fragment."""
    b = np.float32(bias)
    for i in range(texel.shape[0]):
        out[i] = lod_at(nb, texel, i, b)


@numba_link.kernel()
def mip_choice(lod, min_level, max_level, mag_linear, min_linear, mip_linear):  # pragma: no cover - compiled
    """(first level, second level, weight of the second (float32), bilinear, texel taps) of one fragment's LOD
    (module docstring); a nearest mip filter or a magnified fragment reads the first level only (weight 0)."""
    if lod != lod or lod <= 0:
        return min_level, min_level, np.float32(0.0), mag_linear, TAPS_LINEAR if mag_linear else TAPS_NEAREST
    lod_c = np.float32(min(max(lod, np.float32(min_level)), np.float32(max_level)))
    taps = TAPS_LINEAR if min_linear else TAPS_NEAREST
    if not mip_linear:
        level = min(math.floor(np.float32(lod_c + np.float32(0.5))), max_level)
        return level, level, np.float32(0.0), min_linear, taps
    lo = math.floor(lod_c)
    return lo, min(lo + 1, max_level), np.float32(lod_c - np.float32(lo)), min_linear, 2 * taps


@numba_link.kernel()
def mip_choices(
    lod, min_level, max_level, mag_linear, min_linear, mip_linear, lo, hi, frac, linear
):  # pragma: no cover
    """``mip_choice`` of every fragment into ``lo``, ``hi`` (F,) int64, ``frac`` (F,) float32, ``linear`` (F,)
    bool; returns the texel taps of them all (int)."""
    taps = 0
    for i in range(lod.shape[0]):
        lo[i], hi[i], frac[i], linear[i], t = mip_choice(
            lod[i], min_level, max_level, mag_linear, min_linear, mip_linear
        )
        taps += t
    return taps


def derivatives(x: np.ndarray, y: np.ndarray, prim: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d/dx, d/dy) of ``values`` (F, k), each (F, k) float32."""
    values = np.ascontiguousarray(values, np.float32)
    ddx, ddy = np.empty_like(values), np.empty_like(values)
    derivatives_of(_neighbours(x, y, prim), values, ddx, ddy)
    return ddx, ddy


def compute_lod(x: np.ndarray, y: np.ndarray, prim: np.ndarray, texel_coords: np.ndarray, bias: float) -> np.ndarray:
    """(F,) float32 level of detail (see the module docstring)."""
    texel = np.ascontiguousarray(texel_coords, np.float32)
    out = np.empty(texel.shape[0], np.float32)
    lods_of(_neighbours(x, y, prim), texel, np.float32(bias), out)
    return out


def _neighbours(x: np.ndarray, y: np.ndarray, prim: np.ndarray) -> np.ndarray:
    return neighbours(*(np.ascontiguousarray(a, np.int32) for a in (x, y, prim)))
