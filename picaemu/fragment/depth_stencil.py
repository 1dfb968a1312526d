"""Stencil test and operations, depth test, depth/stencil/color write masks (registers 0x105-0x107).

Receives one batch of fragments in which every pixel appears at most once (``fragment_ops.resolve_layers`` splits
a draw into such layers to keep the hardware's per-pixel order) and the stored values of their pixels; returns
which fragments survive and the values to store (``fragment_ops.resolve``, the compiled in-order pass, tabulates
``COMPARE`` and ``STENCIL_OPS`` from here and applies the same rules):

- ``frag_depth``: (F,) uint32 fragment depth already quantized to the buffer's width (16 or 24 bits)
- ``stored_depth``: (F,) uint32; ``stored_stencil``: (F,) uint8
- result ``DepthStencilResult``: ``stencil_pass`` (F,) bool, ``depth_pass`` (F,) bool (passed the stencil test
  and the depth test: the fragment survives), ``new_depth`` (F,) uint32, ``new_stencil`` (F,) uint8,
  ``write_depth`` (F,) bool (where the depth value is replaced), ``write_stencil`` (F,) bool

Rules (pica-pipeline.md §15.3-15.4): stencil test and updates exist only with a D24S8 buffer and
STENCIL_TEST.enable; pass = ``(ref & input_mask) FUNC (stored & input_mask)``; the op for stencil-fail,
depth-fail or depth-pass is applied and stored through ``write_mask``; the depth-pass op also runs with the depth
test disabled. A disabled depth test passes everything, and depth is still written when the depth write bit is
set (3dbrew hardware note). Memory access enables (0x114/0x115) are applied by the caller via ``FramebufferState``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from picaemu.fragment.framebuffer import DepthFormat
from picaemu.regs import access

Compare = Callable[[np.ndarray, np.ndarray], np.ndarray]
COMPARE: dict[int, Compare] = {
    0: lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    1: lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
    2: np.equal,
    3: np.not_equal,
    4: np.less,
    5: np.less_equal,
    6: np.greater,
    7: np.greater_equal,
}
StencilOp = Callable[[np.ndarray, int], np.ndarray]  # (old (F,) int32, ref) -> new (F,) int32
STENCIL_OPS: dict[int, StencilOp] = {
    0: lambda s, ref: s,
    1: lambda s, ref: np.zeros_like(s),
    2: lambda s, ref: np.full_like(s, ref),
    3: lambda s, ref: np.minimum(s + 1, 255),
    4: lambda s, ref: np.maximum(s - 1, 0),
    5: lambda s, ref: ~s & 0xFF,
    6: lambda s, ref: (s + 1) & 0xFF,
    7: lambda s, ref: (s - 1) & 0xFF,
}


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
            color_mask=tuple(bool(access.raw(regs, dm, c)) for c in ("red", "green", "blue", "alpha")),
        )

    def stencil_active(self, fmt: DepthFormat) -> bool:
        return self.stencil_enable and fmt is DepthFormat.D24S8

    def uses_depth_buffer(self, fmt: DepthFormat) -> bool:
        """True when the draw reads or writes the depth/stencil buffer at all."""
        return self.depth_test or self.depth_write or self.stencil_active(fmt)


@dataclass
class DepthStencilResult:
    stencil_pass: np.ndarray
    depth_pass: np.ndarray
    new_depth: np.ndarray
    new_stencil: np.ndarray
    write_depth: np.ndarray
    write_stencil: np.ndarray

    @property
    def alive(self) -> np.ndarray:
        return self.stencil_pass & self.depth_pass


def stencil_update(ds: DepthStencilState, stored: np.ndarray, stencil_pass: np.ndarray,
                   depth_pass: np.ndarray) -> np.ndarray:
    """(F,) uint8 stencil values after the fail / depth-fail / depth-pass op, through the write mask."""
    old = stored.astype(np.int32)
    new = np.where(~stencil_pass, STENCIL_OPS[ds.op_fail](old, ds.stencil_ref),
                   np.where(~depth_pass, STENCIL_OPS[ds.op_depth_fail](old, ds.stencil_ref),
                            STENCIL_OPS[ds.op_depth_pass](old, ds.stencil_ref)))
    wm = ds.stencil_write_mask
    return ((new & wm) | (old & ~wm & 0xFF)).astype(np.uint8)


def depth_stencil_test(ds: DepthStencilState, fmt: DepthFormat, frag_depth: np.ndarray, stored_depth: np.ndarray,
                       stored_stencil: np.ndarray) -> DepthStencilResult:
    """Stencil test, depth test and the new depth/stencil values of one layer of fragments."""
    n = frag_depth.shape[0]
    if ds.stencil_active(fmt):
        m = ds.stencil_input_mask
        stencil_pass = COMPARE[ds.stencil_func](np.full(n, ds.stencil_ref & m), stored_stencil.astype(np.int32) & m)
    else:
        stencil_pass = np.ones(n, bool)
    if ds.depth_test:
        depth_pass = COMPARE[ds.depth_func](frag_depth, stored_depth) & stencil_pass
    else:
        depth_pass = stencil_pass.copy()
    if ds.stencil_active(fmt):
        new_stencil = stencil_update(ds, stored_stencil, stencil_pass, depth_pass)
    else:
        new_stencil = stored_stencil
    write_depth = depth_pass if ds.depth_write else np.zeros(n, bool)
    new_depth = np.where(write_depth, frag_depth, stored_depth).astype(np.uint32)
    return DepthStencilResult(stencil_pass, depth_pass, new_depth, new_stencil, write_depth,
                              np.full(n, ds.stencil_active(fmt)))
