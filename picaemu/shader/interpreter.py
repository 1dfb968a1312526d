"""Vectorized shader interpreter: one instruction x N lanes (vertices or GS invocations).

Receives a ``ShaderSetup`` and per-lane inputs; ``run_vertex_shader(setup, attributes (N, 16, 4) float32)``
returns outputs (N, 16, 4) float32 (o0-o15; never-written outputs 0). ``Machine.lane_instructions`` counts the
instructions executed, each weighted by its active lanes (one addition per group step); ``run_vertex_shader``
adds it to ``counters["shader_instructions"]`` when given a ``counters`` dict.

Register files, lane axis last so a pass over the lanes reads contiguous memory: ``vr`` (32, 4, N) float32
holds v0-v15 then r0-r15 (so the raw source/destination number indexes it directly), ``out`` (2, 16, 4, N) float32
the two output banks (GS banking; a VS stays on bank 0), ``c`` (128, 4) float32 c0-c95 plus 32 rows of 1.0 for
relative reads past c95, ``a0`` (2, N) int32, ``aL`` (N,) int32, ``cmp`` (2, N) bool.

Control flow. Lanes are kept in *groups* that share one control state (pc + CALL/IF/LOOP stacks, §10 of the
ISA reference, as immutable tuples). Uniform-only flow (CALL, CALLU, IFU, JMPU, LOOP, BREAK) moves a whole group
at once; condition-flag flow (IFC, CALLC, JMPC, BREAKC) splits a group by the lanes' flags into a taken and a
not-taken group — the execution masks. The scheduler always steps the group with the lowest pc and merges
groups whose control state becomes identical again, so divergent lanes reconverge after an IF/ELSE, a loop or a
jump. Each lane therefore follows exactly the hardware's per-invocation rules (stack pop order, scope priority
LOOP > IF > CALL > JMP, ring-buffer stack overflow, aL save/restore), including unstructured jumps. A
converged batch (the common case) costs one group step per instruction. A step budget per batch turns a
runaway program into ShaderError naming the pc.

``UniformTrace`` runs this sequencer for one lane without the arithmetic: when every flow instruction a program
reaches depends on the uniforms only, it yields the arithmetic runs every vertex executes (with the aL each runs
under) and the instruction count, which the compiled front end (``picaemu.geometry.front_end``) runs back to back.

Arithmetic. Each program content is decoded once (``Program``, cached by code + descriptor bytes) into plan rows;
a run of consecutive arithmetic instructions that no scope end interrupts executes in one call of the compiled
``kernel.run_segment`` — still one instruction at a time over all of the group's lanes, through one masked
store. Flow instructions are handled here in Python, once per group. Inputs and outputs are moved only for the
v/o registers the program can reach (``Program.registers``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from picaemu.errors import ShaderError
from picaemu.shader.isa import NUM_C, Instruction
from picaemu.shader.kernel import load_attributes, run_segment, store_outputs
from picaemu.shader.program import NUM_OUT, NUM_REGS_VR, POOL, program_of
from picaemu.shader.setup import ShaderSetup

STEP_BUDGET = 200_000  # group steps per batch
CALL_DEPTH, IF_DEPTH, LOOP_DEPTH = 4, 8, 4
MAX_CALL_POPS = 4  # the 4th simultaneous CALL pop does not update the pc (hardware bug, §10.2)
ADDR_WINDOW = (-128, 127)  # relative offsets outside this window count as 0
UNIFORM_INDEX_MASK = 0x7F
POOL_MIN_LANES = 4096  # smaller batches allocate fresh register files (cheap at that size)
ALL = slice(None)
Lanes = slice | np.ndarray
IDENTITY = (0, 1, 2, 3)


@dataclass(frozen=True)
class Control:
    """One group's control state. calls: (end, return); ifs: (marker, jump_to); loops: (start, end, left, inc)."""

    pc: int
    calls: tuple[tuple[int, int], ...] = ()
    ifs: tuple[tuple[int, int], ...] = ()
    loops: tuple[tuple[int, int, int, int], ...] = ()


