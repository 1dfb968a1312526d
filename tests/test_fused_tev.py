"""The fused fragment side's TEV (``fragment_kernel._combine``) against the staged path on stages built to sit on
either side of ``_reproduced``'s rule (a stage that outputs one of its sources unchanged runs no pass): replace,
modulate by 255 (a constant, or a primary color white on every fragment), add or subtract 0, interpolate by 255 or
0 (citro2d's fade stage) or between equal operands, and the near misses (an inverted or swizzled operand, a scale,
constant channels that differ by one, a primary color of alpha 0.5), with constant colors that change between
draws of one plan (the compiled loop writes them into the plan before each draw)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from picaemu.builder import CaptureBuilder
from picaemu.pipeline import Pipeline
from tests.test_fused_fragments import assert_same, scene, texture

EXAMPLES = settings(max_examples=12, deadline=None, derandomize=True)
SOURCES = ("previous", "constant", "texture 0", "primary color")
COMBINES = ("replace", "modulate", "add", "subtract", "interpolate")
RGB_OPS = ("src.rgb", "src.rgb", "src.rgb", "1 - src.rgb", "src.aaa", "1 - src.aaa", "src.rrr")
ALPHA_OPS = ("src.a", "src.a", "src.a", "1 - src.a", "src.r")
LEVELS = st.sampled_from((0, 255, 254, 1, 128))  # the values the rule looks for, and their neighbours


@st.composite
def stages(draw: st.DrawFn) -> dict:
    return {
        "rgb": tuple(draw(st.sampled_from(SOURCES)) for _ in range(3)),
        "alpha": tuple(draw(st.sampled_from(SOURCES)) for _ in range(3)),
        "rgb_ops": tuple(draw(st.sampled_from(RGB_OPS)) for _ in range(3)),
        "alpha_ops": tuple(draw(st.sampled_from(ALPHA_OPS)) for _ in range(3)),
        "combine": draw(st.sampled_from(COMBINES)),
        "alpha_combine": draw(st.sampled_from(COMBINES)),
    }


@st.composite
def programs(draw: st.DrawFn) -> tuple:
    """Three stages (0, 2 and 5: the ones between pass through) and, per draw, each stage's constant color."""
    rows = [draw(stages()) for _ in range(3)]
    colors = [[tuple(draw(LEVELS) for _ in range(4)) for _ in range(3)] for _ in range(3)]
    scale = draw(st.sampled_from(("x1", "x1", "x2")))
    return rows, colors, scale


def _setup(rows: list[dict], colors: list[tuple], scale: str):
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA8")
        for stage, row, color in zip((0, 2, 5), rows, colors, strict=True):
            b.tev(stage, **row, color=color)
        b.set("TEXENV5_SCALE", rgb_scale=scale)

    return setup


@EXAMPLES
@given(programs())
def test_random_stages_near_the_identity_rule_match_the_stages(program: tuple) -> None:
    rows, colors, scale = program
    first = _setup(rows, colors[0], scale)
    later = [_setup(rows, colors[k], scale) for k in (1, 2)]
    capture = scene(first, draws=3, before=[lambda b, rng: None, *later])
    assert_same(capture)
    assert_same(capture, Pipeline())


