"""Scalar reference interpreter: one invocation at a time, written straight from pica-shader-isa.md.

It is the independent truth of the differential test (``tests/test_shader_differential.py``) and the engine of
debug traces (``picaemu.shader.trace``): ``ScalarMachine(setup).run(inputs (16, 4)) -> outputs (16, 4) float32``
with an optional ``on_step(record)`` callback receiving a ``Step`` per executed instruction. It shares only the
decoder (``isa``) with the vectorized interpreter: arithmetic (numpy ``ops`` on 1-lane arrays, where the
vectorized side uses the numba ``kernel``), register access, relative addressing, swizzle, masking and the whole
sequencer (§10.2: CALL/IF/LOOP stacks, pop order, scope priority, ring-buffer overflow, aL save/restore) are
implemented here separately, per vertex.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from picaemu.errors import ShaderError
from picaemu.shader import ops
from picaemu.shader.isa import FIRST_C, FIRST_R, NUM_C, Instruction, Operand, decode
from picaemu.shader.setup import ShaderSetup

STACK_DEPTHS = {"call": 4, "if": 8, "loop": 4}
STEP_LIMIT = 200_000
ONES = np.ones(4, np.float32)


@dataclass
class Step:
    """One executed instruction as seen by a trace (values after swizzle/negate; result before masking)."""

    pc: int
    instruction: Instruction
    sources: list[list[float]]
    result: list[float] | None
    mask: int
    cmp: tuple[bool, bool]
    a0: tuple[int, int]
    aL: int
    loop_depth: int
    loop_remaining: int | None
    call_depth: int
    if_depth: int


class ScalarMachine:
    """One shader invocation's registers and stacks (GS: persists across invocations for banks/emitter)."""

    def __init__(self, setup: ShaderSetup) -> None:
        self.setup = setup
        self.v = np.zeros((16, 4), np.float32)
        self.r = np.zeros((16, 4), np.float32)
        self.o = np.zeros((2, 16, 4), np.float32)
        self.bank = 0
        self.a0 = [0, 0]
        self.aL = 0
        self.cmp = [False, False]
        self.emitter = (0, False, False)
        self.on_emit: Callable[[ScalarMachine], None] | None = None

    def read(self, op: Operand) -> np.ndarray:
        if op.raw < FIRST_R:
            vec = self.v[op.raw]
        elif op.raw < FIRST_C:
            vec = self.r[op.raw - FIRST_R]
        else:
            off = 0
            if op.idx:
                off = (self.a0[0], self.a0[1], self.aL)[op.idx - 1]
                if not -128 <= off <= 127:
                    off = 0
            index = (op.raw - FIRST_C + off) & 0x7F
            vec = self.setup.float_uniforms[index] if index < NUM_C else ONES
        out = np.array([vec[s] for s in op.swizzle], np.float32)
        return -out if op.negate else out

    def write(self, ins: Instruction, value: np.ndarray) -> None:
        target = self.o[self.bank, ins.dst] if ins.dst < FIRST_R else self.r[ins.dst - FIRST_R]
        for i in ins.components:
            target[i] = value[i] if len(value) == 4 else value[0]

    def alu(self, ins: Instruction, srcs: list[np.ndarray]) -> np.ndarray | None:
        """Compute one arithmetic instruction; returns the (4,) or (1,) result, or None (MOVA/CMP)."""
        cols = [s.reshape(4, 1) for s in srcs]
        name = ins.name
        if name in ops.BINARY:
            return ops.BINARY[name](cols[0], cols[1])[:, 0]
        if name in ops.UNARY:
            return ops.UNARY[name](cols[0])[:, 0]
        if name in ops.TERNARY:
            return ops.TERNARY[name](cols[0], cols[1], cols[2])[:, 0]
        if name == "mova":
            for i in ins.components:
                if i < 2:
                    self.a0[i] = int(ops.truncate_to_int(srcs[0][i : i + 1])[0])
            return None
        if name == "cmp":
            for i in (0, 1):
                self.cmp[i] = bool(ops.COMPARE[ins.cmp_ops[i]](srcs[0][i], srcs[1][i]))
            return None
        res, cx, cy = ops.litp(cols[0])
        self.cmp = [bool(cx[0]), bool(cy[0])]
        return res[:, 0]

    def cond(self, ins: Instruction) -> bool:
        tx = self.cmp[0] == bool(ins.refx)
        ty = self.cmp[1] == bool(ins.refy)
        return (tx or ty, tx and ty, tx, ty)[ins.condop]

    def run(
        self, inputs: np.ndarray, on_step: Callable[[Step], None] | None = None, step_limit: int = STEP_LIMIT
    ) -> np.ndarray:
        """Execute from the entry point to END with ``inputs`` (16, 4) already permuted into v0-v15."""
        self.v[:] = inputs
        calls: list[list[int]] = []  # [end, return]
        ifs: list[list[int]] = []  # [marker, jump_to]
        loops: list[list[int]] = []  # [start, end, remaining, inc, saved aL]
        pc, steps = self.setup.entry, 0
        while True:
            if not 0 <= pc < self.setup.code_words:
                raise ShaderError(f"program counter ran to 0x{pc:X}, outside code memory", pc=pc)
            steps += 1
            if steps > step_limit:
                raise ShaderError(f"step limit of {step_limit} exceeded", pc=pc)
            try:
                ins = decode(int(self.setup.code[pc]), self.setup.opdescs)
            except ShaderError as err:
                raise ShaderError(str(err), pc=pc) from None
            srcs: list[np.ndarray] = []
            jump, is_break, result = None, False, None
            if ins.name == "end":
                self._record(on_step, pc, ins, srcs, result, loops, calls, ifs)
                return self.o[self.bank].copy()
            if ins.srcs:
                srcs = [self.read(s) for s in ins.srcs]
                with np.errstate(all="ignore"):
                    result = self.alu(ins, srcs)
                if result is not None:
                    self.write(ins, result)
            else:
                jump, is_break = self.flow(ins, pc, calls, ifs, loops)
            self._record(on_step, pc, ins, srcs, result, loops, calls, ifs)
            pc = self.sequence(pc, jump, is_break, calls, ifs, loops)

    def flow(self, ins: Instruction, pc: int, calls: list, ifs: list, loops: list) -> tuple[int | None, bool]:
        name = ins.name
        b = bool(self.setup.bool_uniforms[ins.uniform & 0xF])
        if name in ("callc", "ifc", "jmpc", "breakc"):
            cond = self.cond(ins)
        elif name in ("callu", "ifu"):
            cond = b
        elif name == "jmpu":
            cond = b == (not ins.num & 1)
        else:
            cond = True
        if name in ("call", "callc", "callu"):
            if cond:
                _push(calls, [ins.target + ins.num, pc + 1], STACK_DEPTHS["call"])
                return ins.target, False
        elif name in ("ifu", "ifc"):
            if cond:
                _push(ifs, [ins.target, ins.target + ins.num], STACK_DEPTHS["if"])
            else:
                return ins.target, False
        elif name in ("jmpc", "jmpu"):
            if cond:
                return ins.target, False
        elif name in ("break", "breakc"):
            if cond:
                if not loops:
                    raise ShaderError("BREAK outside a loop (hangs the hardware)", pc=pc)
                return None, True
        elif name == "loop":
            x, y, z, _w = (int(t) for t in self.setup.int_uniforms[ins.uniform])
            _push(loops, [pc + 1, ins.target + 1, x, z, self.aL], STACK_DEPTHS["loop"])
            self.aL = y
        elif name in ("emit", "setemit"):
            self.geometry(ins, pc)
        return None, False

    def geometry(self, ins: Instruction, pc: int) -> None:
        if self.on_emit is None:
            raise ShaderError(f"{ins.name.upper()} outside a geometry shader", pc=pc)
        if ins.name == "setemit":
            if ins.vtxid > 2:
                raise ShaderError(f"SETEMIT vertex id {ins.vtxid} (only 0-2 exist)", pc=pc)
            self.emitter = (ins.vtxid, bool(ins.primemit), bool(ins.winding))
        else:
            self.on_emit(self)

    def sequence(self, pc: int, jump: int | None, is_break: bool, calls: list, ifs: list, loops: list) -> int:
        """The end-of-step stack checks of §10.2; returns the next pc."""
        after = pc + 1
        new_pc = after if jump is None else jump
        probe = after
        for k in range(4):
            if not calls or calls[-1][0] != probe:
                break
            if k < 3:
                new_pc = probe = calls[-1][1]
            calls.pop()
        if ifs and ifs[-1][0] == after:
            new_pc = ifs.pop()[1]
        if loops and (loops[-1][1] == after or is_break):
            top = loops[-1]
            self.aL += top[3]
            if not is_break and top[2] != 0:
                top[2] -= 1
                new_pc = top[0]
            else:
                new_pc = top[1]
                if len(loops) > 1:
                    self.aL = top[4]
                loops.pop()
        return new_pc

    def _record(self, on_step, pc, ins, srcs, result, loops, calls, ifs) -> None:
        if on_step is None:
            return
        on_step(
            Step(
                pc,
                ins,
                [[float(x) for x in s] for s in srcs],
                None if result is None else [float(x) for x in np.broadcast_to(result, (4,))],
                ins.mask,
                (self.cmp[0], self.cmp[1]),
                (self.a0[0], self.a0[1]),
                self.aL,
                len(loops),
                loops[-1][2] if loops else None,
                len(calls),
                len(ifs),
            )
        )


def _push(stack: list, entry: list, depth: int) -> None:
    if len(stack) == depth:
        del stack[0]
    stack.append(entry)


def run_reference(setup: ShaderSetup, attributes: np.ndarray) -> np.ndarray:
    """Per-vertex loop of the scalar machine: attributes (N, 16, 4) -> outputs (N, 16, 4) float32."""
    attributes = np.asarray(attributes, np.float32)
    out = np.zeros((attributes.shape[0], 16, 4), np.float32)
    for n in range(attributes.shape[0]):
        regs = np.zeros((16, 4), np.float32)
        for k in range(min(setup.num_inputs, attributes.shape[1])):
            regs[setup.input_permutation[k]] = attributes[n, k]
        out[n] = ScalarMachine(setup).run(regs)
    return out
