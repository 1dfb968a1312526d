"""The color half of the per-fragment operations: alpha test, blending and logic op (registers 0x100-0x104).

Receives a ``BlendState`` (decoded once per draw) and uint8 colors; the rules themselves (compare functions,
equations, factors, logic ops) are the data of ``picaemu.fragment.rules``. ``alpha_test(bstate, color (F, 4)) ->
(F,) bool`` passes where ``alpha FUNC ref`` (vectorized over the rule's compare mask).

``blend_program(bstate) -> BlendProgram``: the draw's blend or logic op as arrays for the compiled per-fragment
passes (``picaemu.fragment.kernels``): per channel ``eq(S * Fs, D * Fd) / 255`` clamped to 0..255 (integer
division truncating; min/max APPLY the factors on PICA), or the 4-bit logic op on all four channels
(``logic_pixel``). ``factor_rows(program) -> (4, 7) int64`` folds a program's per-draw constants for
``blend_channel``, the one compiled blend, one channel at a time from scalars (every color pass calls it; in
32-bit selects, so that a loop over fragments vectorises).
Fragment modes other than "default" (gas accumulation, shadow rendering) are not handled here (the caller checks
``bstate.fragment_mode``); an undefined blend factor (15) raises ``UnsupportedFeature``. The readable scalar form
of all of this is ``picaemu.fragment.reference``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum

import numba
import numpy as np

from picaemu import numba_link
from picaemu.errors import UnsupportedFeature
from picaemu.fragment import rules
from picaemu.fragment.rules import ALPHA, Equation, Source
from picaemu.regs import access, id_of
from picaemu.regs.blocks.fragops import BLEND_FACTORS, FRAGMENT_MODES

EQ_SUBTRACT, EQ_REVERSE_SUBTRACT = int(Equation.SUBTRACT), int(Equation.REVERSE_SUBTRACT)
EQ_MIN, EQ_MAX = int(Equation.MIN), int(Equation.MAX)  # every other equation adds
ZERO, ONE, SRC, DST, CONST, SATURATE = (int(s) for s in Source)
# a logic op's truth table widened to 8-bit channels (each entry 0 or 0xFF), for ``logic_pixel``
LOGIC_TABLES = {code: np.array(table, np.int64) * 0xFF for code, table in rules.LOGIC_OPS.items()}


@numba.njit(cache=True, inline="always")
def logic_pixel(s: int, d: int, table) -> int:  # pragma: no cover - compiled
    """One 8-bit channel of a logic op given by its truth table (``LOGIC_TABLES`` row: results for the bit pairs
    (s, d) = (0, 0), (0, 1), (1, 0), (1, 1), each 0 or 0xFF)."""
    ns, nd = ~s & 0xFF, ~d & 0xFF
    return (table[0] & ns & nd) | (table[1] & ns & d) | (table[2] & s & nd) | (table[3] & s & d)


@dataclass(frozen=True)
class BlendState:
    """Alpha test, blend and logic-op configuration of one draw."""

    fragment_mode: str
    blending: bool
    rgb_equation: int
    alpha_equation: int
    rgb_src: int
    rgb_dst: int
    alpha_src: int
    alpha_dst: int
    constant: tuple[int, int, int, int]
    logic_op: int
    alpha_test: bool
    alpha_func: int
    alpha_ref: int

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> BlendState:
        mode = access.raw(regs, "COLOR_OPERATION", "fragment_mode")
        if mode not in FRAGMENT_MODES:
            reg_id = id_of("COLOR_OPERATION")
            raise UnsupportedFeature(f"undefined fragment mode {mode}", register=reg_id, value=int(regs[reg_id]))
        bf = {
            name: access.raw(regs, "BLEND_FUNC", name)
            for name in ("rgb_equation", "alpha_equation", "rgb_src", "rgb_dst", "alpha_src", "alpha_dst")
        }
        blending = bool(access.raw(regs, "COLOR_OPERATION", "blend_mode"))
        if blending:
            for name in ("rgb_src", "rgb_dst", "alpha_src", "alpha_dst"):
                if bf[name] not in BLEND_FACTORS:
                    reg_id = id_of("BLEND_FUNC")
                    raise UnsupportedFeature(
                        f"undefined blend factor {bf[name]} ({name})", register=reg_id, value=int(regs[reg_id])
                    )
        return cls(
            fragment_mode=FRAGMENT_MODES[mode],
            blending=blending,
            **bf,
            constant=access.rgba(regs, "BLEND_COLOR"),
            logic_op=access.raw(regs, "LOGIC_OP", "op"),
            alpha_test=bool(access.raw(regs, "FRAGOP_ALPHA_TEST", "enable")),
            alpha_func=access.raw(regs, "FRAGOP_ALPHA_TEST", "func"),
            alpha_ref=access.raw(regs, "FRAGOP_ALPHA_TEST", "ref"),
        )


def alpha_test(bstate: BlendState, color: np.ndarray) -> np.ndarray:
    """(F,) bool: fragments that pass the alpha test (all of them when it is off)."""
    if not bstate.alpha_test:
        return np.ones(color.shape[0], bool)
    return alpha_pass_table(bstate)[color[:, ALPHA]]


def alpha_pass_table(bstate: BlendState) -> np.ndarray:
    """(256,) bool, read-only: whether each alpha value passes the alpha test (all True when it is off)."""
    return _alpha_passes(bstate.alpha_func, bstate.alpha_ref) if bstate.alpha_test else _ALL_PASS


_ALL_PASS = np.ones(256, bool)
_ALL_PASS.flags.writeable = False


@functools.lru_cache(maxsize=64)
def _alpha_passes(func: int, ref: int) -> np.ndarray:
    """(256,) bool: whether each alpha value passes ``alpha FUNC ref`` (one gather per draw instead of a compare)."""
    alpha = np.arange(256)
    outcome = (alpha >= ref).astype(np.int64) + (alpha > ref)  # rules.LESS / EQUAL / GREATER
    table = (rules.COMPARE[func] >> outcome & 1).astype(bool)
    table.flags.writeable = False
    return table


def _factor_arrays(bstate: BlendState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    kinds, chans, inverts = np.zeros((2, 4), np.int64), np.zeros((2, 4), np.int64), np.zeros((2, 4), np.bool_)
    for side, (rgb_code, alpha_code) in enumerate(
        ((bstate.rgb_src, bstate.alpha_src), (bstate.rgb_dst, bstate.alpha_dst))
    ):
        for ch in range(4):
            kind, reads_alpha, invert = rules.FACTORS[alpha_code if ch == ALPHA else rgb_code]
            kinds[side, ch], chans[side, ch], inverts[side, ch] = kind, ALPHA if reads_alpha else ch, invert
    return kinds, chans, inverts


class BlendMode(IntEnum):
    """What ``BlendProgram`` does with the source and destination colors."""

    REPLACE = 0  # the source replaces the destination (no blending, no logic op)
    BLEND = 1  # ``blend_channel`` per channel
    LOGIC = 2  # ``logic_pixel``


@dataclass(frozen=True, eq=False)
class BlendProgram:
    """The color half of the per-fragment operations as arrays for compiled per-fragment code
    (``picaemu.fragment.ops``): the same results as ``blend`` (mode BLEND / LOGIC) or the plain source (REPLACE)."""

    mode: BlendMode
    eqs: np.ndarray  # (4,) int64 ``rules.Equation`` per channel
    kinds: np.ndarray  # (2, 4) int64 factor kind, src/dst side x channel
    chans: np.ndarray  # (2, 4) int64 channel each factor reads
    inverts: np.ndarray  # (2, 4) bool
    constant: np.ndarray  # (4,) uint8 blend color
    logic: np.ndarray  # (4,) int64 logic-op truth table (``LOGIC_TABLES``)

    @classmethod
    def build(cls, mode: BlendMode, bstate: BlendState | None = None) -> BlendProgram:
        """The program of ``bstate`` (mode BLEND or LOGIC), or the REPLACE program (``bstate`` None); ValueError for
        BLEND or LOGIC without a ``bstate``."""
        if bstate is None and mode is not BlendMode.REPLACE:
            raise ValueError(f"a {mode.name} blend program needs the BlendState")
        kinds, chans, inverts = (
            _factor_arrays(bstate)
            if bstate is not None and mode is BlendMode.BLEND
            else (np.zeros((2, 4), np.int64), np.zeros((2, 4), np.int64), np.zeros((2, 4), np.bool_))
        )
        codes = [bstate.rgb_equation] * 3 + [bstate.alpha_equation] if bstate is not None else [0] * 4
        eqs = [rules.EQUATIONS[code] for code in codes]
        logic = (
            LOGIC_TABLES[bstate.logic_op] if bstate is not None and mode is BlendMode.LOGIC else np.zeros(4, np.int64)
        )
        constant = bstate.constant if bstate is not None else (0, 0, 0, 0)
        return cls(mode, np.array(eqs, np.int64), kinds, chans, inverts, np.array(constant, np.uint8), logic)


def blend_program(bstate: BlendState) -> BlendProgram:
    """``blend(bstate, ...)`` as a ``BlendProgram``: blending when enabled, else the logic op."""
    return BlendProgram.build(BlendMode.BLEND if bstate.blending else BlendMode.LOGIC, bstate)


# factor selectors of ``factor_rows`` / ``blend_channel``: a per-draw constant, or a value of the fragment
SEL_CONST, SEL_SRC, SEL_SRC_ALPHA, SEL_DST, SEL_DST_ALPHA, SEL_SATURATE = range(6)


def factor_rows(program: BlendProgram) -> np.ndarray:
    """(4, 7) int64, one row per channel (eq, sel0, inv0, value0, sel1, inv1, value1) for ``blend_channel``: the
    ``BlendProgram`` with every per-draw-constant factor (zero, one, constant color/alpha, the saturate of alpha)
    folded into ``value`` (inverted already, ``sel`` SEL_CONST), the others as a ``SEL_*`` of the fragment's values."""
    rows = np.zeros((4, 7), np.int64)
    for ch in range(4):
        rows[ch, 0] = program.eqs[ch]
        for side in range(2):
            kind, chan = int(program.kinds[side, ch]), int(program.chans[side, ch])
            inv = bool(program.inverts[side, ch])
            if chan not in (ch, ALPHA):
                raise ValueError(f"factor of channel {ch} reads channel {chan}")
            alpha = chan == ALPHA
            value, sel = 0, SEL_CONST
            if kind in (ZERO, ONE, CONST) or (kind == SATURATE and ch == ALPHA):
                value = {ZERO: 0, ONE: 255, CONST: int(program.constant[chan]), SATURATE: 255}[kind]
                value, inv = (255 - value if inv else value), False
            else:
                sel = {
                    SRC: SEL_SRC_ALPHA if alpha else SEL_SRC,
                    DST: SEL_DST_ALPHA if alpha else SEL_DST,
                    SATURATE: SEL_SATURATE,
                }[kind]
            rows[ch, 1 + 3 * side : 4 + 3 * side] = sel, int(inv), value
    return rows


