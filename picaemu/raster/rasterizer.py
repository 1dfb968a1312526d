"""Rasterizer: window-space triangles -> fragments (struct-of-arrays), with scissor, fill rule and interpolation.

Receives ``WindowTriangles`` (``picaemu.geometry.clipping``: 12.4 fixed-point x y, z/w, 1/w, varyings premultiplied by
1/w,
every triangle counter-clockwise) and a ``RasterState``; returns ``picaemu.raster.fragments.Fragments`` in rasterization
order (triangle by triangle, rows bottom-up, pixels left to right) plus counters.

Coverage (pica-pipeline.md §9): pixel (X, Y) samples at (16X + 8, 16Y + 8) in 12.4; edge functions
``E_i = (b.x - a.x)(p.y - a.y) - (b.y - a.y)(p.x - a.x)`` for the edge a -> b opposite vertex i; a sample is
covered when every ``E_i + bias_i >= 0`` where ``bias_i = -1`` for right edges (dy > 0: the opposite vertex lies to
the left) and for flat edges with the triangle below them (dy = 0, dx < 0: the opposite vertex has the smaller y),
as the tested reference decides it in the same y-up window coordinates (memory row ``H - 1 - y``): samples on a
triangle's flat top (largest-y) edge are excluded, those on its flat bottom edge included, so a rectangle from
y0 + .5 to y1 + .5 covers rows y0 .. y1 - 1. Pixels are clamped to the framebuffer; the scissor box
(0x065-0x067, inclusive) rejects pixels outside it (mode 3) or inside it (mode 1).

Interpolation (§9.4) with the exact barycentric weights ``E_i``: varyings perspective-correct
``sum(E_i a_i / w_i) / sum(E_i / w_i)``, z/w screen-linear, ``w = sum(E_i) / sum(E_i / w_i)``; then
``depth = z/w * DEPTHMAP_SCALE + DEPTHMAP_OFFSET`` (times w in W-buffer mode, 0x06D = 0), clamped to [0, 1]. The
normal quaternion is normalised after interpolation. The early-depth unit (0x061-0x063, 0x06A, 0x118) is a
rejection optimisation with its own buffer that no public source models; it has no visible effect here.

The scan is one numba kernel (cache=True): per row, the exact integer span where all edge values pass, clipped by
the scissor box. A first quick walk sums the triangles' clamped bounding boxes; the fragments are written into
arrays of that size, or, when those would be large (big triangles), of the exact size a counting walk gives.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from picaemu import numba_link
from picaemu.errors import PipelineError
from picaemu.geometry import output_map as om
from picaemu.geometry.clipping import WindowTriangles
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of

SCISSOR_KERNEL_MODE = {0: 0, 1: 1, 2: 0, 3: 2}  # register mode -> kernel mode: 0 off, 1 exclude box, 2 include box
SCISSOR_EXCLUDE, SCISSOR_INCLUDE = 1, 2  # kernel modes
FRAGMENT_BYTES = 20  # x, y, depth, w, primitive: 4 bytes each, plus 4 per interpolated varying
ONE_PASS_BYTES = 64 << 20  # bounding-box-sized output arrays up to this size; beyond, count first
CHUNK_FRAGMENTS = 1 << 22  # ``rasterize_chunks``: bounding-box pixels per run of triangles (~2 M fragments)
MAX_DRAW_FRAGMENTS = 1 << 27  # a draw rasterizing more (1400 full 400x240 layers) is refused as hostile
# what a ``_scan`` walk does; numpy ints, not Python ints: numba types a Python int constant passed to a compiled
# function as its literal value and compiles the callee once per value (``_scan`` twice, ~1.5 s of CPU)
SCAN_BOUND, SCAN_COUNT, SCAN_EMIT = (np.int64(mode) for mode in range(3))
QUAT = slice(om.QUAT.start - 4, om.QUAT.stop - 4)  # the quaternion columns of the varyings array
# Fragments field -> columns of the varyings array (vertex columns minus the 4 position columns)
VARYING: dict[str, slice | int] = {
    "color": slice(om.COLOR.start - 4, om.COLOR.stop - 4),
    "texcoord0": slice(om.TC0.start - 4, om.TC0.stop - 4),
    "texcoord0_w": om.TC0W - 4,
    "texcoord1": slice(om.TC1.start - 4, om.TC1.stop - 4),
    "texcoord2": slice(om.TC2.start - 4, om.TC2.stop - 4),
    "quat": QUAT,
    "view": slice(om.VIEW.start - 4, om.VIEW.stop - 4),
}


@dataclass(frozen=True)
class RasterState:
    """Scissor and depth-map registers, with the framebuffer size, decoded once per draw."""

    width: int
    height: int
    scissor_mode: int  # kernel mode (SCISSOR_KERNEL_MODE values)
    scissor: tuple[int, int, int, int]  # x1 y1 x2 y2 inclusive
    depth_scale: float
    depth_offset: float
    w_buffer: bool

    @classmethod
    def from_regs(cls, regs: np.ndarray, width: int, height: int) -> RasterState:
        return cls(
            width=width,
            height=height,
            scissor_mode=SCISSOR_KERNEL_MODE[access.raw(regs, "SCISSORTEST_MODE", "mode")],
            scissor=(
                access.raw(regs, "SCISSORTEST_POS", "x1"),
                access.raw(regs, "SCISSORTEST_POS", "y1"),
                access.raw(regs, "SCISSORTEST_DIM", "x2"),
                access.raw(regs, "SCISSORTEST_DIM", "y2"),
            ),
            depth_scale=float(access.value(regs, "DEPTHMAP_SCALE", "scale")),
            depth_offset=float(access.value(regs, "DEPTHMAP_OFFSET", "offset")),
            w_buffer=access.raw(regs, "DEPTHMAP_ENABLE", "mode") == 0,
        )

    @cached_property
    def params(self) -> np.ndarray:
        """``_scan``'s int64 [width, height, scissor mode, x1, y1, x2, y2]."""
        return np.array([self.width, self.height, self.scissor_mode, *self.scissor], np.int64)

    @cached_property
    def dparams(self) -> np.ndarray:
        """``_scan``'s float64 [depth scale, depth offset, w-buffer]."""
        return np.array([self.depth_scale, self.depth_offset, float(self.w_buffer)], np.float64)


