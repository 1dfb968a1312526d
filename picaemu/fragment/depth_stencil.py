"""Stencil test and operations, depth test, depth/stencil/color write masks (registers 0x105-0x107): the
draw's configuration, decoded once per draw (``DepthStencilState``).

The rules (compare functions, stencil operations) are the data of ``picaemu.fragment.rules``; the compiled
passes (``picaemu.fragment.ops``) apply them, and ``picaemu.fragment.reference`` states them fragment by fragment
(pica-pipeline.md §15.3-15.4): stencil test and updates exist only with a D24S8 buffer and STENCIL_TEST.enable;
pass = ``(ref & input_mask) FUNC (stored & input_mask)``; the op for stencil-fail, depth-fail or depth-pass is
applied and stored through ``write_mask``; the depth-pass op also runs with the depth test disabled. A disabled
depth test passes everything, and depth is still written when the depth write bit is set (3dbrew hardware note).
Memory access enables (0x112-0x115) come from ``FramebufferState``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.fragment.framebuffer import DepthFormat
from picaemu.regs import access


@dataclass(frozen=True)
class DepthStencilState:
    """Registers 0x105-0x107, decoded once per draw."""

    stencil_enable: bool
    stencil_func: int
    stencil_write_mask: int
    stencil_ref: int
    stencil_input_mask: int
    op_fail: int
    op_depth_fail: int
    op_depth_pass: int
    depth_test: bool
    depth_func: int
    depth_write: bool
    color_mask: tuple[bool, bool, bool, bool]

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> DepthStencilState:
        st, op, dm = "STENCIL_TEST", "STENCIL_OP", "DEPTH_COLOR_MASK"
        red, green, blue, alpha = access.raws(regs, dm, ("red", "green", "blue", "alpha"))
        return cls(
            stencil_enable=bool(access.raw(regs, st, "enable")),
            stencil_func=access.raw(regs, st, "func"),
            stencil_write_mask=access.raw(regs, st, "write_mask"),
            stencil_ref=access.raw(regs, st, "ref"),
            stencil_input_mask=access.raw(regs, st, "input_mask"),
            op_fail=access.raw(regs, op, "fail"),
            op_depth_fail=access.raw(regs, op, "depth_fail"),
            op_depth_pass=access.raw(regs, op, "depth_pass"),
            depth_test=bool(access.raw(regs, dm, "depth_test")),
            depth_func=access.raw(regs, dm, "depth_func"),
            depth_write=bool(access.raw(regs, dm, "depth_write")),
            color_mask=(bool(red), bool(green), bool(blue), bool(alpha)),
        )

    def stencil_active(self, fmt: DepthFormat) -> bool:
        return self.stencil_enable and fmt is DepthFormat.D24S8

    def uses_depth_buffer(self, fmt: DepthFormat) -> bool:
        """True when the draw reads or writes the depth/stencil buffer at all."""
        return self.depth_test or self.depth_write or self.stencil_active(fmt)
