"""picaemu.fused.fragment_links: a fragment plan's links remembered by the kinds of its arguments and its switches
are the links built anew for it (every entry asked of its kernel), over plans of every sample capture's states, and
a state that differs from a remembered one only in a switch gets links of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu import numba_link
from picaemu.builder import CaptureBuilder
from picaemu.fragment import kernels as fk
from picaemu.fused import features, fragment_links
from picaemu.fused import fragments as ff
from picaemu.fused.fragment_kernel import LINK_BYTE_PASSES
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay
from tests.test_fused_fragments import first_draw, scene, texture

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
# captures whose states turn on every switch between them: fog, lighting, the procedural texture, mipmaps (LOD),
# stencil, blending and logic ops, the alpha test, an untextured draw
SAMPLES = (
    "fog",
    "lit_sphere",
    "proctex",
    "texture_filtering",
    "stencil",
    "blending",
    "alpha_test",
    "triangle",
    "game_rich_1000",
    "game_objects_300",
)


def _plans_of(capture: pica.Capture, monkeypatch: pytest.MonkeyPatch) -> list[ff.FragmentPlan]:
    """The fragment plans a replay of ``capture`` makes (the loop's and the pipeline's)."""
    made: list[ff.FragmentPlan] = []
    build = ff._build

    def keep(*args: object) -> ff.FragmentPlan:
        plan = build(*args)  # type: ignore[arg-type]
        made.append(plan)
        return plan

    monkeypatch.setattr(ff, "_build", keep)
    Replay(capture, pipeline=Pipeline()).run()
    monkeypatch.undo()
    return made


def _logic(b: CaptureBuilder, rng: np.random.Generator) -> None:  # the logic-op word pass
    b.texture(0, texture(rng), "RGBA8")
    b.set("COLOR_OPERATION", fragment_mode="default", blend_mode="logic op", constant=0xE4)
    b.set("LOGIC_OP", op="xor")


def _bytes(b: CaptureBuilder, rng: np.random.Generator) -> None:  # the byte passes: RGB565, stencil
    b.texture(0, texture(rng), "RGBA8")
    b.set("COLORBUFFER_FORMAT", format=2, pixel_size=0)
    b.stencil(True, "not equal", 0x36, mask=0xFE, write_mask=0x7F, fail="invert")
    b.depth_test(True, "greater or equal")


def test_remembered_links_are_the_links_built_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    captures = [pica.read(CAPTURES / f"{name}.pica") for name in SAMPLES] + [scene(_logic), scene(_bytes)]
    plans = [plan for capture in captures for plan in _plans_of(capture, monkeypatch)]
    seen = set()
    for plan in plans:
        args, links = plan.args[:-1], plan.args[-1]
        on = fragment_links.switches(args)
        seen.add(on)
        assert np.array_equal(links, fragment_links.build(args, on)), on
        assert plan.kind == numba_link.arguments_kind(plan.args)
        assert links is not fragment_links.LINKS[(plan.kind, on)]  # each plan its own copy
    for field in ("textures", "lod", "lighting", "proctex", "fog"):  # the samples turned each switch both ways
        assert {getattr(on, field) for on in seen} == {False, True}, field
    assert len({on.color_kind for on in seen}) >= 2 and len({on.depth_kind for on in seen}) >= 2


def _untextured(b: CaptureBuilder, rng: np.random.Generator) -> None:  # no unit sampled: no texture kernel
    b.tev(0, rgb=("primary color",), combine="replace")


def _stencil(b: CaptureBuilder, rng: np.random.Generator) -> None:  # the depth byte pass, buffers of one kind
    b.texture(0, texture(rng), "RGBA8")
    b.stencil(True, "not equal", 0x36, mask=0xFE, write_mask=0x7F, fail="invert")


def _plan(setup: object) -> ff.FragmentPlan:
    call, _ = first_draw(scene(setup))  # type: ignore[arg-type]
    plan = ff.FragmentPlan.of(call.draw_state, call.memory)
    assert isinstance(plan, ff.FragmentPlan)
    return plan


@pytest.mark.parametrize("setup", [_untextured, _stencil], ids=["untextured", "stencil"])
def test_a_state_differing_in_a_switch_only_gets_its_own_links(setup: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fragment_links, "LINKS", {})  # nothing remembered before this test's plans
    plain = _plan(lambda b, rng: b.texture(0, texture(rng), "RGBA8"))
    other = _plan(setup)
    assert plain.kind == other.kind  # the same kinds: only the switch tells them apart
    on, off = fragment_links.switches(other.args[:-1]), fragment_links.switches(plain.args[:-1])
    assert on != off and len(fragment_links.LINKS) == 2
    assert np.array_equal(other.args[-1], fragment_links.build(other.args[:-1], on))
    if setup is _untextured:  # the texture kernel linked for the textured state only
        assert plain.args[-1][features.LINK_TEXTURE].all() and not other.args[-1][features.LINK_TEXTURE].any()
    else:  # the depth / stencil byte pass linked for the stencilled state only
        assert on.depth_kind == fk.DEPTH_BYTES != off.depth_kind
        pass_row = LINK_BYTE_PASSES + fk.PASS_DEPTH_BYTES
        assert other.args[-1][pass_row].all() and not plain.args[-1][pass_row].any()