@dataclass(frozen=True)
class Effect:
    """What a flow instruction asks of the sequencer for some lanes."""

    jump: int | None = None
    call: tuple[int, int] | None = None
    if_: tuple[int, int] | None = None
    loop: tuple[int, int, int, int, int] | None = None  # (start, end, left, inc, aL start)
    is_break: bool = False
    end: bool = False


NONE = Effect()
END = Effect(end=True)


class Machine:
    """Register files + sequencer for one batch. ``run()`` executes from the entry point until every lane ends."""

    def __init__(self, setup: ShaderSetup, n: int, *, step_budget: int = STEP_BUDGET, pooled: bool = False) -> None:
        """``pooled``: borrow this thread's reusable register files (only for a batch that ends before the next
        pooled Machine is made, as in ``run_vertex_shader``)."""
        self.setup = setup
        self.n = n
        self.program = program_of(setup)
        if pooled and n >= POOL_MIN_LANES:
            self.vr, self.out = POOL.take(n, self.program.registers(setup.entry))
        else:
            self.vr = np.zeros((NUM_REGS_VR, 4, n), np.float32)
            self.out = np.zeros((2, NUM_OUT, 4, n), np.float32)
        self.c = np.ones((UNIFORM_INDEX_MASK + 1, 4), np.float32)
        self.c[:NUM_C] = setup.float_uniforms
        self.a0 = np.zeros((2, n), np.int32)
        self.aL = np.zeros(n, np.int32)
        self.saved_aL = np.zeros((LOOP_DEPTH, n), np.int32)
        self.cmp = np.zeros((2, n), bool)
        self.bank = 0
        self.emitter = (0, False, False)  # vtxid, primemit, winding latched by SETEMIT
        self.on_emit: Callable[[Machine, Lanes], None] | None = None
        self.step_budget = step_budget
        self.all_lanes = np.arange(n, dtype=np.int64)
        self._buffers: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # scratch per lane count
        self._cols = np.empty((3, 4, 1), np.float32)  # scratch: one uniform per operand
        self.steps = 0
        self.lane_instructions = 0  # instructions executed x active lanes

    # ------------------------------------------------------------------ execution

    def execute(self, pc: int, lanes: Lanes) -> list[tuple[Lanes, Effect]]:
        """One flow-control instruction for ``lanes``: the effects per lane subset."""
        ins = self.program.instruction(pc)
        handler = _HANDLERS.get(ins.name)
        if handler is None:  # the sequencer only dispatches flow words here; anything else is a broken invariant
            raise ShaderError(f"{ins.name} reached the flow-control dispatcher", pc=pc)
        return handler(self, ins, lanes, pc)

    def arithmetic(self, ctl: Control, lanes: Lanes, length: int) -> Control:
        """Run ``length`` arithmetic instructions from ``ctl.pc`` on ``lanes`` (compiled); returns the control
        state as of the last of them, for the end-of-step checks."""
        length = _clamped(ctl, length)
        self._count_steps(ctl.pc, length)
        full = isinstance(lanes, slice)
        count = self.n if isinstance(lanes, slice) else len(lanes)
        self.lane_instructions += length * count
        bufs = self._buffers.get(count)
        if bufs is None:
            bufs = self._buffers[count] = (np.empty((3, 4, count), np.float32), np.empty((4, count), np.float32))
        run_segment(
            self.program.plan(ctl.pc, ctl.pc + length),
            self.vr,
            self.out[self.bank],
            self.c,
            self.a0,
            self.aL,
            self.cmp,
            self.all_lanes if full else lanes,
            full,
            bufs[0],
            bufs[1],
            self._cols,
        )
        return _last_of(ctl, length)

    def _count_steps(self, pc: int, count: int) -> None:
        self.steps += count
        if self.steps > self.step_budget:
            raise ShaderError(f"step budget of {self.step_budget} exceeded (runaway shader?)", pc=pc)

    def condition(self, ins: Instruction, lanes: Lanes) -> np.ndarray:
        tx = self.cmp[0, lanes] == bool(ins.refx)
        ty = self.cmp[1, lanes] == bool(ins.refy)
        return (tx | ty, tx & ty, tx, ty)[ins.condop]

    def split(self, cond: np.ndarray, lanes: Lanes, taken: Effect, other: Effect) -> list[tuple[Lanes, Effect]]:
        """Partition ``lanes`` by a per-lane condition into (taken lanes, effect) and (other lanes, effect)."""
        if cond.all():
            return [(lanes, taken)]
        if not cond.any():
            return [(lanes, other)]
        idx = self.all_lanes if isinstance(lanes, slice) else lanes
        return [(idx[cond], taken), (idx[~cond], other)]

    # ------------------------------------------------------------------ sequencer

    def advance(self, ctl: Control, eff: Effect, lanes: Lanes) -> Control:
        """Apply the instruction's pushes, then the end-of-step stack checks of §10.2, for ``lanes``."""
        calls, ifs, loops = list(ctl.calls), list(ctl.ifs), list(ctl.loops)
        if eff.call is not None:
            _push(calls, eff.call, CALL_DEPTH)
        if eff.if_ is not None:
            _push(ifs, eff.if_, IF_DEPTH)
        if eff.loop is not None:
            start, end, left, inc, al0 = eff.loop
            depth = len(loops)
            if depth == LOOP_DEPTH:
                self.saved_aL[:-1, lanes] = self.saved_aL[1:, lanes]
                depth -= 1
            self.saved_aL[depth, lanes] = self.aL[lanes]
            self.aL[lanes] = al0
            _push(loops, (start, end, left, inc), LOOP_DEPTH)
        if eff.is_break and not loops:
            raise ShaderError("BREAK outside a loop (hangs the hardware)", pc=ctl.pc)
        nxt = ctl.pc + 1
        pc = eff.jump if eff.jump is not None else nxt
        n = nxt
        for k in range(MAX_CALL_POPS):
            if not calls or calls[-1][0] != n:
                break
            if k < MAX_CALL_POPS - 1:
                pc = n = calls[-1][1]
            calls.pop()
        if ifs and ifs[-1][0] == nxt:
            pc = ifs.pop()[1]
        if loops and (loops[-1][1] == nxt or eff.is_break):
            start, end, left, inc = loops[-1]
            self.aL[lanes] += inc
            if not eff.is_break and left != 0:
                loops[-1] = (start, end, left - 1, inc)
                pc = start
            else:
                pc = end
                if len(loops) > 1:
                    self.aL[lanes] = self.saved_aL[len(loops) - 1, lanes]
                loops.pop()
        return Control(pc, tuple(calls), tuple(ifs), tuple(loops))

    def run(self) -> None:
        limit = self.setup.code_words
        entry = self.setup.entry
        if not 0 <= entry < limit:
            raise ShaderError(f"entry point 0x{entry:X} is outside the {limit}-word code memory", pc=entry)
        straight = self.program.straight_run(entry)
        if straight:  # arithmetic then END: the two steps of the loop below, without its bookkeeping
            self.arithmetic(Control(entry), ALL, straight)
            self._count_steps(entry + straight, 1)
            self.lane_instructions += self.n
            return
        pending: dict[Control, Lanes] = {Control(entry): ALL}
        while pending:
            ctl = min(pending, key=_pc_of) if len(pending) > 1 else next(iter(pending))
            lanes = pending.pop(ctl)
            length = self.program.arith_run(ctl.pc)
            if length:
                last = self.arithmetic(ctl, lanes, length)
                outcomes = [(lanes, NONE)]
            else:
                self._count_steps(ctl.pc, 1)
                self.lane_instructions += self.n if isinstance(lanes, slice) else len(lanes)
                last = ctl
                outcomes = self.execute(ctl.pc, lanes)
            for sub, eff in outcomes:
                if eff.end:
                    continue
                new = self.advance(last, eff, sub)
                if not 0 <= new.pc < limit:
                    raise ShaderError(f"program counter ran to 0x{new.pc:X}, outside code memory", pc=last.pc)
                old = pending.get(new)
                pending[new] = sub if old is None else self._union(old, sub)

    def _union(self, a: Lanes, b: Lanes) -> Lanes:
        if isinstance(a, slice) or isinstance(b, slice):
            return ALL
        if len(a) + len(b) == self.n:  # groups are disjoint: together they are every lane
            return ALL
        mask = np.zeros(self.n, bool)
        mask[a] = True
        mask[b] = True
        return np.flatnonzero(mask)


