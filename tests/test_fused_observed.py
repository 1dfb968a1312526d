"""Observers on the compiled route (``picaemu.fused.observed``): a stage observer that asks for fragment fates and
depth/stencil test values gets, on the compiled route, exactly what the staged path (the oracle: the same pipeline
with ``route=Route.REFERENCE``) records — every ``FragmentFates`` field (fates, fragments, TEV output,
colors before and after), every depth/stencil test report, memory and per-draw statistics — on random fragment
states (hypothesis), the bundled samples and a Minicraft frame; the debugger's probes (fates, overdraw, edges, a
pixel's ``FragmentRecord``s, pixel history) give the same results on both routes, and the compiled route really
served them (``Pipeline.recorded_fragment_draws``, the draws' route). What it does not record is refused by name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu import draw as draw_mod
from picaemu.builder import CaptureBuilder
from picaemu.debug import probe
from picaemu.debug.fragment import FragmentWatcher
from picaemu.debug.session import Session
from picaemu.draw import ROUTE_COMPILED, DrawCall, observed_sink
from picaemu.fused import fragments as ff
from picaemu.fused.layout import TEXTURE_FAULT
from picaemu.observer import StageObserver
from picaemu.pipeline import FragmentFates, Pipeline, Route
from picaemu.replay import Replay
from tests.conftest import memory_digests
from tests.test_fused_color import proctex_setup, proctex_states
from tests.test_fused_fragments import scene, texture
from tests.test_fused_textures import FILTERS, FORMATS, max_level, random_texture

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "captures"
MINICRAFT = ROOT / "tests" / "data" / "games" / "minicraft.pica"
PROBED = ("triangle", "alpha_test", "blending", "fog", "lit_sphere", "proctex", "stencil", "texture_filtering")


class Recorder(StageObserver):
    """Keeps every draw's ``FragmentFates`` and depth/stencil test reports (copies)."""

    fragment_fates = True
    fragment_tests = True

    def __init__(self) -> None:
        self.fates: list[tuple[int, FragmentFates]] = []
        self.tests: list[tuple[np.ndarray, ...]] = []

    def on_fragments(self, call: DrawCall, fates: FragmentFates) -> None:
        self.fates.append((call.index, fates))

    def on_depth_stencil(self, *arrays: np.ndarray) -> None:
        self.tests.append(tuple(np.array(a) for a in arrays))


def recorded(
    capture: pica.Capture, fused: bool, frames: int = 0
) -> tuple[Recorder, list[str], list[dict], list[str], Pipeline]:
    """A replay (whole, or its first ``frames``) with a ``Recorder``: (it, memory digests, per-draw stats without
    the time, routes, pipeline)."""
    rec = Recorder()
    pipe = Pipeline(stage_observer=rec, route=Route.COMPILED if fused else Route.REFERENCE)
    rep = Replay(capture, checkpoints=False, pipeline=pipe)
    if frames:
        rep.run_to_frame(frames - 1)
    else:
        rep.run()
    return rec, digests(rep), draw_stats(rep), [d.route for d in rep.draws], pipe


def digests(rep: Replay) -> list[str]:
    """The digest of every memory region after the replay."""
    return memory_digests(rep.memory)


def draw_stats(rep: Replay) -> list[dict]:
    """Each draw's statistics without the time."""
    return [{k: v for k, v in d.stats.items() if k != "time_s"} for d in rep.draws]


def assert_same_fates(one: FragmentFates, other: FragmentFates, where: str) -> None:
    for f in dataclasses.fields(FragmentFates):
        a, b = getattr(one, f.name), getattr(other, f.name)
        if f.name == "fragments":
            for g in dataclasses.fields(a):
                assert np.array_equal(getattr(a, g.name), getattr(b, g.name)), f"{where}: fragments.{g.name}"
        else:
            assert np.array_equal(a, b), f"{where}: {f.name}"


def assert_recorded_alike(capture: pica.Capture, frames: int = 0) -> tuple[list[dict], list[str], Pipeline]:
    """Staged and compiled recordings agree (module docstring); returns the compiled run's stats, routes, pipeline."""
    rec_a, mem_a, stats_a, _, _ = recorded(capture, False, frames)
    rec_b, mem_b, stats_b, routes, pipe = recorded(capture, True, frames)
    assert stats_a == stats_b and mem_a == mem_b
    assert [d for d, _ in rec_a.fates] == [d for d, _ in rec_b.fates]
    for (draw, a), (_, b) in zip(rec_a.fates, rec_b.fates, strict=True):
        assert_same_fates(a, b, f"draw {draw}")
    assert len(rec_a.tests) == len(rec_b.tests)
    for k, (a, b) in enumerate(zip(rec_a.tests, rec_b.tests, strict=True)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True)), f"test report {k}"
    return stats_b, routes, pipe


