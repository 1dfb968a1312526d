"""Compiled texel fetch and filtering over a flat texel pyramid (numba, cached): the inner loop of the sampler.

Inputs: ``texels`` (N, 4) uint8 holding every level/face image (memory-row order, row 0 = top), ``offsets``
(levels, faces) int64 start of each image, ``widths``/``heights`` (levels,) int64; per fragment the level index
into those tables (0 = first stored level), the face, and coordinates. Wrap codes per axis (k = integer texel
coordinate, n = level size, a power of two so k mod n = k & (n - 1)): 0 clamp to edge; 1 clamp to border (k
outside [0, n) reads the border color); 2 repeat (k mod n); 3 mirrored repeat (m = k mod 2n; m < n ? m :
2n - 1 - m); 4 k < 0 repeats, k >= 0 clamps to edge; 5 k < 0 repeats, k >= n reads the border; 6, 7 repeat.
Texel row t (0 = bottom) is memory row n_t - 1 - t.

``fetch``: one texel per fragment at integer coordinates -> (F, 4) uint8. ``filter_2d``: nearest
(k = floor(s * n)) or bilinear (p = s * n - 0.5, texels floor(p) and floor(p) + 1, weights from the fraction) per
fragment -> (F, 4) float32 (not rounded, so levels can still be blended). ``round_u8``: the sampler's final
rounding of those colors to uint8; ``nearest_u8``: both at once for one image filtered nearest. ``cube_face``:
a direction's cube face and face coordinates (the sampler's and the fused fragment kernel's one rule).

``tapped_blocks``: the 4x4 blocks of a level those filters may tap at given coordinates, so that the fused
fragment path (``picaemu.fused.fragments``) decodes just those of a level it does not keep decoded
(``picaemu.texture.level_cache``) and filters every level, decoded whole or in part, by these very kernels.
"""

from __future__ import annotations

import math

import numpy as np

from picaemu import numba_link
from picaemu.regs.blocks.texturing import WRAP_MODES
from picaemu.texture.fetch import block_number

BORDER = -1  # "read the border color" marker
_WRAP = {name: code for code, name in WRAP_MODES.items()}
CLAMP_EDGE, CLAMP_BORDER, MIRROR = _WRAP["clamp to edge"], _WRAP["clamp to border"], _WRAP["mirrored repeat"]
EDGE_OR_REPEAT, BORDER_OR_REPEAT = _WRAP["edge if >= 0, repeat if < 0"], _WRAP["border if >= size, repeat if < 0"]


@numba_link.kernel()
def wrap(k: int, n: int, mode: int) -> int:
    """Texel index in [0, n), or -1 (``BORDER``) where the border color is read."""
    if mode == CLAMP_EDGE:
        return min(max(k, 0), n - 1)
    if mode == CLAMP_BORDER:
        return k if 0 <= k < n else BORDER
    if mode == MIRROR:
        m = k & (2 * n - 1)
        return m if m < n else 2 * n - 1 - m
    if mode == EDGE_OR_REPEAT:
        return k & (n - 1) if k < 0 else min(k, n - 1)
    if mode == BORDER_OR_REPEAT:
        return k & (n - 1) if k < 0 else (k if k < n else BORDER)
    return k & (n - 1)  # repeat; codes 6 and 7 behave as repeat


@numba_link.kernel()
def _texel_index(offset: int, w: int, h: int, ks: int, kt: int, wrap_s: int, wrap_t: int) -> int:
    """Flat texel index (scalars only: array arguments would cost a refcount per call)."""
    s, t = wrap(ks, w, wrap_s), wrap(kt, h, wrap_t)
    if s == BORDER or t == BORDER:
        return BORDER
    return offset + (h - 1 - t) * w + s


@numba_link.kernel(inline="always")
def _texel(texels, idx: int, border):  # pragma: no cover - compiled
    """The four channels of texel ``idx``, or of the border color (``idx`` = BORDER)."""
    at = max(idx, 0)  # one read per tap (texel 0 stands in for a border)
    c0, c1, c2, c3 = texels[at, 0], texels[at, 1], texels[at, 2], texels[at, 3]
    border_tap = idx == BORDER
    return (
        border[0] if border_tap else c0,
        border[1] if border_tap else c1,
        border[2] if border_tap else c2,
        border[3] if border_tap else c3,
    )


@numba_link.kernel(inline="always")
def _nearest(texels, offset: int, w: int, h: int, s, t, wrap_s: int, wrap_t: int, border):  # pragma: no cover
    """The texel nearest texture coordinates (s, t): k = floor(s * w), floor(t * h), wrapped."""
    idx = _texel_index(offset, w, h, math.floor(s * w), math.floor(t * h), wrap_s, wrap_t)
    return _texel(texels, idx, border)


