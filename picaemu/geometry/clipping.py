"""Clipping, perspective divide, viewport and depth-map parameters, face culling.

Receives triangles ``(T, 3, C) float32`` in the vertex column layout of ``picaemu.geometry.output_map`` (clip-space
position in columns 0-3, varyings after) and returns, after ``clip_triangles`` then ``to_window``, a
``WindowTriangles`` struct-of-arrays ready for the rasterizer:

- ``x, y``: (T, 3) int64 window position in 12.4 fixed point (y up), ``round(v * 16)``
- ``zndc``: (T, 3) float32 z / w; ``inv_w``: (T, 3) float32 1 / w
- ``varyings``: (T, 3, C - 4) float32 every varying multiplied by 1 / w (perspective-correct interpolation)
- ``primitive``: (T,) int32 triangle number within the draw (before clipping)

Clip volume (pica-pipeline.md §6): -w <= x <= w, -w <= y <= w, -w <= z <= 0, w >= 1e-5, plus the user plane
(FRAGOP_CLIP 0x047-0x04B) when enabled; a vertex is inside a plane when ``dot(P, plane) + offset >= -1e-8``.
Triangles wholly inside pass untouched, triangles wholly outside one plane are dropped, the rest are clipped by
Sutherland-Hodgman in plane order (compiled with numba) and fan-triangulated from the first vertex, the fan taking
the place of its triangle (output in submission order); new vertices interpolate every column linearly in clip
space. Before clipping, vertex 1 and 2 negate their normal quaternion when its dot product with vertex 0's is
negative. Triangles with a non-finite position are dropped (counted).

Viewport (§7): ``sx = (x/w + 1) * VIEWPORT_WIDTH + VIEWPORT_XY.x`` (likewise y). Culling (§8) uses the 12.4 area
``(x1-x0)(y2-y0) - (x2-x0)(y1-y0)`` (> 0 = counter-clockwise): mode 1 drops CCW, mode 2 drops CW, 0 and 3 keep
both; zero-area triangles are always dropped; kept clockwise triangles are reordered counter-clockwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu import numba_link
from picaemu.errors import PipelineError
from picaemu.geometry.output_map import QUAT
from picaemu.regs import access, id_of

SUBPIXEL = 16  # 12.4 fixed point
INSIDE_EPS = 1e-8
W_MIN = 1e-5
MAX_VIEWPORT_HALF = 4096.0
# fixed clip planes as (coefficients on x y z w, offset), in clipping order
FIXED_PLANES = (
    ((-1.0, 0.0, 0.0, 1.0), 0.0),  # right: w - x
    ((1.0, 0.0, 0.0, 1.0), 0.0),  # left: w + x
    ((0.0, -1.0, 0.0, 1.0), 0.0),  # top: w - y
    ((0.0, 1.0, 0.0, 1.0), 0.0),  # bottom: w + y
    ((0.0, 0.0, -1.0, 0.0), 0.0),  # near: -z
    ((0.0, 0.0, 1.0, 1.0), 0.0),  # far: z + w
    ((0.0, 0.0, 0.0, 1.0), -W_MIN),  # w > 0
)
CULL_DROPS = {0: 0, 1: 1, 2: -1, 3: 0}  # cull mode -> sign of the area that is dropped (0 = none)


@dataclass(frozen=True)
class ClipState:
    """Clip planes (P, 4) float64 and offsets (P,) float64, fixed planes first, the user plane last."""

    planes: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> ClipState:
        planes: list[tuple[float, ...]] = [p for p, _ in FIXED_PLANES]
        offsets = [o for _, o in FIXED_PLANES]
        if access.raw(regs, "FRAGOP_CLIP", "enable"):
            user = tuple(float(access.value(regs, f"FRAGOP_CLIP_DATA{i}", "value")) for i in range(4))
            if not np.isfinite(user).all():
                raise PipelineError(f"user clip plane {user} is not finite", register=id_of("FRAGOP_CLIP_DATA0"))
            planes.append(user)
            offsets.append(0.0)
        return cls(np.array(planes, np.float64), np.array(offsets, np.float64))


@dataclass(frozen=True)
class ViewportState:
    half_width: float
    half_height: float
    x: int
    y: int
    cull_mode: int

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> ViewportState:
        hw = float(access.value(regs, "VIEWPORT_WIDTH", "half_width"))
        hh = float(access.value(regs, "VIEWPORT_HEIGHT", "half_height"))
        for name, v in (("VIEWPORT_WIDTH", hw), ("VIEWPORT_HEIGHT", hh)):
            if not np.isfinite(v) or abs(v) > MAX_VIEWPORT_HALF:
                raise PipelineError(f"{name} = {v} is not a usable viewport half-size", register=id_of(name))
        return cls(
            hw,
            hh,
            int(access.value(regs, "VIEWPORT_XY", "x")),
            int(access.value(regs, "VIEWPORT_XY", "y")),
            access.raw(regs, "FACECULLING_CONFIG", "mode"),
        )


@dataclass
class WindowTriangles:
    x: np.ndarray
    y: np.ndarray
    zndc: np.ndarray
    inv_w: np.ndarray
    varyings: np.ndarray
    primitive: np.ndarray

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def select(self, index: np.ndarray | slice) -> WindowTriangles:
        return WindowTriangles(
            self.x[index],
            self.y[index],
            self.zndc[index],
            self.inv_w[index],
            self.varyings[index],
            self.primitive[index],
        )


def align_quaternions(tris: np.ndarray) -> None:
    """In place: negate the quaternion of vertices 1 and 2 of (T, 3, C) float32 triangles whose dot product with
    vertex 0's is negative (one compiled pass, ``_align_quaternions``; ``align_quaternions_reference`` is the rule
    in numpy, the tests' oracle)."""
    _align_quaternions(tris)


