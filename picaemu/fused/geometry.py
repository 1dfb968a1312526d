"""Fused geometry-shader draw: a draw whose geometry shader forms the triangles, from loading to window triangles in
ONE compiled call, ``geometry_side`` — the compiled route of what the staged path (``picaemu.pipeline``: vertex
shader -> ``picaemu.shader.geometry.run_geometry_shader`` -> output map -> clip -> viewport -> cull) computes.

Receives the plan's arguments (``plan_args``, which ``picaemu.fused.vertices.VertexPlan.of`` packs for a draw with
the GS unit in use) and the draw's live fields (those of ``vertices.vertex_side``, and the GS float uniforms).
Steps, each through the compiled pieces that already exist:
1. loading (``picaemu.fused.loading``; in variable-size mode the index stream's counts split off first, ``_split``,
   by ``vertex_loader.split_variable_primitives``' rule) and the vertex shader (``front_end._shade``: the VS plan of
   ``front_end.plan_for``, the interpreter's ``run_segment`` called by address);
2. the GS input of each submitted vertex: its enabled VS output registers (``slot_registers(vs_outmap_mask)``);
3. the invocations, in order, on one lane (``run_invocations``): the mode's input distribution (``_deliver``:
   point — ``num_inputs`` consecutive attributes through the permutation into v0-v15; variable — c0 = (N, N, N, N)
   then the vertices from c1; fixed — ``fixed_vertices`` vertices from c[fixed_start], ``fixed_stride`` apart; the
   other float uniforms as configured), then the invocation's events (``_invoke``): arithmetic runs through
   ``run_segment`` into the current output bank, SETEMIT latching (vtxid, primemit, winding), EMIT copying the bank's
   output-mask registers into the emit buffer's slot and flipping the bank, PRIMEMIT adding the triangle (slots 0,
   1, 2; the first two swapped under winding). Registers, banks, the emit buffer and the latch carry over between
   invocations; v0-v15 and c0-c95 are rewritten for each;
4. the emitted vertices enter the front end (``front_end._front_end``, called by address, the very kernel the
   plain draws call) as the inputs of a pass-through program (``passthrough``: ``mov o_k, v_k`` for each GS output
   register), with the emitted triangles as the corners: the output map (``gs_outmap_mask``), quaternion
   alignment, clipping, viewport and culling are the front end's own.

The events come from ``picaemu.shader.geometry.invocation_traces`` (a GS program whose flow depends on the bool /
int uniforms and b15 only; flow on lane data is refused with its reason), encoded in ``_tables``: plan rows (R, ROW)
int32 of the arithmetic runs, events (E, 4) int64 rows ``(ARITH, first row, stop row, aL)``, ``(SETEMIT, vtxid,
primemit, winding)``, ``(EMIT, 0, 0, 0)``, trace starts (S + 1,) int64 (invocation i runs trace ``min(i, S - 1)``),
EMITs and instructions per trace (S,) int64.

Counters (``vertices.VERTEX_COUNTERS`` order): the submitted vertices (prefixes excluded), loaded and shaded
(distinct) vertices, ``shader_instructions`` (VS instructions x distinct vertices + the invocations'),
``primitives_assembled`` (emitted triangles), the clip and cull counts, ``vertices_nonfinite`` (VS outputs, as the
staged path counts them).

Not covered (``plan_args`` answers why): a topology other than geometry primitives (the staged path raises), a GS
mode other than 0-2, a fixed-size layout that does not fit c0-c95, GS flow control on lane data, a GS program that
fails (entry outside the code, a runaway loop, SETEMIT vertex id 3). At run time ``geometry_side`` answers ok False,
having changed nothing, for ``vertex_side``'s limits (no vertices, too many, a read outside VRAM / FCRAM), a
variable-size draw-arrays or a count running past the stream or c0-c95, and a PRIMEMIT before all three emit
slots were written: the staged path then runs the draw (and raises its named error).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from picaemu import numba_link
from picaemu.draw_state import DrawState
from picaemu.fused.loading import _load, _stream, _unique
from picaemu.geometry import clipping, front_end
from picaemu.geometry.front_end import (
    FRONT_END_ID,
    L_SHADER,
    SHADER_ID,
    FrontEndPlan,
    _shade,
    nonfinite_rows,
)
from picaemu.geometry.front_end import uniform_table as _uniform_table
from picaemu.geometry.output_map import slot_registers
from picaemu.geometry.primitive_assembly import Topology
from picaemu.geometry.vertex_loader import MAX_DRAW_VERTICES
from picaemu.shader.geometry import (
    MODES,
    NUM_SLOTS,
    InvocationTrace,
    fixed_layout_error,
    invocation_traces,
    output_keep,
)
from picaemu.shader.interpreter import POOL_MIN_LANES
from picaemu.shader.isa import NUM_C, OPCODES, Instruction, Operand
from picaemu.shader.kernel import NUM_OUT, ROW, encode_row
from picaemu.shader.program import NUM_REGS_VR, Program, program_of
from picaemu.shader.setup import ShaderSetup

# event codes of the events table (module docstring)
EVENT_CODES = {"arith": 0, "setemit": 1, "emit": 2}
ARITH, SETEMIT, EMIT = EVENT_CODES.values()
POINT, VARIABLE, FIXED = MODES  # GS input modes (``MODES``: 0 point, 1 variable, 2 fixed)
# slots of the (6,) int64 config: mode, inputs per invocation (point), fixed start / stride / vertices, main
# vertices (variable)
MODE, INPUTS, START, STRIDE, GROUP, MAIN = range(6)
# slots of the invocations' (9,) int64 state: output bank, the SETEMIT latch (vtxid, primemit, winding), the emit
# buffer's three slots (-1: not written yet), vertices emitted, triangles emitted
BANK, VTXID, PRIMEMIT, WINDING, SLOT = range(5)
EMITTED = SLOT + NUM_SLOTS
TRIANGLES = EMITTED + 1
NUM_STATE = TRIANGLES + 1
EMPTY_BOX = (0, 0, -1, -1)  # no triangle left (``vertices.EMPTY_BOX``)
MOV = next(op for op, (name, _) in OPCODES.items() if name == "mov")
IDENTITY = (0, 1, 2, 3)
MEMO_ENTRIES = 32  # GS programs x uniforms whose tables ``_program_args`` keeps
_MEMO: OrderedDict[tuple, tuple[tuple, tuple] | str] = OrderedDict()


def plan_args(ds: DrawState, fe: FrontEndPlan, loading: tuple, window: tuple, links: tuple) -> tuple | str:
    """``geometry_side``'s arguments after the live fields, or a str naming why the draw is not covered (module
    docstring). ``fe``: ``front_end.plan_for`` of the draw (the VS plan, the output map of the GS outputs);
    ``loading``: (reads, fixed, fixed store, K, VRAM, its base, FCRAM, its base); ``window``: (quaternions, half
    width, half height, x, y, cull drop sign, clip planes, offsets, framebuffer width, height); ``links``: the
    entries of the front end's callees and of ``_front_end`` (``front_end.front_end_links`` / ``front_end_entry``)."""
    prim, setup = ds.primitives, ds.gs
    if prim.topology is not Topology.GEOMETRY:
        return "geometry shader with a topology other than 3 (geometry primitives)"
    if setup is None:
        return "geometry shader in use without its setup"
    slots = np.array(slot_registers(prim.vs_outmap_mask), np.int64)
    program = _program_args(setup, len(slots))
    if isinstance(program, str):
        return program
    gs, through = program
    vs = (fe.pairs, fe.plan, fe.segments, fe.written, slots, int(fe.instructions))
    *view, width, height = window
    return (loading, vs, gs, (*through, fe.source, *view), links, width, height)