@numba_link.kernel()
def nearest_u8(texels, offset: int, w: int, h: int, st, wrap_s, wrap_t, border, out):  # pragma: no cover
    """``filter_2d`` + ``round_u8`` of one image (at texel ``offset``, size w x h) filtered nearest at every ``st``
    (F, 2) into ``out`` (F, 4) uint8, without the float32 colors between (a nearest texel rounds to itself).
    ``texels`` and ``out`` C-contiguous: each texel is copied as one 32-bit word (its four channel bytes in memory
    order), not channel by channel through the float type the border color shares with it (8.7 -> 3.2 ns a
    fragment on minicraft's sprites)."""
    words, out_words = texels.view(np.uint32), out.view(np.uint32)
    edge = numba_link.empty((1, 4), np.uint8)  # the border color (bytes held in float32) as a texel word
    for ch in range(4):
        edge[0, ch] = np.uint8(border[ch])
    edge_word = edge.view(np.uint32)[0, 0]
    for i in range(st.shape[0]):
        idx = _texel_index(offset, w, h, math.floor(st[i, 0] * w), math.floor(st[i, 1] * h), wrap_s, wrap_t)
        word = words[max(idx, 0), 0]  # one read per tap (texel 0 stands in for a border)
        out_words[i, 0] = edge_word if idx == BORDER else word


@numba_link.kernel()
def fetch(texels, offsets, widths, heights, level, face, ks, kt, wrap_s, wrap_t, border):
    out = numba_link.empty((level.size, 4), np.uint8)
    for i in range(level.size):
        lv = level[i]
        idx = _texel_index(offsets[lv, face[i]], widths[lv], heights[lv], ks[i], kt[i], wrap_s, wrap_t)
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = _texel(texels, idx, border)
    return out


@numba_link.kernel()
def filter_2d(texels, offsets, widths, heights, level, face, st, linear, wrap_s, wrap_t, border):
    n = level.size
    out = numba_link.empty((n, 4), np.float32)  # every row written below (allocated here: no np.empty compile)
    for i in range(n):
        lv = level[i]
        w, h, offset = widths[lv], heights[lv], offsets[lv, face[i]]
        if not linear[i]:
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = _nearest(
                texels, offset, w, h, st[i, 0], st[i, 1], wrap_s, wrap_t, border
            )
            continue
        ps, pt = st[i, 0] * w - np.float32(0.5), st[i, 1] * h - np.float32(0.5)
        fs, ft = math.floor(ps), math.floor(pt)
        ax, ay = np.float32(ps - fs), np.float32(pt - ft)
        # the two columns and the two rows are wrapped once each (not once per tap)
        s0, s1 = wrap(fs, w, wrap_s), wrap(fs + 1, w, wrap_s)
        # four float32 accumulators in registers, each step rounded to float32 as a store to ``out`` would be
        a0 = a1 = a2 = a3 = np.float32(0.0)
        for dy in range(2):
            wy = ay if dy else np.float32(1.0) - ay
            t = wrap(ft + dy, h, wrap_t)
            row = offset + (h - 1 - t) * w
            for dx in range(2):
                weight = (ax if dx else np.float32(1.0) - ax) * wy
                sx = s1 if dx else s0
                idx = BORDER if sx == BORDER or t == BORDER else row + sx
                t0, t1, t2, t3 = _texel(texels, idx, border)
                a0 = np.float32(a0 + weight * t0)
                a1 = np.float32(a1 + weight * t1)
                a2 = np.float32(a2 + weight * t2)
                a3 = np.float32(a3 + weight * t3)
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = a0, a1, a2, a3
    return out


TAPPED_BLOCKS = 9  # the most 4x4 blocks one fragment's taps fall in (``tapped_blocks``: 3 x 3 texels)
EXACT = 2.0**52  # texel coordinates below this in magnitude are exact in float64 (and their floor in int64)


