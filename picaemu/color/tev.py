"""The six-stage texture combiner (TEV), in the hardware's 8-bit fixed point.

Receives a ``TevState`` (decoded once per draw from registers 0x0C0-0x0FD) and the per-fragment source colors as
a dict ``{source code: (F, 4) or (4,) uint8 RGBA}`` (0 primary color, 1/2 fragment lighting primary/secondary,
3-6 textures 0-3; codes 13-15 are produced here). Returns the last stage's output, (F, 4) uint8.

Per stage (integer maths, divisions truncate toward zero, as Azahar's software renderer; HW rounding is unknown):
three sources per RGB and alpha, an operand modifier each (``RGB_OPERANDS`` / ``ALPHA_OPERANDS``), a combine
function (``_combine_one``; dot3 in ``_stage``), then ``min(255, result << scale)`` (scale code 3 acts as x1). Stage
0: an RGB "previous" in slot 0 or 1 reads RGB slot 2's source (0 if that is "previous" too); every other "previous"
of stage 0 (alpha slots, RGB slot 2) reads 0, and so does "previous buffer". Dot3 RGBA puts the dot product into
alpha too, scaled by the alpha scale (the RGB channels by the RGB scale). Combiner buffer: stage 0 reads 0, stage 1
the initial color (0x0FD), stage k+1 what stage k-1 left when its update bit (0x0E0 bits 8-15, stages 0-3) is set.
Undefined source/operand/op codes in the slots a stage reads raise ``UnsupportedFeature``. The per-fragment loops
are compiled (numba, cached): one pass per active stage over all four output channels (dot3 its own pass), with the
op and operand choices passed as scalars; per-draw decoding is Python.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numba
import numpy as np

from picaemu.errors import UnsupportedFeature
from picaemu.regs import NUM_REGS, access, id_of
from picaemu.regs.blocks.tev import ALPHA_OPERANDS, COMBINE_OPS, RGB_OPERANDS, SCALES, TEV_SOURCES

if TYPE_CHECKING:
    from picaemu.observer import StageObserver

NUM_STAGES = 6
BUFFER_STAGES = 4  # stages whose output can reach the combiner buffer
_SRC = {name: code for code, name in TEV_SOURCES.items()}
SRC_PRIMARY, SRC_LIGHT_PRIMARY, SRC_LIGHT_SECONDARY = (
    _SRC["primary color"],
    _SRC["fragment primary color"],
    _SRC["fragment secondary color"],
)
SRC_TEXTURES = tuple(_SRC[f"texture {i}"] for i in range(4))
SRC_BUFFER, SRC_CONSTANT, SRC_PREVIOUS = _SRC["previous buffer"], _SRC["constant"], _SRC["previous"]
_OP = {name: code for code, name in COMBINE_OPS.items()}
OP_REPLACE, OP_MODULATE, OP_ADD, OP_ADD_SIGNED, OP_LERP = (
    _OP["replace"],
    _OP["modulate"],
    _OP["add"],
    _OP["add signed"],
    _OP["interpolate"],
)
OP_SUBTRACT, OP_DOT3_RGB, OP_DOT3_RGBA, OP_MUL_ADD = (
    _OP["subtract"],
    _OP["dot3 RGB"],
    _OP["dot3 RGBA"],
    _OP["multiply then add"],
)
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


@numba.njit(cache=True, inline="always", error_model="numpy")
def _div_trunc(x: int, d: int) -> int:
    """Integer division truncating toward zero (C semantics)."""
    return -((-x) // d) if x < 0 else x // d


@numba.njit(cache=True, error_model="numpy")
def _combine_one(op: int, a: int, b: int, c: int) -> int:
    """One channel of every combine op but dot3 (see the reference table), 8-bit integers in and out."""
    if op == OP_REPLACE:
        return a
    if op == OP_MODULATE:
        return a * b // 255
    if op == OP_ADD:
        return min(a + b, 255)
    if op == OP_ADD_SIGNED:
        return min(max(a + b - 128, 0), 255)
    if op == OP_LERP:
        return (a * c + b * (255 - c)) // 255
    if op == OP_SUBTRACT:
        return max(a - b, 0)
    if op == OP_MUL_ADD:
        return min((a * b + 255 * c) // 255, 255)
    return min(a + b, 255) * c // 255  # add then multiply


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


@numba.njit(cache=True, error_model="numpy")  # every divisor is a constant: no division-by-zero branches
def _operate(x: int, y: int, z: int, inv0: bool, inv1: bool, inv2: bool, op: int, shift: int) -> int:
    """One output channel from its three operand values: inverted (255 - v) where asked, combined, scaled."""
    x = 255 - x if inv0 else x
    y = 255 - y if inv1 else y
    z = 255 - z if inv2 else z
    return min(_combine_one(op, x, y, z) << shift, 255)


@numba.njit(cache=True)
def _stage(
    r0,
    r1,
    r2,
    a0,
    a1,
    a2,
    rgb_ch,
    rgb_inv,
    rgb_op,
    rgb_shift,
    alpha_ch,
    alpha_inv,
    alpha_op,
    alpha_shift,
    with_rgb,
    out,
) -> None:  # pragma: no cover - compiled
    """Output channels of one stage for every fragment, in one pass: RGB (when ``with_rgb``; dot3 is ``_dot3``'s)
    from r0-r2, operand j of channel ch reading channel ``rgb_ch[3 * j + ch]``, and alpha from a0-a2, operand j
    reading ``alpha_ch[j]``; sources (F, 4) uint8; the choices arrive as tuples of scalars, so that they stay in
    registers and the compiler hoists the op selection."""
    k00, k01, k02, k10, k11, k12, k20, k21, k22 = rgb_ch
    i0, i1, i2 = rgb_inv
    c0, c1, c2 = alpha_ch
    j0, j1, j2 = alpha_inv
    for i in range(out.shape[0]):
        if with_rgb:
            out[i, 0] = _operate(
                np.int64(r0[i, k00]), np.int64(r1[i, k10]), np.int64(r2[i, k20]), i0, i1, i2, rgb_op, rgb_shift
            )
            out[i, 1] = _operate(
                np.int64(r0[i, k01]), np.int64(r1[i, k11]), np.int64(r2[i, k21]), i0, i1, i2, rgb_op, rgb_shift
            )
            out[i, 2] = _operate(
                np.int64(r0[i, k02]), np.int64(r1[i, k12]), np.int64(r2[i, k22]), i0, i1, i2, rgb_op, rgb_shift
            )
        out[i, 3] = _operate(
            np.int64(a0[i, c0]), np.int64(a1[i, c1]), np.int64(a2[i, c2]), j0, j1, j2, alpha_op, alpha_shift
        )


@numba.njit(cache=True, error_model="numpy")  # every divisor is a constant: no division-by-zero branches
def _dot3(r0, r1, rgb_ch, rgb_inv, shift, rgba, alpha_shift, out) -> None:  # pragma: no cover - compiled
    """Dot3 of the first two RGB operands into out[:, :3] scaled by ``shift`` (and, when ``rgba``, into out[:, 3]
    scaled by ``alpha_shift``)."""
    for i in range(out.shape[0]):
        total = 0
        for ch in range(3):
            x, y = np.int64(r0[i, rgb_ch[0, ch]]), np.int64(r1[i, rgb_ch[1, ch]])
            x = 255 - x if rgb_inv[0] else x
            y = 255 - y if rgb_inv[1] else y
            total += _div_trunc((2 * x - 255) * (2 * y - 255) + 128, 256)
        dot = min(max(total, 0), 255)
        v = min(dot << shift, 255)
        out[i, 0] = out[i, 1] = out[i, 2] = v
        if rgba:
            out[i, 3] = min(dot << alpha_shift, 255)


def slot_source(stage: TevStage, kind: str, slot: int) -> int | None:
    """The source code a slot of ``stage`` ("RGB" or "alpha") reads after the stage-0 rules (module docstring);
    None: it reads 0."""
    codes = stage.rgb_sources if kind == "RGB" else stage.alpha_sources
    code: int | None = codes[slot]
    if stage.index == 0 and kind == "RGB" and slot < 2 and code == SRC_PREVIOUS:
        code = codes[2] if codes[2] != SRC_PREVIOUS else None
    if stage.index == 0 and code == SRC_BUFFER:
        return None
    return code


def operand_sources(stage: TevStage) -> dict[str, tuple[int | None, int | None, int | None]]:
    """The source code each of the three operand slots of "RGB" and "alpha" reads (``slot_source``; None: 0);
    slots the op does not read repeat slot 0 (or "previous" when none is read), as the kernel reads all three."""
    out = {}
    for kind, n in (("RGB", stage.plan.rgb_slots), ("alpha", stage.plan.alpha_slots)):
        got = [slot_source(stage, kind, s) for s in range(n)]
        a, b, c = got + [got[0] if got else SRC_PREVIOUS] * (3 - len(got))
        out[kind] = (a, b, c)
    return out


def _resolve(
    stage: TevStage,
    code: int | None,
    inputs: Mapping[int, np.ndarray],
    previous: np.ndarray,
    buffer: np.ndarray,
    count: int,
) -> np.ndarray:
    """The (count, 4) uint8 array of source ``code`` (``slot_source``) for ``stage``."""
    if code is None:
        return np.zeros((count, 4), np.uint8)
    if code == SRC_PREVIOUS:
        return previous
    if code == SRC_BUFFER:
        return buffer
    if code == SRC_CONSTANT:
        return _filled(stage.constant, count)
    if code not in inputs:
        raise UnsupportedFeature(f"TEV stage {stage.index} reads source {TEV_SOURCES.get(code, code)}, not provided")
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
    stage: TevStage, inputs: Mapping[int, np.ndarray], previous: np.ndarray, buffer: np.ndarray, count: int
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The three (count, 4) uint8 arrays the kernel reads for "RGB" and for "alpha" (``operand_sources``)."""
    resolved: dict[int | None, np.ndarray] = {}
    arrays = {}
    for kind, codes in operand_sources(stage).items():
        for code in codes:
            if code not in resolved:
                resolved[code] = _resolve(stage, code, inputs, previous, buffer, count)
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


def run_stage(
    stage: TevStage,
    inputs: Mapping[int, np.ndarray],
    previous: np.ndarray,
    buffer: np.ndarray,
    count: int,
    arrays: Mapping[str, tuple[np.ndarray, ...]] | None = None,
) -> np.ndarray:
    """One stage over ``count`` fragments: (count, 4) uint8 (``arrays``: its ``_slot_arrays`` when already
    resolved)."""
    plan = stage.plan
    arrays = _slot_arrays(stage, inputs, previous, buffer, count) if arrays is None else arrays
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


def _observed_stage(
    stage: TevStage,
    inputs: Mapping[int, np.ndarray],
    previous: np.ndarray,
    buffer: np.ndarray,
    count: int,
    observer: StageObserver,
) -> np.ndarray:
    """``run_stage`` (or the pass-through) reporting the stage's operands, output and buffer to ``observer``."""
    arrays = _slot_arrays(stage, inputs, previous, buffer, count)
    out = previous if stage.passthrough else run_stage(stage, inputs, previous, buffer, count, arrays)
    observer.on_tev_stage(stage.index, *operand_values(stage, arrays), out, buffer)
    return out


def combine(
    tstate: TevState, inputs: Mapping[int, np.ndarray], count: int, observer: StageObserver | None = None
) -> np.ndarray:
    """Run all six stages for ``count`` fragments: (count, 4) uint8; an ``observer`` receives ``on_tev_stage``
    for each of the six stages (``picaemu.observer.StageObserver``)."""
    previous = np.zeros((count, 4), np.uint8)
    buffer_read = previous
    uses_buffer = SRC_BUFFER in tstate.sources_used()
    buffer_next = _filled(tstate.buffer_color, count) if uses_buffer else previous
    for stage in tstate.stages:
        if observer is not None:
            previous = _observed_stage(stage, inputs, previous, buffer_read, count, observer)
        elif not stage.passthrough:
            previous = run_stage(stage, inputs, previous, buffer_read, count)
        buffer_read = buffer_next
        if uses_buffer and stage.index < BUFFER_STAGES:
            rgb_up, alpha_up = tstate.rgb_update[stage.index], tstate.alpha_update[stage.index]
            if rgb_up or alpha_up:
                buffer_next = buffer_next.copy()
                if rgb_up:
                    buffer_next[:, :3] = previous[:, :3]
                if alpha_up:
                    buffer_next[:, 3] = previous[:, 3]
    return previous