def _program_args(setup: ShaderSetup, attributes: int) -> tuple[tuple, tuple] | str:
    """(``invocation_args``, ``passthrough`` of its kept outputs), or the refusal, remembered for the last
    ``MEMO_ENTRIES`` GS programs, entries, configurations and bool / int uniforms (the float uniforms are live: a
    draw that changes only those re-plans in a lookup instead of ~250 us of tracing)."""
    key = (
        setup.program_key,
        setup.entry,
        setup.geometry,
        setup.num_inputs,
        setup.input_permutation,
        setup.output_mask,
        setup.bool_uniforms.tobytes() + setup.int_uniforms.tobytes(),
        attributes,
    )
    found = _MEMO.get(key)
    if found is None:
        gs = invocation_args(setup, attributes)
        found = _MEMO[key] = gs if isinstance(gs, str) else (gs, passthrough(gs[2]))
        if len(_MEMO) > MEMO_ENTRIES:
            _MEMO.popitem(last=False)
    return found


def invocation_args(setup: ShaderSetup, attributes: int) -> tuple | str:
    """``run_invocations``' ``gs`` tables for the GS ``setup`` fed ``attributes`` attributes per vertex: (config (6,)
    int64, permutation (16,) int64, kept outputs (16,) bool, then ``_tables``), or a str naming why the program is
    not covered (module docstring)."""
    g = setup.geometry
    if g.mode not in MODES:
        return f"geometry shader mode {g.mode} does not exist (0 point, 1 variable, 2 fixed)"
    if g.mode == FIXED and (error := fixed_layout_error(setup, attributes)):
        return error
    traces = invocation_traces(setup)
    if isinstance(traces, str):
        return traces
    config = [g.mode, setup.num_inputs, g.fixed_start, g.fixed_stride, g.fixed_vertices, g.variable_main]
    permutation = np.array(setup.input_permutation, np.int64)
    keep = output_keep(setup.output_mask)
    return (np.array(config, np.int64), permutation, keep, *_tables(program_of(setup), traces))


