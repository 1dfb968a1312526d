"""The six-stage texture combiner (TEV), in the hardware's 8-bit fixed point: its decoding and the readable
reference that runs it.

Receives a ``TevState`` (decoded once per draw from registers 0x0C0-0x0FD) and the per-fragment source colors as
a dict ``{source code: (F, 4) or (4,) uint8 RGBA}`` (0 primary color, 1/2 fragment lighting primary/secondary,
3-6 textures 0-3; codes 13-15 are produced here). Returns the last stage's output, (F, 4) uint8.

Per stage (integer maths, divisions truncate toward zero, as Azahar's software renderer; HW rounding is unknown):
three sources per RGB and alpha, an operand modifier each (``RGB_OPERANDS`` / ``ALPHA_OPERANDS``), a combine
function (``tev_kernels._combine_one``; dot3 in ``tev_kernels._dot3``), then ``min(255, result << scale)`` (scale
code 3 acts as x1). Dot3 RGBA puts the dot product into alpha too, scaled by the alpha scale (the RGB channels by the
RGB scale). The sequencing (pass-through stages, the stage-0 source rules, "previous", the combiner buffer and its
one-stage delay) is ``TevState.program`` (``picaemu.color.tev_program``): ``combine`` runs its rows. Undefined
source/operand/op codes in the slots a stage reads raise ``UnsupportedFeature``. The per-fragment loops are
compiled (``picaemu.color.tev_kernels``): one pass per active stage over all four output channels (dot3 its own
pass), with the op and operand choices passed as scalars; per-draw decoding is Python.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from picaemu.color.tev_kernels import (
    OP_DOT3_RGB,
    OP_DOT3_RGBA,
    OP_REPLACE,
    _dot3,
    _stage,
)
from picaemu.color.tev_program import (  # noqa: F401 - the source codes and stage counts, re-exported
    BUFFER_STAGES,
    NUM_STAGES,
    READS_BUFFER_COLOR,
    READS_ZERO,
    SRC_BUFFER,
    SRC_CONSTANT,
    SRC_LIGHT_PRIMARY,
    SRC_LIGHT_SECONDARY,
    SRC_PREVIOUS,
    SRC_PRIMARY,
    SRC_TEXTURES,
    StageRow,
    TevProgram,
    program,
)
from picaemu.errors import UnsupportedFeature
from picaemu.regs import NUM_REGS, access, id_of
from picaemu.regs.blocks.tev import ALPHA_OPERANDS, COMBINE_OPS, RGB_OPERANDS, SCALES, TEV_SOURCES

if TYPE_CHECKING:
    from picaemu.observer import StageObserver

_OP = {name: code for code, name in COMBINE_OPS.items()}
ARITY = {
    _OP[name]: n
    for name, n in {  # operand slots each combine op reads
        "replace": 1,
        "modulate": 2,
        "add": 2,
        "add signed": 2,
        "interpolate": 3,
        "subtract": 2,
        "dot3 RGB": 2,
        "dot3 RGBA": 2,
        "multiply then add": 3,
        "add then multiply": 3,
    }.items()
}
SCALE_SHIFT = {code: {"x1": 0, "x2": 1, "x4": 2, "x1 (3)": 0}[name] for code, name in SCALES.items()}
_RGB_OPND = {name: code for code, name in RGB_OPERANDS.items()}
_ALPHA_OPND = {name: code for code, name in ALPHA_OPERANDS.items()}
# operand code -> (channels read, inverted)
RGB_OPERAND_TABLE = {
    _RGB_OPND[name]: value
    for name, value in {
        "src.rgb": ((0, 1, 2), False),
        "1 - src.rgb": ((0, 1, 2), True),
        "src.aaa": ((3, 3, 3), False),
        "1 - src.aaa": ((3, 3, 3), True),
        "src.rrr": ((0, 0, 0), False),
        "1 - src.rrr": ((0, 0, 0), True),
        "src.ggg": ((1, 1, 1), False),
        "1 - src.ggg": ((1, 1, 1), True),
        "src.bbb": ((2, 2, 2), False),
        "1 - src.bbb": ((2, 2, 2), True),
    }.items()
}
ALPHA_OPERAND_TABLE = {
    _ALPHA_OPND[name]: value
    for name, value in {
        "src.a": (3, False),
        "1 - src.a": (3, True),
        "src.r": (0, False),
        "1 - src.r": (0, True),
        "src.g": (1, False),
        "1 - src.g": (1, True),
        "src.b": (2, False),
        "1 - src.b": (2, True),
    }.items()
}
assert len(RGB_OPERAND_TABLE) == len(RGB_OPERANDS) and len(ALPHA_OPERAND_TABLE) == len(ALPHA_OPERANDS)
assert len(ARITY) == len(COMBINE_OPS)


STAGE_NAMES = tuple(f"TEXENV{n}" for n in range(NUM_STAGES))


@dataclass(frozen=True)
class TevStage:
    """One combiner stage, decoded."""

    index: int
    rgb_sources: tuple[int, int, int]
    alpha_sources: tuple[int, int, int]
    rgb_operands: tuple[int, int, int]
    alpha_operands: tuple[int, int, int]
    rgb_op: int
    alpha_op: int
    constant: tuple[int, int, int, int]
    rgb_shift: int
    alpha_shift: int

    @classmethod
    def from_regs(cls, regs: np.ndarray, n: int) -> TevStage:
        words = tuple(int(regs[i]) for i in STAGE_REGISTER_IDS[n])
        return _stage_from_words(n, words)

    @classmethod
    def _decode(cls, regs: np.ndarray, n: int) -> TevStage:
        name = STAGE_NAMES[n]
        s0, s1, s2, s3, s4, s5 = access.raws(regs, f"{name}_SOURCE", _SOURCE_FIELDS)
        o0, o1, o2, o3, o4, o5 = access.raws(regs, f"{name}_OPERAND", _OPERAND_FIELDS)
        rgb_op, alpha_op = access.raws(regs, f"{name}_COMBINER", ("rgb_combine", "alpha_combine"))
        rgb_scale, alpha_scale = access.raws(regs, f"{name}_SCALE", ("rgb_scale", "alpha_scale"))
        stage = cls(
            index=n,
            rgb_sources=(s0, s1, s2),
            alpha_sources=(s3, s4, s5),
            rgb_operands=(o0, o1, o2),
            alpha_operands=(o3, o4, o5),
            rgb_op=rgb_op,
            alpha_op=alpha_op,
            constant=access.rgba(regs, f"{name}_COLOR"),
            rgb_shift=SCALE_SHIFT[rgb_scale],
            alpha_shift=SCALE_SHIFT[alpha_scale],
        )
        stage._validate(regs)
        return stage

    def _fail(self, regs: np.ndarray, what: str, suffix: str) -> None:
        reg_id = id_of(f"{STAGE_NAMES[self.index]}_{suffix}")
        raise UnsupportedFeature(f"TEV stage {self.index}: {what}", register=reg_id, value=int(regs[reg_id]))

    def _validate(self, regs: np.ndarray) -> None:
        checked = (
            (("RGB", self.rgb_op),) if self.rgb_op == OP_DOT3_RGBA else (("RGB", self.rgb_op), ("alpha", self.alpha_op))
        )
        for kind, op in checked:
            if op not in ARITY:
                self._fail(regs, f"undefined {kind} combine op {op}", "COMBINER")
        if self.rgb_op != OP_DOT3_RGBA and self.alpha_op in (OP_DOT3_RGB, OP_DOT3_RGBA):
            self._fail(regs, "dot3 as the alpha combine op", "COMBINER")
        for kind, srcs, opnds, table in (
            ("RGB", self.rgb_sources, self.rgb_operands, RGB_OPERAND_TABLE),
            ("alpha", self.alpha_sources, self.alpha_operands, ALPHA_OPERAND_TABLE),
        ):
            for slot in self.slots_read(kind):
                if srcs[slot] not in TEV_SOURCES:
                    self._fail(regs, f"undefined {kind} source 0x{srcs[slot]:X} in slot {slot}", "SOURCE")
                if opnds[slot] not in table:
                    self._fail(regs, f"undefined {kind} operand 0x{opnds[slot]:X} in slot {slot}", "OPERAND")

    def slots_read(self, kind: str) -> tuple[int, ...]:
        """Operand slots whose source this stage actually reads for "RGB" or "alpha"."""
        op = self.rgb_op if kind == "RGB" else self.alpha_op
        if kind == "alpha" and self.rgb_op == OP_DOT3_RGBA:
            return ()
        slots = tuple(range(ARITY[op]))
        srcs = self.rgb_sources if kind == "RGB" else self.alpha_sources
        if kind == "RGB" and self.index == 0 and any(srcs[s] == SRC_PREVIOUS for s in slots) and 2 not in slots:
            slots += (2,)
        return slots

    @cached_property
    def passthrough(self) -> bool:
        """True when the stage outputs "previous" unchanged (replace, previous, plain operand, x1)."""
        plain = (self.rgb_op, self.alpha_op, self.rgb_sources[0], self.alpha_sources[0]) == (
            OP_REPLACE,
            OP_REPLACE,
            SRC_PREVIOUS,
            SRC_PREVIOUS,
        )
        plain_operands = (self.rgb_operands[0], self.alpha_operands[0]) == (_RGB_OPND["src.rgb"], _ALPHA_OPND["src.a"])
        return self.index > 0 and plain and plain_operands and self.rgb_shift == 0 and self.alpha_shift == 0

    def sources_read(self) -> set[int]:
        return {self.rgb_sources[s] for s in self.slots_read("RGB")} | {
            self.alpha_sources[s] for s in self.slots_read("alpha")
        }

    @cached_property
    def plan(self) -> StagePlan:
        """The stage's kernel arguments that depend on its registers only (computed once per decoded stage)."""
        rgb_slots = ARITY[self.rgb_op]
        alpha_slots = 0 if self.rgb_op == OP_DOT3_RGBA else ARITY[self.alpha_op]
        rgb_opnd = [self.rgb_operands[s] if s < rgb_slots else 0 for s in range(3)]
        alpha = [ALPHA_OPERAND_TABLE[self.alpha_operands[s] if s < alpha_slots else 0] for s in range(3)]
        rgb_ch = np.array([RGB_OPERAND_TABLE[o][0] for o in rgb_opnd], np.int64)
        rgb_inv = np.array([RGB_OPERAND_TABLE[o][1] for o in rgb_opnd], np.bool_)
        return StagePlan(
            rgb_slots,
            alpha_slots,
            rgb_ch,
            rgb_inv,
            tuple(int(k) for k in rgb_ch.ravel()),
            tuple(bool(v) for v in rgb_inv),
            tuple(ch for ch, _ in alpha),
            tuple(inv for _, inv in alpha),
            self.alpha_op if self.alpha_op in ARITY else 0,
            self.rgb_op in (OP_DOT3_RGB, OP_DOT3_RGBA),
        )


