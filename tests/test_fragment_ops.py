"""The compiled per-fragment passes (``picaemu.fragment.ops.resolve``) against the readable scalar reference
(``picaemu.fragment.reference``, itself checked against hand-computed values in test_blend / test_depth_stencil):
same memory, same counters and — for recorded draws — the same fate and color before/after of every fragment, on
hypothesis-drawn draws over every color/depth format, stencil and depth configuration, blend equation and factor,
logic op, write mask, read/write enable, orientation, aligned (word passes) and unaligned (byte passes) buffer
addresses, and color/depth buffers that share bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment import reference
from picaemu.fragment.blend import BlendMode, BlendProgram, BlendState, blend_program
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.ops import Fate, FragmentLog
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of

W, H = 16, 24
COLOR_ADDR, DEPTH_ADDR, SPAN = 0x18000000, 0x18010000, 0x20000
WORD = st.integers(0, 2**32 - 1)


@st.composite
def fragment_regs(draw: st.DrawFn) -> np.ndarray:
    """Registers 0x100-0x107 with every blend equation, defined factor (15 is undefined), logic op, compare
    function, stencil op and mask; the depth test on with all channels written half of the time."""
    regs = np.zeros(0x300, np.uint32)
    factor = st.integers(0, 14)
    regs[id_of("COLOR_OPERATION")] = access.compose(
        "COLOR_OPERATION", blend_mode=draw(st.integers(0, 1)), constant=0xE4
    )
    regs[id_of("BLEND_FUNC")] = access.compose(
        "BLEND_FUNC",
        rgb_equation=draw(st.integers(0, 7)),
        alpha_equation=draw(st.integers(0, 7)),
        rgb_src=draw(factor),
        rgb_dst=draw(factor),
        alpha_src=draw(factor),
        alpha_dst=draw(factor),
    )
    regs[id_of("BLEND_COLOR")] = draw(WORD)
    regs[id_of("LOGIC_OP")] = access.compose("LOGIC_OP", op=draw(st.integers(0, 15)))
    regs[id_of("STENCIL_TEST")] = draw(WORD)
    regs[id_of("STENCIL_OP")] = draw(st.integers(0, 2**12 - 1))
    regs[id_of("DEPTH_COLOR_MASK")] = draw(
        st.one_of(
            st.integers(0, 2**13 - 1),
            st.builds(
                lambda func: access.compose(
                    "DEPTH_COLOR_MASK", depth_test=1, depth_func=func, depth_write=1, red=1, green=1, blue=1, alpha=1
                ),
                st.integers(0, 7),
            ),
        )
    )
    return regs


@st.composite
def framebuffers(draw: st.DrawFn) -> fbm.FramebufferState:
    color_format = draw(st.sampled_from(list(fbm.ColorFormat)))
    depth_format = draw(st.sampled_from(list(fbm.DepthFormat)))
    color = COLOR_ADDR + draw(st.sampled_from([0, 0, 1, 2]))
    shared = draw(st.booleans()) and draw(st.booleans())  # a quarter of the draws: buffers that share bytes
    depth = color + draw(st.integers(0, 64)) if shared else DEPTH_ADDR + draw(st.sampled_from([0, 0, 1, 3]))
    enables = [draw(st.integers(0, 9)) < 8 for _ in range(6)]  # read/write enables, mostly on
    return fbm.FramebufferState(W, H, draw(st.booleans()), color, color_format, depth, depth_format, *enables)


@st.composite
def fragments(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """x, y, depth (with NaN and out-of-range values), color, and the fates of a recorded draw's fragments killed
    before the pass (scissor, alpha test), from a seeded generator; deep overdraw on few pixels half the time."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 120))
    span = draw(st.sampled_from([3, W]))
    x = rng.integers(0, span, n).astype(np.int32)
    y = rng.integers(0, min(span, H), n).astype(np.int32)
    depth = rng.random(n).astype(np.float32)
    depth[rng.random(n) < 0.05] = np.nan
    depth[rng.random(n) < 0.05] = 2.0
    color = rng.integers(0, 256, (n, 4)).astype(np.uint8)
    preset = rng.choice([Fate.WRITTEN, Fate.WRITTEN, Fate.WRITTEN, Fate.ALPHA, Fate.SCISSOR], n).astype(np.uint8)
    return x, y, depth, color, preset, rng.integers(0, 256, SPAN).astype(np.uint8)