# a read-only view of 1.0 as large as any field: a field of unmapped columns is a slice of it (no memory per fragment)
ONES = np.broadcast_to(np.float32(1.0), (1 << 40, 4))
FieldPlan = tuple  # ("column", k) | ("columns", lo, hi) | ("ones", width; 0: a 1-D field) | ("mixed", pairs, width)


@dataclass(frozen=True)
class ColumnPlan:
    """Which varying columns a draw interpolates (``columns`` (A,) int64, sorted, no repeats) and how each
    ``Fragments`` field is read from the interpolated (F, A) array: a view of its columns when all are there,
    1.0 (the value of an unmapped semantic) where missing. Depends only on the columns: the draw state keeps one
    per output map (``picaemu.draw_state.Varyings``)."""

    columns: np.ndarray
    quat: int | None  # first column of the quaternion in the interpolated array when all four are there
    fields: tuple[tuple[str, FieldPlan], ...]

    @classmethod
    def of(cls, active: np.ndarray | None, n_var: int = om.NUM_COLUMNS - 4) -> ColumnPlan:
        """The plan of the varying columns ``active`` (any shape; None = all ``n_var``)."""
        columns = range(n_var) if active is None else sorted({int(c) for c in np.asarray(active).ravel()})
        position = {c: k for k, c in enumerate(columns)}
        quat = range(QUAT.start, QUAT.stop)
        return cls(
            np.array(columns, np.int64),
            position[quat[0]] if all(c in position for c in quat) else None,
            tuple((name, _field_plan(position, want)) for name, want in VARYING.items()),
        )

    def fields_of(self, out_var: np.ndarray) -> dict[str, np.ndarray]:
        """The varying fields of ``Fragments`` over the interpolated (F, A) float32 ``out_var``."""
        n = out_var.shape[0]
        out = {}
        for name, plan in self.fields:
            kind = plan[0]
            if kind == "column":
                out[name] = out_var[:, plan[1]]
            elif kind == "columns":
                out[name] = out_var[:, plan[1] : plan[2]]
            elif kind == "ones":
                out[name] = ONES[:n, : plan[1]] if plan[1] else ONES[:n, 0]
            else:
                field = out[name] = np.ones((n, plan[2]), np.float32)
                for k, c in plan[1]:
                    field[:, k] = out_var[:, c]
        return out


