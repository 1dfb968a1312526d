"""Depth test functions, depth write mask, stencil test, stencil operations and write mask: the scalar reference
(``picaemu.fragment.reference``, the compiled passes' oracle) against values typed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.framebuffer import DepthFormat
from picaemu.fragment.reference import depth_stencil
from picaemu.regs import access, id_of


class Result:
    """The reference's outcomes of several fragments, as lists."""

    def __init__(self, ds: DepthStencilState, fmt: DepthFormat, frag, stored, stencil) -> None:
        out = [depth_stencil(ds, fmt, int(f), int(d), int(s)) for f, d, s in zip(frag, stored, stencil, strict=True)]
        self.stencil_pass = [o.stencil_pass for o in out]
        self.alive = [o.depth_pass for o in out]
        self.new_depth = [o.depth for o in out]
        self.new_stencil = [o.stencil for o in out]


def ds_state(depth=None, stencil=None, ops=(0, 0, 0)) -> DepthStencilState:
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("DEPTH_COLOR_MASK")] = access.compose("DEPTH_COLOR_MASK", **(depth or {}))
    regs[id_of("STENCIL_TEST")] = access.compose("STENCIL_TEST", **(stencil or {}))
    regs[id_of("STENCIL_OP")] = access.compose("STENCIL_OP", fail=ops[0], depth_fail=ops[1], depth_pass=ops[2])
    return DepthStencilState.from_regs(regs)


FRAG = np.array([10, 20, 30], np.uint32)
STORED = np.array([20, 20, 20], np.uint32)
# fragment FUNC stored, for fragments 10 / 20 / 30 against 20
DEPTH_TRUTH = {
    0: [False, False, False],
    1: [True, True, True],
    2: [False, True, False],
    3: [True, False, True],
    4: [True, False, False],
    5: [True, True, False],
    6: [False, False, True],
    7: [False, True, True],
}


@pytest.mark.parametrize("func", range(8))
def test_depth_functions(func):
    ds = ds_state(depth=dict(depth_test=1, depth_func=func, depth_write=1))
    res = Result(ds, DepthFormat.D24, FRAG, STORED, np.zeros(3, np.uint8))
    assert res.alive == DEPTH_TRUTH[func]
    assert res.new_depth == [f if ok else 20 for f, ok in zip([10, 20, 30], DEPTH_TRUTH[func], strict=True)]


def test_disabled_test_still_writes_depth_and_write_bit_gates_it():
    res = Result(
        ds_state(depth=dict(depth_test=0, depth_func=0, depth_write=1)),
        DepthFormat.D16,
        FRAG,
        STORED,
        np.zeros(3, np.uint8),
    )
    assert all(res.alive) and res.new_depth == [10, 20, 30]
    res = Result(
        ds_state(depth=dict(depth_test=1, depth_func=1, depth_write=0)),
        DepthFormat.D16,
        FRAG,
        STORED,
        np.zeros(3, np.uint8),
    )
    assert all(res.alive) and res.new_depth == [20, 20, 20]


def test_stencil_compare_uses_reference_on_the_left_and_input_mask():
    # (ref & 0x0F) LESS (stored & 0x0F): ref 0x35 -> 5; stored 0xF6 -> 6, 0x05 -> 5, 0x14 -> 4
    ds = ds_state(stencil=dict(enable=1, func=4, ref=0x35, input_mask=0x0F, write_mask=0xFF))
    stored = np.array([0xF6, 0x05, 0x14], np.uint8)
    res = Result(ds, DepthFormat.D24S8, FRAG, STORED, stored)
    assert res.stencil_pass == [True, False, False]


def test_stencil_only_with_d24s8():
    ds = ds_state(stencil=dict(enable=1, func=0, ref=1, input_mask=0xFF, write_mask=0xFF), ops=(1, 1, 1))
    res = Result(ds, DepthFormat.D24, FRAG, STORED, np.full(3, 9, np.uint8))
    assert all(res.alive) and res.new_stencil == [9, 9, 9]


# op code -> expected new values for stored [0, 1, 255] with ref 0x5A
OPS = {
    0: [0, 1, 255],
    1: [0, 0, 0],
    2: [0x5A] * 3,
    3: [1, 2, 255],
    4: [0, 0, 254],
    5: [255, 254, 0],
    6: [1, 2, 0],
    7: [255, 0, 254],
}


@pytest.mark.parametrize("op", range(8))
def test_stencil_ops_on_each_outcome(op):
    stored = np.array([0, 1, 255], np.uint8)
    frag = np.array([5, 5, 5], np.uint32)
    for outcome in ("fail", "depth_fail", "depth_pass"):
        ops = tuple(op if name == outcome else 0 for name in ("fail", "depth_fail", "depth_pass"))
        func = 0 if outcome == "fail" else 1
        depth_func = 0 if outcome == "depth_fail" else 1
        ds = ds_state(
            depth=dict(depth_test=1, depth_func=depth_func),
            stencil=dict(enable=1, func=func, ref=0x5A, input_mask=0xFF, write_mask=0xFF),
            ops=ops,
        )
        res = Result(ds, DepthFormat.D24S8, frag, np.zeros(3, np.uint32), stored)
        assert res.new_stencil == OPS[op], outcome


def test_stencil_write_mask_and_depth_pass_op_without_depth_test():
    ds = ds_state(stencil=dict(enable=1, func=1, ref=0xFF, input_mask=0xFF, write_mask=0x0F), ops=(0, 0, 2))
    res = Result(ds, DepthFormat.D24S8, FRAG, STORED, np.array([0xA0, 0x05, 0x3C], np.uint8))
    assert res.new_stencil == [0xAF, 0x0F, 0x3F]