@numba_link.kernel(inline="always")
def _align_quaternions(tris):  # pragma: no cover - compiled
    """``align_quaternions``: the float32 dot product summed as (x + y) + (z + w), the order numpy's einsum takes
    in ``align_quaternions_reference`` (checked bit for bit by a test)."""
    q = QUAT.start
    for t in range(tris.shape[0]):
        for k in range(1, 3):
            dot = (tris[t, 0, q] * tris[t, k, q] + tris[t, 0, q + 1] * tris[t, k, q + 1]) + (
                tris[t, 0, q + 2] * tris[t, k, q + 2] + tris[t, 0, q + 3] * tris[t, k, q + 3]
            )
            if dot < 0:
                for c in range(q, q + 4):
                    tris[t, k, c] = -tris[t, k, c]


def align_quaternions_reference(tris: np.ndarray) -> None:
    """``align_quaternions`` in numpy (readable; the differential test's oracle)."""
    q = tris[:, :, QUAT]
    flip = np.einsum("tc,tkc->tk", q[:, 0], q[:, 1:]) < 0
    tris[:, 1:, QUAT] = np.where(flip[:, :, None], -q[:, 1:], q[:, 1:])


@numba_link.compiled_only()
def _clip_polygons(tris, cut_idx, planes, offsets):  # pragma: no cover - compiled
    """Sutherland-Hodgman of the triangles ``tris[cut_idx]`` against every plane, fan-triangulated; returns (tris,
    index into ``cut_idx`` of each one's source)."""
    t_count, c = cut_idx.shape[0], tris.shape[2]
    p_count = planes.shape[0]
    cap = 3 + p_count + 1
    out = numba_link.empty((t_count * (cap - 2), 3, c), np.float32)
    src = numba_link.empty(t_count * (cap - 2), np.int64)
    poly = numba_link.empty((2, cap, c), np.float64)
    dist = numba_link.empty(cap, np.float64)
    n_out = 0
    for t in range(t_count):
        cur = 0
        for i in range(3):
            for k in range(c):
                poly[0, i, k] = tris[cut_idx[t], i, k]
        n = 3
        for p in range(p_count):
            for i in range(n):
                dist[i] = offsets[p]
                for k in range(4):
                    dist[i] += planes[p, k] * poly[cur, i, k]
            m = 0
            nxt = 1 - cur
            for i in range(n):
                j = (i + 1) % n
                if dist[i] >= -1e-8:
                    for k in range(c):
                        poly[nxt, m, k] = poly[cur, i, k]
                    m += 1
                if (dist[i] >= -1e-8) != (dist[j] >= -1e-8):
                    s = dist[i] / (dist[i] - dist[j])
                    for k in range(c):
                        poly[nxt, m, k] = poly[cur, i, k] + s * (poly[cur, j, k] - poly[cur, i, k])
                    m += 1
            cur = nxt
            n = m
            if n < 3:
                break
        for f in range(1, n - 1):
            for k in range(c):
                out[n_out, 0, k] = poly[cur, 0, k]
                out[n_out, 1, k] = poly[cur, f, k]
                out[n_out, 2, k] = poly[cur, f + 1, k]
            src[n_out] = t
            n_out += 1
    return out[:n_out], src[:n_out]