@numba_link.kernel(inline="always")  # ``level_cache.tapped_level``'s: no library of its own
def tapped_blocks(st, w: int, h: int, wrap_s: int, wrap_t: int, seen, blocks) -> int:  # pragma: no cover
    """The 4x4 blocks of a w x h level that ``filter_2d`` or ``nearest_u8`` may tap at the coordinates ``st``
    (F, 2), each once, into ``blocks`` (at least min(F * TAPPED_BLOCKS, W * H / 16) int64); returns their count, or
    -1 when any block may be tapped, numbered as ``fetch.decode_blocks`` takes them (``fetch.block_number``);
    ``seen`` (W * H / 16,) zeros, marked here. On each axis
    (x = s * n in float64, as the filters compute it) the nearest texel is k = floor(x) and bilinear taps
    floor(x - 0.5) and the next, each k - 1, k or k + 1: those three, wrapped (a border read taps nothing). A NaN
    or huge coordinate (|x| >= EXACT) may tap anything: -1.

    Each wrap mode maps an aligned group of 4 texel coordinates (a block's) to an aligned group of 4, or to the
    border, as a whole (n is a multiple of 4), so a fragment's blocks depend on its blocks of k - 1 and k + 1 on
    each axis alone: a fragment whose four equal the previous one's taps no block it did not (a magnified sprite's
    fragments share them), and one whose taps all lie inside the level taps the blocks of those four unwrapped
    (13.9 -> 3.9 ns a fragment on minicraft's sprites, 8.6 -> 4.3 on a 1:1 image; incoherent coordinates outside
    the level pay 2-8 ns more)."""
    count = 0
    cols, rows = numba_link.empty(3, np.int64), numba_link.empty(3, np.int64)
    last = (np.int64(0), np.int64(0), np.int64(0), np.int64(0))
    for i in range(st.shape[0]):
        xs, xt = st[i, 0] * w, st[i, 1] * h
        if not (abs(xs) < EXACT and abs(xt) < EXACT):
            return -1
        ks, kt = math.floor(xs), math.floor(xt)
        key = ((ks - 1) >> 2, (ks + 1) >> 2, (kt - 1) >> 2, (kt + 1) >> 2)
        if i and key == last:
            continue
        last = key
        if 1 <= ks < w - 1 and 1 <= kt < h - 1:  # every tap inside the level, where each wrap mode is the identity
            for row in ((h - kt) >> 2, (h - 2 - kt) >> 2):  # the memory rows of t = kt - 1 and kt + 1
                for col in (key[0], key[1]):
                    count = _mark(block_number(col, row, w), seen, blocks, count)
            continue
        for d in range(3):
            s, t = wrap(ks + d - 1, w, wrap_s), wrap(kt + d - 1, h, wrap_t)
            cols[d], rows[d] = BORDER if s == BORDER else s >> 2, BORDER if t == BORDER else (h - 1 - t) >> 2
        for dt in range(3):
            for ds in range(3):
                if rows[dt] != BORDER and cols[ds] != BORDER:
                    count = _mark(block_number(cols[ds], rows[dt], w), seen, blocks, count)
    return count


@numba_link.kernel()
def _mark(b: int, seen, blocks, count: int) -> int:  # pragma: no cover - compiled
    """``tapped_blocks``' count after block ``b`` is listed in ``blocks`` (and marked in ``seen``) unless it was."""
    if seen[b]:
        return count
    seen[b] = 1
    blocks[count] = b
    return count + 1


FLOAT32_MAX = np.float32(np.finfo(np.float32).max)


@numba_link.kernel()
def nan_to_num32(x):  # pragma: no cover - compiled
    """``np.nan_to_num`` of a float32: NaN -> 0, +-inf -> +-FLOAT32_MAX."""
    if x != x:
        return np.float32(0.0)
    return min(max(x, -FLOAT32_MAX), FLOAT32_MAX)


@numba_link.kernel(error_model="numpy")  # a zero major axis divides to inf / NaN, as in numpy
def cube_face(u, v, w):  # pragma: no cover - compiled
    """A direction (float32 u, v, w) -> (face 0-5 = +X -X +Y -Y +Z -Z, face coordinates s, t (float32, NaN -> 0,
    infinities clamped to the largest float32), |major axis|): the major axis is the largest |component| (x before
    y before z on ties lost by strict comparison); s, t = the face's two other components (signed per face) / major,
    * 0.5 + 0.5."""
    au, av, aw = abs(u), abs(v), abs(w)
    if au > av and au > aw:
        axis, major, s, t = 0, u, -w, -v if u > 0 else v
    elif av > aw:
        axis, major, s, t = 1, v, u if v > 0 else -u, w
    else:
        axis, major, s, t = 2, w, u, -v if w > 0 else v
    half = np.float32(0.5)
    return (
        2 * axis + (1 if major < 0 else 0),
        nan_to_num32(np.float32(np.float32(s / major) * half) + half),
        nan_to_num32(np.float32(np.float32(t / major) * half) + half),
        abs(major),
    )


@numba_link.kernel()
def cube_faces(uvw, face, st, major) -> None:  # pragma: no cover - compiled
    """``cube_face`` of every direction of ``uvw`` (F, 3) float32 into ``face`` (F,) int64, ``st`` (F, 2) float32
    and ``major`` (F,) float32."""
    for i in range(uvw.shape[0]):
        face[i], st[i, 0], st[i, 1], major[i] = cube_face(uvw[i, 0], uvw[i, 1], uvw[i, 2])


@numba_link.kernel()
def round_u8(color, out):  # pragma: no cover - compiled
    """out = trunc(min(color + 0.5, 255)) in float32, for filtered colors (>= 0)."""
    for i in range(color.shape[0]):
        for c in range(color.shape[1]):
            out[i, c] = np.uint8(min(color[i, c] + np.float32(0.5), np.float32(255.0)))