@numba_link.compiled_only()
def blend_factor(
    sel: int, flip: int, value: int, s: int, sa: int, d: int, da: int, sat: int
) -> np.int32:  # pragma: no cover
    """A ``factor_rows`` factor of one fragment, ``flip`` 255 when inverted, else 0: selects, not branches (a draw's
    selectors are the same for every fragment, so a loop over fragments runs them side by side in vector lanes);
    255 - v as v ^ 255 (0 <= v <= 255)."""
    v = value
    v = s if sel == SEL_SRC else v
    v = sa if sel == SEL_SRC_ALPHA else v
    v = d if sel == SEL_DST else v
    v = da if sel == SEL_DST_ALPHA else v
    v = sat if sel == SEL_SATURATE else v
    return np.int32(v ^ flip)


@numba.njit(cache=True)
def div255(v: int) -> np.int32:  # pragma: no cover - compiled
    """v // 255 for 0 <= v <= 255 * 255 in 32-bit lanes (no division; ``tests/test_blend.py`` checks every v)."""
    return np.int32((v + 1 + (v >> 8)) >> 8)


@numba_link.compiled_only()
def blend_channel(row, s, sa, d, da, sat) -> np.int32:  # pragma: no cover - compiled
    """One channel of ``blend_pixel`` from scalars: ``row`` a ``factor_rows`` row (as a tuple), ``s``/``d`` the
    channel's source / destination value, ``sa``/``da`` the alphas, ``sat`` = min(sa, 255 - da). Every value in
    32 bits (S * F <= 255 * 255) and every choice a select, so that ``kernels.blend_words``' loop over fragments
    vectorises; the equation's result clamped to 0..255 * 255 before the division is the quotient's clamp to 0..255
    (65025 // 255 = 255)."""
    s, sa, d, da, sat = np.int32(s), np.int32(sa), np.int32(d), np.int32(da), np.int32(sat)
    x = np.int32(s * blend_factor(row[1], np.int32(255 * row[2]), np.int32(row[3]), s, sa, d, da, sat))
    y = np.int32(d * blend_factor(row[4], np.int32(255 * row[5]), np.int32(row[6]), s, sa, d, da, sat))
    eq = row[0]
    v = np.int32(x + y)  # every other equation adds
    v = np.int32(x - y) if eq == EQ_SUBTRACT else v
    v = np.int32(y - x) if eq == EQ_REVERSE_SUBTRACT else v
    v = min(x, y) if eq == EQ_MIN else v
    v = max(x, y) if eq == EQ_MAX else v
    return div255(np.int32(min(max(v, np.int32(0)), np.int32(255 * 255))))
