"""Fragment batching (``picaemu.fragment.batch``, ``Pipeline(batch_fragments=True)``) against one draw at a time:
every sample capture and random scenes give the same memory, per-draw statistics and bounds either way; batches
really form (and are refused where a draw reads what an earlier one writes); a replay stopped inside a batch, a
watching observer and the hazard rule each see exactly what one draw at a time gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import TEXUNIT_ADDR, CaptureBuilder
from picaemu.draw import DrawKind
from picaemu.fragment.batch import reads_targets, split_counters
from picaemu.geometry.vertex_loader import AttributeRead, VertexLoaderState
from picaemu.observer import Observer
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay
from samples._common import VS_TEX, rect, rect_uv
from tests.test_front_end import CAPTURES, SLOW, assert_same

# the staged fragment side on both (covered draws skip batching when the fused side is on: test_fused_fragments)
BATCH = ({"batch_fragments": False, "fused_fragments": False}, {"batch_fragments": True, "fused_fragments": False})


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in CAPTURES], ids=lambda p: p.stem
)
def test_batches_match_one_draw_at_a_time_on_every_sample(path: Path) -> None:
    draws, _, batched = assert_same(pica.read(path), BATCH)
    if path.stem == "game_lit_300":
        assert batched == draws - 1  # one fragment state throughout (the first draw runs before it repeats)
    if path.stem.startswith("game_cubes"):
        assert batched > draws // 2


def random_scene(seed: int) -> pica.Capture:
    """Runs of overlapping textured quads with one fragment state, and random changes between runs: blending,
    alpha, depth and stencil tests, scissor modes, filters (trilinear ones count texels per fragment unevenly:
    never batched), and a texture read from the color buffer being drawn (never batched)."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"batch {seed}")
    b.begin_frame(clear=(10, 20, 30, 255), depth=0)
    b.shader(VS_TEX)
    b.uniforms(
        0,
        np.diag([2 / 400, 2 / 240, 1, 1]).astype(np.float32)
        @ np.array([[1, 0, 0, -200], [0, 1, 0, -120], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32),
    )
    tex = b.texture(0, rng.integers(0, 256, (16, 16, 4), dtype=np.uint8), "RGBA8")
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    quads = []
    for _ in range(40):
        x, y = rng.uniform(0, 360), rng.uniform(0, 200)
        quads.append(rect(x, y, x + rng.uniform(8, 60), y + rng.uniform(8, 60), z=rng.uniform(-0.9, 0.9)))
    colors = rng.uniform(0, 1, (40 * 6, 4)).astype(np.float32)
    b.vertices([np.concatenate(quads), np.tile(rect_uv(), (40, 1)), colors])
    changes = (
        lambda: b.blend(),
        lambda: b.blend("one", "zero"),
        lambda: b.depth_test(True, "greater"),
        lambda: b.depth_test(True, "less", write=False),
        lambda: b.alpha_test(True, "greater", int(rng.integers(256))),
        lambda: b.alpha_test(False),
        lambda: b.stencil(True, "equal", ref=1),
        lambda: b.stencil(True, "always", ref=1, depth_pass="replace"),
        lambda: b.stencil(False),
        lambda: b.set("SCISSORTEST_MODE", mode=int(rng.choice([0, 1, 3]))),
        lambda: b.set("SCISSORTEST_POS", x1=int(rng.integers(0, 100)), y1=int(rng.integers(0, 200))),
        lambda: b.set("TEXUNIT0_PARAM", mag_filter="linear", min_filter="linear"),
        lambda: b.set("TEXUNIT0_PARAM", mag_filter="nearest", min_filter="linear", mip_filter="linear"),
        lambda: b.set(TEXUNIT_ADDR[0], address=b.color),
        lambda: b.set(TEXUNIT_ADDR[0], address=tex),
    )
    i = 0
    while i < 40:
        changes[int(rng.integers(len(changes)))]()
        run = int(rng.integers(1, 6))
        for _ in range(min(run, 40 - i)):
            b.draw(6, first=6 * i)
            i += 1
    b.end_frame()
    return b.capture()


@pytest.mark.parametrize("seed", range(10))
def test_batches_match_one_draw_at_a_time_on_random_scenes(seed: int) -> None:
    draws, _, batched = assert_same(random_scene(seed), BATCH)
    assert 0 < batched < draws


def test_a_replay_stopped_inside_a_batch_sees_every_draw_before_it() -> None:
    capture = pica.read(next(p for p in CAPTURES if p.stem == "game_lit_300"))
    shots = []
    for kwargs in BATCH:
        replay = Replay(capture, pipeline=Pipeline(**kwargs))
        replay.run_to_draw(150)
        shots.append((replay.color_buffer(), replay.draws[150].stats["fragments_written"]))
        replay.run_to_draw(40)  # backwards: from a checkpoint
        shots.append((replay.color_buffer(), replay.draws[40].stats["fragments_written"]))
    (a150, w150), (a40, w40), (b150, v150), (b40, v40) = shots
    assert np.array_equal(a150, b150) and np.array_equal(a40, b40) and not np.array_equal(a40, a150)
    assert w150 == v150 > 0 and w40 == v40 > 0


def test_a_watching_observer_gets_each_draw_finished() -> None:
    """A command-processor observer may read memory at draw end: with one attached nothing is deferred."""
    seen = []

    class Watch(Observer):
        def on_draw_end(self, call):
            seen.append(call.stats["fragments_written"])

    capture = pica.read(next(p for p in CAPTURES if p.stem == "game_lit_300"))
    pipe = Pipeline(batch_fragments=True)
    replay = Replay(capture, checkpoints=False, pipeline=pipe)
    replay.processor.attach(Watch())
    replay.run()
    assert pipe.batched_draws == 0 and len(seen) == 300 and min(seen) > 0
    assert seen == [d.stats["fragments_written"] for d in replay.draws]


def test_vertex_reads_that_may_reach_the_render_targets_are_seen() -> None:
    read = AttributeRead(0, 0, 0x1000, 16, np.dtype("<f4"), 4)
    layout = VertexLoaderState(1, (read,), (), 0, 0x8000, np.dtype("<u2"), 4, 10, 0)
    targets = ((0x1000 + 16 * 20, 0x2000), (0x9000, 0x9100))
    assert not reads_targets(layout, DrawKind.ARRAYS, targets)  # vertices 10..13 end before 0x1140
    assert reads_targets(layout.__class__(**{**layout.__dict__, "first": 18}), DrawKind.ARRAYS, targets)
    assert reads_targets(layout, DrawKind.ELEMENTS, targets)  # any u16 index may name a vertex in the target
    assert reads_targets(
        layout.__class__(**{**layout.__dict__, "index_address": 0x9000 - 4}), DrawKind.ELEMENTS, ((0x9000, 0x9100),)
    )  # the index buffer itself: 4 u16 = 8 bytes reach 0x9004
    assert not reads_targets(None, DrawKind.IMMEDIATE, targets)


def test_split_counters_counts_each_draws_fates() -> None:
    # draw 0: written, scissored, depth-killed; draw 1: alpha-killed, written x2; draw 2: nothing
    draw_of = np.array([0, 0, 0, 1, 1, 1])
    fate = np.array([0, 1, 4, 2, 0, 0], np.uint8)
    rows = split_counters(draw_of, fate, 3, texels=4 * 5)
    assert rows[0] == {
        "fragments_rasterized": 3,
        "killed_scissor": 1,
        "killed_alpha": 0,
        "killed_stencil": 0,
        "killed_depth": 1,
        "fragments_written": 1,
        "texels_fetched": 8,
    }
    assert rows[1]["fragments_written"] == 2 and rows[1]["killed_alpha"] == 1 and rows[1]["texels_fetched"] == 12
    assert rows[2] == dict.fromkeys(rows[2], 0)