def _memory(initial: np.ndarray) -> PhysicalMemory:
    memory = PhysicalMemory()
    memory.write(COLOR_ADDR, initial)
    return memory


@settings(max_examples=300, deadline=None)
@given(fragment_regs(), framebuffers(), fragments(), st.booleans(), st.booleans())
def test_compiled_passes_match_the_scalar_reference(
    regs: np.ndarray, fb: fbm.FramebufferState, frags: tuple[np.ndarray, ...], replace: bool, recorded: bool
) -> None:
    x, y, depth, color, preset, initial = frags
    bstate, ds = BlendState.from_regs(regs), DepthStencilState.from_regs(regs)
    program = BlendProgram.build(BlendMode.REPLACE) if replace else blend_program(bstate)
    log = FragmentLog.start(preset) if recorded else None

    compiled = _memory(initial)
    stats = dict(killed_stencil=0, killed_depth=0, fragments_written=0)
    fragment_ops.resolve(compiled, fb, ds, program, x, y, depth, color, stats, log)

    scalar = _memory(initial)
    ref = reference.resolve(
        scalar,
        fb,
        ds,
        None if replace else bstate,
        x,
        y,
        depth,
        color,
        [Fate(int(f)) for f in preset] if recorded else None,
    )
    assert np.array_equal(compiled.bytes(COLOR_ADDR, SPAN), scalar.bytes(COLOR_ADDR, SPAN)), f"{fb} {ds} {bstate}"
    assert stats == ref.stats, f"{fb} {ds} {bstate}"
    if log is not None:
        assert [Fate(int(f)) for f in log.fate] == ref.fates
        assert [tuple(int(v) for v in c) for c in log.before] == ref.before
        assert [tuple(int(v) for v in c) for c in log.after] == ref.after


def test_recorded_colors_follow_one_pixel_by_hand() -> None:
    """Three fragments at one RGBA8 pixel cleared to (10, 20, 30, 40), blending one/one add, depth test less with
    depth writes: 0.5 written (adds), 0.7 killed by depth (leaves it), 0.2 written (adds again)."""
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=1)
    regs[id_of("BLEND_FUNC")] = access.compose("BLEND_FUNC", rgb_src=1, rgb_dst=1, alpha_src=1, alpha_dst=1)
    regs[id_of("DEPTH_COLOR_MASK")] = access.compose(
        "DEPTH_COLOR_MASK", depth_test=1, depth_func=4, depth_write=1, red=1, green=1, blue=1, alpha=1
    )
    fb = fbm.FramebufferState(
        8, 8, False, COLOR_ADDR, fbm.ColorFormat.RGBA8, DEPTH_ADDR, fbm.DepthFormat.D24, *(True,) * 6
    )
    memory = PhysicalMemory()
    pixel = fbm.tiled_pixel(3, 4, 8, 8, False)
    memory.write(COLOR_ADDR + 4 * pixel, np.array([40, 30, 20, 10], np.uint8))  # RGBA8 word: a, b, g, r bytes
    memory.write(DEPTH_ADDR + 3 * pixel, np.array([0xFF, 0xFF, 0xFF], np.uint8))  # depth 1.0
    x, y = np.full(3, 3, np.int32), np.full(3, 4, np.int32)
    color = np.array([[1, 2, 3, 4], [100, 100, 100, 100], [5, 6, 7, 8]], np.uint8)
    log = FragmentLog.start(np.zeros(3, np.uint8))
    stats = dict(killed_stencil=0, killed_depth=0, fragments_written=0)
    fragment_ops.resolve(
        memory,
        fb,
        DepthStencilState.from_regs(regs),
        blend_program(BlendState.from_regs(regs)),
        x,
        y,
        np.array([0.5, 0.7, 0.2], np.float32),
        color,
        stats,
        log,
    )
    assert log.fate.tolist() == [Fate.WRITTEN, Fate.DEPTH, Fate.WRITTEN]
    assert log.before.tolist() == [[10, 20, 30, 40], [11, 22, 33, 44], [11, 22, 33, 44]]
    assert log.after.tolist() == [[11, 22, 33, 44], [11, 22, 33, 44], [16, 28, 40, 52]]
    assert stats == dict(killed_stencil=0, killed_depth=1, fragments_written=2)