@dataclass(frozen=True)
class StagePlan:
    """``run_stage``'s per-stage constants: operand slots read for RGB and alpha, the RGB operands' channels
    ((3, 3) int64, and as 9 scalars) and inversions ((3,) bool, and as scalars), the alpha operands' channels and
    inversions, the alpha op passed to the kernel, whether the RGB op is a dot3."""

    rgb_slots: int
    alpha_slots: int
    rgb_ch: np.ndarray
    rgb_inv: np.ndarray
    rgb_ch_scalars: tuple[int, ...]
    rgb_inv_scalars: tuple[bool, ...]
    alpha_ch: tuple[int, ...]
    alpha_inv: tuple[bool, ...]
    alpha_op: int
    dot3: bool


_RGB_UPDATE_FIELDS = tuple(f"rgb_update{i}" for i in range(BUFFER_STAGES))
_ALPHA_UPDATE_FIELDS = tuple(f"alpha_update{i}" for i in range(BUFFER_STAGES))
_SOURCE_FIELDS = (*(f"rgb_src{i}" for i in range(3)), *(f"alpha_src{i}" for i in range(3)))
_OPERAND_FIELDS = (*(f"rgb_op{i}" for i in range(3)), *(f"alpha_op{i}" for i in range(3)))
STAGE_REGISTER_IDS = tuple(
    tuple(id_of(f"{name}_{suffix}") for suffix in ("SOURCE", "OPERAND", "COMBINER", "COLOR", "SCALE"))
    for name in STAGE_NAMES
)


