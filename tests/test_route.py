"""Each draw's route (``DrawCall.route`` -> ``DrawRecord.route`` -> ``picaemu stats``): "compiled" when both sides
ran compiled (from the pipeline or the command processor's compiled loop), else "reference: <reason>[; <reason>]"
naming why: the plans' refusals, run-time declines, an observer, a seam, immediate mode. Checked on hand-made
draws, the bundled samples, the compiled loop and a few frames of a real game (minicraft), where a spying pipeline
is the oracle: a draw is compiled exactly when both of its sides ran fused, and names every side's refusal."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica

from picaemu.analysis import stats as st
from picaemu.builder import CaptureBuilder
from picaemu.cli import main
from picaemu.debug.state_views import VertexRecorder
from picaemu.draw import ROUTE_COMPILED, DrawCall, DrawKind, route_reasons, with_reason
from picaemu.fused import fragments as ff
from picaemu.fused.fragment_kernel import TEXTURE_FAULT
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import (
    FUSED_FRAGMENTS_OFF,
    FUSED_VERTICES_OFF,
    IMMEDIATE_MODE,
    MID_PRIMITIVE,
    VERTEX_DECLINED,
    VERTEX_SHADER_SEAM,
    VERTICES_WATCHED,
    Choice,
    Pipeline,
    Route,
)
from picaemu.replay import Replay
from samples._common import SCREEN
from tests.test_pipeline import VBO, PerDraw, identity_vs, make_state, put

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "captures"
MINICRAFT = Path(__file__).resolve().parent / "data" / "games" / "minicraft.pica"
VS = """
.fvec projection[4]
.out outpos position
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outclr, v1
    end
.end
"""


def routes(capture: pica.Capture, pipeline: Pipeline | None = None) -> list[str]:
    """Every draw's route in a whole replay with ``pipeline`` (default: ``PerDraw``, each draw through the
    pipeline's own sides)."""
    rep = Replay(capture, checkpoints=False, pipeline=PerDraw() if pipeline is None else pipeline)
    rep.run()
    return [d.route for d in rep.draws]


def test_reasons_join_once() -> None:
    route = with_reason(ROUTE_COMPILED, "fog")
    assert route == "reference: fog" and route_reasons(route) == ["fog"]
    assert with_reason(route, "fog") == route
    assert with_reason(route, "lighting") == "reference: fog; lighting"
    assert route_reasons(ROUTE_COMPILED) == [] and route_reasons("") == []


def test_hand_made_draws_name_the_seam_and_immediate_mode() -> None:
    """A replaced vertex shader and an immediate-mode draw leave the vertex side to the reference path; the fragment
    side of this state is covered, so each names one reason."""
    state, memory = make_state(), PhysicalMemory()  # two vec4 attributes (position, color) at VBO
    verts = np.array([[-1, -1, -0.5, 1, 1, 0, 0, 1], [1, -1, -0.5, 1, 0, 1, 0, 1], [-1, 1, -0.5, 1, 0, 0, 1, 1]])
    memory.write(VBO, verts.astype(np.float32).tobytes())
    put(state, "NUMVERTICES", count=3)
    pipe = Pipeline(vertex_shader=identity_vs)
    arrays = DrawCall(0, DrawKind.ARRAYS, state, memory)
    pipe.draw(arrays)
    assert arrays.route == f"reference: {VERTEX_SHADER_SEAM}" and arrays.stats["fragments_rasterized"] > 0
    inputs = np.zeros((3, 16, 4), np.float32)
    inputs[:, :2] = verts.reshape(3, 2, 4)
    immediate = DrawCall(1, DrawKind.IMMEDIATE, state, memory, immediate_inputs=inputs)
    pipe.draw(immediate)
    assert immediate.route == f"reference: {IMMEDIATE_MODE}" and immediate.stats["fragments_rasterized"] > 0
    assert pipe.fused_fragment_draws == 2  # the fragment side ran compiled for both


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("triangle", "compiled"),
        ("fog", "compiled"),
        ("lit_sphere", "compiled"),
        ("proctex", "compiled"),
        ("game_rich_1000", "compiled"),
        ("gs_sprites", "compiled"),
    ],
)
def test_sample_routes(stem: str, expected: str) -> None:
    assert set(routes(pica.read(SAMPLES / f"{stem}.pica"))) == {expected}


def test_a_fates_observer_keeps_the_compiled_route() -> None:
    """``stats --fragment-map`` watches fates: recorded on the compiled route (``picaemu.fused.observed``)."""
    rows = st.collect(SAMPLES / "triangle.pica", fragment_map="overdraw").rows
    assert [r["route"] for r in rows] == [ROUTE_COMPILED]


def test_the_reference_route_names_both_sides_and_offers_no_loop() -> None:
    pipe = Pipeline(route=Route.REFERENCE)
    assert not pipe.compiled_allowed() and Pipeline().compiled_allowed() and not PerDraw().compiled_allowed()
    reasons = [FUSED_VERTICES_OFF, FUSED_FRAGMENTS_OFF]
    assert routes(pica.read(SAMPLES / "triangle.pica"), pipe) == ["reference: " + "; ".join(reasons)]
    assert pipe.fused_draws == pipe.fused_fragment_draws == pipe.compiled_count == 0