# ---------------------------------------------------------------------------------------------- random states
@st.composite
def fragment_states(draw: st.DrawFn) -> dict:
    return {
        "format": draw(st.sampled_from(FORMATS)),
        "log2": draw(st.tuples(st.integers(3, 7), st.integers(3, 7))),
        "levels": draw(st.tuples(st.integers(0, 4), st.integers(0, 4))),
        "filters": draw(st.tuples(*(st.sampled_from(FILTERS) for _ in range(3)))),
        "bias": draw(st.integers(-2 * 256, 2 * 256)),
        "wrap": draw(st.tuples(st.integers(0, 3), st.integers(0, 3))),
        "scissor": draw(st.sampled_from([0, 1, 3])),
        "alpha": draw(st.sampled_from([None, "less", "greater", "equal", "not equal"])),
        "alpha_ref": draw(st.integers(0, 255)),
        "depth_format": draw(st.sampled_from([0, 2, 3])),
        "depth_func": draw(st.sampled_from(["always", "less", "greater or equal", "not equal"])),
        "stencil": draw(st.booleans()),
        "stencil_ref": draw(st.integers(0, 255)),
        "color_format": draw(st.integers(0, 4)),
        "ops": draw(st.sampled_from(["replace", "blend", "logic", "mask"])),
        "fog": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**16)),
    }


def state_setup(s: dict):
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        size = (1 << s["log2"][0], 1 << s["log2"][1])
        top = max_level(size)
        levels = tuple(sorted(min(v, top) for v in s["levels"]))
        random_texture(b, rng, s["format"], size, levels, s["filters"], s["bias"] / 256, s["wrap"])
        if s["scissor"]:
            b.set("SCISSORTEST_MODE", mode=s["scissor"])
            b.set("SCISSORTEST_POS", x1=90, y1=60)
            b.set("SCISSORTEST_DIM", x2=250, y2=170)
        if s["alpha"]:
            b.alpha_test(True, s["alpha"], s["alpha_ref"])
        b.set("DEPTHBUFFER_FORMAT", format=s["depth_format"])
        if s["stencil"]:
            b.stencil(True, "not equal", s["stencil_ref"], mask=0xFE, write_mask=0x7F, fail="increment saturate")
        b.depth_test(True, s["depth_func"])
        b.set("COLORBUFFER_FORMAT", format=s["color_format"], pixel_size=2 if s["color_format"] == 0 else 0)
        if s["ops"] == "blend":
            b.blend("constant color", "one minus dst alpha", "reverse subtract")
            b.set("BLEND_COLOR", r=30, g=60, b=90, a=120)
        elif s["ops"] == "logic":
            b.set("COLOR_OPERATION", fragment_mode="default", blend_mode="logic op", constant=0xE4)
            b.set("LOGIC_OP", op="xor")
        elif s["ops"] == "mask":
            b.set("DEPTH_COLOR_MASK", depth_test=1, depth_func="always", red=1, green=0, blue=1, alpha=0, depth_write=0)
        if s["fog"]:
            b.fog((200, 100, 0), np.linspace(1, 0, 129), z_flip=True)

    return setup


@settings(max_examples=15, deadline=None, derandomize=True)
@given(fragment_states())
def test_random_states_record_alike_on_both_routes(state: dict) -> None:
    stats, routes, pipe = assert_recorded_alike(scene(state_setup(state), state["seed"]))
    assert pipe.recorded_fragment_draws == len(stats) == 3
    assert set(routes) == {ROUTE_COMPILED}


@settings(max_examples=8, deadline=None, derandomize=True)
@given(proctex_states())
def test_random_procedural_textures_record_alike_on_both_routes(state: tuple) -> None:
    stats, routes, pipe = assert_recorded_alike(scene(proctex_setup(*state)))
    assert pipe.recorded_fragment_draws == len(stats) == 3 and set(routes) == {ROUTE_COMPILED}


@pytest.mark.parametrize("stem", [*PROBED, "game_lit_300"])
def test_samples_record_alike_on_both_routes(stem: str) -> None:
    stats, routes, pipe = assert_recorded_alike(pica.read(SAMPLES / f"{stem}.pica"))
    assert pipe.recorded_fragment_draws == len(stats) and set(routes) == {ROUTE_COMPILED}


def test_a_minicraft_frame_records_alike_on_both_routes() -> None:
    """Its first three frames: citro2d's procedural-texture shapes and sprites, through the geometry shader (the
    vertex side stays staged there; the fragment side records on the compiled route)."""
    stats, _, pipe = assert_recorded_alike(pica.read(MINICRAFT), frames=3)
    assert pipe.recorded_fragment_draws == len(stats) > 16


# ---------------------------------------------------------------------------------------------- the probes
def staged(session: Session, on: bool) -> None:
    """Send the session pipeline's observed draws to the staged oracle (``on``) or back to the compiled route."""
    pipe = observed_sink(session.replay.pipeline)
    pipe.route = Route.REFERENCE if on else Route.COMPILED


