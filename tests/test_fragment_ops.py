"""The compiled in-order fragment operations against the vectorized layer-by-layer ones (``depth_stencil``,
``blend`` and ``framebuffer`` numpy code, itself tested against hand-computed values): same memory, same counters,
on seeded random draws over every color/depth format, stencil and depth configuration, blend, logic op, write
mask, read/write enable, orientation and aligned (word passes) and unaligned (byte passes) buffer addresses."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.blend import BlendMode, BlendProgram, BlendState, blend, blend_program
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of

W, H = 16, 24
COLOR_ADDR, DEPTH_ADDR, SPAN = 0x18000000, 0x18010000, 0x20000


class _Stages:
    """Color stages offering only ``blend`` (the layered path)."""

    def __init__(self, bstate: BlendState, replace: bool) -> None:
        self.bstate, self.replace = bstate, replace

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return src if self.replace else blend(self.bstate, src, dst)

    @property
    def reads_destination(self) -> bool:
        return not self.replace


def _random_regs(rng: np.random.Generator) -> np.ndarray:
    regs = np.zeros(0x300, np.uint32)
    factor = lambda: int(rng.integers(15))  # noqa: E731 - 15 is undefined
    regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=int(rng.integers(2)), constant=0xE4)
    regs[id_of("BLEND_FUNC")] = access.compose(
        "BLEND_FUNC", rgb_equation=int(rng.integers(8)), alpha_equation=int(rng.integers(8)), rgb_src=factor(),
        rgb_dst=factor(), alpha_src=factor(), alpha_dst=factor())
    regs[id_of("BLEND_COLOR")] = int(rng.integers(2**32))
    regs[id_of("LOGIC_OP")] = access.compose("LOGIC_OP", op=int(rng.integers(16)))
    regs[id_of("STENCIL_TEST")] = int(rng.integers(2**32))
    regs[id_of("STENCIL_OP")] = int(rng.integers(2**12))
    regs[id_of("DEPTH_COLOR_MASK")] = int(rng.integers(2**13)) if rng.random() < 0.5 else access.compose(
        "DEPTH_COLOR_MASK", depth_test=1, depth_func=int(rng.integers(8)), depth_write=1, red=1, green=1, blue=1,
        alpha=1)
    return regs


@pytest.mark.parametrize("seed", range(4))
def test_compiled_pass_matches_layers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(60):
        regs = _random_regs(rng)
        bstate, ds = BlendState.from_regs(regs), DepthStencilState.from_regs(regs)
        fmt = fbm.ColorFormat(int(rng.choice([f.value for f in fbm.ColorFormat])))
        fmt = fbm.ColorFormat.RGBA8 if rng.random() < 0.4 else fmt  # its word passes
        fb = fbm.FramebufferState(W, H, bool(rng.integers(2)), COLOR_ADDR + int(rng.choice([0, 0, 1, 2])), fmt,
                                  DEPTH_ADDR + int(rng.choice([0, 0, 1, 3])),
                                  fbm.DepthFormat(int(rng.choice([f.value for f in fbm.DepthFormat]))),
                                  *(bool(rng.random() < 0.8) for _ in range(6)))
        n = int(rng.integers(1, 300))
        span = 4 if rng.random() < 0.5 else W  # 4: deep overdraw on few pixels
        x = rng.integers(0, span, n).astype(np.int32)
        y = rng.integers(0, min(span, H), n).astype(np.int32)
        depth = rng.random(n).astype(np.float32)
        depth[rng.random(n) < 0.05] = np.nan
        depth[rng.random(n) < 0.05] = 2.0
        color = rng.integers(0, 256, (n, 4)).astype(np.uint8)
        replace = bool(rng.random() < 0.3)
        program = BlendProgram.build(BlendMode.REPLACE) if replace else blend_program(bstate)
        initial = rng.integers(0, 256, SPAN).astype(np.uint8)
        results = []
        for compiled in (True, False):
            memory = PhysicalMemory()
            memory.write(COLOR_ADDR, initial)
            stats = dict(killed_stencil=0, killed_depth=0, fragments_written=0)
            if compiled:
                fragment_ops.resolve(memory, fb, ds, program, x, y, depth, color, stats)
            else:
                fragment_ops.resolve_layers(memory, fb, ds, _Stages(bstate, replace), x, y, depth, color, stats)
            results.append((memory.bytes(COLOR_ADDR, SPAN).copy(), stats))
        assert np.array_equal(results[0][0], results[1][0]), (fb, ds, bstate, replace)
        assert results[0][1] == results[1][1]


@pytest.mark.parametrize("seed", range(2))
def test_overlapping_buffers_keep_per_fragment_order(seed: int) -> None:
    """Color and depth buffers that share bytes: a color write changes later fragments' stored depth words, so the
    draw must equal the same fragments resolved one call at a time (trivially in per-fragment order)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        regs = _random_regs(rng)
        ds = DepthStencilState.from_regs(regs)
        fb = fbm.FramebufferState(W, H, bool(rng.integers(2)), COLOR_ADDR, fbm.ColorFormat.RGBA8,
                                  COLOR_ADDR + int(rng.integers(0, 64)), fbm.DepthFormat.D24S8,
                                  *(bool(rng.random() < 0.8) for _ in range(6)))
        n = int(rng.integers(1, 200))
        x = rng.integers(0, 4, n).astype(np.int32)
        y = rng.integers(0, 4, n).astype(np.int32)
        depth = rng.random(n).astype(np.float32)
        color = rng.integers(0, 256, (n, 4)).astype(np.uint8)
        program = BlendProgram.build(BlendMode.REPLACE)
        initial = rng.integers(0, 256, SPAN).astype(np.uint8)
        results = []
        for split in (False, True):
            memory = PhysicalMemory()
            memory.write(COLOR_ADDR, initial)
            stats = dict(killed_stencil=0, killed_depth=0, fragments_written=0)
            fate = np.zeros(n, np.uint8)
            parts = [slice(i, i + 1) for i in range(n)] if split else [slice(None)]
            for s in parts:
                fragment_ops.resolve(memory, fb, ds, program, x[s], y[s], depth[s], color[s], stats, fate[s])
            results.append((memory.bytes(COLOR_ADDR, SPAN).copy(), stats, fate))
        assert np.array_equal(results[0][0], results[1][0])
        assert results[0][1] == results[1][1]
        assert np.array_equal(results[0][2], results[1][2])