@functools.lru_cache(maxsize=256)
def _stage_from_words(n: int, words: tuple[int, ...]) -> TevStage:
    """Stage ``n`` decoded from its five register words (remembered: a TEV switch re-decodes only the stages
    whose words changed)."""
    regs = np.zeros(NUM_REGS, np.uint32)
    regs[list(STAGE_REGISTER_IDS[n])] = words
    return TevStage._decode(regs, n)


@dataclass(frozen=True)
class TevState:
    """All six stages plus the combiner-buffer configuration."""

    stages: tuple[TevStage, ...]
    buffer_color: tuple[int, int, int, int]
    rgb_update: tuple[bool, ...]
    alpha_update: tuple[bool, ...]

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> TevState:
        return cls(
            stages=tuple(TevStage.from_regs(regs, n) for n in range(NUM_STAGES)),
            buffer_color=access.rgba(regs, "TEXENV_BUFFER_COLOR"),
            rgb_update=tuple(bool(v) for v in access.raws(regs, "TEXENV_UPDATE_BUFFER", _RGB_UPDATE_FIELDS)),
            alpha_update=tuple(bool(v) for v in access.raws(regs, "TEXENV_UPDATE_BUFFER", _ALPHA_UPDATE_FIELDS)),
        )

    def sources_used(self) -> frozenset[int]:
        """Every source code some stage reads (external inputs the caller must provide among them)."""
        return self._sources_used

    @cached_property
    def _sources_used(self) -> frozenset[int]:
        return frozenset().union(*(s.sources_read() for s in self.stages if not s.passthrough))

    @cached_property
    def program(self) -> TevProgram:
        """The per-draw stage program every TEV consumer runs (``picaemu.color.tev_program``)."""
        return program(self)