@pytest.mark.parametrize("eq", range(5))  # add, subtract, reverse subtract, min, max
@pytest.mark.parametrize("factors", [(6, 7), (1, 0), (12, 13), (6, 0), (2, 0), (0, 1)])
@pytest.mark.parametrize("alpha", [255, 128, 0, None])
@pytest.mark.parametrize("alpha_written", [True, False])
def test_blend_words_rounds_and_replace_rule_match_the_reference(
    eq: int, factors: tuple[int, int], alpha: int | None, alpha_written: bool
) -> None:
    """The RGBA8 word pass (``kernels.blend_words``: rounds of vector lanes, the overdrawn fragments in later rounds,
    deep overdraw one a round) and its rule that blending an opaque source by (source alpha, 1 - source alpha) or
    (one, zero) replaces (``kernels._blend_replaces``), against the scalar reference: every equation, factors
    fixed by the source alpha, the constant alpha (255) or neither, one source alpha for every fragment (255, 128,
    0) or random ones, all channels written or not alpha."""
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=1)
    rgb_src, rgb_dst = factors
    sides = dict(rgb_src=rgb_src, rgb_dst=rgb_dst, alpha_src=rgb_src, alpha_dst=rgb_dst)  # alpha as RGB
    regs[id_of("BLEND_FUNC")] = access.compose("BLEND_FUNC", rgb_equation=eq, alpha_equation=eq, **sides)
    regs[id_of("BLEND_COLOR")] = access.compose("BLEND_COLOR", r=10, g=20, b=30, a=255)
    regs[id_of("DEPTH_COLOR_MASK")] = access.compose(
        "DEPTH_COLOR_MASK", red=1, green=1, blue=1, alpha=int(alpha_written)
    )
    fb = fbm.FramebufferState(
        W, H, False, COLOR_ADDR, fbm.ColorFormat.RGBA8, DEPTH_ADDR, fbm.DepthFormat.D24, *(True,) * 6
    )
    rng = np.random.default_rng(eq * 1000 + rgb_src * 100 + rgb_dst)
    # 300 fragments over the buffer (some pixels twice: a second round), then 200 on two pixels (deep overdraw)
    x = np.concatenate([rng.integers(0, W, 300), rng.integers(5, 7, 200)]).astype(np.int32)
    y = np.concatenate([rng.integers(0, H, 300), np.full(200, 9)]).astype(np.int32)
    color = rng.integers(0, 256, (500, 4)).astype(np.uint8)
    if alpha is not None:
        color[:, 3] = alpha
    initial = rng.integers(0, 256, SPAN).astype(np.uint8)
    bstate, ds = BlendState.from_regs(regs), DepthStencilState.from_regs(regs)
    compiled, scalar = _memory(initial), _memory(initial)
    stats = dict(killed_stencil=0, killed_depth=0, fragments_written=0)
    depth = np.zeros(500, np.float32)
    fragment_ops.resolve(compiled, fb, ds, blend_program(bstate), x, y, depth, color, stats)
    ref = reference.resolve(scalar, fb, ds, bstate, x, y, depth, color)
    assert np.array_equal(compiled.bytes(COLOR_ADDR, SPAN), scalar.bytes(COLOR_ADDR, SPAN))
    assert stats == ref.stats
