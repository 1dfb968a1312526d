"""The fused vertex front end (``picaemu.geometry.front_end``) against the staged path it stands for: every bundled
sample capture and random scenes replayed on the reference route and on the compiled one with the loader first
(``LoaderFirst``: the geometry in ``front_end``'s call) give the same
memory (every region, byte for byte), the same per-draw statistics and the same draw bounds — and the fused path
really served draws (clipping included; and fell back for flow control, strips, partial triangles and the geometry
shader); the assembler's bookkeeping for callers that form triangles themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.draw import DrawCall
from picaemu.geometry.primitive_assembly import Assembler, Topology, kept_positions, triangle_positions
from picaemu.pipeline import Choice, Pipeline
from picaemu.replay import Replay
from samples._common import VS_TEX
from tests.conftest import memory_digests
from tests.test_pipeline import reference

CAPTURES = sorted((Path(__file__).resolve().parent.parent / "samples" / "captures").glob("*.pica"))
SLOW = {"game_cubes_3000"}


class LoaderFirst(Pipeline):
    """The compiled route with the vertex loader first (the fused vertex side's plan refused, as for an
    immediate-mode draw): each draw's geometry in ``geometry.front_end``'s compiled call where it covers the draw.
    A subclass: the compiled loop is not offered."""

    def choose_route(self, call: DrawCall) -> Choice:
        return super().choose_route(call)._replace(vertex="the loader first (test)")


Ways = tuple[Callable[[], Pipeline], Callable[[], Pipeline]]
FUSED: Ways = (reference, LoaderFirst)


def replay_both(capture: pica.Capture, ways: Ways = FUSED) -> list:
    """For each pipeline ``ways`` makes: (memory digests, per-draw (stats without time, bounds), draws whose
    geometry ran compiled, the pipeline)."""
    out = []
    for make in ways:
        pipe = make()
        replay = Replay(capture, checkpoints=False, pipeline=pipe)
        replay.run()
        memory = replay.memory
        digests = memory_digests(memory)
        draws = [({k: v for k, v in d.stats.items() if k != "time_s"}, d.bounds) for d in replay.draws]
        out.append((digests, draws, pipe.fused_draws, pipe))
    return out


def assert_same(capture: pica.Capture, ways: Ways = FUSED) -> tuple[int, int]:
    """Both ways agree; returns (draws, draws whose geometry ran compiled) of the second way."""
    (mem_a, draws_a, *_), (mem_b, draws_b, fused, _) = replay_both(capture, ways)
    assert len(draws_a) == len(draws_b)
    for i, (one, other) in enumerate(zip(draws_a, draws_b, strict=True)):
        assert one == other, f"draw {i}"
    assert mem_a == mem_b
    return len(draws_a), fused


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in CAPTURES], ids=lambda p: p.stem
)
def test_fused_front_end_matches_the_stages_on_every_sample(path: Path) -> None:
    draws, fused = assert_same(pica.read(path))
    if path.stem.startswith(("game_cubes", "game_sprites")):
        assert fused == draws  # the common case these scenes are made of (the draws crossing the edge clipped)
    if path.stem == "game_lit_300":
        assert fused >= 0.9 * draws  # with quaternion varyings
    if path.stem == "gs_sprites":  # a GS draw compiles only through the fused vertex side (picaemu.fused.geometry,
        assert fused == 0  # tests/test_fused_geometry.py), which LoaderFirst refuses: the loader-first way stages it


# VS_TEX with its colour chosen under a bool uniform: a program with flow control (the staged path runs it)
IFU_COLOR = "    ifu flag\n        mov outclr, intc\n    .else\n        mov outclr, inclr\n    .end\n"
VS_FLOW = VS_TEX.replace(".fvec projection[4]\n", ".fvec projection[4]\n.bool flag\n").replace(
    "    mov outclr, inclr\n", IFU_COLOR
)
assert "ifu" in VS_FLOW


def random_scene(seed: int) -> pica.Capture:
    """Draws of random triangles in clip space (most inside the clip volume, some crossing its planes or behind
    the eye, some NaN), random cull modes, index buffers with repeats, strips, lists of any length, and a
    program with flow control."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"front end {seed}")
    b.begin_frame(clear=(0, 0, 0, 255), depth=0)
    b.depth_test(True, "greater")
    tex = (rng.uniform(0, 255, (8, 8, 4))).astype(np.uint8)
    b.texture(0, tex, "RGBA8")
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    n = 60
    w = rng.uniform(0.5, 1.5, n)  # inside the clip volume: |x|, |y| <= w, -w <= z <= 0
    pos = np.stack([w * rng.uniform(-1, 1, n), w * rng.uniform(-1, 1, n), -w * rng.uniform(0, 1, n), w], axis=1)
    out = rng.random(n) < 0.08  # outside a plane, or behind the eye
    pos[out] = rng.uniform(-3, 3, (int(out.sum()), 4))
    pos[rng.random(n) < 0.02, 0] = np.nan
    pos = pos.astype(np.float32)
    uv = rng.uniform(0, 1, (n, 2)).astype(np.float32)
    col = rng.uniform(0, 1, (n, 4)).astype(np.float32)
    for k, program in enumerate((VS_TEX, VS_FLOW)):
        b.shader(program)
        b.uniforms(0, np.eye(4, dtype=np.float32))
        b.vertices([pos, uv, col])
        for _ in range(12 if k == 0 else 3):
            b.set("FACECULLING_CONFIG", mode=int(rng.integers(4)))
            choice = rng.integers(4)
            if choice == 0:
                b.draw_indexed(rng.integers(0, n, 3 * int(rng.integers(1, 8))))
            elif choice == 1:
                b.draw(int(rng.integers(3, 7)), "triangle strip", first=int(rng.integers(0, n - 7)))
            else:
                b.draw(int(rng.integers(3, 10)), first=int(rng.integers(0, n - 10)))
    b.end_frame()
    return b.capture()


