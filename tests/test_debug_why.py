"""``picaemu why`` (picaemu/debug/why.py): hand-built captures for each verdict, each checked for its verdict, the
stage counts (from the scene's construction: a 100x60 rectangle is 6000 fragments, two counter-clockwise
triangles) and the detail text; the bundled samples and a real game's draw."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from picaemu.builder import CaptureBuilder
from picaemu.cli import main
from picaemu.debug import replay as drp
from picaemu.debug.replay import DebugReplay
from picaemu.debug.why import STAGES, VERDICTS, Why
from picaemu.errors import PicaError
from samples._common import color_frame, rect, solid
from samples.generate import CAPTURES

MINICRAFT = Path(__file__).parent / "data" / "games" / "minicraft.pica"
RECT = 100 * 60  # fragments of rect(50, 50, 150, 110): pixel centres inside a 100x60 landscape rectangle
WHITE = (1.0, 1.0, 1.0, 1.0)


def scene(setup: Callable[[CaptureBuilder], None] = lambda b: None, pos: np.ndarray | None = None) -> DebugReplay:
    """One frame: ``setup`` then one draw (a white rectangle unless ``pos`` says otherwise)."""
    b = CaptureBuilder(name="why")
    color_frame(b, (0, 0, 0, 255))
    pos = rect(50, 50, 150, 110) if pos is None else pos
    b.vertices([pos, solid(len(pos), WHITE)])
    setup(b)
    b.draw(len(pos))
    b.end_frame()
    return DebugReplay(b.capture())


def why(replay: DebugReplay, draw: int = 0) -> Why:
    return replay.debugger.why(draw)


def counts(answer: Why) -> dict[str, tuple[int, int]]:
    return {s.stage: (s.into, s.out) for s in answer.stages}


def test_visible_rectangle_every_stage_counted() -> None:
    answer = why(scene())
    assert answer.verdict == "visible" and list(counts(answer)) == list(STAGES) and answer.decided_by == "visible"
    c = counts(answer)
    assert c["vertices loaded"] == (6, 6) and c["primitives assembled"] == (6, 2) and c["clipping"] == (2, 2)
    assert c["face culling"] == (2, 2) and c["zero area"] == (2, 2) and c["rasterization"] == (2, RECT)
    assert all(c[s] == (RECT, RECT) for s in ("scissor test", "alpha test", "stencil test", "depth test"))
    assert c["overdraw"] == (RECT, RECT) and c["display"] == (RECT, RECT)
    assert "display transfer from 0x18000000" in answer.detail and "COLORBUFFER_LOC = 0x18000000" in answer.detail


def test_no_vertices() -> None:
    answer = why(scene(pos=rect(50, 50, 150, 110)[:2]))
    assert answer.verdict == "no-vertices"
    assert counts(answer)["primitives assembled"] == (2, 0)
    assert answer.detail == "2 vertices form no whole triangle (PRIMITIVE_CONFIG = triangle list)"


def test_culled() -> None:
    answer = why(scene(lambda b: b.cull("cull counter-clockwise (keep clockwise)")))
    assert answer.verdict == "culled" and counts(answer)["face culling"] == (2, 0)
    assert answer.decided_by == "face culling"
    assert answer.detail == (
        "FACECULLING_CONFIG = cull counter-clockwise (keep clockwise); all 2 triangles are counter-clockwise"
    )


def test_clipped() -> None:
    answer = why(scene(pos=rect(50, 50, 150, 110, z=-5.0)))  # SCREEN maps z -1..1 to the depth range: behind
    assert answer.verdict == "clipped" and counts(answer)["clipping"] == (2, 0)
    assert answer.detail.startswith("all 2 triangles lie outside the clip volume")
    assert "2 beyond the near (z > 0) plane" in answer.detail and answer.detail.endswith("FRAGOP_CLIP = off")


@pytest.mark.parametrize(
    ("mode", "face_culled"),
    [("none", 0), ("cull counter-clockwise (keep clockwise)", 1), ("cull clockwise (keep counter-clockwise)", 1)],
)
def test_cull_split_adds_up_to_the_pipeline_counter(mode: str, face_culled: int) -> None:
    """One counter-clockwise, one clockwise and one zero-area triangle: the observer's split (face culling, zero
    area) matches the pipeline's ``primitives_culled`` (``explain`` checks the sum) for every cull mode."""
    ccw = [[60, 60, 0.5, 1], [120, 60, 0.5, 1], [60, 120, 0.5, 1]]
    cw = [[200, 60, 0.5, 1], [200, 120, 0.5, 1], [260, 60, 0.5, 1]]
    flat = [[300, 60, 0.5, 1], [320, 80, 0.5, 1], [340, 100, 0.5, 1]]
    replay = scene(lambda b: b.cull(mode), pos=np.array([*ccw, *cw, *flat], np.float32))
    answer = why(replay)
    c = counts(answer)
    assert c["face culling"] == (3, 3 - face_culled) and c["zero area"] == (3 - face_culled, 2 - face_culled)
    assert replay.draws[0].stats["primitives_culled"] == face_culled + 1
    assert answer.verdict == "visible"