def _pc_of(ctl: Control) -> int:
    return ctl.pc


def _push(stack: list, entry: tuple, depth: int) -> None:
    if len(stack) == depth:
        del stack[0]
    stack.append(entry)


# ---------------------------------------------------------------------- flow handlers


def _bool(m: Machine, ins: Instruction) -> bool:
    return bool(m.setup.bool_uniforms[ins.uniform])


def _nop(m, ins, lanes, pc):
    return [(lanes, NONE)]


def _end(m, ins, lanes, pc):
    return [(lanes, END)]


def _call(ins: Instruction, pc: int) -> Effect:
    return Effect(jump=ins.target, call=(ins.target + ins.num, pc + 1))


def _if(ins: Instruction, taken: bool) -> Effect:
    return Effect(if_=(ins.target, ins.target + ins.num)) if taken else Effect(jump=ins.target)


def _ifc(m, ins, lanes, pc):
    return m.split(m.condition(ins, lanes), lanes, _if(ins, True), _if(ins, False))


def _ifu(m, ins, lanes, pc):
    return [(lanes, _if(ins, _bool(m, ins)))]


def _callc(m, ins, lanes, pc):
    return m.split(m.condition(ins, lanes), lanes, _call(ins, pc), NONE)


def _callu(m, ins, lanes, pc):
    return [(lanes, _call(ins, pc) if _bool(m, ins) else NONE)]