def _resolve(
    row: StageRow,
    code: int | None,
    inputs: Mapping[int, np.ndarray],
    previous: np.ndarray,
    buffer: np.ndarray,
    count: int,
) -> np.ndarray:
    """The (count, 4) uint8 array of source ``code`` (one of ``row``'s resolved sources; None reads 0)."""
    if code is None:
        return np.zeros((count, 4), np.uint8)
    if code == SRC_PREVIOUS:
        return previous
    if code == SRC_BUFFER:
        return buffer
    if code == SRC_CONSTANT:
        return _filled(row.stage.constant, count)
    if code not in inputs:
        raise UnsupportedFeature(f"TEV stage {row.index} reads source {TEV_SOURCES.get(code, code)}, not provided")
    color = inputs[code]
    if (
        isinstance(color, np.ndarray)
        and color.shape == (count, 4)
        and color.dtype == np.uint8
        and color.flags.c_contiguous
        and color.flags.writeable
    ):  # as the shading path provides them
        return color
    if np.shape(color) == (4,):
        return _filled(color, count)
    if np.shape(color) != (count, 4):
        color = np.broadcast_to(color, (count, 4))
    array = np.ascontiguousarray(color, np.uint8)
    return array if array.flags.writeable else array.copy()  # one numba signature: C-contiguous, writeable


def _filled(color: tuple[int, ...] | np.ndarray, count: int) -> np.ndarray:
    """(count, 4) uint8 rows of the RGBA8 ``color``, filled as one 32-bit word per row (numpy's broadcast of a
    4-byte row is ~30x slower)."""
    out = np.empty((count, 4), np.uint8)
    out.view(np.uint32)[:, 0] = np.ascontiguousarray(color, np.uint8).reshape(4).view(np.uint32)[0]
    return out