PREV, CONST, TEX = "previous", "constant", "texture 0"
# stages on either side of the rule, each with the constant colors of three draws of one plan
CASES = {
    "replace": dict(rgb=(PREV,), combine="replace"),
    "replace swizzled": dict(rgb=(PREV,), rgb_ops=("src.rrr",), combine="replace"),
    "replace inverted": dict(rgb=(PREV,), rgb_ops=("1 - src.rgb",), combine="replace"),
    "modulate by constant": dict(rgb=(PREV, CONST), alpha=(PREV, CONST), combine="modulate"),
    "add constant": dict(rgb=(PREV, CONST), alpha=(PREV, CONST), combine="add"),
    "subtract constant": dict(rgb=(PREV, CONST), alpha=(PREV, CONST), combine="subtract"),
    "fade (citro2d)": dict(
        rgb=(PREV, CONST, CONST),
        alpha=(PREV,),
        rgb_ops=("src.rgb", "src.rgb", "1 - src.aaa"),
        combine="interpolate",
        alpha_combine="replace",
    ),
    "interpolate to b": dict(
        rgb=(PREV, TEX, CONST),
        alpha=(PREV, TEX, CONST),
        rgb_ops=("src.rgb", "src.rgb", "src.aaa"),
        combine="interpolate",
    ),
    "interpolate by rgb": dict(rgb=(PREV, TEX, CONST), alpha=(PREV, TEX, CONST), combine="interpolate"),
    "interpolate between equal operands": dict(rgb=(PREV, PREV, TEX), alpha=(PREV, PREV, TEX), combine="interpolate"),
    "interpolate between unequal operands": dict(
        rgb=(PREV, PREV, TEX), rgb_ops=("src.rgb", "src.ggg"), alpha=(PREV, PREV, TEX), combine="interpolate"
    ),
    "modulate by the primary color": dict(rgb=(TEX, "primary color"), combine="modulate"),
}
COLORS = ((0, 0, 0, 0), (255, 255, 255, 255), (255, 255, 254, 255), (0, 0, 1, 0), (255, 255, 255, 0))


def _case_setup(case: dict, color: tuple, last: bool):
    """Stage 0 texture 0 x primary color, stage 2 the case, stage 5 (unless ``last``) add signed with the primary
    color (a stage reading the case's output)."""

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA8")
        b.tev(0, rgb=(TEX, "primary color"), combine="modulate")
        b.tev(2, **case, color=color)
        if not last:
            b.tev(5, rgb=(PREV, "primary color"), combine="add signed")

    return setup


@pytest.mark.parametrize("primary", [None, (1, 1, 1, 1), (1, 1, 1, 0.5)], ids=["varying", "white", "half alpha"])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_stages_on_either_side_of_the_identity_rule_match_the_stages(name: str, last: bool, primary) -> None:
    """Five draws of one plan, one per constant color of ``COLORS`` (the loop writes each into the plan); the primary
    color random per vertex, or the same for every fragment (white: a modulate by it reproduces the other operand)."""
    setups = [_case_setup(CASES[name], color, last) for color in COLORS]
    capture = scene(setups[0], draws=len(COLORS), before=setups, color=primary)
    assert_same(capture)
    stats, _ = assert_same(capture, Pipeline())
    assert sum(s["fragments_written"] for s in stats) > 0


def test_uniform_slots_are_the_ones_whose_fragments_share_one_color() -> None:
    """``uniform_slots`` marks the primary color slot only when every fragment has its first fragment's color (one
    channel of the last fragment differing leaves the row at -1, or of a fragment in a later block of 256), and only
    when asked; the zero slot always."""
    from picaemu.fused.fragment_kernel import uniform_slots
    from picaemu.fused.layout import NUM_SLOTS, PRIMARY_SLOT, PROCTEX_SLOT, ZERO

    src = np.zeros((NUM_SLOTS, 50, 4), np.uint8)
    src[PRIMARY_SLOT] = (255, 255, 255, 128)
    uniform = uniform_slots(src, True, False)
    assert uniform[PRIMARY_SLOT].tolist() == [255, 255, 255, 128]
    assert uniform[ZERO].tolist() == [0] * 4 and uniform[PROCTEX_SLOT].tolist() == [-1] * 4
    assert uniform_slots(src, False, True)[PRIMARY_SLOT].tolist() == [-1] * 4
    src[PRIMARY_SLOT, -1, 2] = 254
    assert uniform_slots(src, True, True)[PRIMARY_SLOT].tolist() == [-1] * 4
    assert uniform_slots(src, True, True)[PROCTEX_SLOT].tolist() == [0] * 4  # all zero: one color too
    many = np.zeros((NUM_SLOTS, 700, 4), np.uint8)  # compared in blocks: a difference in a later block, or none
    for differs in (None, 256, 699):
        many[PRIMARY_SLOT] = (1, 2, 3, 4)
        if differs is not None:
            many[PRIMARY_SLOT, differs, 3] = 5
        expected = [1, 2, 3, 4] if differs is None else [-1] * 4
        assert uniform_slots(many, True, False)[PRIMARY_SLOT].tolist() == expected
