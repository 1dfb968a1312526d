"""The color half of the per-fragment operations: alpha test, blending and logic op (registers 0x100-0x104).

Receives a ``BlendState`` (decoded once per draw) and uint8 colors. ``alpha_test(bstate, color (F, 4)) -> (F,)
bool`` passes where ``alpha FUNC ref``. ``blend(bstate, src (F, 4), dst (F, 4)) -> (F, 4) uint8``: with
COLOR_OPERATION.blend_mode = blending, per channel ``eq(S * Fs, D * Fd) / 255`` clamped to 0..255 with equations
add, subtract (S - D), reverse subtract, min, max (min/max APPLY the factors on PICA; codes 5-7 act as add) and
integer division truncating; otherwise the 4-bit logic op on all four channels. A "color" factor used for alpha
gives that color's alpha; "src alpha saturate" is min(As, 255 - Ad) for RGB and 255 for alpha. The destination is
the framebuffer color already expanded to RGBA8 by the caller. Depth/stencil and write masks are not here.
Fragment modes other than "default" (gas accumulation, shadow rendering) are not handled here (the caller checks
``bstate.fragment_mode``); an undefined blend factor (15) raises ``UnsupportedFeature``.

``blend_program(bstate) -> BlendProgram``: the same operation as arrays for compiled per-fragment code, which calls
the numba functions ``blend_pixel`` / ``logic_pixel`` (the vectorized ``blend`` uses the first too).
``factor_rows(program) -> (4, 7) int64`` folds a program's per-draw constants for ``blend_channel``, the same
blend as ``blend_pixel`` one channel at a time from scalars (``fragment_kernels.blend_words``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numba
import numpy as np

from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.regs.blocks.fragops import BLEND_EQUATIONS, BLEND_FACTORS, COMPARE_FUNCS, FRAGMENT_MODES
from picaemu.regs.blocks.fragops import LOGIC_OPS as LOGIC_OP_NAMES

Arr = np.ndarray
# compare function code -> predicate (shared meaning with stencil/depth)
_COMPARE_BY_NAME: dict[str, Callable[[Arr, int], Arr]] = {
    "never": lambda a, r: np.zeros(a.shape, bool),
    "always": lambda a, r: np.ones(a.shape, bool),
    "equal": lambda a, r: a == r,
    "not equal": lambda a, r: a != r,
    "less": lambda a, r: a < r,
    "less or equal": lambda a, r: a <= r,
    "greater": lambda a, r: a > r,
    "greater or equal": lambda a, r: a >= r,
}
COMPARE = {code: _COMPARE_BY_NAME[name] for code, name in COMPARE_FUNCS.items()}
_EQ = {name: code for code, name in BLEND_EQUATIONS.items()}
EQ_SUBTRACT, EQ_REVERSE_SUBTRACT, EQ_MIN, EQ_MAX = _EQ["subtract"], _EQ["reverse subtract"], _EQ["min"], _EQ["max"]
# every other equation code adds
ALPHA = 3
ZERO, ONE, SRC, DST, CONST, SATURATE = range(6)
# factor code -> (what it reads, reads that color's alpha instead of the channel, inverted: 255 - value)
_FACTORS_BY_NAME: dict[str, tuple[int, bool, bool]] = {
    "zero": (ZERO, False, False), "one": (ONE, False, False),
    "src color": (SRC, False, False), "one minus src color": (SRC, False, True),
    "dst color": (DST, False, False), "one minus dst color": (DST, False, True),
    "src alpha": (SRC, True, False), "one minus src alpha": (SRC, True, True),
    "dst alpha": (DST, True, False), "one minus dst alpha": (DST, True, True),
    "constant color": (CONST, False, False), "one minus constant color": (CONST, False, True),
    "constant alpha": (CONST, True, False), "one minus constant alpha": (CONST, True, True),
    "src alpha saturate": (SATURATE, False, False),  # min(As, 255 - Ad) for RGB, 255 for alpha
}
FACTOR_TABLE = {code: _FACTORS_BY_NAME[name] for code, name in BLEND_FACTORS.items()}


@numba.njit(cache=True)
def _pick(kind: int, src: int, dst: int, const: int, saturate: int) -> int:
    """The value a factor of ``kind`` reads (scalars only: array arguments would cost a refcount per call)."""
    if kind == ZERO:
        return 0
    if kind == ONE:
        return 255
    if kind == SRC:
        return src
    if kind == DST:
        return dst
    if kind == CONST:
        return const
    return saturate


@numba.njit(cache=True)
def _equation(eq: int, x: int, y: int) -> int:
    if eq == EQ_SUBTRACT:
        return x - y
    if eq == EQ_REVERSE_SUBTRACT:
        return y - x
    if eq == EQ_MIN:
        return min(x, y)
    if eq == EQ_MAX:
        return max(x, y)
    return x + y


@numba.njit(cache=True, inline="always")
def blend_pixel(s, si, d, di, c, eqs, kinds, chans, inverts, out, oi) -> None:  # pragma: no cover - compiled
    """Blend row ``si`` of src ``s`` with row ``di`` of dst ``d`` into row ``oi`` of ``out`` (all (N, 4) uint8).
    kinds/chans/inverts: (2 = src/dst side, 4 channels) from FACTOR_TABLE; eqs (4,) per channel; c (4,) constant.
    out = clamp(eq(S * Fs, D * Fd) // 255, 0, 255)."""
    sa, da = np.int64(s[si, ALPHA]), np.int64(d[di, ALPHA])
    for ch in range(4):
        saturate = 255 if ch == ALPHA else min(sa, 255 - da)
        k0, k1 = chans[0, ch], chans[1, ch]
        f0 = _pick(kinds[0, ch], np.int64(s[si, k0]), np.int64(d[di, k0]), np.int64(c[k0]), saturate)
        f1 = _pick(kinds[1, ch], np.int64(s[si, k1]), np.int64(d[di, k1]), np.int64(c[k1]), saturate)
        f0 = 255 - f0 if inverts[0, ch] else f0
        f1 = 255 - f1 if inverts[1, ch] else f1
        v = _equation(eqs[ch], np.int64(s[si, ch]) * f0, np.int64(d[di, ch]) * f1)
        out[oi, ch] = min(max(v // 255, 0), 255)


@numba.njit(cache=True, error_model="numpy")  # its only divisor (255) is a constant
def _blend_kernel(s, d, c, eqs, kinds, chans, inverts, out) -> None:  # pragma: no cover - compiled
    """``blend_pixel`` over every row."""
    for i in range(s.shape[0]):
        blend_pixel(s, i, d, i, c, eqs, kinds, chans, inverts, out, i)


@numba.njit(cache=True, inline="always")
def logic_pixel(s: int, d: int, table) -> int:  # pragma: no cover - compiled
    """One 8-bit channel of a logic op given by its truth table (``LOGIC_TABLES`` row: results for the bit pairs
    (s, d) = (0, 0), (0, 1), (1, 0), (1, 1), each 0 or 0xFF)."""
    ns, nd = ~s & 0xFF, ~d & 0xFF
    return (table[0] & ns & nd) | (table[1] & ns & d) | (table[2] & s & nd) | (table[3] & s & d)


_LOGIC_BY_NAME: dict[str, Callable[[Arr, Arr], Arr]] = {
    "clear": lambda s, d: np.zeros_like(s),
    "and": lambda s, d: s & d,
    "and reverse": lambda s, d: s & ~d,
    "copy": lambda s, d: s,
    "set": lambda s, d: np.full_like(s, 255),
    "copy inverted": lambda s, d: ~s,
    "noop": lambda s, d: d,
    "invert": lambda s, d: ~d,
    "nand": lambda s, d: ~(s & d),
    "or": lambda s, d: s | d,
    "nor": lambda s, d: ~(s | d),
    "xor": lambda s, d: s ^ d,
    "equiv": lambda s, d: ~(s ^ d),
    "and inverted": lambda s, d: ~s & d,
    "or reverse": lambda s, d: s | ~d,
    "or inverted": lambda s, d: ~s | d,
}
LOGIC_OPS = {code: _LOGIC_BY_NAME[name] for code, name in LOGIC_OP_NAMES.items()}
# every logic op is bitwise: its truth table is its result on the four bit pairs (s, d) (see ``logic_pixel``)
_BIT_PAIRS = (np.array([0, 0, 255, 255], np.uint8), np.array([0, 255, 0, 255], np.uint8))
LOGIC_TABLES = {code: np.asarray(op(*_BIT_PAIRS), np.uint8).astype(np.int64) for code, op in LOGIC_OPS.items()}


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
        bf = {name: access.raw(regs, "BLEND_FUNC", name)
              for name in ("rgb_equation", "alpha_equation", "rgb_src", "rgb_dst", "alpha_src", "alpha_dst")}
        blending = bool(access.raw(regs, "COLOR_OPERATION", "blend_mode"))
        if blending:
            for name in ("rgb_src", "rgb_dst", "alpha_src", "alpha_dst"):
                if bf[name] not in BLEND_FACTORS:
                    reg_id = id_of("BLEND_FUNC")
                    raise UnsupportedFeature(f"undefined blend factor {bf[name]} ({name})",
                                             register=reg_id, value=int(regs[reg_id]))
        return cls(
            fragment_mode=FRAGMENT_MODES[mode],
            blending=blending,
            **bf,
            constant=tuple(access.raw(regs, "BLEND_COLOR", ch) for ch in "rgba"),
            logic_op=access.raw(regs, "LOGIC_OP", "op"),
            alpha_test=bool(access.raw(regs, "FRAGOP_ALPHA_TEST", "enable")),
            alpha_func=access.raw(regs, "FRAGOP_ALPHA_TEST", "func"),
            alpha_ref=access.raw(regs, "FRAGOP_ALPHA_TEST", "ref"),
        )


def alpha_test(bstate: BlendState, color: np.ndarray) -> np.ndarray:
    """(F,) bool: fragments that pass the alpha test (all of them when it is off)."""
    if not bstate.alpha_test:
        return np.ones(color.shape[0], bool)
    return COMPARE[bstate.alpha_func](color[:, 3], bstate.alpha_ref)


def _factor_arrays(bstate: BlendState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    kinds, chans, inverts = np.zeros((2, 4), np.int64), np.zeros((2, 4), np.int64), np.zeros((2, 4), np.bool_)
    for side, (rgb_code, alpha_code) in enumerate(((bstate.rgb_src, bstate.alpha_src),
                                                    (bstate.rgb_dst, bstate.alpha_dst))):
        for ch in range(4):
            kind, reads_alpha, invert = FACTOR_TABLE[alpha_code if ch == ALPHA else rgb_code]
            kinds[side, ch], chans[side, ch], inverts[side, ch] = kind, ALPHA if reads_alpha else ch, invert
    return kinds, chans, inverts


class BlendMode(IntEnum):
    """What ``BlendProgram`` does with the source and destination colors."""

    REPLACE = 0  # the source replaces the destination (no blending, no logic op)
    BLEND = 1  # ``blend_pixel``
    LOGIC = 2  # ``logic_pixel``


@dataclass(frozen=True, eq=False)
class BlendProgram:
    """The color half of the per-fragment operations as arrays for compiled per-fragment code
    (``picaemu.fragment.ops``): the same results as ``blend`` (mode BLEND / LOGIC) or the plain source (REPLACE)."""

    mode: BlendMode
    eqs: np.ndarray  # (4,) int64 equation per channel
    kinds: np.ndarray  # (2, 4) int64 factor kind, src/dst side x channel
    chans: np.ndarray  # (2, 4) int64 channel each factor reads
    inverts: np.ndarray  # (2, 4) bool
    constant: np.ndarray  # (4,) uint8 blend color
    logic: np.ndarray  # (4,) int64 logic-op truth table (``LOGIC_TABLES``)

    @classmethod
    def build(cls, mode: BlendMode, bstate: BlendState | None = None) -> BlendProgram:
        """The program of ``bstate`` (mode BLEND or LOGIC), or the REPLACE program (``bstate`` None)."""
        kinds, chans, inverts = _factor_arrays(bstate) if mode is BlendMode.BLEND else (
            np.zeros((2, 4), np.int64), np.zeros((2, 4), np.int64), np.zeros((2, 4), np.bool_))
        eqs = [bstate.rgb_equation] * 3 + [bstate.alpha_equation] if bstate is not None else [0] * 4
        logic = LOGIC_TABLES[bstate.logic_op] if mode is BlendMode.LOGIC else np.zeros(4, np.int64)
        constant = bstate.constant if bstate is not None else (0, 0, 0, 0)
        return cls(mode, np.array(eqs, np.int64), kinds, chans, inverts, np.array(constant, np.uint8), logic)


def blend_program(bstate: BlendState) -> BlendProgram:
    """``blend(bstate, ...)`` as a ``BlendProgram``: blending when enabled, else the logic op."""
    return BlendProgram.build(BlendMode.BLEND if bstate.blending else BlendMode.LOGIC, bstate)


def blend_colors(bstate: BlendState, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Blending proper: (F, 4) uint8."""
    out = np.empty(src.shape, np.uint8)
    eqs = np.array([bstate.rgb_equation] * 3 + [bstate.alpha_equation], np.int64)
    _blend_kernel(np.ascontiguousarray(src, np.uint8), np.ascontiguousarray(dst, np.uint8),
                  np.array(bstate.constant, np.uint8), eqs, *_factor_arrays(bstate), out)
    return out


def blend(bstate: BlendState, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """(F, 4) uint8: blending when enabled, else the logic op."""
    if bstate.blending:
        return blend_colors(bstate, src, dst)
    return LOGIC_OPS[bstate.logic_op](src.astype(np.uint8), dst.astype(np.uint8)).astype(np.uint8)


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
                sel = {SRC: SEL_SRC_ALPHA if alpha else SEL_SRC, DST: SEL_DST_ALPHA if alpha else SEL_DST,
                       SATURATE: SEL_SATURATE}[kind]
            rows[ch, 1 + 3 * side: 4 + 3 * side] = sel, int(inv), value
    return rows


@numba.njit(cache=True)
def _select(sel: int, inv: int, value: int, s: int, sa: int, d: int, da: int, sat: int) -> int:
    if sel == SEL_CONST:
        return value
    v = s if sel == SEL_SRC else (sa if sel == SEL_SRC_ALPHA else (d if sel == SEL_DST else (
        da if sel == SEL_DST_ALPHA else sat)))
    return 255 - v if inv else v


@numba.njit(cache=True)
def blend_channel(row, s: int, sa: int, d: int, da: int, sat: int) -> int:  # pragma: no cover - compiled
    """One channel of ``blend_pixel`` from scalars: ``row`` a ``factor_rows`` row (as a tuple), ``s``/``d`` the
    channel's source / destination value, ``sa``/``da`` the alphas, ``sat`` = min(sa, 255 - da)."""
    f0 = _select(row[1], row[2], row[3], s, sa, d, da, sat)
    f1 = _select(row[4], row[5], row[6], s, sa, d, da, sat)
    v = _equation(row[0], s * f0, d * f1)
    return min(np.int64(np.uint64(max(v, 0)) // np.uint64(255)), 255)  # = min(max(v // 255, 0), 255), faster