KEEP, REJECT, STRADDLE, INVALID = range(4)  # triangle classes of ``_classify``
FIXED_PLANES_MASK = (1 << len(FIXED_PLANES)) - 1  # bit p: plane p of FIXED_PLANES


@numba_link.compiled_only()
def _finite(tris, t):  # pragma: no cover - compiled
    """Every position component (columns 0-3) of triangle ``t`` is finite (else the triangle is ``INVALID``)."""
    finite = True
    for i in range(3):
        for k in range(4):
            finite &= np.isfinite(tris[t, i, k])
    return finite


@numba_link.compiled_only(_nrt=False)  # no allocation, no array returned: no reference counting
def _classify(tris, out):  # pragma: no cover - compiled
    """Class of each (T, 3, C) triangle (position in columns 0-3) against ``FIXED_PLANES``: KEEP / REJECT /
    STRADDLE / INVALID. Their coefficients are 0 or +-1 with at most two non-zero terms with the offset, so every
    distance ``offset + sum(coefficient * position)`` is one float64 rounding whatever the summation order; it is
    written out here plane by plane (bit p of a vertex's mask: outside plane p), without the zero terms (a test
    holds it to ``_classify_planes`` and to a matrix form)."""
    for t in range(tris.shape[0]):
        if not _finite(tris, t):
            out[t] = INVALID
            continue
        any_out = 0
        all_out = FIXED_PLANES_MASK
        for i in range(3):
            x, y = np.float64(tris[t, i, 0]), np.float64(tris[t, i, 1])
            z, w = np.float64(tris[t, i, 2]), np.float64(tris[t, i, 3])
            m = 0
            if not w - x >= -INSIDE_EPS:
                m |= 1
            if not w + x >= -INSIDE_EPS:
                m |= 2
            if not w - y >= -INSIDE_EPS:
                m |= 4
            if not w + y >= -INSIDE_EPS:
                m |= 8
            if not -z >= -INSIDE_EPS:
                m |= 16
            if not z + w >= -INSIDE_EPS:
                m |= 32
            if not w - W_MIN >= -INSIDE_EPS:
                m |= 64
            any_out |= m
            all_out &= m
        out[t] = KEEP if any_out == 0 else (REJECT if all_out != 0 else STRADDLE)


@numba_link.kernel(_nrt=False)  # no allocation, no array returned: no reference counting
def _classify_planes(tris, planes, offsets, out):  # pragma: no cover - compiled
    """``_classify`` against any (P, 4) float64 ``planes`` / (P,) ``offsets`` (the fixed ones and the user plane):
    a vertex is outside plane p when ``offset + a x + b y + c z + d w`` (float64, summed in that order, as
    ``_clip_polygons`` measures it) is below ``-INSIDE_EPS``. On the fixed planes it agrees with ``_classify``
    (their sums are one rounding whatever the order)."""
    for t in range(tris.shape[0]):
        if not _finite(tris, t):
            out[t] = INVALID
            continue
        inside, rejected = True, False
        for p in range(planes.shape[0]):
            outside = 0
            for i in range(3):
                d = offsets[p]
                for k in range(4):
                    d += planes[p, k] * np.float64(tris[t, i, k])
                outside += not d >= -INSIDE_EPS
            inside &= outside == 0
            rejected |= outside == 3
        out[t] = KEEP if inside else (REJECT if rejected else STRADDLE)