def test_degenerate_zero_area() -> None:
    line = np.array([[10, 10, 0.5, 1], [20, 20, 0.5, 1], [30, 30, 0.5, 1]], np.float32)
    answer = why(scene(pos=line))
    assert answer.verdict == "degenerate" and counts(answer)["zero area"] == (1, 0)
    assert answer.detail == (
        "the 1 triangle has zero area in window coordinates (12.4 fixed point): its vertices are collinear or coincide"
    )


def test_degenerate_covers_no_pixel_centre() -> None:
    speck = np.array([[10.6, 10.6, 0.5, 1], [10.8, 10.6, 0.5, 1], [10.6, 10.8, 0.5, 1]], np.float32)
    answer = why(scene(pos=speck))
    assert answer.verdict == "degenerate" and counts(answer)["rasterization"] == (1, 0)
    assert (
        answer.detail
        == "the 1 triangle that reached the rasterizer covers no pixel centre of the 240x400 render target"
    )


def test_scissor() -> None:
    def box(b: CaptureBuilder) -> None:
        b.set("SCISSORTEST_MODE", mode="include (reject pixels outside the box)")
        b.set("SCISSORTEST_POS", x1=0, y1=0)
        b.set("SCISSORTEST_DIM", x2=7, y2=7)

    answer = why(scene(box))
    assert answer.verdict == "scissor" and counts(answer)["scissor test"] == (RECT, 0)
    assert answer.detail.startswith("SCISSORTEST_MODE = include (reject pixels outside the box) (box at column 0")
    assert answer.detail.endswith(f"all {RECT} fragments that reached the scissor test failed it")


def test_alpha_test() -> None:
    answer = why(scene(lambda b: b.alpha_test(True, "less", 128)))
    assert answer.verdict == "alpha-test" and counts(answer)["alpha test"] == (RECT, 0)
    assert answer.detail == (
        "FRAGOP_ALPHA_TEST = 0x00008041 (enable on, func less, ref 128); their alpha was 255..255; "
        f"all {RECT} fragments that reached the alpha test failed it"
    )


def test_stencil() -> None:
    answer = why(scene(lambda b: b.stencil(True, "never", 3)))
    assert answer.verdict == "stencil" and counts(answer)["stencil test"] == (RECT, 0)
    assert answer.detail.startswith("STENCIL_TEST = 0x")
    assert "enable on, func never" in answer.detail and "ref 3" in answer.detail


def test_depth() -> None:
    answer = why(scene(lambda b: b.depth_test(True, "less")))  # the buffer is cleared to 0: nothing is less
    assert answer.verdict == "depth" and counts(answer)["depth test"] == (RECT, 0)
    assert answer.detail.startswith("DEPTH_COLOR_MASK = 0x") and "(depth_test on, depth_func less)" in answer.detail
    assert answer.detail.endswith(f"all {RECT} fragments that reached the depth test failed it")


def test_color_mask() -> None:
    answer = why(scene(lambda b: b.depth_test(False, color=False)))
    assert answer.verdict == "color-mask" and counts(answer)["color write mask"] == (RECT, 0)
    assert answer.detail == (
        "DEPTH_COLOR_MASK = 0x00001060 (red off, green off, blue off, alpha off): no channel is written; "
        f"{RECT} fragments passed every test"
    )


def test_color_writes_off() -> None:
    answer = why(scene(lambda b: b.set("COLORBUFFER_WRITE", enable=0)))
    assert answer.verdict == "color-mask" and answer.detail.startswith("COLORBUFFER_WRITE = 0: color writes are off")