def _call_h(m, ins, lanes, pc):
    return [(lanes, _call(ins, pc))]


def _jmpc(m, ins, lanes, pc):
    return m.split(m.condition(ins, lanes), lanes, Effect(jump=ins.target), NONE)


def _jmpu(m, ins, lanes, pc):
    return [(lanes, Effect(jump=ins.target) if _bool(m, ins) == (not ins.num & 1) else NONE)]


def _loop(m, ins, lanes, pc):
    x, y, z, _w = (int(v) for v in m.setup.int_uniforms[ins.uniform])
    return [(lanes, Effect(loop=(pc + 1, ins.target + 1, x, z, y)))]


def _emit(m: Machine, ins, lanes, pc):
    if m.on_emit is None:
        raise ShaderError("EMIT outside a geometry shader", pc=pc)
    m.on_emit(m, lanes)
    return [(lanes, NONE)]


def _setemit(m: Machine, ins, lanes, pc):
    if m.on_emit is None:
        raise ShaderError("SETEMIT outside a geometry shader", pc=pc)
    if ins.vtxid > 2:
        raise ShaderError(f"SETEMIT vertex id {ins.vtxid} (only 0-2 exist)", pc=pc)
    m.emitter = (ins.vtxid, bool(ins.primemit), bool(ins.winding))
    return [(lanes, NONE)]


def _break(m, ins, lanes, pc):
    return [(lanes, _BREAK)]


def _breakc(m, ins, lanes, pc):
    return m.split(m.condition(ins, lanes), lanes, _BREAK, NONE)


_BREAK = Effect(is_break=True)


def _clamped(ctl: Control, length: int) -> int:
    """``length`` cut at the innermost scope end after ``ctl.pc`` (the step's end-of-step checks happen there)."""
    tops = [
        m
        for m in (
            ctl.calls[-1][0] if ctl.calls else 0,
            ctl.ifs[-1][0] if ctl.ifs else 0,
            ctl.loops[-1][1] if ctl.loops else 0,
        )
        if m > ctl.pc
    ]
    return min(length, min(tops) - ctl.pc) if tops else length