def probes(session: Session, draw: int, pixel: tuple[int, int], route: str) -> tuple:
    """A probe of the draw and of its pixel (``route``: the draw's route expected while probed)."""
    p = probe.probe_draw(session, draw, pixel)
    assert p.route == route
    stats = {k: v for k, v in p.stats.items() if k != "time_s"}
    return p.fates, p.overdraw, p.edges, p.fragments, stats, probe.pixel_fragments(session, draw, pixel)


def assert_probes_alike(session: Session, draw: int, pixel: tuple[int, int]) -> None:
    pipe = observed_sink(session.replay.pipeline)
    before = pipe.recorded_fragment_draws
    compiled = probes(session, draw, pixel, ROUTE_COMPILED)
    assert pipe.recorded_fragment_draws == before + 2  # both probes ran on the compiled route
    staged(session, True)
    try:
        reference = probes(
            session, draw, pixel, f"reference: {draw_mod.FUSED_VERTICES_OFF}; {draw_mod.FUSED_FRAGMENTS_OFF}"
        )
    finally:
        staged(session, False)
    for a, b in zip(compiled[:3], reference[:3], strict=True):
        assert np.array_equal(a, b)
    assert compiled[3:] == reference[3:]


def busy_pixel(p: probe.DrawProbe) -> tuple[int, int]:
    """The window pixel with the most fragments of the probed draw."""
    row, x = np.unravel_index(int(p.fates.sum(axis=0).argmax()), p.overdraw.shape)
    return int(x), int(p.overdraw.shape[0] - 1 - row)


@pytest.mark.parametrize("stem", PROBED)
def test_probes_agree_on_both_routes(stem: str) -> None:
    session = Session.open(SAMPLES / f"{stem}.pica")
    tl = session.index()
    for draw in sorted({0, len(tl.draws) // 2, len(tl.draws) - 1}):
        pixel = busy_pixel(probe.probe_draw(session, draw))
        assert_probes_alike(session, draw, pixel)


def test_pixel_history_agrees_on_both_routes_in_minicraft() -> None:
    """The busiest pixel of the last draw of Minicraft's fifth frame, over the frames before it."""
    session = Session.open(MINICRAFT)
    tl = session.index()
    until = tl.frame_start(5)
    last = tl.draw_count_before(until) - 1
    pixel = busy_pixel(probe.probe_draw(session, last))
    compiled = probe.pixel_history(session, pixel, until)
    staged(session, True)
    reference = probe.pixel_history(session, pixel, until)
    assert compiled == reference and len(compiled) > 1


# ---------------------------------------------------------------------------------------------- refusals
def test_what_the_compiled_route_does_not_record_is_named() -> None:
    """Per-fragment values (the fragment debugger's watcher) and tests without fates take the staged stages, and
    the draw's route says why; a fates-only watcher keeps the draw compiled."""
    capture = pica.read(SAMPLES / "triangle.pica")

    class TestsOnly(StageObserver):
        fragment_tests = True

    for observer, reason in (
        (FragmentWatcher((1, 1)), draw_mod.FRAGMENT_VALUES_WATCHED),
        (TestsOnly(), draw_mod.TESTS_WITHOUT_FATES),
    ):
        pipe = Pipeline(stage_observer=observer)
        rep = Replay(capture, checkpoints=False, pipeline=pipe)
        rep.run()
        assert {d.route for d in rep.draws} == {f"reference: {reason}"}
        assert pipe.recorded_fragment_draws == 0


def test_a_declined_compiled_shading_falls_back_having_recorded_nothing() -> None:
    """A plan whose texture lies outside VRAM/FCRAM: the compiled shading declines before any write, the draw is
    recorded with the staged stages (the same records as the oracle) and its route names the decline."""
    capture = scene(lambda b, rng: b.texture(0, texture(rng), "RGBA8"))
    rec_a, mem_a, stats_a, _, _ = recorded(capture, False)
    rec = Recorder()
    pipe = Pipeline(stage_observer=rec)
    plans = pipe._fragment_plans
    real_get = plans.get

    def outside(ds, memory):
        plan = real_get(ds, memory)
        ints = plan.ints.copy()
        ints[ff.TEXTURE_ADDRESS_SLOT[0]] = 0x10000000  # no region there
        return ff.FragmentPlan(ints, (ints, *plan.args[1:]))

    plans.get = outside  # type: ignore[method-assign]
    rep = Replay(capture, checkpoints=False, pipeline=pipe)
    rep.run()
    assert draw_stats(rep) == stats_a and digests(rep) == mem_a
    for (_, a), (_, b) in zip(rec_a.fates, rec.fates, strict=True):
        assert_same_fates(a, b, "declined draw")
    assert {d.route for d in rep.draws} == {f"reference: {ff.DECLINED[TEXTURE_FAULT]}"}
    assert pipe.recorded_fragment_draws == 0