def _tables(program: Program, traces: list[InvocationTrace]) -> tuple[np.ndarray, ...]:
    """(plan rows, events, trace starts, EMITs per trace, instructions per trace) of ``traces`` (module docstring)."""
    rows: list[np.ndarray] = []
    events: list[tuple[int, int, int, int]] = []
    starts, emits = [0], []
    stop = 0
    for trace in traces:
        for kind, *fields in trace.events:
            if kind == "arith":
                pc, end, al = fields
                rows.append(program.plan(pc, end))
                events.append((ARITH, stop, stop + end - pc, al))
                stop += end - pc
            else:
                events.append((EVENT_CODES[kind], *fields, *(0,) * (3 - len(fields))))
        starts.append(len(events))
        emits.append(sum(kind == "emit" for kind, *_ in trace.events))
    plan = np.concatenate(rows) if rows else np.zeros((0, ROW), np.int32)
    return (
        np.ascontiguousarray(plan, np.int32),
        np.array(events, np.int64).reshape(-1, 4),
        np.array(starts, np.int64),
        np.array(emits, np.int64),
        np.array([t.lane_instructions for t in traces], np.int64),
    )


def _mov(reg: int) -> Instruction:
    """``mov o<reg>, v<reg>`` (all four components)."""
    return Instruction(0, MOV, "mov", OPCODES[MOV][1], dst=reg, mask=0xF, srcs=(Operand(reg, IDENTITY, False),))