@pytest.mark.parametrize("seed", range(8))
def test_fused_front_end_matches_the_stages_on_random_scenes(seed: int) -> None:
    draws, fused = assert_same(random_scene(seed))
    assert 0 < fused < draws


def test_random_scenes_take_every_route() -> None:
    """Across the seeds, the fused path both serves draws with culled triangles and falls back."""
    totals = [assert_same(random_scene(seed)) for seed in range(8, 12)]
    assert sum(f for _, f in totals) > 0 and sum(d - f for d, f in totals) > 0


@pytest.mark.parametrize("seed", range(4))
def test_assembler_advance_leaves_the_state_assemble_leaves(seed: int) -> None:
    """``Assembler.advance`` (the fused paths' bookkeeping: the triangles formed and the vertices held, by the
    shared ``triangle_positions`` / ``kept_positions`` at parity 0) equals ``assemble`` whenever
    ``takes_whole_triangles`` holds, for every topology; otherwise the caller assembles (checked here too)."""
    rng = np.random.default_rng(seed)
    staged, fused = Assembler(), Assembler()
    for _ in range(40):
        topology = Topology(int(rng.choice([0, 0, 0, 1, 2, 3])))
        n = int(rng.integers(0, 8))
        verts = rng.uniform(0, 1, (n, 5)).astype(np.float32)
        if rng.random() < 0.2:
            staged.reset()
            fused.reset()
        before = fused.takes_whole_triangles(topology)
        assert before == (staged.pending is None or staged.topology is not topology)
        staged.assemble(topology, verts)
        if before:
            triangles = triangle_positions(topology.value, n, 0).shape[0]
            fused.advance(topology, triangles, verts[kept_positions(topology.value, n)])
        else:
            fused.assemble(topology, verts)
        assert (fused.topology, fused.parity) == (staged.topology, staged.parity)
        assert (fused.pending is None) == (staged.pending is None)
        if staged.pending is not None:
            assert np.array_equal(fused.pending, staged.pending)
