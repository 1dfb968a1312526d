"""The one rule table of the per-fragment operations (pica-pipeline.md §15), as data keyed by the register
table's enum codes (``picaemu.regs.blocks.fragops`` / ``framebuffer``): compare functions, stencil operations,
blend equations, blend factors and logic ops.

Everything that applies a rule reads it here: the compiled passes (``picaemu.fragment.kernels`` through the
per-draw arrays of ``picaemu.fragment.blend`` / ``picaemu.fragment.ops``), the vectorized alpha test, the scalar
reference (``picaemu.fragment.reference``, the test oracle) and the OpenGL backend's state mapping
(``picaemu.gl.fixed`` / ``picaemu.gl.rules``, by enum name).

- ``COMPARE[code]``: 3 bits, bit k set when ``a FUNC b`` holds for outcome k (0: a < b, 1: a == b, 2: a > b).
- ``STENCIL_OPS[code]``: ``StencilOp(base, step, wrap)``: new = base + step, then modulo 256 (wrap) or clamped to
  0..255; base is the old value, 0, the reference, or the old value inverted.
- ``EQUATIONS[code]``: an ``Equation`` (codes 5-7 add; min/max APPLY the factors on PICA).
- ``FACTORS[code]``: ``Factor(source, reads_alpha, inverted)``: the value a factor reads (zero, one = 255, the
  source, destination or constant color, or the saturate min(As, 255 - Ad), which is 255 for alpha), that color's
  alpha instead of the channel when ``reads_alpha``, and 255 - value when ``inverted``.
- ``LOGIC_OPS[code]``: the op's truth table, the result bit for the bit pairs (s, d) = (0, 0), (0, 1), (1, 0),
  (1, 1); every logic op is bitwise, so the table is the whole op.

The scalar functions below apply one rule to plain ints (the reference's building blocks).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple, TypeVar

import numpy as np

from picaemu.regs.blocks.fragops import BLEND_EQUATIONS, BLEND_FACTORS
from picaemu.regs.blocks.fragops import LOGIC_OPS as LOGIC_OP_NAMES
from picaemu.regs.blocks.framebuffer import COMPARE_FUNCS
from picaemu.regs.blocks.framebuffer import STENCIL_OPS as STENCIL_OP_NAMES

IntOrArray = TypeVar("IntOrArray", int, np.ndarray)
LESS, EQUAL, GREATER = 0, 1, 2  # outcome bits of a compare mask
_COMPARE_BY_NAME = {
    "never": 0b000,
    "always": 0b111,
    "equal": 0b010,
    "not equal": 0b101,
    "less": 0b001,
    "less or equal": 0b011,
    "greater": 0b100,
    "greater or equal": 0b110,
}
COMPARE: dict[int, int] = {code: _COMPARE_BY_NAME[name] for code, name in COMPARE_FUNCS.items()}


class StencilBase(IntEnum):
    OLD = 0
    ZERO = 1
    REF = 2
    INVERTED = 3  # ~old & 0xFF


class StencilOp(NamedTuple):
    base: StencilBase
    step: int  # -1, 0 or +1
    wrap: bool  # modulo 256 (else clamped to 0..255)


_STENCIL_BY_NAME = {
    "keep": StencilOp(StencilBase.OLD, 0, False),
    "zero": StencilOp(StencilBase.ZERO, 0, False),
    "replace": StencilOp(StencilBase.REF, 0, False),
    "increment saturate": StencilOp(StencilBase.OLD, 1, False),
    "decrement saturate": StencilOp(StencilBase.OLD, -1, False),
    "invert": StencilOp(StencilBase.INVERTED, 0, False),
    "increment wrap": StencilOp(StencilBase.OLD, 1, True),
    "decrement wrap": StencilOp(StencilBase.OLD, -1, True),
}
STENCIL_OPS: dict[int, StencilOp] = {code: _STENCIL_BY_NAME[name] for code, name in STENCIL_OP_NAMES.items()}


class Equation(IntEnum):
    ADD = 0
    SUBTRACT = 1  # S * Fs - D * Fd
    REVERSE_SUBTRACT = 2  # D * Fd - S * Fs
    MIN = 3
    MAX = 4


_EQUATION_BY_NAME = {
    "add": Equation.ADD,
    "subtract": Equation.SUBTRACT,
    "reverse subtract": Equation.REVERSE_SUBTRACT,
    "min": Equation.MIN,
    "max": Equation.MAX,
}
EQUATIONS: dict[int, Equation] = {
    code: _EQUATION_BY_NAME.get(name, Equation.ADD)  # "add (5)".."add (7)"
    for code, name in BLEND_EQUATIONS.items()
}


class Source(IntEnum):
    """What a blend factor reads (the numbering is the compiled passes' factor kind)."""

    ZERO = 0
    ONE = 1
    SRC = 2
    DST = 3
    CONST = 4
    SATURATE = 5  # min(As, 255 - Ad) for RGB, 255 for alpha


class Factor(NamedTuple):
    source: Source
    reads_alpha: bool
    inverted: bool


_FACTORS_BY_NAME = {
    "zero": Factor(Source.ZERO, False, False),
    "one": Factor(Source.ONE, False, False),
    "src color": Factor(Source.SRC, False, False),
    "one minus src color": Factor(Source.SRC, False, True),
    "dst color": Factor(Source.DST, False, False),
    "one minus dst color": Factor(Source.DST, False, True),
    "src alpha": Factor(Source.SRC, True, False),
    "one minus src alpha": Factor(Source.SRC, True, True),
    "dst alpha": Factor(Source.DST, True, False),
    "one minus dst alpha": Factor(Source.DST, True, True),
    "constant color": Factor(Source.CONST, False, False),
    "one minus constant color": Factor(Source.CONST, False, True),
    "constant alpha": Factor(Source.CONST, True, False),
    "one minus constant alpha": Factor(Source.CONST, True, True),
    "src alpha saturate": Factor(Source.SATURATE, False, False),
}
FACTORS: dict[int, Factor] = {code: _FACTORS_BY_NAME[name] for code, name in BLEND_FACTORS.items()}

_LOGIC_BY_NAME = {
    "clear": (0, 0, 0, 0),
    "and": (0, 0, 0, 1),
    "and reverse": (0, 0, 1, 0),
    "copy": (0, 0, 1, 1),
    "set": (1, 1, 1, 1),
    "copy inverted": (1, 1, 0, 0),
    "noop": (0, 1, 0, 1),
    "invert": (1, 0, 1, 0),
    "nand": (1, 1, 1, 0),
    "or": (0, 1, 1, 1),
    "nor": (1, 0, 0, 0),
    "xor": (0, 1, 1, 0),
    "equiv": (1, 0, 0, 1),
    "and inverted": (0, 1, 0, 0),
    "or reverse": (1, 0, 1, 1),
    "or inverted": (1, 1, 0, 1),
}
LOGIC_OPS: dict[int, tuple[int, int, int, int]] = {code: _LOGIC_BY_NAME[name] for code, name in LOGIC_OP_NAMES.items()}
LOGIC_COPY = next(code for code, name in LOGIC_OP_NAMES.items() if name == "copy")
ALPHA = 3  # channel index of alpha


# ---------------------------------------------------------------------------------------------- scalar rules
def compare(code: int, a: int, b: int) -> bool:
    """``a FUNC b`` for compare function ``code``."""
    outcome = LESS if a < b else (EQUAL if a == b else GREATER)
    return bool(COMPARE[code] >> outcome & 1)


def stencil_op(code: int, old: IntOrArray, ref: int) -> IntOrArray:
    """The stencil value stencil operation ``code`` makes of ``old`` (8 bits; an int, or an int array for the
    compiled passes' per-draw table) with reference ``ref``."""
    op = STENCIL_OPS[code]
    base = {
        StencilBase.OLD: old,
        StencilBase.ZERO: old * 0,
        StencilBase.REF: old * 0 + ref,
        StencilBase.INVERTED: ~old & 0xFF,
    }[op.base]
    value = base + op.step
    return value & 0xFF if op.wrap else np.clip(value, 0, 255)


def equation(code: int, x: int, y: int) -> int:
    """Blend equation ``code`` of the weighted source ``x`` = S * Fs and destination ``y`` = D * Fd."""
    eq = EQUATIONS[code]
    if eq is Equation.SUBTRACT:
        return x - y
    if eq is Equation.REVERSE_SUBTRACT:
        return y - x
    if eq is Equation.MIN:
        return min(x, y)
    if eq is Equation.MAX:
        return max(x, y)
    return x + y


def factor(code: int, channel: int, src: tuple[int, ...], dst: tuple[int, ...], const: tuple[int, ...]) -> int:
    """Blend factor ``code`` (0..255) for ``channel`` (0-3, 3 = alpha) of 8-bit RGBA colors."""
    fac = FACTORS[code]
    ch = ALPHA if fac.reads_alpha else channel
    saturate = 255 if channel == ALPHA else min(src[ALPHA], 255 - dst[ALPHA])
    value = {
        Source.ZERO: 0,
        Source.ONE: 255,
        Source.SRC: src[ch],
        Source.DST: dst[ch],
        Source.CONST: const[ch],
        Source.SATURATE: saturate,
    }[fac.source]
    return 255 - value if fac.inverted else value


def logic_op(code: int, s: int, d: int) -> int:
    """Logic op ``code`` on two 8-bit values, bit by bit from its truth table."""
    table = LOGIC_OPS[code]
    out = 0
    for bit in range(8):
        out |= table[(s >> bit & 1) << 1 | (d >> bit & 1)] << bit
    return out
