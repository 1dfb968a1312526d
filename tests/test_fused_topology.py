"""Strips, fans, GS-less "geometry primitive" draws and the user clip plane through the compiled vertex side
(``picaemu.fused.vertices``) and the compiled draw loop (``picaemu.fused.loop``) against the staged path
(``primitive_assembly.Assembler``, ``clipping.clip_triangles``): random scenes of every topology, arrays and u8 /
u16 indices, strips and fans continued across draws without a restart (the loop leaves those to Python and keeps
the assembler as the staged path would), triangles to clip, a user plane switched on and off between draws; and
the first frames of a real citro2d game (its draws are "geometry primitive" lists)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay
from samples._common import VS_TEX
from tests.test_fused_loop import _facts
from tests.test_fused_vertices import assert_same
from tests.test_pipeline import reference

TOPOLOGIES = ("triangle list", "triangle strip", "triangle fan", "geometry primitive")
MINICRAFT = Path(__file__).resolve().parent / "data" / "games" / "minicraft.pica"


def topology_scene(seed: int, restarts: float = 1.0, user_plane: bool = False) -> pica.Capture:
    """Random draws of every topology (arrays, u8 and u16 indices with repeats) over clip-space vertices, most
    inside the clip volume, some crossing it; a draw writes RESTART_PRIMITIVE with probability ``restarts``;
    ``user_plane``: every other draw or so enables a random user clip plane through the middle of the screen."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"topologies {seed}")
    b.begin_frame(clear=(0, 0, 0, 255), depth=0)
    b.depth_test(True, "greater")
    b.texture(0, rng.uniform(0, 255, (8, 8, 4)).astype(np.uint8), "RGBA8")
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    n = 60
    w = rng.uniform(0.5, 1.5, n)
    pos = np.stack([w * rng.uniform(-1, 1, n), w * rng.uniform(-1, 1, n), -w * rng.uniform(0, 1, n), w], axis=1)
    out = rng.random(n) < 0.08
    pos[out] = rng.uniform(-3, 3, (int(out.sum()), 4))
    b.shader(VS_TEX)
    b.uniforms(0, np.eye(4, dtype=np.float32))
    b.vertices([pos.astype(np.float32), rng.uniform(0, 1, (n, 2)).astype(np.float32), rng.uniform(0, 1, (n, 4))])
    for _ in range(16):
        b.set("FACECULLING_CONFIG", mode=int(rng.integers(3)))
        if user_plane:
            b.set("FRAGOP_CLIP", enable=int(rng.random() < 0.6))
            for i, value in enumerate(rng.uniform(-1, 1, 4) * (1, 1, 0.2, 0.2)):
                b.set(f"FRAGOP_CLIP_DATA{i}", value=float(value))
        topology = TOPOLOGIES[int(rng.integers(4))]
        restart = bool(rng.random() < restarts)
        k = int(rng.integers(1, 7))
        count = 3 * k if topology in ("triangle list", "geometry primitive") else k + 2
        if rng.random() < 0.5:
            kind = "u8" if rng.random() < 0.5 else "u16"
            b.draw_indexed(rng.integers(0, n, count), topology, index_type=kind, restart=restart)
        else:
            b.draw(count, topology, first=int(rng.integers(0, n - count)), restart=restart)
    b.end_frame()
    return b.capture()


def _replay(capture: pica.Capture, pipeline: Pipeline) -> Replay:
    replay = Replay(capture, pipeline=pipeline, checkpoints=False)
    replay.run()
    return replay


def _assert_compiled_like_staged(capture: pica.Capture) -> Replay:
    """The compiled loop and the staged path give the same pixels, draw facts (counters, bounds) and assembler
    state; returns the compiled replay."""
    compiled, staged = _replay(capture, Pipeline()), _replay(capture, reference())
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    one, other = compiled.pipeline.assembler, staged.pipeline.assembler
    assert (one.topology, one.parity, one.pending is None) == (other.topology, other.parity, other.pending is None)
    if one.pending is not None:
        assert np.array_equal(one.pending, other.pending)
    return compiled


@pytest.mark.parametrize("seed", range(6))
def test_every_topology_runs_through_the_fused_vertex_side(seed: int) -> None:
    draws, fused = assert_same(topology_scene(seed))
    assert fused == draws  # every draw restarts: each starts with nothing buffered


@pytest.mark.parametrize("seed", [1, 2, 4, 5])  # seeds with a strip or fan continued without a restart
def test_strips_continued_without_a_restart_are_the_same(seed: int) -> None:
    """Draws without a restart continue the buffered strip / fan vertices: the fused side leaves those draws to
    the staged path and hands the assembler what it buffered (the next draw may need it)."""
    draws, fused = assert_same(topology_scene(seed, restarts=0.4))
    assert 0 < fused < draws


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_loop_runs_every_topology_like_the_staged_path(seed: int) -> None:
    compiled = _assert_compiled_like_staged(topology_scene(100 + seed))
    assert compiled.pipeline.compiled_count == len(compiled.draws)


@pytest.mark.parametrize("seed", [0, 2, 4, 5])  # 2, 4, 5: a strip or fan continued without a restart
def test_the_compiled_loop_keeps_the_assembler_across_draws_without_restart(seed: int) -> None:
    """The loop leaves a continued strip / fan to Python, which finds the vertices the loop's draw buffered."""
    compiled = _assert_compiled_like_staged(topology_scene(200 + seed, restarts=0.4))
    assert 0 < compiled.pipeline.compiled_count <= len(compiled.draws)
    assert (compiled.pipeline.compiled_count < len(compiled.draws)) == (seed != 0)


@pytest.mark.parametrize("seed", range(4))
def test_the_user_clip_plane_is_clipped_in_the_compiled_vertex_side(seed: int) -> None:
    capture = topology_scene(300 + seed, user_plane=True)
    draws, fused = assert_same(capture)
    assert fused == draws
    compiled = _assert_compiled_like_staged(capture)
    assert compiled.pipeline.compiled_count == len(compiled.draws)
    assert sum(d.stats["primitives_clipped"] + d.stats["primitives_clipped_away"] for d in compiled.draws) > 0


def test_minicraft_first_frames_run_compiled_like_the_staged_path() -> None:
    """The real citro2d game's title frames (indexed "geometry primitive" lists, triangles to clip)."""
    runs = []
    for pipeline in (Pipeline(), reference()):
        replay = Replay(pica.read(MINICRAFT), pipeline=pipeline, checkpoints=False)
        replay.run_to_frame(2)
        runs.append(replay)
    compiled, staged = runs
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    assert any(d.stats["primitives_clipped"] for d in compiled.draws)
    assert compiled.pipeline.compiled_count + compiled.pipeline.fused_vertex_draws == len(compiled.draws)