def _slot_arrays(
    row: StageRow, inputs: Mapping[int, np.ndarray], previous: np.ndarray, buffer: np.ndarray, count: int
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The three (count, 4) uint8 arrays the kernel reads for "RGB" and for "alpha" (``row``'s sources)."""
    resolved: dict[int | None, np.ndarray] = {}
    arrays = {}
    for kind, codes in (("RGB", row.rgb_sources), ("alpha", row.alpha_sources)):
        for code in codes:
            if code not in resolved:
                resolved[code] = _resolve(row, code, inputs, previous, buffer, count)
        a, b, c = codes
        arrays[kind] = (resolved[a], resolved[b], resolved[c])
    return arrays


def operand_values(stage: TevStage, arrays: Mapping[str, tuple[np.ndarray, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """What the combine function of ``stage`` receives: (3, F, 3) uint8 RGB operands and (3, F) uint8 alpha
    operands ((0, F) for dot3 RGBA) after the operand modifiers of ``RGB_OPERAND_TABLE`` / ``ALPHA_OPERAND_TABLE``
    (the kernels apply the same tables inline). For observers only: the stage's output comes from ``run_stage``."""
    plan = stage.plan
    rgb = np.stack(
        [
            np.where(plan.rgb_inv[j], 255 - a[:, plan.rgb_ch[j]], a[:, plan.rgb_ch[j]])
            for j, a in enumerate(arrays["RGB"])
        ]
    ).astype(np.uint8)
    alpha = (
        [
            np.where(plan.alpha_inv[j], 255 - a[:, plan.alpha_ch[j]], a[:, plan.alpha_ch[j]])
            for j, a in enumerate(arrays["alpha"])
        ]
        if plan.alpha_slots
        else []
    )
    count = rgb.shape[1]
    return rgb, np.array(alpha, np.uint8).reshape(len(alpha), count)


def run_stage(stage: TevStage, arrays: Mapping[str, tuple[np.ndarray, ...]], count: int) -> np.ndarray:
    """One stage over ``count`` fragments whose operand slots read ``arrays`` (``_slot_arrays``): (count, 4)
    uint8."""
    plan = stage.plan
    out = np.empty((count, 4), np.uint8)
    if plan.dot3:  # its own kernel, compiled the first time a draw uses it
        _dot3(
            arrays["RGB"][0],
            arrays["RGB"][1],
            plan.rgb_ch,
            plan.rgb_inv,
            stage.rgb_shift,
            stage.rgb_op == OP_DOT3_RGBA,
            stage.alpha_shift,
            out,
        )
    if stage.rgb_op != OP_DOT3_RGBA:  # dot3 RGBA wrote all four channels
        _stage(
            *arrays["RGB"],
            *arrays["alpha"],
            plan.rgb_ch_scalars,
            plan.rgb_inv_scalars,
            stage.rgb_op,
            stage.rgb_shift,
            plan.alpha_ch,
            plan.alpha_inv,
            plan.alpha_op,
            stage.alpha_shift,
            not plan.dot3,
            out,
        )
    return out


def _buffer(row: StageRow, outputs: Mapping[int, np.ndarray]) -> np.ndarray:
    """The combiner buffer ``row``'s stage reads: RGB and alpha from the outputs the program names."""
    rgb = outputs[row.buffer_rgb]
    if row.buffer_alpha == row.buffer_rgb:
        return rgb
    mixed = rgb.copy()
    mixed[:, 3] = outputs[row.buffer_alpha][:, 3]
    return mixed


def combine(
    tstate: TevState, inputs: Mapping[int, np.ndarray], count: int, observer: StageObserver | None = None
) -> np.ndarray:
    """Run the rows of ``tstate.program`` for ``count`` fragments: (count, 4) uint8; an ``observer`` receives
    ``on_tev_stage(stage, rgb operands, alpha operands, output, buffer)`` for each of the six stages
    (``picaemu.observer.StageObserver``; a pass-through stage's output is its "previous")."""
    prog = tstate.program
    zero = np.zeros((count, 4), np.uint8)
    outputs = {READS_ZERO: zero}  # by stage index, and what else "previous" / "previous buffer" may read
    if prog.uses_buffer:
        outputs[READS_BUFFER_COLOR] = _filled(prog.buffer_color, count)
    for row in prog.rows:
        if not row.active and observer is None:
            continue
        previous = outputs[row.previous]
        buffer = _buffer(row, outputs) if observer is not None or row.reads(SRC_BUFFER) else zero
        arrays = _slot_arrays(row, inputs, previous, buffer, count)
        out = run_stage(row.stage, arrays, count) if row.active else previous
        if observer is not None:
            observer.on_tev_stage(row.index, *operand_values(row.stage, arrays), out, buffer)
        outputs[row.index] = out
    return outputs[prog.result]