def passthrough(keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (input pairs (P, 2) int64, plan rows (P, ROW) int32, segments (1, 3) int64) of the pass-through program
    ``mov o_k, v_k`` for each register ``keep`` marks: the front end's input for the emitted vertices."""
    regs = np.flatnonzero(keep)
    pairs = np.stack([regs, regs], 1).astype(np.int64)
    rows = np.array([encode_row(_mov(int(r))) for r in regs], np.int32).reshape(len(regs), -1)
    return pairs.reshape(-1, 2), rows, np.array([[0, len(regs), 0]], np.int64)


@numba_link.kernel()
def _split(stream):  # pragma: no cover - compiled
    """A variable-size draw's index stream ``N, i1 .. iN, N', ...`` (``vertex_loader.split_variable_primitives``'
    rule): (ok, indices (M,), sizes (P,), firsts (P,): where each primitive's vertices start in ``indices``), all
    int64; ok False: a count runs past the stream."""
    n = stream.shape[0]
    indices, sizes, firsts = numba_link.empty(n, np.int64), numba_link.empty(n, np.int64), numba_link.empty(n, np.int64)
    pos = m = p = 0
    while pos < n:
        size = stream[pos]
        sizes[p], firsts[p] = size, m
        p += 1
        for j in range(pos + 1, min(pos + 1 + size, n)):
            indices[m] = stream[j]
            m += 1
        pos += 1 + size
    return pos == n, indices[:m], sizes[:p], firsts[:p]


@numba_link.kernel()
def _deliver(i, inputs, sizes, firsts, config, permutation, floats, vr, c):  # pragma: no cover - compiled
    """Invocation ``i``'s inputs (module docstring, step 3): v0-v15 (``vr[:16]``, lane 0) zeroed then written in
    point mode, c0-c95 of ``c`` the configured ``floats`` (96, 4) then the vertices in the other modes. False: a
    variable-size primitive of no vertex, or running past the vertices or c0-c95 (the staged runner raises)."""
    n, k = inputs.shape[0], inputs.shape[1]
    for r in range(NUM_OUT):
        for q in range(4):
            vr[r, q, 0] = 0.0
    for r in range(NUM_C):
        for q in range(4):
            c[r, q] = floats[r, q]
    mode = config[MODE]
    if mode == POINT:
        for a in range(config[INPUTS]):
            f = i * config[INPUTS] + a
            for q in range(4):
                vr[permutation[a], q, 0] = inputs[f // k, f % k, q]
        return True
    if mode == FIXED:
        for j in range(config[GROUP]):
            row = config[START] + j * config[STRIDE]
            for a in range(k):
                for q in range(4):
                    c[row + a, q] = inputs[i * config[GROUP] + j, a, q]
        return True
    size, pos = sizes[i], firsts[i]
    if size < 1 or pos + size > n:
        return False
    for q in range(4):
        c[0, q] = np.float32(size)
    row = 1
    for j in range(size):
        attributes = k if j < config[MAIN] else 1
        if row + attributes > NUM_C:
            return False
        for a in range(attributes):
            for q in range(4):
                c[row + a, q] = inputs[pos + j, a, q]
        row += attributes
    return True


@numba_link.kernel()
def _invoke(first, stop, tables, regs, st, keep, emitted, triangles, shader):  # pragma: no cover - compiled
    """Events ``first`` .. ``stop`` - 1 of the ``tables`` (plan rows, events) on the register files ``regs`` (vr,
    out (2, 16, 4, 1), c, a0, aL, cmp, lanes, scratch) with the state ``st`` (module docstring, step 3). False: a
    PRIMEMIT before all three emit slots were written."""
    rows, events = tables
    vr, out, c, a0, al, cmp, lanes, bufs, res, cols = regs
    for e in range(first, stop):
        kind = events[e, 0]
        if kind == ARITH:
            al[0] = events[e, 3]
            segment = rows[events[e, 1] : events[e, 2]]
            numba_link.call(
                SHADER_ID, shader, (segment, vr, out[st[BANK]], c, a0, al, cmp, lanes, True, bufs, res, cols)
            )
        elif kind == SETEMIT:
            st[VTXID], st[PRIMEMIT], st[WINDING] = events[e, 1], events[e, 2], events[e, 3]
        else:
            m, bank = st[EMITTED], out[st[BANK]]
            for o in range(NUM_OUT):
                for q in range(4):
                    emitted[m, o, q] = bank[o, q, 0] if keep[o] else np.float32(0.0)
            st[EMITTED], st[SLOT + st[VTXID]], st[BANK] = m + 1, m, st[BANK] ^ 1
            if st[PRIMEMIT]:
                a, b, last = st[SLOT], st[SLOT + 1], st[SLOT + 2]
                if a < 0 or b < 0 or last < 0:
                    return False
                t = st[TRIANGLES]
                triangles[t, 0], triangles[t, 1], triangles[t, 2] = (b, a, last) if st[WINDING] else (a, b, last)
                st[TRIANGLES] = t + 1
    return True


@numba_link.kernel()
def run_invocations(inputs, sizes, firsts, floats, gs, shader):  # pragma: no cover - compiled
    """(ok, emitted (M, 16, 4) float32, triangles (T, 3) int64, instructions executed): every invocation of a draw
    whose GS inputs are ``inputs`` (N, K, 4) float32 (``sizes`` / ``firsts``: the variable-size primitives) with
    float uniforms ``floats`` (96, 4); ``gs``: ``plan_args``' GS tables. ok False: the staged runner raises."""
    config, permutation, keep, rows, events, starts, emits, instructions = gs
    mode, traces = config[MODE], starts.shape[0] - 1
    if mode == POINT:
        count = inputs.shape[0] * inputs.shape[1] // config[INPUTS]
    elif mode == VARIABLE:
        count = sizes.shape[0]
    else:
        count = inputs.shape[0] // config[GROUP]
    total = 0
    for i in range(count):
        total += emits[min(i, traces - 1)]
    emitted = numba_link.empty((total, NUM_OUT, 4), np.float32)
    triangles = numba_link.empty((total, 3), np.int64)
    f32 = np.float32
    regs = (
        numba_link.zeros((NUM_REGS_VR, 4, 1), f32),
        numba_link.zeros((2, NUM_OUT, 4, 1), f32),
        _uniform_table(floats),
        numba_link.zeros((2, 1), np.int32),
        numba_link.zeros(1, np.int32),
        numba_link.zeros((2, 1), np.bool_),
        numba_link.zeros(1, np.int64),
        numba_link.empty((3, 4, 1), f32),
        numba_link.empty((4, 1), f32),
        numba_link.empty((3, 4, 1), f32),
    )
    st = numba_link.zeros(NUM_STATE, np.int64)
    for s in range(NUM_SLOTS):
        st[SLOT + s] = -1
    executed = 0
    for i in range(count):
        t = min(i, traces - 1)
        if not _deliver(i, inputs, sizes, firsts, config, permutation, floats, regs[0], regs[2]):
            return False, emitted, triangles, executed
        if not _invoke(starts[t], starts[t + 1], (rows, events), regs, st, keep, emitted, triangles, shader):
            return False, emitted, triangles, executed
        executed += instructions[t]
    return True, emitted, triangles[: st[TRIANGLES]], executed


@numba_link.kernel()
def _declined():  # pragma: no cover - compiled
    """``geometry_side``'s answer when the staged path runs the draw."""
    return False, front_end.no_triangles(), EMPTY_BOX, (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)


@numba_link.kernel()
def geometry_side(
    kind_elements,
    count,
    first,
    index_address,
    index_u16,
    vs_floats,
    gs_floats,
    loading,
    vs,
    gs,
    mapped,
    links,
    width,
    height,
):  # pragma: no cover - compiled
    """(ok, (x, y, zndc, inv_w, varyings, primitive), (x0, y0, x1, y1), counters): one GS draw (module docstring),
    the arrays as ``clipping.WindowTriangles`` after culling, the box as ``clipping.window_box`` (``EMPTY_BOX`` when
    no triangle is left), the counters in ``vertices.VERTEX_COUNTERS`` order. ok False: the staged path runs the
    draw. Live fields as ``vertices.vertex_side``'s, and ``gs_floats`` (96, 4) float32 the GS float uniforms; the
    rest is ``plan_args``."""
    reads, fixed, fixed_values, num_attributes, vram, vram_base, fcram, fcram_base = loading
    pairs, plan, segments, written, slots, vs_instructions = vs
    callees, front_end_link = links  # ``front_end.front_end_links()``, ``_front_end``'s entry
    shader = callees[L_SHADER]
    variable = gs[0][MODE] == VARIABLE
    if count == 0 or count > MAX_DRAW_VERTICES or (not kind_elements and (variable or count >= POOL_MIN_LANES)):
        return _declined()
    ok, stream = _stream(kind_elements, count, first, index_address, index_u16, vram, vram_base, fcram, fcram_base)
    sizes = firsts = stream[:0]
    if ok and variable:
        ok, stream, sizes, firsts = _split(stream)
    if not ok or stream.shape[0] == 0:
        return _declined()
    if kind_elements:
        unique, inverse = _unique(stream)
    else:
        unique, inverse = stream, numba_link.indices(count)
    u, n, k = unique.shape[0], inverse.shape[0], slots.shape[0]
    if u >= POOL_MIN_LANES:
        return _declined()
    ok, attrs = _load(unique, reads, fixed, fixed_values, num_attributes, vram, vram_base, fcram, fcram_base)
    if not ok:
        return _declined()
    uniforms = _uniform_table(vs_floats)
    outputs = _shade(attrs, pairs, plan, segments, uniforms, written, shader)
    inputs = numba_link.empty((n, k, 4), np.float32)
    for i in range(n):
        for j in range(k):
            for q in range(4):
                inputs[i, j, q] = outputs[inverse[i], slots[j], q]
    ok, emitted, triangles, executed = run_invocations(inputs, sizes, firsts, gs_floats, gs, shader)
    if not ok:
        return _declined()
    t = triangles.shape[0]
    pass_pairs, pass_rows, pass_segments, source, quaternions, half_w, half_h, vx, vy, drop_sign, planes, offsets = (
        mapped
    )
    corners = triangles.reshape(3 * t)
    shading = (emitted, pass_pairs, pass_rows, pass_segments, uniforms, gs[2], corners, False, source, quaternions)
    window = (half_w, half_h, vx, vy, drop_sign, planes, offsets, callees)
    ok, arrays, (invalid, away, clipped), culled, extent, _, _ = numba_link.call(
        FRONT_END_ID,
        front_end_link,
        shading + window,  # ``front_end._front_end``'s arguments
    )
    if not ok:  # triangles to clip before the clipper is linked (``front_end.link_clipper``)
        return _declined()
    kept = arrays[0].shape[0]
    nonfinite = nonfinite_rows(outputs, written)
    totals = (n, u, u, vs_instructions * u + executed, t, invalid, away, clipped, culled, kept, nonfinite)
    return True, arrays, (clipping.window_box(extent, width, height) if kept else EMPTY_BOX), totals