def overdraw_scene(cover_alpha: float) -> DebugReplay:
    """Draw 0: a white rectangle; draw 1: a larger red one over it with alpha ``cover_alpha`` (blended)."""
    b = CaptureBuilder(name="overdraw")
    color_frame(b, (0, 0, 0, 255))
    pos = np.concatenate([rect(50, 50, 150, 110), rect(40, 40, 160, 120)])
    b.vertices([pos, np.concatenate([solid(6, WHITE), solid(6, (1, 0, 0, cover_alpha))])])
    b.depth_test(False, write=False)
    b.draw(6)
    b.draw(6, first=6)
    b.end_frame()
    return DebugReplay(b.capture())


def test_overdrawn_by_an_opaque_draw() -> None:
    answer = why(overdraw_scene(1.0))
    assert answer.verdict == "overdrawn" and counts(answer)["overdraw"] == (RECT, 0)
    assert answer.detail == f"all {RECT} pixels it wrote were replaced later in frame 0 by draw(s) 1"


def test_translucent_cover_does_not_overdraw() -> None:
    """A half-transparent later draw blends with the rectangle: the rectangle still shows through."""
    answer = why(overdraw_scene(0.5))
    assert answer.verdict == "visible" and counts(answer)["overdraw"] == (RECT, RECT)


def test_not_displayed() -> None:
    def elsewhere(b: CaptureBuilder) -> None:
        b.set("COLORBUFFER_LOC", address=b.alloc(b.width * b.height * 4, vram=True))

    answer = why(scene(elsewhere))
    assert answer.verdict == "not-displayed" and counts(answer)["display"] == (RECT, 0)
    assert answer.detail.startswith(f"its {RECT} pixels went into the color buffer COLORBUFFER_LOC = 0x")
    assert answer.detail.endswith(
        "which no later display transfer, texture copy, present, LCD framebuffer or texture reads"
    )


def test_every_verdict_is_named() -> None:
    assert set(VERDICTS) == {
        "visible",
        "no-vertices",
        "culled",
        "clipped",
        "degenerate",
        "scissor",
        "alpha-test",
        "stencil",
        "depth",
        "color-mask",
        "overdrawn",
        "not-displayed",
    }


@pytest.mark.parametrize("name", ["triangle", "cube", "blending", "lit_sphere", "gs_sprites", "ssaa_transfer"])
def test_bundled_samples_are_visible(name: str) -> None:
    replay = drp.open(CAPTURES / f"{name}.pica")
    last = len(replay.debugger.timeline.draws) - 1
    answer = replay.debugger.why(last)
    assert answer.verdict == "visible", answer.detail
    assert answer.stages[-1].out > 0


def test_minicraft_draws() -> None:
    """A real citro2d game: a visible sprite; a 32x32 tile the next draw covers whole (frame 17); and the last
    frame's draws, which the capture ends before showing."""
    replay = drp.open(MINICRAFT)
    answer = replay.debugger.why(8)
    assert answer.verdict == "visible" and answer.frame == 1
    assert "the display transfer from 0x18000000 reads it" in answer.detail
    covered = replay.debugger.why(148)
    assert covered.verdict == "overdrawn" and counts(covered)["overdraw"] == (1024, 0)
    assert covered.detail == "all 1024 pixels it wrote were replaced later in frame 17 by draw(s) 149"
    last = replay.debugger.why(len(replay.debugger.timeline.draws) - 1)
    assert last.verdict == "not-displayed"
    assert last.detail.endswith("(the capture ends before any display transfer, texture copy or present)")


def test_cli_json_and_frame_selection() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["why", str(CAPTURES / "stencil.pica"), "--frame", "0", "--draw", "0", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert set(data) == {"draw", "frame", "verdict", "stages", "detail"}
    assert data["draw"] == 0 and data["verdict"] == "color-mask"
    assert all(set(s) == {"stage", "unit", "in", "out"} for s in data["stages"])
    text = runner.invoke(main, ["why", str(CAPTURES / "stencil.pica"), "--draw", "1"])
    assert text.exit_code == 0 and text.output.startswith("draw 1 (frame 0): visible")
    bad = runner.invoke(main, ["why", str(CAPTURES / "stencil.pica"), "--frame", "0", "--draw", "9"])
    assert bad.exit_code == 2 and "frame 0 has 3 draw(s); there is no draw 9 in it" in bad.output


def test_draw_out_of_range() -> None:
    with pytest.raises(PicaError, match="draw 5 outside"):
        scene().debugger.why(5)