@numba_link.kernel(_nrt=False)  # no allocation, no array returned: no reference counting
def classify(tris, planes, offsets, out):  # pragma: no cover - compiled
    """Class (``KEEP`` / ``REJECT`` / ``STRADDLE`` / ``INVALID``) of each (T, 3, C) float32 triangle into ``out``
    (T,) int8, against the ``ClipState`` planes: ``_classify`` when they are the fixed ones (a ``ClipState`` has
    the user plane after them, or nothing), else ``_classify_planes``. Shared by ``clip_triangles`` and the fused
    front end."""
    if planes.shape[0] == len(FIXED_PLANES):
        _classify(tris, out)
    else:
        _classify_planes(tris, planes, offsets, out)


def _classes(tris: np.ndarray, clip: ClipState) -> np.ndarray:
    """(T,) int8 class of every triangle (``classify``)."""
    out = np.empty(tris.shape[0], np.int8)
    classify(np.ascontiguousarray(tris, np.float32), clip.planes, clip.offsets, out)  # columns 0-3 read in place
    return out


def clip_triangles(tris: np.ndarray, clip: ClipState) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """(T, 3, C) clip-space triangles -> (T', 3, C) triangles inside the volume, (T',) source triangle, counts.

    The output keeps submission order: the source indices are non-decreasing, and a clipped triangle's fan takes
    its place among the others (primitives are rasterized, blended and depth-tested in this order)."""
    classes = _classes(tris, clip)
    tally = np.bincount(classes, minlength=4)
    counts = {
        "primitives_invalid": int(tally[INVALID]),
        "primitives_clipped_away": int(tally[REJECT]),
        "primitives_clipped": int(tally[STRADDLE]),
    }
    if tally[KEEP] == tris.shape[0]:
        return tris, np.arange(tris.shape[0], dtype=np.int64), counts
    out, source, dropped = clip_classified(np.ascontiguousarray(tris), classes, clip.planes, clip.offsets)
    counts["primitives_invalid"] += dropped
    return out, source, counts


@numba_link.kernel()
def clip_classified(tris, classes, planes, offsets):  # pragma: no cover - compiled
    """``clip_triangles`` after ``_classify``: the KEEP triangles and the fans of the STRADDLE ones (clipped by
    ``_clip_polygons`` against the (P, 4) float64 ``planes`` / (P,) ``offsets``; a fan triangle with a non-finite
    position or a w <= 0 — huge coordinates (~1e28) can overflow or cancel while interpolating — is dropped), in
    submission order, a fan taking its triangle's place. Returns ((T', 3, C) float32, (T',) int64 source triangle,
    fan triangles dropped). Compiled so that the fused front end clips without leaving compiled code."""
    # the STRADDLE triangles' indices by loops, not np.flatnonzero of an array comparison and a fancy index
    # (each compiles numba's own machinery: ~1 s of a first run)
    straddle = 0
    for t in range(classes.shape[0]):
        straddle += classes[t] == STRADDLE
    cut_idx = numba_link.empty(straddle, np.int64)
    straddle = 0
    for t in range(classes.shape[0]):
        if classes[t] == STRADDLE:
            cut_idx[straddle] = t
            straddle += 1
    cut, src = _clip_polygons(tris, cut_idx, planes, offsets)
    ok = numba_link.empty(cut.shape[0], np.bool_)
    for f in range(cut.shape[0]):
        good = True
        for i in range(3):
            for k in range(4):
                good &= np.isfinite(cut[f, i, k])
            good &= cut[f, i, 3] > 0
        ok[f] = good
    good_cut = 0
    for f in range(cut.shape[0]):  # loops, not np.count_nonzero (compile time)
        good_cut += ok[f]
    kept = good_cut
    for t in range(tris.shape[0]):
        kept += classes[t] == KEEP
    out = numba_link.empty((kept, 3, tris.shape[2]), np.float32)
    source = numba_link.empty(kept, np.int64)
    n = p = 0
    for t in range(tris.shape[0]):
        if classes[t] == KEEP:
            _copy_triangle(tris, t, out, n)
            source[n] = t
            n += 1
        while p < cut.shape[0] and cut_idx[src[p]] == t:  # the fan of triangle t, in order
            if ok[p]:
                _copy_triangle(cut, p, out, n)
                source[n] = t
                n += 1
            p += 1
    return out, source, cut.shape[0] - good_cut


