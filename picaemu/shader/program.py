"""Per-program caches of the vectorized interpreter, and its reusable register-file memory.

``program_of(setup) -> Program`` (LRU over code + descriptor contents): decoded instructions by pc, the length
of the arithmetic run starting at each pc, compiled plan rows per run (``kernel.encode_row``), and the
registers reachable from an entry point (``Reach``). ``POOL`` (per thread) lends (32, 4, N) / (2, 16, 4, N)
float32 register files to large batches, clearing only the registers the program can touch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from picaemu.errors import ShaderError
from picaemu.shader.isa import NUM_V, Instruction, decode
from picaemu.shader.kernel import KOP, encode_row
from picaemu.shader.setup import ShaderSetup

NUM_REGS_VR = 32  # v0-v15 then r0-r15
NUM_OUT = 16
MAX_SEGMENT = 256  # longest arithmetic run compiled into one plan
PROGRAM_CACHE_SIZE = 64


class Reach(NamedTuple):
    """Registers a program can touch: v read, o written, r (as vr indices 16-31) read or written."""

    v_read: tuple[int, ...]
    o_written: tuple[int, ...]
    r_used: tuple[int, ...]


class _Pool(threading.local):
    """Per-thread register-file memory reused between batches: re-clearing the registers a program touches is
    much cheaper than first-touch page faults of fresh (32, 4, N) + (2, 16, 4, N) arrays."""

    def __init__(self) -> None:
        self.vr = np.zeros(0, np.float32)
        self.out = np.zeros(0, np.float32)

    def take(self, n: int, reach: Reach) -> tuple[np.ndarray, np.ndarray]:
        if self.vr.size < NUM_REGS_VR * 4 * n:
            self.vr = np.zeros(NUM_REGS_VR * 4 * n, np.float32)
            self.out = np.zeros(2 * NUM_OUT * 4 * n, np.float32)
            return self._views(n)
        vr, out = self._views(n)
        for reg in (*reach.v_read, *reach.r_used):
            vr[reg] = 0
        for o in reach.o_written:
            out[:, o] = 0
        return vr, out

    def _views(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        return (
            self.vr[: NUM_REGS_VR * 4 * n].reshape(NUM_REGS_VR, 4, n),
            self.out[: 2 * NUM_OUT * 4 * n].reshape(2, NUM_OUT, 4, n),
        )


POOL = _Pool()


class Program:
    """Decoded instructions and compiled-arithmetic plans of one program content (code + descriptors)."""

    def __init__(self, setup: ShaderSetup) -> None:
        self.code = setup.code
        self.opdescs = setup.opdescs
        self.size = setup.code_words
        self.decoded: dict[int, Instruction] = {}
        self.runs: dict[int, int] = {}
        self.plans: dict[tuple[int, int], np.ndarray] = {}
        self.reach: dict[int, Reach] = {}
        self.inputs: dict[tuple[int, tuple[int, ...], int], np.ndarray | None] = {}
        self.written: dict[int, np.ndarray] = {}

    def instruction(self, pc: int) -> Instruction:
        ins = self.decoded.get(pc)
        if ins is None:
            if not 0 <= pc < self.size:
                raise ShaderError(f"program counter 0x{pc:X} is outside the {self.size}-word code memory", pc=pc)
            try:
                ins = decode(int(self.code[pc]), self.opdescs)
            except ShaderError as err:
                raise ShaderError(str(err), pc=pc) from None
            self.decoded[pc] = ins
        return ins

    def _is_arith(self, pc: int) -> bool:
        try:
            return self.instruction(pc).name in KOP
        except ShaderError:
            return False

    def arith_run(self, pc: int) -> int:
        """How many arithmetic instructions follow one another from ``pc`` (0: flow or invalid at ``pc``)."""
        run = self.runs.get(pc)
        if run is None:
            stop = pc
            while stop < self.size and stop - pc < MAX_SEGMENT and self._is_arith(stop):
                stop += 1
            run = stop - pc
            self.runs[pc] = run
        return run

    def straight_run(self, entry: int) -> int:
        """The length of the arithmetic run from ``entry`` when an END follows it (a program without flow
        control: ``Machine.run`` runs it in one step), else 0."""
        run = self.arith_run(entry)
        end = entry + run
        if not run or end >= self.size:
            return 0
        try:
            return run if self.instruction(end).name == "end" else 0
        except ShaderError:
            return 0

    def input_pairs(self, entry: int, permutation: tuple[int, ...], count: int) -> np.ndarray | None:
        """(P, 2) int64 (input attribute k, v register) of the first ``count`` inputs whose register the program
        reads from ``entry`` (None: no such input); remembered per entry, permutation and count."""
        key = (entry, permutation, count)
        if key not in self.inputs:
            used = set(self.registers(entry).v_read)
            pairs = [(k, permutation[k]) for k in range(count) if permutation[k] in used]
            self.inputs[key] = np.array(pairs, np.int64) if pairs else None
        return self.inputs[key]

    def written_outputs(self, entry: int) -> np.ndarray:
        """(NUM_OUT,) bool: the output registers some instruction reachable from ``entry`` writes (shared: not to be
        modified; left writeable so that the kernels keep one signature)."""
        mask = self.written.get(entry)
        if mask is None:
            mask = self.written[entry] = np.zeros(NUM_OUT, np.bool_)
            mask[list(self.registers(entry).o_written)] = True
        return mask

    def registers(self, entry: int) -> Reach:
        """Registers named by instructions reachable from ``entry`` (a superset of what any run touches), so
        inputs, outputs and register-file clearing cover only what the program uses."""
        cached = self.reach.get(entry)
        if cached is None:
            v_read: set[int]
            o_written: set[int]
            r_used: set[int]
            v_read, o_written, r_used = set(), set(), set()
            seen: set[int] = set()
            work = [entry]
            while work:
                pc = work.pop()
                if pc in seen or not 0 <= pc < self.size:
                    continue
                seen.add(pc)
                try:
                    ins = self.instruction(pc)
                except ShaderError:
                    continue
                v_read.update(op.raw for op in ins.srcs if op.raw < NUM_V)
                r_used.update(op.raw for op in ins.srcs if NUM_V <= op.raw < NUM_REGS_VR)
                if ins.name in KOP and ins.name not in ("cmp", "mova"):
                    (o_written if ins.dst < NUM_OUT else r_used).add(ins.dst)
                if ins.name != "end":
                    work += [pc + 1, ins.target, ins.target + 1, ins.target + ins.num]
            cached = self.reach[entry] = Reach(tuple(sorted(v_read)), tuple(sorted(o_written)), tuple(sorted(r_used)))
        return cached

    def plan(self, start: int, stop: int) -> np.ndarray:
        key = (start, stop)
        plan = self.plans.get(key)
        if plan is None:
            plan = np.ascontiguousarray(np.stack([encode_row(self.instruction(pc)) for pc in range(start, stop)]))
            self.plans[key] = plan
        return plan


_PROGRAMS: OrderedDict[bytes, Program] = OrderedDict()


def program_of(setup: ShaderSetup) -> Program:
    """The cached ``Program`` of a setup's code and descriptors (LRU over contents)."""
    key = setup.program_key
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS[key] = Program(setup)
        if len(_PROGRAMS) > PROGRAM_CACHE_SIZE:
            _PROGRAMS.popitem(last=False)
    else:
        _PROGRAMS.move_to_end(key)
    return prog
