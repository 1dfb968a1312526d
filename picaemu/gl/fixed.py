"""PICA per-fragment operations as OpenGL fixed-function state: stencil test and ops, depth test, depth/stencil
and color write masks, blending and logic op (registers 0x100-0x107 and the buffer access enables 0x112-0x115).

The tables map the rule table's entries (``picaemu.fragment.rules``: equations, logic-op truth tables) and the
register table's enum names (compare functions, stencil ops, factors) to GL enums. ``apply(ds, fb,
depth_used)`` sets the state for one draw, skipping calls whose state is the one already set (``FixedState``
remembers it). Which PICA rules GL cannot reproduce (and so send a draw to the software pipeline) is decided in
``picaemu.gl.rules``, not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from OpenGL import GL as gl

from picaemu.draw_state import DrawState
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import rules
from picaemu.fragment.rules import Equation
from picaemu.regs.blocks.fragops import BLEND_FACTORS
from picaemu.regs.blocks.framebuffer import COMPARE_FUNCS
from picaemu.regs.blocks.framebuffer import STENCIL_OPS as STENCIL_OP_NAMES

_COMPARE_BY_NAME = {
    "never": gl.GL_NEVER,
    "always": gl.GL_ALWAYS,
    "equal": gl.GL_EQUAL,
    "not equal": gl.GL_NOTEQUAL,
    "less": gl.GL_LESS,
    "less or equal": gl.GL_LEQUAL,
    "greater": gl.GL_GREATER,
    "greater or equal": gl.GL_GEQUAL,
}
COMPARE = {code: _COMPARE_BY_NAME[name] for code, name in COMPARE_FUNCS.items()}
_STENCIL_BY_NAME = {
    "keep": gl.GL_KEEP,
    "zero": gl.GL_ZERO,
    "replace": gl.GL_REPLACE,
    "increment saturate": gl.GL_INCR,
    "decrement saturate": gl.GL_DECR,
    "invert": gl.GL_INVERT,
    "increment wrap": gl.GL_INCR_WRAP,
    "decrement wrap": gl.GL_DECR_WRAP,
}
STENCIL_OPS = {code: _STENCIL_BY_NAME[name] for code, name in STENCIL_OP_NAMES.items()}
_GL_EQUATIONS = {
    Equation.ADD: gl.GL_FUNC_ADD,
    Equation.SUBTRACT: gl.GL_FUNC_SUBTRACT,
    Equation.REVERSE_SUBTRACT: gl.GL_FUNC_REVERSE_SUBTRACT,
    Equation.MIN: gl.GL_MIN,
    Equation.MAX: gl.GL_MAX,
}
EQUATIONS = {code: _GL_EQUATIONS[eq] for code, eq in rules.EQUATIONS.items()}
_FACTOR_BY_NAME = {
    "zero": gl.GL_ZERO,
    "one": gl.GL_ONE,
    "src color": gl.GL_SRC_COLOR,
    "one minus src color": gl.GL_ONE_MINUS_SRC_COLOR,
    "dst color": gl.GL_DST_COLOR,
    "one minus dst color": gl.GL_ONE_MINUS_DST_COLOR,
    "src alpha": gl.GL_SRC_ALPHA,
    "one minus src alpha": gl.GL_ONE_MINUS_SRC_ALPHA,
    "dst alpha": gl.GL_DST_ALPHA,
    "one minus dst alpha": gl.GL_ONE_MINUS_DST_ALPHA,
    "constant color": gl.GL_CONSTANT_COLOR,
    "one minus constant color": gl.GL_ONE_MINUS_CONSTANT_COLOR,
    "constant alpha": gl.GL_CONSTANT_ALPHA,
    "one minus constant alpha": gl.GL_ONE_MINUS_CONSTANT_ALPHA,
    "src alpha saturate": gl.GL_SRC_ALPHA_SATURATE,
}
FACTORS = {code: _FACTOR_BY_NAME[name] for code, name in BLEND_FACTORS.items()}
# GL's logic ops by truth table (result bits for (s, d) = (0, 0), (0, 1), (1, 0), (1, 1), as ``rules.LOGIC_OPS``)
_GL_LOGIC = {
    (0, 0, 0, 0): gl.GL_CLEAR,
    (0, 0, 0, 1): gl.GL_AND,
    (0, 0, 1, 0): gl.GL_AND_REVERSE,
    (0, 0, 1, 1): gl.GL_COPY,
    (1, 1, 1, 1): gl.GL_SET,
    (1, 1, 0, 0): gl.GL_COPY_INVERTED,
    (0, 1, 0, 1): gl.GL_NOOP,
    (1, 0, 1, 0): gl.GL_INVERT,
    (1, 1, 1, 0): gl.GL_NAND,
    (0, 1, 1, 1): gl.GL_OR,
    (1, 0, 0, 0): gl.GL_NOR,
    (0, 1, 1, 0): gl.GL_XOR,
    (1, 0, 0, 1): gl.GL_EQUIV,
    (0, 1, 0, 0): gl.GL_AND_INVERTED,
    (1, 0, 1, 1): gl.GL_OR_REVERSE,
    (1, 1, 0, 1): gl.GL_OR_INVERTED,
}
LOGIC = {code: _GL_LOGIC[table] for code, table in rules.LOGIC_OPS.items()}
LOGIC_COPY = rules.LOGIC_COPY


@dataclass(frozen=True)
class FixedState:
    """The GL calls of one draw's fragment operations, as data (compared with the previous draw's)."""

    stencil: tuple | None  # (func, ref, mask, fail, zfail, zpass, write mask)
    depth: tuple | None  # (func, write)
    color_mask: tuple[bool, bool, bool, bool]
    blend: tuple | None  # (rgb eq, alpha eq, rgb src, rgb dst, alpha src, alpha dst, constant)
    logic: int | None

    @classmethod
    def of(cls, ds: DrawState, depth_used: bool) -> FixedState:
        fb, d, b = ds.framebuffer, ds.depth_stencil, ds.blend
        stencil = None
        if depth_used and d.stencil_active(fb.depth_format):
            stencil = (
                COMPARE[d.stencil_func],
                d.stencil_ref,
                d.stencil_input_mask,
                STENCIL_OPS[d.op_fail],
                STENCIL_OPS[d.op_depth_fail],
                STENCIL_OPS[d.op_depth_pass],
                d.stencil_write_mask if fb.stencil_write else 0,
            )
        depth = None
        if depth_used:
            depth = (COMPARE[d.depth_func] if d.depth_test else gl.GL_ALWAYS, d.depth_write and fb.depth_write)
        has_alpha = any(ch == 3 for ch, _, _ in fbm.COLOR_LAYOUTS[fb.color_format])
        mask = tuple(m and fb.color_write for m in d.color_mask)
        mask = (mask[0], mask[1], mask[2], mask[3] and has_alpha)
        blend = logic = None
        if b.blending:
            blend = (
                EQUATIONS[b.rgb_equation],
                EQUATIONS[b.alpha_equation],
                FACTORS[b.rgb_src],
                FACTORS[b.rgb_dst],
                FACTORS[b.alpha_src],
                FACTORS[b.alpha_dst],
                b.constant,
            )
        elif b.logic_op != LOGIC_COPY:
            logic = LOGIC[b.logic_op]
        return cls(stencil, depth, mask, blend, logic)

    def apply(self, previous: FixedState | None) -> None:
        """Make the GL state this one (every call when ``previous`` is None)."""
        p = previous
        if p is None or p.stencil != self.stencil:
            _enable(gl.GL_STENCIL_TEST, self.stencil is not None)
            if self.stencil is not None:
                func, ref, mask, fail, zfail, zpass, write = self.stencil
                gl.glStencilFunc(func, ref, mask)
                gl.glStencilOp(fail, zfail, zpass)
                gl.glStencilMask(write)
        if p is None or p.depth != self.depth:
            _enable(gl.GL_DEPTH_TEST, self.depth is not None)
            if self.depth is not None:
                gl.glDepthFunc(self.depth[0])
                gl.glDepthMask(self.depth[1])
        if p is None or p.color_mask != self.color_mask:
            gl.glColorMask(*self.color_mask)
        if p is None or p.blend != self.blend:
            _enable(gl.GL_BLEND, self.blend is not None)
            if self.blend is not None:
                rgb_eq, alpha_eq, rgb_src, rgb_dst, alpha_src, alpha_dst, constant = self.blend
                gl.glBlendEquationSeparate(rgb_eq, alpha_eq)
                gl.glBlendFuncSeparate(rgb_src, rgb_dst, alpha_src, alpha_dst)
                gl.glBlendColor(*(c / 255.0 for c in constant))
        if p is None or p.logic != self.logic:
            _enable(gl.GL_COLOR_LOGIC_OP, self.logic is not None)
            if self.logic is not None:
                gl.glLogicOp(self.logic)


def _enable(cap: int, on: bool) -> None:
    (gl.glEnable if on else gl.glDisable)(cap)