@numba_link.kernel(inline="always")
def _copy_triangle(src, i, out, n):  # pragma: no cover - compiled
    """out[n] = src[i], element by element: an array assignment compiles numba's shape-mismatch error (seconds)."""
    for v in range(3):
        for c in range(src.shape[2]):
            out[n, v, c] = src[i, v, c]


@numba_link.kernel(_nrt=False)  # no allocation, no array returned: no reference counting
def _window(tris, half_width, half_height, vx, vy, x, y, zndc, inv_w, vary):  # pragma: no cover - compiled
    """The body of ``to_window`` per vertex, in float64 with the same operations and order as the formula in the
    module docstring (so the results match a numpy evaluation of it bit for bit), without temporaries."""
    for t in range(tris.shape[0]):
        for i in range(3):
            inv = 1.0 / np.float64(tris[t, i, 3])
            sx = (np.float64(tris[t, i, 0]) * inv + 1.0) * half_width + vx
            sy = (np.float64(tris[t, i, 1]) * inv + 1.0) * half_height + vy
            x[t, i] = np.int64(np.rint(sx * SUBPIXEL))
            y[t, i] = np.int64(np.rint(sy * SUBPIXEL))
            zndc[t, i] = np.float32(np.float64(tris[t, i, 2]) * inv)
            inv_w[t, i] = np.float32(inv)
            for k in range(vary.shape[2]):
                vary[t, i, k] = np.float32(np.float64(tris[t, i, 4 + k]) * inv)


def to_window(tris: np.ndarray, primitive: np.ndarray, vp: ViewportState) -> WindowTriangles:
    """Perspective divide and viewport transform of clipped triangles (w > 0 guaranteed by clipping): 1/w, z/w,
    varyings / w and ``round(sx * 16)`` computed in float64 (one compiled pass)."""
    t, _, c = tris.shape
    out = WindowTriangles(
        x=np.empty((t, 3), np.int64),
        y=np.empty((t, 3), np.int64),
        zndc=np.empty((t, 3), np.float32),
        inv_w=np.empty((t, 3), np.float32),
        varyings=np.empty((t, 3, c - 4), np.float32),
        primitive=primitive.astype(np.int32),
    )
    _window(
        np.ascontiguousarray(tris, np.float32),
        float(vp.half_width),
        float(vp.half_height),
        float(vp.x),
        float(vp.y),
        out.x,
        out.y,
        out.zndc,
        out.inv_w,
        out.varyings,
    )
    return out


def signed_area(wt: WindowTriangles) -> np.ndarray:
    """(T,) int64 twice the signed area in 12.4 units squared; > 0 = counter-clockwise (y up)."""
    x, y = wt.x, wt.y
    return (x[:, 1] - x[:, 0]) * (y[:, 2] - y[:, 0]) - (x[:, 2] - x[:, 0]) * (y[:, 1] - y[:, 0])


@numba_link.kernel(inline="always")
def _cull_count(x, y, drop_sign: int) -> int:  # pragma: no cover - compiled
    """How many (T, 3) int64 triangles ``cull`` would drop or reorder: zero-area ones, those whose area has the
    sign ``drop_sign`` (0: none) and the kept clockwise ones (the area of ``signed_area``, int64 as numpy's)."""
    count = 0
    for t in range(x.shape[0]):
        area = (x[t, 1] - x[t, 0]) * (y[t, 2] - y[t, 0]) - (x[t, 2] - x[t, 0]) * (y[t, 1] - y[t, 0])
        if area <= 0 or drop_sign == 1:
            count += 1
    return count


