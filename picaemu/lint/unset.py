"""``uninitialized-state``: the registers a draw reads that no packet of the capture sets.

Which registers a draw reads is what its draw-state decoders read (``picaemu.draw_state.PARTS``; a disabled texture
unit's registers excepted, and the integer / boolean uniform registers the bound program's reachable LOOP / IFU /
CALLU / JMPU instructions do not name: ``picaemu.lint.shader_flow``): a part is rebuilt with the register file
swapped for the logging view of ``picaemu.replay.unknown_state`` (``ReadLog``). A part is probed only when its
value is new at this draw (an unchanged part read the same registers at an earlier draw) and when one of its
groups' named registers is still a candidate (not set so far and not yet seen read). Probes are remembered per part
by the content of its groups' registers minus ``VALUE_GROUPS`` (addresses, vertex counts, uniforms: values no
decoder branches on to decide which registers it reads), so a draw that only rebinds a texture or moves a vertex
range probes nothing.

``note(call, place)`` runs at each draw; ``findings()`` at the end of the capture keeps the registers that no
packet set anywhere in it (a register set only later still counts as set, as the rule says) and groups them by
the first draw that read each: ``(place, [(register id, value at that draw)])``.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from dataclasses import replace
from typing import Any

import numpy as np

from picaemu import regs as regtable
from picaemu.draw import DrawCall
from picaemu.draw_state import PARTS, WRITE_GROUPS, DrawState, Failed, Group, Part
from picaemu.lint.shader_flow import ProgramFacts, program_facts
from picaemu.replay.unknown_state import ReadLog
from picaemu.shader.setup import NUM_INTS, REG_PREFIX, ShaderSetup

TEXTURE_PARTS = frozenset(f"texture{u}" for u in range(3))
NAMED = np.zeros(regtable.NUM_REGS, bool)
NAMED[[r.id for r in regtable.all_registers() if r.id < regtable.NUM_REGS]] = True
PART_IDS = {part.name: part.register_ids()[NAMED[part.register_ids()]] for part in PARTS}
VALUE_GROUPS = (
    Group.TEXTURE_ADDRESS
    | Group.ATTRIBUTE_ADDRESS
    | Group.TEV_COLOR
    | Group.LIGHT_COLOR
    | Group.DRAW_RANGE
    | Group.VS_UNIFORMS
    | Group.GS_UNIFORMS
)
_VALUES = WRITE_GROUPS[: regtable.NUM_REGS] & int(VALUE_GROUPS)
KEY_IDS = {name: ids[_VALUES[ids] == 0] for name, ids in PART_IDS.items()}  # what a probe is remembered by
PROBES_KEPT = 64  # per part
# per shader unit part: (BOOLUNIFORM id, (INTUNIFORM_I0..I3 ids)), the registers ``ShaderSetup`` reads for uniforms
UNIFORM_REGS: dict[str, tuple[int, tuple[int, ...]]] = {  # draw-state part ("vs", "gs") -> (bool, ints)
    unit: (regtable.id_of(f"{p}BOOLUNIFORM"), tuple(regtable.id_of(f"{p}INTUNIFORM_I{i}") for i in range(NUM_INTS)))
    for unit, p in REG_PREFIX.items()
}


class UnsetRegisters:
    """See the module docstring. ``written``: (NUM_REGS,) bool, the registers set so far (filled by the linter)."""

    def __init__(self, written: np.ndarray) -> None:
        self.written = written
        self._seen = np.zeros(regtable.NUM_REGS, bool)  # read at some draw already
        self._first: dict[int, tuple[dict[str, int], int]] = {}  # register -> (place of its first read, value)
        self._previous: DrawState | None = None
        self._counted = -1  # registers set or seen when ``_parts`` was worked out
        self._parts: list[Part] = []
        self._probes: dict[str, OrderedDict[bytes, np.ndarray]] = {part.name: OrderedDict() for part in PARTS}
        self._candidate = np.zeros(regtable.NUM_REGS, bool)  # neither set nor seen, as of ``_counted``
        self._last_fresh: dict[str, tuple[np.ndarray, int, list[int]]] = {}  # part -> (reads, count, candidates)
        self._last_unused: dict[str, tuple[ProgramFacts, frozenset[int]]] = {}  # unit -> (facts, its unused)

    def note(self, call: DrawCall, place: dict[str, int]) -> None:
        ds = call.draw_state
        previous, self._previous = self._previous, ds
        if ds is previous:
            return
        built = ds.__dict__
        parts = self._open()
        if previous is not None:  # only the parts whose value is new at this draw
            before = previous.__dict__
            parts = [part for part in parts if built[part.name] is not before[part.name]]
        for part in parts:
            value = built[part.name]
            if isinstance(value, Failed) or (part.name in TEXTURE_PARTS and not value.enabled):
                continue
            fresh = self._fresh(part.name, self._reads(part, call, built))
            if fresh and part.name in UNIFORM_REGS and value is not None:
                unused = self._unused(part.name, value)
                fresh = [reg for reg in fresh if reg not in unused]
            for reg in fresh:
                if not self._seen[reg]:  # another part of this draw may have read it first
                    self._seen[reg] = True
                    self._first[reg] = (place, int(call.state.regs[reg]))

    def _fresh(self, name: str, reads: np.ndarray) -> list[int]:
        """The registers of ``reads`` that are still candidates, in order; the same list again while ``reads`` is
        the same array (a probe remembered) and no register was set or seen since."""
        last = self._last_fresh.get(name)
        if last is None or last[0] is not reads or last[1] != self._counted:
            last = self._last_fresh[name] = (reads, self._counted, reads[self._candidate[reads]].tolist())
        return last[2]

    def _unused(self, unit: str, setup: ShaderSetup) -> frozenset[int]:
        """``_unused_uniforms``, remembered per program's facts (they are shared while the program is)."""
        facts = program_facts(setup)
        last = self._last_unused.get(unit)
        if last is None or last[0] is not facts:
            last = self._last_unused[unit] = (facts, _unused_uniforms(unit, facts))
        return last[1]

    def _open(self) -> list[Part]:
        """The parts one of whose named registers is still a candidate (not set so far, not seen read); worked
        out again only when a register was set or seen since."""
        count = int(np.count_nonzero(self.written)) + len(self._first)
        if count != self._counted:
            self._counted = count
            self._candidate = candidate = ~self.written & ~self._seen
            self._parts = [part for part in PARTS if candidate[PART_IDS[part.name]].any()]
        return self._parts

    def _reads(self, part: Part, call: DrawCall, built: dict[str, Any]) -> np.ndarray:
        """(R,) int64 sorted: the registers ``part`` reads at this draw, probed once per content of its key
        registers."""
        memo = self._probes[part.name]
        key = call.state.regs[KEY_IDS[part.name]].tobytes()
        reads = memo.get(key)
        if reads is None:
            reads = memo[key] = _probe(part, call, built)
            if len(memo) > PROBES_KEPT:
                memo.popitem(last=False)
        return reads

    def findings(self) -> list[tuple[dict[str, int], list[tuple[int, int]]]]:
        """Per draw (in draw order), the registers it was the first to read and that no packet ever set."""
        by_draw: dict[int, tuple[dict[str, int], list[tuple[int, int]]]] = {}
        for reg, (place, value) in sorted(self._first.items()):
            if not self.written[reg]:
                by_draw.setdefault(place["draw"], (place, []))[1].append((reg, value))
        return [by_draw[d] for d in sorted(by_draw)]


def _unused_uniforms(unit: str, facts: ProgramFacts) -> frozenset[int]:
    """The integer and boolean uniform registers of ``unit`` its bound program (``facts``) never reads (the decoder
    reads them all: a program without LOOP does not depend on them)."""
    bools, ints = UNIFORM_REGS[unit]
    unused = {reg for k, reg in enumerate(ints) if k not in facts.ints}
    return frozenset(unused | ({bools} if not facts.bools else set()))


def _probe(part: Part, call: DrawCall, built: dict[str, Any]) -> np.ndarray:
    """(R,) int64 sorted: the register ids ``part``'s builder reads."""
    probe = call.state.regs.view(ReadLog)
    probe.reads = set()
    with contextlib.suppress(Exception):  # a part that fails again: the reads made before the failure count
        part.build(replace(call.state, regs=probe), built)
    return np.array(sorted(probe.reads), np.int64)


def message(registers: list[tuple[int, int]]) -> str:
    """The finding's text: how many registers and each with the value the draw read."""
    names = ", ".join(f"{regtable.get(r).name} = 0x{v:X}" for r, v in registers)
    return f"the draw reads {len(registers)} register(s) no packet of the capture sets: {names}"
