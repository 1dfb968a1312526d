"""Static control flow of a bound shader program: does every path reach END, and which float uniforms can it read.

``program_facts(setup) -> ProgramFacts`` walks every path from the entry point with the sequencer of the scalar
reference interpreter (``picaemu.shader.reference.ScalarMachine``: its ``flow`` pushes CALL/IF/LOOP frames, its
``sequence`` pops them, with the hardware's stack depths), taking both outcomes of every condition that
depends on the compare flags (ifc, callc, jmpc, breakc: the four flag combinations) and the bound boolean
uniforms for ifu, callu and jmpu. A state is (pc, call, if and loop stacks); a loop body is walked once (its
count is data, not flow: the loop frame's remaining count is set to 0 after the push).

The program ends where its code does: ``extent`` = one past the last non-zero code word (the words after it are
zeros, an ADD the unit would run until it wraps around code memory). A path whose pc reaches ``extent`` before an
END, leaves code memory, or runs a BREAK outside any loop (the hardware hangs) is reported in ``no_end``. The walk
stops after ``MAX_STATES`` states (a program that large reports nothing rather than guessing).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from picaemu.errors import ShaderError
from picaemu.shader.isa import FIRST_C, NUM_C
from picaemu.shader.program import program_of
from picaemu.shader.reference import ScalarMachine
from picaemu.shader.setup import ShaderSetup

MAX_STATES = 1 << 16
CONDITIONAL = frozenset({"ifc", "callc", "jmpc", "breakc"})  # outcomes depend on the compare flags
FLAG_COMBINATIONS = ((False, False), (False, True), (True, False), (True, True))
BOOL_FLOW = frozenset({"ifu", "callu", "jmpu"})  # flow on a boolean uniform
BOOL_INDEX = 0xF  # the uniform field's bits that pick b0-b15 (the reference interpreter's ``uniform & 0xF``)
LOOP_REMAINING = 2  # column of a loop frame ([start, end, remaining, increment, saved aL]) holding the count
_CACHE_SIZE = 64
NONE = np.zeros(0, np.int64)

Stacks = tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


@dataclass(frozen=True)
class ProgramFacts:
    """What the walk found: ``no_end`` (None: every path ends; else what goes wrong, with the pc), ``uniforms``
    ((U,) int64 sorted float-uniform rows c0-c95 that reachable instructions name; a relatively addressed operand
    counts its base row), ``extent`` (code words up to the last non-zero one) and the integer and boolean uniforms
    the walk met."""

    no_end: str | None
    uniforms: np.ndarray  # (U,) int64
    extent: int
    ints: frozenset[int] = frozenset()  # integer uniforms i0-i3 a reachable LOOP reads
    bools: frozenset[int] = frozenset()  # boolean uniforms b0-b15 a reachable IFU / CALLU / JMPU reads


_FACTS: OrderedDict[tuple[bytes, int, bytes], ProgramFacts] = OrderedDict()


def program_facts(setup: ShaderSetup) -> ProgramFacts:
    """The facts of ``setup``'s program from its entry point with its boolean uniforms (remembered by content)."""
    key = (setup.program_key, setup.entry, setup.bool_uniforms.tobytes())  # the program key's hash is kept
    facts = _FACTS.get(key)
    if facts is None:
        facts = _FACTS[key] = _walk(setup)
        if len(_FACTS) > _CACHE_SIZE:
            _FACTS.popitem(last=False)
    return facts


def _frozen(stacks: tuple[list, list, list]) -> Stacks:
    return tuple(tuple(tuple(frame) for frame in stack) for stack in stacks)  # type: ignore[return-value]


def _thawed(stacks: Stacks) -> tuple[list, list, list]:
    return tuple([list(frame) for frame in stack] for stack in stacks)  # type: ignore[return-value]


def _walk(setup: ShaderSetup) -> ProgramFacts:
    nonzero = np.flatnonzero(setup.code[: setup.code_words])
    extent = int(nonzero[-1]) + 1 if nonzero.size else 0
    program = program_of(setup)
    machine = ScalarMachine(setup)
    machine.on_emit = lambda _machine: None  # EMIT is not flow
    uniforms: set[int] = set()
    ints: set[int] = set()
    bools: set[int] = set()
    start: tuple[int, Stacks] = (setup.entry, ((), (), ()))
    seen, work = {start}, [start]
    while work and len(seen) < MAX_STATES:
        pc, stacks = work.pop()
        if not 0 <= pc < extent:
            where = "leaves code memory" if not 0 <= pc < setup.code_words else "runs past the program's last word"
            return ProgramFacts(f"a path {where} (pc 0x{pc:03X}, the program ends at 0x{extent:03X})", NONE, extent)
        try:
            ins = program.instruction(pc)
        except ShaderError as err:
            return ProgramFacts(f"a path reaches an invalid instruction at pc 0x{pc:03X}: {err}", NONE, extent)
        uniforms.update(op.raw - FIRST_C for op in ins.srcs if FIRST_C <= op.raw < FIRST_C + NUM_C)
        if ins.name == "loop":
            ints.add(ins.uniform)
        elif ins.name in BOOL_FLOW:
            bools.add(ins.uniform & BOOL_INDEX)
        if ins.name == "end":
            continue
        for flags in FLAG_COMBINATIONS if ins.name in CONDITIONAL else FLAG_COMBINATIONS[:1]:
            calls, ifs, loops = _thawed(stacks)
            machine.cmp = list(flags)
            try:
                jump, is_break = (None, False) if ins.srcs else machine.flow(ins, pc, calls, ifs, loops)
            except ShaderError as err:  # BREAK outside a loop, SETEMIT of a vertex that does not exist
                return ProgramFacts(f"{err} (pc 0x{pc:03X})", NONE, extent)
            if ins.name == "loop":
                loops[-1][LOOP_REMAINING] = 0
            nxt = machine.sequence(pc, jump, is_break, calls, ifs, loops)
            state = (nxt, _frozen((calls, ifs, loops)))
            if state not in seen:
                seen.add(state)
                work.append(state)
    return ProgramFacts(None, np.array(sorted(uniforms), np.int64), extent, frozenset(ints), frozenset(bools))
