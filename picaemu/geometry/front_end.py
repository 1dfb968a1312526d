"""Fused vertex front end: the common draw's path from loaded vertex attributes to window triangles in ONE compiled
call, so that a small draw pays one Python -> numba crossing instead of ~25 stage calls.

Receives the draw state, the loader's ``VertexBatch`` (``picaemu.geometry.vertex_loader``: attributes (U, K, 4)
float32, inverse (N,) int64) and the primitive assembler; ``run(ds, batch, assembler, counters)`` returns the
draw's ``clipping.WindowTriangles`` after culling plus the number culled and the window bounds — exactly what the
staged path (vertex shader -> output map -> primitive assembly -> clip -> viewport -> cull,
``picaemu.pipeline``) computes — or None when the draw is not the common case, having changed nothing (then the
caller runs the staged path on the same batch). The fused kernel only calls the stages' own compiled kernels
(``shader.kernel.load_attributes / run_segment / store_outputs``, ``output_map._fill_columns``,
``clipping._align_quaternions / classify / clip_classified / _window / _cull_count / _cull_gather / extent``):
there is no second implementation of any rule here. ``run_segment`` and ``clip_classified`` are called by address
(``front_end_links``: each compiled once, on its own, not emitted again inside ``_front_end``).

The common case (``plan_for`` decides, per program and output map, remembered):
- any number of vertices up to the loader's ``MAX_DRAW_VERTICES``: the shader runs ``SHADE_LANES`` of them at a
  time (``_shade``), so a large draw's register files stay in the caches;
- a vertex shader whose flow control depends on the bool / int uniforms only (``Program.straight_run``:
  arithmetic then END; else ``interpreter.UniformTrace``: the arithmetic runs every vertex executes, traced once
  per program and uniforms, run back to back with the loop counter aL each ran under), the pipeline's default
  vertex shader seam, no geometry shader;
- a triangle list (or a "geometry primitive" draw without the geometry shader, assembled as a list) of whole
  triangles with nothing pending in the assembler (the draw neither takes nor leaves vertices across the draw
  boundary); ``picaemu.fused.vertices`` also takes strips and fans;
- any clip planes: the fixed ones and the user plane (classified by ``clipping.classify``; triangles crossing
  them are clipped in the kernel, by the staged path's ``clipping.clip_classified``).

Counters (added only on success): ``vertices_shaded``, ``vertices_nonfinite`` (shaded vertices with a NaN or an
infinity in any output register: the debugger's "shader output not finite" break reads it),
``shader_instructions`` (the instructions one vertex executes, flow instructions and END included, times the unique
vertices, as ``Machine.run`` counts them), ``primitives_assembled``, the clip counts (``primitives_invalid``,
``primitives_clipped_away``, ``primitives_clipped``), ``primitives_culled``, ``primitives_rasterized``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from picaemu import numba_link
from picaemu.draw_state import DrawState
from picaemu.geometry import clipping
from picaemu.geometry.clipping import _align_quaternions, _cull_count, _cull_gather, _window, classify, extent
from picaemu.geometry.output_map import COLOR, NUM_COLUMNS, _fill_columns, _source_table
from picaemu.geometry.primitive_assembly import TRIPLES, Assembler
from picaemu.geometry.vertex_loader import VertexBatch
from picaemu.shader.interpreter import POOL_MIN_LANES, uniform_trace
from picaemu.shader.isa import NUM_C
from picaemu.shader.kernel import NUM_OUT, ROW, load_attributes, run_segment, store_outputs
from picaemu.shader.program import NUM_REGS_VR, program_of

UNIFORM_ROWS = 128  # c0-c95 then rows of 1.0 for relative reads past c95 (as ``interpreter.Machine.c``)
NO_PAIRS = np.zeros((0, 2), np.int64)
# the shader interpreter's ``run_segment``, called by address (``picaemu.numba_link``: compiled once, on its own)
SHADER_ID = 7
SHADER = numba_link.register(SHADER_ID, run_segment, numba.types.none)
# the clipper, called by address too (it was optimised and emitted again inside ``_front_end``: ~1 s of a first run),
# and compiled only when a draw first needs it (``link_clipper``: ~1.8 s of a first run that clips nothing)
CLIP_ID = 12
CLIP = numba_link.register(
    CLIP_ID,
    clipping.clip_classified,
    numba.types.Tuple(
        (
            numba.types.Array(numba.types.float32, 3, "C"),
            numba.types.Array(numba.types.int64, 1, "C"),
            numba.types.int64,
        )
    ),
)
# their rows in ``_front_end``'s ``links`` (``front_end_links``), then the row the front end marks when it needed the
# clipper before it was linked (``link_clipper``)
L_SHADER, L_CLIP, L_CLIP_WANTED = range(3)
NUM_FRONT_END_LINKS = 3
# ``_front_end``, called by address from ``picaemu.fused.vertices.vertex_side`` (registered below it): compiled once, on
# its own, instead of optimised and emitted again inside the vertex side's machine code (~2 s of a first run)
FRONT_END_ID = 8


@functools.cache
def shader_entry() -> np.ndarray:
    """The entry ((2,) int64, ``numba_link.Linked.entry``) of ``run_segment`` for the arguments ``_shade``
    passes it (compiled on first use): plan rows (K, ROW) int32; vr (R, 4, U), out (16, 4, U) float32; c (128, 4)
    float32; a0 (2, U), aL (U,) int32; cmp (2, U) bool; lanes (U,) int64; full; scratch (3, 4, U), (4, U),
    (3, 4, 1) float32."""
    f32 = np.float32
    return np.array(
        SHADER.entry(
            np.zeros((0, ROW), np.int32),
            np.zeros((NUM_REGS_VR, 4, 0), f32),
            np.zeros((NUM_OUT, 4, 0), f32),
            np.zeros((UNIFORM_ROWS, 4), f32),
            np.zeros((2, 0), np.int32),
            np.zeros(0, np.int32),
            np.zeros((2, 0), np.bool_),
            np.zeros(0, np.int64),
            True,
            np.zeros((3, 4, 0), f32),
            np.zeros((4, 0), f32),
            np.zeros((3, 4, 1), f32),
        ),
        np.int64,
    )


@functools.cache
def front_end_links() -> np.ndarray:
    """The entries (``numba_link.Linked.entry``) of the kernels ``_front_end`` calls by address: (NUM_FRONT_END_LINKS,
    2) int64, row ``L_SHADER`` ``shader_entry()`` (compiled on first use), row ``L_CLIP`` 0 until ``link_clipper``
    fills it. One array for every plan: the clipper, once linked, serves them all."""
    links = np.zeros((NUM_FRONT_END_LINKS, 2), np.int64)
    links[L_SHADER] = shader_entry()
    return links


def link_clipper(*, always: bool = False) -> bool:
    """Whether the front end asked for the clipper (a draw it declined had triangles to clip, row ``L_CLIP_WANTED``;
    or ``always``: a test session that counts the draws the loop ran) and it is now linked into
    ``front_end_links()``: ``clipping.clip_classified`` for triangles (T, 3, NUM_COLUMNS) float32, classes (T,)
    int8, the clip planes (P, 4) and offsets (P,) float64, compiled (or loaded) now. The callers of a front end that
    declined (nothing changed) then run the draw again."""
    links = front_end_links()
    if not (always or links[L_CLIP_WANTED, 0]):
        return False
    f32 = np.float32
    links[L_CLIP] = CLIP.entry(np.zeros((0, 3, NUM_COLUMNS), f32), np.zeros(0, np.int8), np.zeros((0, 4)), np.zeros(0))
    links[L_CLIP_WANTED, 0] = 0
    return True


def with_clipper(side: Callable[..., tuple], *args: object) -> tuple:
    """``side(*args)`` (``_front_end`` or a kernel that calls it and answers ok first), run again when it declined for
    want of the clipper (``link_clipper`` links it then; a side that declines changes nothing)."""
    answer = side(*args)
    if not answer[0] and link_clipper():
        answer = side(*args)
    return answer


@numba_link.compiled_only()
def no_triangles():  # pragma: no cover - compiled
    """The ``clipping.WindowTriangles`` arrays of no triangle (a refusal's placeholder)."""
    x, y = numba_link.empty((0, 3), np.int64), numba_link.empty((0, 3), np.int64)
    z, w = numba_link.empty((0, 3), np.float32), numba_link.empty((0, 3), np.float32)
    return x, y, z, w, numba_link.empty((0, 3, NUM_COLUMNS - 4), np.float32), numba_link.empty(0, np.int32)


@dataclass(frozen=True)
class FrontEndPlan:
    """What the fused kernel needs of one program + output map (+ uniforms, for a program with flow control): the
    plan rows (K, ROW) int32 of the arithmetic runs every vertex executes, in order, and the (S, 3) int64 segments
    table (first row, row past the last, aL while they run); the (P, 2) int64 input pairs, the (16,) bool written
    outputs, the (22,) int64 output-map source table, the instructions executed per vertex, and the bool + int
    uniform bytes the path was traced under (None: a straight program, which no uniform steers)."""

    plan: np.ndarray
    segments: np.ndarray
    pairs: np.ndarray
    written: np.ndarray
    source: np.ndarray
    instructions: int
    uniforms: bytes | None


_last: tuple[tuple, FrontEndPlan | None, bytes | None] | None = None  # the last draw's (key objects, plan, flow key)


def flow_key(ds: DrawState) -> bytes | None:
    """What besides the program the path of ``ds``'s vertex shader depends on: None for a straight program (or an
    entry outside the program), else the bool and int uniform bytes (``UniformTrace`` follows them)."""
    setup = ds.vs_program
    entry = setup.entry
    if not 0 <= entry < setup.code_words or program_of(setup).straight_run(entry):
        return None
    return ds.vs.bool_uniforms.tobytes() + ds.vs.int_uniforms.tobytes()


def plan_for(ds: DrawState, num_inputs: int) -> FrontEndPlan | None:
    """The fused plan of the draw's VS program and output map (None: the program reaches flow control that depends on
    vertex data, or fails). With the geometry shader in use the output map applies to the GS's outputs
    (``gs_outmap_mask``: ``picaemu.fused.geometry`` runs that draw; ``run`` declines it). Remembered for the last
    program / output map / mask / input count (by identity: the draw-state cache hands the same part objects to draws
    that did not change them) and, for a program with flow control, its bool and int uniforms (``flow_key``)."""
    global _last
    prim = ds.primitives
    key = (ds.vs_program, ds.output_map, prim.vs_outmap_mask, num_inputs, prim.gs_in_use, prim.gs_outmap_mask)
    last = _last
    if (
        last is not None
        and last[0][0] is key[0]
        and last[0][1] is key[1]
        and last[0][2:] == key[2:]
        and (last[2] is None or last[2] == flow_key(ds))
    ):
        return last[1]
    plan = _build_plan(ds, num_inputs)
    _last = (key, plan, flow_key(ds))
    return plan


def _build_plan(ds: DrawState, num_inputs: int) -> FrontEndPlan | None:
    """``plan_for`` without the memo."""
    setup = ds.vs_program
    program = program_of(setup)
    entry = setup.entry
    if not 0 <= entry < setup.code_words:
        return None  # the staged path names the error
    run = program.straight_run(entry)
    uniforms = None
    if run:
        runs, instructions = [(entry, run, 0)], run + 1
    else:
        trace = uniform_trace(ds.vs)
        if trace is None or not trace.segments:
            return None
        runs, instructions, uniforms = trace.segments, trace.lane_instructions, flow_key(ds)
    pairs = program.input_pairs(entry, setup.input_permutation, min(setup.num_inputs, num_inputs))
    prim = ds.primitives
    mapped = prim.gs_outmap_mask if prim.gs_in_use else prim.vs_outmap_mask  # the unit whose outputs are mapped
    source, _ = _source_table(ds.output_map, mapped)  # raises as map_outputs would
    stops = np.cumsum([length for _, length, _ in runs])
    table = [(stop - length, stop, al) for stop, (_, length, al) in zip(stops, runs, strict=True)]
    segments = np.array(table, np.int64)
    return FrontEndPlan(
        np.concatenate([program.plan(pc, pc + length) for pc, length, _ in runs]),
        segments.reshape(-1, 3),
        NO_PAIRS if pairs is None else pairs,
        program.written_outputs(entry),
        source,
        instructions,
        uniforms,
    )


def run(
    ds: DrawState, batch: VertexBatch, assembler: Assembler, counters: dict
) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | None:
    """The draw's culled window triangles and window bounds (None when none is left), or None: not the common case
    (module docstring), nothing changed. ``counters`` receives the geometry counters on success."""
    prim, clip = ds.primitives, ds.clip
    n = batch.count
    if (
        prim.gs_in_use
        or prim.topology.value not in TRIPLES
        or n % 3
        or not assembler.takes_whole_triangles(prim.topology)
    ):
        return None
    plan = plan_for(ds, batch.attributes.shape[1])
    if plan is None:
        return None
    vp, fb = ds.viewport, ds.framebuffer
    _, wt_arrays, (invalid, away, clipped), culled, box, _, nonfinite = with_clipper(  # ok once the clipper is linked
        _front_end,
        batch.attributes,
        plan.pairs,
        plan.plan,
        plan.segments,
        uniform_table(ds.vs.float_uniforms),
        plan.written,
        batch.inverse,
        batch.identity,
        plan.source,
        ds.varyings.quaternions,
        float(vp.half_width),
        float(vp.half_height),
        float(vp.x),
        float(vp.y),
        clipping.CULL_DROPS[vp.cull_mode],
        clip.planes,
        clip.offsets,
        front_end_links(),
    )
    u, t = batch.attributes.shape[0], n // 3
    assembler.advance(prim.topology, t)
    wt = clipping.WindowTriangles(*wt_arrays)
    counters.update(
        vertices_shaded=u,
        vertices_nonfinite=nonfinite,
        primitives_assembled=t,
        primitives_invalid=invalid,
        primitives_clipped_away=away,
        primitives_clipped=clipped,
        primitives_culled=culled,
        primitives_rasterized=len(wt),
    )
    counters["shader_instructions"] = counters.get("shader_instructions", 0) + plan.instructions * u
    return wt, (clipping.window_box(box, fb.width, fb.height) if len(wt) else None)


@numba_link.kernel(inline="always")
def uniform_table(floats):  # pragma: no cover - compiled
    """The (UNIFORM_ROWS, 4) float32 uniform table the shader reads: the (96, 4) float uniforms ``floats``, then rows
    of 1.0 (as ``interpreter.Machine.c``)."""
    c = numba_link.empty((UNIFORM_ROWS, 4), np.float32)
    for r in range(UNIFORM_ROWS):  # element by element: an array assignment compiles numba's shape-mismatch error
        for k in range(4):
            c[r, k] = floats[r, k] if r < NUM_C else 1.0
    return c


SHADE_LANES = POOL_MIN_LANES  # vertices shaded at a time: the register files of more outgrow the caches


@numba_link.compiled_only()
def _shade(attrs, pairs, plan, segments, c, written, shader):  # pragma: no cover - compiled
    """The VS program's path (``FrontEndPlan``: its arithmetic runs ``plan[first:stop]`` in order, each with aL
    set as the sequencer has it) on every row of ``attrs`` (U, K, 4): (U, 16, 4) float32 outputs, through the
    interpreter's kernels on register files laid out and initialised as ``interpreter.Machine``'s; ``c``: the
    ``uniform_table``. ``SHADE_LANES`` rows at a time (a vertex's result depends on its own row only)."""
    u = attrs.shape[0]
    result = numba_link.empty((u, NUM_OUT, 4), np.float32)
    for lo in range(0, u, SHADE_LANES):
        hi = min(lo + SHADE_LANES, u)
        _shade_lanes(attrs[lo:hi], pairs, plan, segments, c, written, shader, result[lo:hi])
    return result


@numba_link.compiled_only(inline="always")  # one site
def _shade_lanes(attrs, pairs, plan, segments, c, written, shader, result):  # pragma: no cover - compiled
    """``_shade`` of the rows ``attrs`` (U, K, 4) into ``result`` (U, 16, 4)."""
    u = attrs.shape[0]
    vr = numba_link.zeros((NUM_REGS_VR, 4, u), np.float32)
    out = numba_link.zeros((NUM_OUT, 4, u), np.float32)
    if pairs.shape[0]:
        load_attributes(attrs, pairs, vr)
    a0, al, cmp = numba_link.zeros((2, u), np.int32), numba_link.zeros(u, np.int32), numba_link.zeros((2, u), np.bool_)
    lanes, bufs, res, cols = (
        numba_link.indices(u),
        numba_link.empty((3, 4, u), np.float32),
        numba_link.empty((4, u), np.float32),
        numba_link.empty((3, 4, 1), np.float32),
    )
    for s in range(segments.shape[0]):
        al[:] = segments[s, 2]
        rows = plan[segments[s, 0] : segments[s, 1]]
        numba_link.call(SHADER_ID, shader, (rows, vr, out, c, a0, al, cmp, lanes, True, bufs, res, cols))
    store_outputs(out, written, result)


@numba_link.kernel()
def _front_end(
    attrs,
    pairs,
    plan,
    segments,
    uniforms,
    written,
    inverse,
    identity,
    source,
    quaternions,
    half_w,
    half_h,
    vx,
    vy,
    drop_sign,
    planes,
    offsets,
    links,
):  # pragma: no cover - compiled
    """(ok, (x, y, zndc, inv_w, varyings, primitive) after culling, (primitives_invalid, primitives_clipped_away,
    primitives_clipped), culled count, (x lo, x hi, y lo, y hi) 12.4 extent, the (U, NUM_COLUMNS) float32 output-
    mapped vertices, the number of vertices with an output not finite); ok False (the rest placeholders): triangles
    to clip and no clipper linked yet (row ``L_CLIP_WANTED`` of ``links`` set: ``link_clipper``). ``uniforms``: the
    ``uniform_table`` of the VS float uniforms. ``inverse`` (3T,): the row of each triangle corner, in triangle order
    (``identity``: rows in order, consecutive triples). ``planes`` / ``offsets``: the clip planes (``ClipState``),
    against which triangles not wholly inside are clipped (``clipping.clip_classified``, as ``clip_triangles``)."""
    u = attrs.shape[0]
    outputs = _shade(attrs, pairs, plan, segments, uniforms, written, links[L_SHADER])
    nonfinite = nonfinite_rows(outputs, written)
    vert = numba_link.empty((u, NUM_COLUMNS), np.float32)
    _fill_columns(outputs.reshape(u, 4 * NUM_OUT), source, COLOR.start, COLOR.stop, vert)
    t = inverse.shape[0] // 3
    if identity:
        tris = vert.reshape(t, 3, NUM_COLUMNS)
    else:  # element by element: a fancy index compiles numba's advanced-indexing machinery
        tris = numba_link.empty((t, 3, NUM_COLUMNS), np.float32)
        for k in range(3 * t):
            for c in range(NUM_COLUMNS):
                tris[k // 3, k % 3, c] = vert[inverse[k], c]
    if quaternions:
        _align_quaternions(tris)
    classes = numba_link.empty(t, np.int8)
    classify(tris, planes, offsets, classes)
    primitive = numba_link.empty(t, np.int32)
    for k in range(t):  # loops, not np.arange / astype (each a compiled numpy function of its own)
        primitive[k] = k
    invalid = away = straddle = 0
    for k in range(t):  # loops, not array comparisons and np.count_nonzero (compile time)
        invalid += classes[k] == clipping.INVALID
        away += classes[k] == clipping.REJECT
        straddle += classes[k] == clipping.STRADDLE
    clip_counts = (0, 0, 0)
    if invalid or away or straddle:  # a class other than KEEP
        if links[L_CLIP, 0] == 0:
            links[L_CLIP_WANTED, 0] = 1
            return False, no_triangles(), clip_counts, 0, (0, 0, 0, 0), vert, nonfinite
        tris, src, dropped = numba_link.call(CLIP_ID, links[L_CLIP], (tris, classes, planes, offsets))
        primitive = numba_link.empty(src.shape[0], np.int32)
        for k in range(src.shape[0]):
            primitive[k] = src[k]
        clip_counts = (invalid + dropped, away, straddle)
    t = tris.shape[0]
    x, y = numba_link.empty((t, 3), np.int64), numba_link.empty((t, 3), np.int64)
    zndc, inv_w = numba_link.empty((t, 3), np.float32), numba_link.empty((t, 3), np.float32)
    vary = numba_link.empty((t, 3, NUM_COLUMNS - 4), np.float32)
    box = (0, 0, 0, 0)
    _window(tris, half_w, half_h, vx, vy, x, y, zndc, inv_w, vary)
    if t and _cull_count(x, y, drop_sign):  # np.empty, not np.empty_like: the same compiled allocations as above
        ox, oy = numba_link.empty((t, 3), np.int64), numba_link.empty((t, 3), np.int64)
        oz, ow = numba_link.empty((t, 3), np.float32), numba_link.empty((t, 3), np.float32)
        ov, op = numba_link.empty((t, 3, NUM_COLUMNS - 4), np.float32), numba_link.empty(t, np.int32)
        kept = _cull_gather(x, y, zndc, inv_w, vary, primitive, drop_sign, ox, oy, oz, ow, ov, op)
        x, y, zndc, inv_w, vary, primitive = ox[:kept], oy[:kept], oz[:kept], ow[:kept], ov[:kept], op[:kept]
    if x.shape[0]:
        box = extent(x, y)
    return True, (x, y, zndc, inv_w, vary, primitive), clip_counts, t - x.shape[0], box, vert, nonfinite


@numba_link.kernel(inline="always")
def nonfinite_rows(outputs, written):  # pragma: no cover - compiled
    """How many rows of ``outputs`` (U, 16, 4) float32 hold a NaN or an infinity in a ``written`` (16,) register
    (the others are 0). x * 0 is 0 for a finite x and NaN otherwise: a sum of them tests a register without a
    branch per component (a branch per component cost ~1 us for a 24-vertex draw)."""
    rows = 0
    for i in range(outputs.shape[0]):
        acc = np.float32(0.0)
        for o in range(outputs.shape[1]):
            if written[o]:
                for c in range(4):
                    acc += outputs[i, o, c] * np.float32(0.0)
        rows += acc != acc
    return rows


_C = numba.types.Array
# what ``_front_end`` returns, declared so that its callers compile without compiling it (``numba_link.Linked``)
FRONT_END = numba_link.register(
    FRONT_END_ID,
    _front_end,
    numba.types.Tuple(
        (
            numba.types.boolean,
            numba.types.Tuple(
                (
                    _C(numba.types.int64, 2, "C"),
                    _C(numba.types.int64, 2, "C"),
                    _C(numba.types.float32, 2, "C"),
                    _C(numba.types.float32, 2, "C"),
                    _C(numba.types.float32, 3, "C"),
                    _C(numba.types.int32, 1, "C"),
                )
            ),
            numba.types.UniTuple(numba.types.int64, 3),
            numba.types.int64,
            numba.types.UniTuple(numba.types.int64, 4),
            _C(numba.types.float32, 2, "C"),
            numba.types.int64,
        )
    ),
)


def front_end_entry(plan: FrontEndPlan, quaternions: bool, planes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The entry ((2,) int64, ``numba_link.Linked.entry``) of ``_front_end`` for the arguments
    ``picaemu.fused.vertices.vertex_side`` passes it with this plan and these clip planes (compiled on first use):
    attributes (U, K, 4), the ``uniform_table`` (UNIFORM_ROWS, 4) float32, the corners' rows (3T,) int64."""
    f32 = np.float32
    return np.array(
        FRONT_END.entry(
            np.zeros((0, 1, 4), f32),
            plan.pairs,
            plan.plan,
            plan.segments,
            np.ones((UNIFORM_ROWS, 4), f32),
            plan.written,
            np.zeros(0, np.int64),
            True,
            plan.source,
            quaternions,
            0.0,
            0.0,
            0.0,
            0.0,
            0,
            planes,
            offsets,
            front_end_links(),
        ),
        np.int64,
    )