@numba_link.kernel(inline="always")
def _emit(
    prim, k, px, py, w0, w1, w2, inv_area2, tv, dparams, out_x, out_y, out_depth, out_w, out_var, out_prim
) -> bool:  # pragma: no cover - compiled
    """Write fragment k of primitive ``prim`` at pixel (px, py) with barycentric weights w0 w1 w2 (sum = 1 / inv_area2);
    tv (3, 2 + A) float64: per vertex 1/w, z/w and the active varyings (premultiplied by 1/w). Returns True when
    the perspective divisor is 0 (the caller raises ZeroDivisionError)."""
    den = w0 * tv[0, 0] + w1 * tv[1, 0] + w2 * tv[2, 0]
    inv_den = 1.0 / den
    z = (w0 * tv[0, 1] + w1 * tv[1, 1] + w2 * tv[2, 1]) * inv_area2
    w = inv_den / inv_area2
    depth = z * dparams[0] + dparams[1]
    if dparams[2] != 0.0:
        depth *= w
    out_x[k] = px
    out_y[k] = py
    out_depth[k] = min(max(depth, 0.0), 1.0)
    out_w[k] = w
    for i in range(tv.shape[1] - 2):
        out_var[k, i] = (w0 * tv[0, i + 2] + w1 * tv[1, i + 2] + w2 * tv[2, i + 2]) * inv_den
    out_prim[k] = prim
    return den == 0.0