@numba_link.kernel(_nrt=False)  # no allocation, no array returned: no reference counting
def _cull_gather(x, y, zndc, inv_w, varyings, primitive, drop_sign, ox, oy, oz, ow, ov, op):  # pragma: no cover
    """``cull_reference`` in one pass: the kept triangles into the ``o*`` arrays (clockwise ones with vertices 1
    and 2 swapped); returns how many were kept."""
    n = 0
    for t in range(x.shape[0]):
        area = (x[t, 1] - x[t, 0]) * (y[t, 2] - y[t, 0]) - (x[t, 2] - x[t, 0]) * (y[t, 1] - y[t, 0])
        if area == 0 or (drop_sign != 0 and (1 if area > 0 else -1) == drop_sign):
            continue
        for k in range(3):
            src = k if area > 0 or k == 0 else 3 - k  # clockwise: 0, 2, 1
            ox[n, k] = x[t, src]
            oy[n, k] = y[t, src]
            oz[n, k] = zndc[t, src]
            ow[n, k] = inv_w[t, src]
            for v in range(varyings.shape[2]):  # not a row assignment: that compiles numba's shape-mismatch error
                ov[n, k, v] = varyings[t, src, v]
        op[n] = primitive[t]
        n += 1
    return n


def cull(wt: WindowTriangles, cull_mode: int) -> tuple[WindowTriangles, int]:
    """Drop culled and zero-area triangles, reorder the kept clockwise ones; returns (kept, number culled). One
    compiled pass (``_cull_gather``); ``cull_reference`` is the same rule in numpy, the tests' oracle."""
    drop_sign = CULL_DROPS[cull_mode]
    t = len(wt)
    if not t or not _cull_count(wt.x, wt.y, drop_sign):  # every triangle counter-clockwise and kept
        return wt, 0
    out = WindowTriangles(
        np.empty_like(wt.x),
        np.empty_like(wt.y),
        np.empty_like(wt.zndc),
        np.empty_like(wt.inv_w),
        np.empty_like(wt.varyings),
        np.empty_like(wt.primitive),
    )
    n = _cull_gather(
        wt.x,
        wt.y,
        wt.zndc,
        wt.inv_w,
        wt.varyings,
        wt.primitive,
        drop_sign,
        out.x,
        out.y,
        out.zndc,
        out.inv_w,
        out.varyings,
        out.primitive,
    )
    return (out if n == t else out.select(slice(0, n))), t - n


def cull_reference(wt: WindowTriangles, cull_mode: int) -> tuple[WindowTriangles, int]:
    """``cull`` written with numpy array operations (readable; the differential test's oracle)."""
    drop_sign = CULL_DROPS[cull_mode]
    area = signed_area(wt)
    keep = (area != 0) & (np.sign(area) != drop_sign) if drop_sign else area != 0
    kept = wt if keep.all() else wt.select(np.nonzero(keep)[0])
    cw = area[keep] < 0
    if cw.any():
        order = np.where(cw[:, None], np.array([0, 2, 1]), np.array([0, 1, 2]))
        rows = np.arange(len(kept))[:, None]
        kept = WindowTriangles(
            kept.x[rows, order],
            kept.y[rows, order],
            kept.zndc[rows, order],
            kept.inv_w[rows, order],
            kept.varyings[rows, order],
            kept.primitive,
        )
    return kept, int((~keep).sum())


@numba_link.kernel(inline="always")
def extent(x, y):  # pragma: no cover - compiled
    """(min x, max x, min y, max y) of (T, 3) int64 vertex coordinates (T >= 1)."""
    x_lo = x_hi = x[0, 0]
    y_lo = y_hi = y[0, 0]
    for t in range(x.shape[0]):
        for k in range(3):
            x_lo, x_hi = min(x_lo, x[t, k]), max(x_hi, x[t, k])
            y_lo, y_hi = min(y_lo, y[t, k]), max(y_hi, y[t, k])
    return x_lo, x_hi, y_lo, y_hi


@numba_link.kernel(inline="always")
def window_box(box: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the inclusive window-pixel box around an ``extent`` (12.4 fixed point), clamped to a
    ``width`` x ``height`` framebuffer (a pixel centre outside it cannot be covered). Compiled: the fused vertex
    side (``picaemu.fused.vertices``) calls it from compiled code; Python callers get Python ints."""
    x_lo, x_hi, y_lo, y_hi = box
    return (
        min(max(x_lo // SUBPIXEL, 0), width - 1),
        min(max(y_lo // SUBPIXEL, 0), height - 1),
        min(max(-(-x_hi // SUBPIXEL), 0), width - 1),
        min(max(-(-y_hi // SUBPIXEL), 0), height - 1),
    )