def _last_of(ctl: Control, length: int) -> Control:
    """The control state as of the last of ``length`` arithmetic instructions from ``ctl.pc``."""
    return ctl if length == 1 else Control(ctl.pc + length - 1, ctl.calls, ctl.ifs, ctl.loops)


# flow instructions whose outcome depends on a lane's condition flags (or that emit primitives)
DATA_FLOW = frozenset({"breakc", "callc", "ifc", "jmpc", "emit", "setemit"})


class DataFlow(Exception):
    """A ``DATA_FLOW`` instruction was reached (``UniformTrace``)."""


class UniformTrace(Machine):
    """The sequencer of one lane without its arithmetic. When every flow instruction a program reaches depends on
    the bool / int uniforms only (none of ``DATA_FLOW``), every vertex takes the same path: ``segments`` records
    its arithmetic runs in order as (pc, length, aL at their start) and ``lane_instructions`` the instructions one
    vertex executes (``Machine.run``'s count), so that a compiled caller runs those runs back to back
    (``picaemu.geometry.front_end``)."""

    def __init__(self, setup: ShaderSetup) -> None:
        super().__init__(setup, 1)
        self.segments: list[tuple[int, int, int]] = []

    def arithmetic(self, ctl: Control, lanes: Lanes, length: int) -> Control:
        length = _clamped(ctl, length)
        self._count_steps(ctl.pc, length)
        self.lane_instructions += length
        self.segments.append((ctl.pc, length, int(self.aL[0])))
        return _last_of(ctl, length)

    def execute(self, pc: int, lanes: Lanes) -> list[tuple[Lanes, Effect]]:
        if self.program.instruction(pc).name in DATA_FLOW:
            raise DataFlow
        return super().execute(pc, lanes)


def uniform_trace(setup: ShaderSetup) -> UniformTrace | None:
    """The run ``UniformTrace`` of ``setup``'s program and uniforms, or None: a reached flow instruction depends on
    lane data, or the program fails (the interpreter names the error when it runs it)."""
    trace = UniformTrace(setup)
    try:
        trace.run()
    except (DataFlow, ShaderError):
        return None
    return trace


_HANDLERS = {
    "nop": _nop,
    "end": _end,
    "break": _break,
    "breakc": _breakc,
    "call": _call_h,
    "callc": _callc,
    "callu": _callu,
    "ifu": _ifu,
    "ifc": _ifc,
    "loop": _loop,
    "jmpc": _jmpc,
    "jmpu": _jmpu,
    "emit": _emit,
    "setemit": _setemit,
}


def load_inputs(m: Machine, setup: ShaderSetup, attributes: np.ndarray) -> None:
    """v[perm[k]] = attribute k for the configured input count (only registers the program reads)."""
    pairs = m.program.input_pairs(setup.entry, setup.input_permutation, min(setup.num_inputs, attributes.shape[1]))
    if pairs is not None:
        load_attributes(attributes, pairs, m.vr)


def run_vertex_shader(
    setup: ShaderSetup, attributes: np.ndarray, *, step_budget: int = STEP_BUDGET, counters: dict | None = None
) -> np.ndarray:
    """Run the vertex shader over N vertices: attributes (N, 16, 4) float32 -> outputs (N, 16, 4) float32;
    ``counters["shader_instructions"]`` (when given) grows by the instructions executed x active lanes."""
    attributes = np.ascontiguousarray(attributes, np.float32)
    if attributes.ndim != 3 or attributes.shape[2] != 4 or attributes.shape[1] > 16:
        raise ValueError(f"attributes must be (N, <=16, 4), got {attributes.shape}")
    n = attributes.shape[0]
    if n == 0:
        return np.zeros((0, NUM_OUT, 4), np.float32)
    result = np.empty((n, NUM_OUT, 4), np.float32)  # store_outputs writes every element
    m = Machine(setup, n, step_budget=step_budget, pooled=True)
    load_inputs(m, setup, attributes)
    m.run()
    if counters is not None:
        counters["shader_instructions"] = counters.get("shader_instructions", 0) + m.lane_instructions
    store_outputs(m.out[0], m.program.written_outputs(setup.entry), result)
    return result