@numba_link.kernel(inline="always")
def _span(r, e_dx, x0: int, x1: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """First and last pixel of a row in [x0, x1] where every ``r[i] + (px - x0) * e_dx[i] >= 0`` (r: the edge
    values at x0): exact integer bounds of the convex span (empty when first > last)."""
    lo, hi = x0, x1
    for i in range(3):
        if e_dx[i] > 0:  # growing along the row: covered from ceil(-r / e_dx) on
            lo = max(lo, x0 - (r[i] // e_dx[i]))
        elif e_dx[i] < 0:  # shrinking: covered up to floor(r / -e_dx)
            hi = min(hi, x0 + r[i] // -e_dx[i]) if r[i] >= 0 else x0 - 1
        elif r[i] < 0:
            return x0, x0 - 1
    return lo, hi


@numba_link.kernel(error_model="numpy")
def _scan(
    x,
    y,
    zndc,
    inv_w,
    vary,
    primitive,
    active,
    params,
    dparams,
    mode,
    out_x,
    out_y,
    out_depth,
    out_w,
    out_var,
    out_prim,
    counts,
) -> int:  # pragma: no cover - compiled
    """Walk each triangle's rows in its clamped bounding box; count its fragments, and write them (in order, from
    index 0) when ``mode`` is SCAN_EMIT; returns how many were kept (written when emitting). SCAN_BOUND only sums
    the clamped bounding boxes' pixels (>= the fragments; each triangle's in counts[t, 0]) and returns that.

    The covered pixels of a row are the exact span where all three edge values (with their fill-rule bias) are
    >= 0 (``_span``). active (A,) int64 varying columns to interpolate into out_var (F, A);
    params int64 [width, height, scissor mode, x1, y1, x2, y2]; dparams float64 [scale, offset, w-buffer];
    out_x, out_y (F,) int32; out_depth, out_w (F,) float32; out_var (F, A) float32; out_prim (F,) int32 (the
    triangle's entry of ``primitive`` (T,) int32), F at least the number kept; counts (T, 3) int64 [covered and
    kept, killed by scissor, a division by zero happened (compiled with error_model="numpy": the caller raises
    ZeroDivisionError, as Python would)].
    """
    width, height, smode = params[0], params[1], params[2]
    sx1, sy1, sx2, sy2 = params[3], params[4], params[5], params[6]
    e_row = numba_link.empty(3, np.int64)  # lowered in place (and in the loop's draw arena)
    e_dx = numba_link.empty(3, np.int64)
    e_dy = numba_link.empty(3, np.int64)
    bias = numba_link.empty(3, np.int64)
    tv = numba_link.empty((3, 2 + active.shape[0]), np.float64)
    emit = mode == SCAN_EMIT
    total = 0
    for t in range(x.shape[0]):
        # two-argument min / max: the three-argument forms cost numba ~0.3 s more to compile
        x0 = max(0, -((8 - min(min(x[t, 0], x[t, 1]), x[t, 2])) // 16))
        x1 = min(width - 1, (max(max(x[t, 0], x[t, 1]), x[t, 2]) - 8) // 16)
        y0 = max(0, -((8 - min(min(y[t, 0], y[t, 1]), y[t, 2])) // 16))
        y1 = min(height - 1, (max(max(y[t, 0], y[t, 1]), y[t, 2]) - 8) // 16)
        if mode == SCAN_BOUND:
            counts[t, 0] = max(x1 - x0 + 1, 0) * max(y1 - y0 + 1, 0)
            total += counts[t, 0]
            continue
        for i in range(3):
            ax, ay = x[t, (i + 1) % 3], y[t, (i + 1) % 3]
            dx, dy = x[t, (i + 2) % 3] - ax, y[t, (i + 2) % 3] - ay
            bias[i] = -1 if (dy > 0 or (dy == 0 and dx < 0)) else 0
            e_row[i] = dx * (16 * y0 + 8 - ay) - dy * (16 * x0 + 8 - ax) + bias[i]
            e_dx[i] = -dy * 16
            e_dy[i] = dx * 16
        area2 = float(e_row[0] + e_row[1] + e_row[2] - bias[0] - bias[1] - bias[2])
        zero_div = area2 == 0.0
        inv_area2 = 1.0 / area2
        if emit:
            for j in range(3):
                tv[j, 0], tv[j, 1] = inv_w[t, j], zndc[t, j]
                for i in range(active.shape[0]):
                    tv[j, 2 + i] = vary[t, j, active[i]]
        kept = 0
        cut = 0
        for py in range(y0, y1 + 1):
            lo, hi = _span(e_row, e_dx, x0, x1)
            row_in = sy1 <= py <= sy2
            n = max(hi - lo + 1, 0)  # the span minus its part the scissor rejects
            inside = max(min(hi, sx2) - max(lo, sx1) + 1, 0) if row_in else 0
            rejected = inside if smode == 1 else (n - inside if smode == 2 else 0)
            kept += n - rejected
            cut += rejected
            if emit and n > rejected:
                first, last = (max(lo, sx1), min(hi, sx2)) if smode == 2 else (lo, hi)  # include box: clip
                r0 = e_row[0] + (first - x0) * e_dx[0] - bias[0]
                r1 = e_row[1] + (first - x0) * e_dx[1] - bias[1]
                r2 = e_row[2] + (first - x0) * e_dx[2] - bias[2]
                for px in range(first, last + 1):
                    if not (smode == 1 and row_in and sx1 <= px <= sx2):  # exclude box: skip its pixels
                        zero_div |= _emit(
                            primitive[t],
                            total,
                            px,
                            py,
                            float(r0),
                            float(r1),
                            float(r2),
                            inv_area2,
                            tv,
                            dparams,
                            out_x,
                            out_y,
                            out_depth,
                            out_w,
                            out_var,
                            out_prim,
                        )
                        total += 1
                    r0 += e_dx[0]
                    r1 += e_dx[1]
                    r2 += e_dx[2]
            for i in range(3):
                e_row[i] += e_dy[i]
        counts[t, 0] = kept
        counts[t, 1] = cut
        counts[t, 2] = zero_div
        if not emit:
            total += kept
    return total


def rasterize_chunks(
    wt: WindowTriangles, rs: RasterState, active: np.ndarray | ColumnPlan | None = None
) -> Iterator[tuple[Fragments, dict]]:
    """``rasterize`` over consecutive runs of triangles of at most ``CHUNK_FRAGMENTS`` bounding-box pixels each
    (a triangle larger alone), in order: a draw's memory stays bounded whatever its size. A draw that rasterizes
    more than ``MAX_DRAW_FRAGMENTS`` fragments raises ``PipelineError`` before any is written (hostile input: a
    million full-screen triangles would take hours). ``active``: as ``rasterize``, or its ``ColumnPlan``."""
    plan = _plan(wt, active)
    bounds = _walk(wt, rs, SCAN_BOUND)
    total = int(bounds.sum())
    if total < CHUNK_FRAGMENTS and total <= MAX_DRAW_FRAGMENTS:  # one run: the sums below reach no chunk boundary
        yield _rasterize(wt, rs, plan, total)
        return
    if total > MAX_DRAW_FRAGMENTS:  # bounding boxes overestimate thin triangles: count exactly
        covered = _walk(wt, rs, SCAN_COUNT)
        if int(covered.sum()) > MAX_DRAW_FRAGMENTS:
            raise PipelineError(
                f"draw rasterizes {int(covered.sum())} fragments, more than the limit of {MAX_DRAW_FRAGMENTS}",
                register=id_of("NUMVERTICES"),
            )
    ends = np.flatnonzero(np.diff(np.cumsum(bounds) // CHUNK_FRAGMENTS)) + 1
    for lo, hi in itertools.pairwise([0, *ends.tolist(), len(wt)]):
        part = wt if (lo, hi) == (0, len(wt)) else wt.select(slice(lo, hi))
        yield _rasterize(part, rs, plan, int(bounds[lo:hi].sum()))


def _plan(wt: WindowTriangles, active: np.ndarray | ColumnPlan | None) -> ColumnPlan:
    if isinstance(active, ColumnPlan):
        return active
    return ColumnPlan.of(active, wt.varyings.shape[2] if len(wt) else om.NUM_COLUMNS - 4)


NO_COLUMNS = np.zeros(0, np.int64)
NO_OUTPUTS = (
    np.empty(0, np.int32),
    np.empty(0, np.int32),
    np.empty(0, np.float32),
    np.empty(0, np.float32),
    np.empty((0, 0), np.float32),
    np.empty(0, np.int32),
)  # the outputs of walks that write none


def _walk(wt: WindowTriangles, rs: RasterState, mode: np.int64) -> np.ndarray:
    """(T,) int64 per triangle: its bounding-box pixels (SCAN_BOUND) or its fragments, scissored ones included
    (SCAN_COUNT)."""
    counts = np.zeros((len(wt), 3), np.int64)
    _scan(*_scan_inputs(wt, rs, NO_COLUMNS), mode, *NO_OUTPUTS, counts)
    _check_division(counts)
    return counts[:, 0] + counts[:, 1] if mode == SCAN_COUNT else counts[:, 0]


def _scan_inputs(wt: WindowTriangles, rs: RasterState, cols: np.ndarray) -> tuple:
    """``_scan``'s arguments before ``mode``: the triangles, the varying columns ``cols``, the raster state."""
    return (
        np.ascontiguousarray(wt.x),
        np.ascontiguousarray(wt.y),
        np.ascontiguousarray(wt.zndc),
        np.ascontiguousarray(wt.inv_w),
        np.ascontiguousarray(wt.varyings),
        np.ascontiguousarray(wt.primitive, np.int32),
        cols,
        rs.params,
        rs.dparams,
    )


def rasterize(wt: WindowTriangles, rs: RasterState, active: np.ndarray | None = None) -> tuple[Fragments, dict]:
    """Fragments of every (counter-clockwise) triangle, and counters: fragments_rasterized, killed_scissor.

    ``active``: the varying columns to interpolate (default all). The others read 1.0, the value of a semantic
    the output map leaves unmapped, so the pipeline passes the mapped columns only; fields made only of such
    columns are read-only broadcast views of 1.0 (no memory per fragment).

    The output arrays are sized by the triangles' clamped bounding boxes when those hold at most
    ``ONE_PASS_BYTES`` of fragments (the arrays returned are views of their first part; pages past the fragments
    written are never touched), else by a counting walk first.
    """
    return _rasterize(wt, rs, _plan(wt, active), int(_walk(wt, rs, SCAN_BOUND).sum()))


def _rasterize(wt: WindowTriangles, rs: RasterState, plan: ColumnPlan, bound: int) -> tuple[Fragments, dict]:
    """``rasterize`` given the triangles' summed bounding-box pixels ``bound`` (``_walk``)."""
    cols = plan.columns
    args = _scan_inputs(wt, rs, cols)
    counts = np.zeros((len(wt), 3), np.int64)
    size = bound
    if size * (FRAGMENT_BYTES + 4 * cols.shape[0]) > ONE_PASS_BYTES:
        size = _scan(*args, SCAN_COUNT, *_outputs(0, cols.shape[0]), counts)
        _check_division(counts)
    outputs = _outputs(size, cols.shape[0])
    total = _scan(*args, SCAN_EMIT, *outputs, counts)
    _check_division(counts)
    out_x, out_y, out_depth, out_w, out_var, out_prim = (a[:total] for a in outputs)
    if plan.quat is not None:
        normalise_quaternions(out_var[:, plan.quat : plan.quat + 4])
    killed = int(counts[:, 1].sum())
    frags = Fragments(x=out_x, y=out_y, depth=out_depth, w=out_w, primitive=out_prim, **plan.fields_of(out_var))
    return frags, {"fragments_rasterized": total + killed, "killed_scissor": killed}


@numba_link.kernel()
def normalise_quaternions(quat):  # pragma: no cover - compiled
    """Normalise (F, 4) float32 quaternions in place where their squared length is > 0: the squares in float32,
    summed in float64 in component order, scaled by 1 / sqrt in float64 (a quaternion of length 0 or NaN stays).
    The fused fragment kernel calls it too, on the quaternions it interpolates for lighting."""
    for i in range(quat.shape[0]):
        n2 = np.float64(quat[i, 0] * quat[i, 0])
        for c in range(1, 4):
            n2 += quat[i, c] * quat[i, c]
        if n2 > 0.0:
            scale = 1.0 / np.sqrt(n2)
            for c in range(4):
                quat[i, c] = np.float32(quat[i, c] * scale)


def _outputs(size: int, n_var: int) -> tuple[np.ndarray, ...]:
    """Uninitialised fragment arrays: x, y, depth, w, varyings (size, n_var), primitive."""
    return (
        np.empty(size, np.int32),
        np.empty(size, np.int32),
        np.empty(size, np.float32),
        np.empty(size, np.float32),
        np.empty((size, n_var), np.float32),
        np.empty(size, np.int32),
    )


def scissor_rejects(rs: RasterState, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(F,) bool: the fragments at window pixels ``x``, ``y`` that the scissor test of ``rs`` rejects (the rule the
    scan applies; for callers that rasterize with the scissor off to see the rejected fragments)."""
    x1, y1, x2, y2 = rs.scissor
    inside = (x >= x1) & (x <= x2) & (y >= y1) & (y <= y2)
    if rs.scissor_mode == SCISSOR_EXCLUDE:
        return inside
    if rs.scissor_mode == SCISSOR_INCLUDE:
        return ~inside
    return np.zeros(np.shape(x), bool)


def _check_division(counts: np.ndarray) -> None:
    if counts[:, 2].any():
        raise ZeroDivisionError("division by zero")


def _field_plan(position: dict[int, int], want: slice | int) -> FieldPlan:
    """How one Fragments field reads the interpolated columns (``position``: varying column -> its column of
    the interpolated array; ``ColumnPlan.fields_of`` applies it)."""
    if isinstance(want, int):
        return ("column", position[want]) if want in position else ("ones", 0)
    wanted = range(want.start, want.stop)
    present = [c in position for c in wanted]
    if all(present):  # consecutive columns, as ``position`` keeps the sorted order
        return ("columns", position[wanted[0]], position[wanted[0]] + len(wanted))
    if not any(present):
        return ("ones", len(wanted))
    return ("mixed", tuple((k, position[c]) for k, c in enumerate(wanted) if c in position), len(wanted))