def test_an_observer_of_vertices_names_itself_once() -> None:
    pipe = Pipeline(stage_observer=VertexRecorder(0))
    rep = Replay(pica.read(SAMPLES / "triangle.pica"), checkpoints=False, pipeline=pipe)
    rep.run()
    assert [d.route for d in rep.draws] == [f"reference: {VERTICES_WATCHED}"]


def test_the_compiled_loop_records_its_draws_as_compiled() -> None:
    pipe = Pipeline()
    rep = Replay(pica.read(SAMPLES / "game_cubes_300.pica"), checkpoints=False, pipeline=pipe)
    rep.run()
    assert pipe.compiled_count > 0  # the loop ran most of them; the first of each state came through Python
    assert {d.route for d in rep.draws} == {ROUTE_COMPILED} and len(rep.draws) == 300


def test_run_time_declines_are_named() -> None:
    """A triangle list of 4 vertices (the vertex side declines it at run time; the staged assembler keeps the 4th
    vertex), then a draw of 3 without a restart (the assembler holds that vertex), then a clean one."""
    b = CaptureBuilder(name="declines")
    b.begin_frame(clear=(0, 0, 0, 255))
    b.shader(VS)
    b.uniforms(0, SCREEN)
    b.passthrough_tev()
    pos = np.array([[20, 20, 0, 1], [200, 20, 0, 1], [20, 200, 0, 1], [200, 200, 0, 1]] * 3, np.float32)
    b.vertices([pos, np.ones((len(pos), 4), np.float32)])
    b.draw(4)
    b.list.write("NUMVERTICES", 3)  # the same trigger sequence as ``draw``, without its RESTART_PRIMITIVE
    b._kick("DRAWARRAYS", indexed=False, triangles=False)
    b.draw(3)
    b.end_frame()
    assert routes(b.capture()) == [
        f"reference: {VERTEX_DECLINED}",
        f"reference: {MID_PRIMITIVE}",
        ROUTE_COMPILED,
    ]


def test_a_fragment_kernel_decline_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's code reaches the route through ``DECLINED`` (the staged path then draws it)."""
    monkeypatch.setattr(ff, "attempt", lambda plan, wt, stats: TEXTURE_FAULT)
    assert routes(pica.read(SAMPLES / "triangle.pica")) == [f"reference: {ff.DECLINED[TEXTURE_FAULT]}"]


class Spy(Pipeline):
    """Notes, per draw, what the route choice answered for each side: the oracle of the route. (A subclass: the
    compiled loop is not offered.)"""

    def __init__(self) -> None:
        super().__init__()
        self.sides: dict[int, list] = {}

    def choose_route(self, call: DrawCall) -> Choice:
        choice = super().choose_route(call)
        self.sides[call.index] = [side if isinstance(side, str) else True for side in (choice.vertex, choice.fragment)]
        return choice


def first_frames(capture: pica.Capture, frames: int) -> pica.Capture:
    """The capture cut after its ``frames``-th FrameEnd."""
    ends = [i for i, e in enumerate(capture.events) if isinstance(e, pica.FrameEnd)]
    return dataclasses.replace(capture, events=capture.events[: ends[frames - 1] + 1])


@pytest.fixture(scope="module")
def minicraft() -> pica.Capture:
    return first_frames(pica.read(MINICRAFT), 3)


def test_minicraft_routes_follow_what_each_side_did(minicraft: pica.Capture) -> None:
    spy = Spy()
    rep = Replay(minicraft, checkpoints=False, pipeline=spy)
    rep.run()
    assert len(rep.draws) == 24
    declines = {*ff.DECLINED.values(), VERTEX_DECLINED, MID_PRIMITIVE}  # the kernels' run-time declines
    for d in rep.draws:
        refusals = {a for a in spy.sides[d.index] if isinstance(a, str)}
        reasons = set(route_reasons(d.route))
        if refusals:
            assert refusals == reasons - declines, (d.index, d.route)
        else:
            assert d.route == ROUTE_COMPILED or reasons <= declines, (d.index, d.route)


def test_minicraft_stats_route_column_and_summary(minicraft: pica.Capture, tmp_path: Path) -> None:
    path = tmp_path / "mini.pica"
    pica.write(path, minicraft)
    result = CliRunner().invoke(main, ["stats", str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert all(r["route"] == ROUTE_COMPILED or r["route"].startswith("reference: ") for r in rows)
    compiled = sum(r["route"] == ROUTE_COMPILED for r in rows)
    assert f"route: {compiled}/{len(rows)} draws compiled" in result.stderr
    frames = CliRunner().invoke(main, ["stats", str(path), "--per", "frame", "--csv"])
    assert frames.exit_code == 0
    lines = frames.stdout.splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["frame", "draws", "compiled"]
    assert sum(int(line.split(",")[2]) for line in lines[1:]) == compiled
    assert sum(int(line.split(",")[1]) for line in lines[1:]) == len(rows)


def test_route_summary_counts_every_reason() -> None:
    rows = [
        {"route": "compiled"},
        {"route": "reference: fog"},
        {"route": "reference: topology strip; fog"},
        {"route": "compiled"},
        {"route": ""},
    ]
    assert st.route_summary(rows) == (
        "route: 2/5 draws compiled; reference: fog \u00d72; topology strip \u00d71; not reported \u00d71"
    )
    frames = st.per_frame([dict(r, frame=0, vertices=3) for r in rows], 1)
    assert frames[0]["draws"] == 5 and frames[0]["compiled"] == 2 and "route" not in frames[0]
