"""Statistics: counters checked against hand-computed geometry; per-frame sums; fragment maps; the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.analysis.stats import collect, heatmap, per_frame
from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.cli import main
from picaemu.errors import UnsupportedFeature
from samples._common import VS_TEX
from tests.test_builder import VS_COLOR

TRIANGLE_AREA = 240 * 180 // 2  # scene 1: apex (200, 210), base (80, 30)-(320, 30)


def _quads(depth_test: bool = False, order: tuple[float, float] = (0.2, 0.4)) -> CaptureBuilder:
    """One frame, two overlapping axis-aligned rectangles: x 100..200 and 150..250, y 50..150 (landscape), at
    depths ``order``."""
    b = CaptureBuilder()
    b.begin_frame()
    b.shader(VS_COLOR)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    b.depth_test(depth_test)
    rects = []
    for x0, z in zip((100, 150), order, strict=True):
        x1 = x0 + 100
        rects += [[x0, 50, z, 1], [x1, 50, z, 1], [x1, 150, z, 1], [x0, 50, z, 1], [x1, 150, z, 1], [x0, 150, z, 1]]
    b.vertices([np.array(rects, np.float32), np.ones((12, 4), np.float32)])
    b.draw(6)
    b.draw(6, first=6)
    b.end_frame()
    return b


def test_scene1_counters(captures_dir: Path) -> None:
    result = collect(captures_dir / "scene1_triangle")
    assert [r["frame"] for r in result.rows] == [0, 1]
    for row in result.rows:
        assert row["vertices"] == 3 and row["primitives_rasterized"] == 1
        assert row["fragments_rasterized"] == TRIANGLE_AREA and row["fragments_written"] == TRIANGLE_AREA
    frames = per_frame(result.rows, result.frames)
    assert [f["draws"] for f in frames] == [1, 1] and frames[0]["fragments_written"] == TRIANGLE_AREA


def test_depth_complexity_map_counts_overlap() -> None:
    result = collect(_quads().capture(), fragment_map="depth-complexity")
    counts = result.fragment_maps[0]
    assert counts.shape == (400, 240)
    assert counts.sum() == 2 * 100 * 100
    assert np.count_nonzero(counts == 2) == 50 * 100  # the overlap, x 150..200
    assert [r["fragments_written"] for r in result.rows] == [10000, 10000]
    assert heatmap(counts)[counts == 2][0].tolist() == [0, 200, 0]


def test_overdraw_map_counts_written_fragments() -> None:
    # depth test off: both rectangles are written, the overlap (x 150..200) twice
    counts = collect(_quads().capture(), fragment_map="overdraw").fragment_maps[0]
    assert counts.sum() == 2 * 100 * 100 and np.count_nonzero(counts == 2) == 50 * 100
    # depth test "greater" (larger z in front): the near rectangle (z 0.4) drawn first, then the far one (z 0.2),
    # which fails the test where the near one already is: the overlap is written once, 50 x 100 killed by depth
    b = _quads(depth_test=True, order=(0.4, 0.2))
    result = collect(b.capture(), fragment_map="overdraw")
    counts = result.fragment_maps[0]
    assert counts.sum() == 2 * 100 * 100 - 50 * 100 and counts.max() == 1
    assert [r["killed_depth"] for r in result.rows] == [0, 50 * 100]
    depth = collect(b.capture(), fragment_map="depth-complexity").fragment_maps[0]
    assert np.count_nonzero(depth == 2) == 50 * 100  # both still reach fragment coloring


def test_unknown_fragment_map_is_refused() -> None:
    with pytest.raises(UnsupportedFeature, match="fragment map"):
        collect(_quads().capture(), fragment_map="mystery")


def test_shader_instruction_counts() -> None:
    rows = collect(_quads().capture()).rows
    # VS_COLOR: 4 x dp4, mov, end = 6 instructions per vertex; 6 vertices per draw, all lanes active
    assert [r["vertices_shaded"] for r in rows] == [6, 6]
    assert [r["shader_instructions"] for r in rows] == [36, 36]


@pytest.mark.parametrize(("filt", "taps"), [("nearest", 1), ("linear", 4)])
def test_texel_counts_nearest_and_bilinear(filt: str, taps: int) -> None:
    b = CaptureBuilder()
    b.begin_frame()
    b.shader(VS_TEX)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.texture(0, np.full((8, 8, 4), 200, np.uint8), filter=filt)
    b.tev(0, rgb=("texture 0",))
    b.passthrough_tev()
    b.depth_test(False)
    pos = np.array(
        [
            [100, 50, 0.2, 1],
            [200, 50, 0.2, 1],
            [200, 150, 0.2, 1],
            [100, 50, 0.2, 1],
            [200, 150, 0.2, 1],
            [100, 150, 0.2, 1],
        ],
        np.float32,
    )
    b.vertices([pos, pos[:, :2] / 256, np.ones((6, 4), np.float32)])
    b.draw(6)
    b.end_frame()
    (row,) = collect(b.capture()).rows
    assert row["fragments_rasterized"] == 100 * 100 and row["texels_fetched"] == taps * 100 * 100


def test_stats_cli(captures_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        main,
        [
            "stats",
            str(captures_dir / "scene1_triangle"),
            "--per",
            "frame",
            "--json",
            "--plot",
            str(tmp_path / "p.png"),
            "--fragment-map",
            "depth-complexity",
            str(tmp_path / "m.png"),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # the routes' summary line goes to stderr
    assert doc["per"] == "frame" and doc["rows"][1]["fragments_written"] == TRIANGLE_AREA
    assert (tmp_path / "p.png").is_file() and (tmp_path / "m.png").is_file()
    res = runner.invoke(main, ["stats", str(captures_dir / "scene1_triangle"), "--csv"])
    assert res.exit_code == 0 and res.output.splitlines()[0].startswith("frame,draw,event,kind")
    res = runner.invoke(
        main, ["stats", str(captures_dir / "scene1_triangle"), "--fragment-map", "overdraw", str(tmp_path / "o.png")]
    )
    assert res.exit_code == 0, res.output
    overdraw = np.asarray(Image.open(tmp_path / "o.png"))
    assert (overdraw.reshape(-1, 3) == [0, 0, 255]).all(axis=1).sum() == TRIANGLE_AREA  # heat color of 1


def test_plot_has_axes_labels_values_and_fate_stacks(captures_dir: Path, tmp_path: Path) -> None:
    """The SVG figure names its axes and panels, lists every fragment fate in a legend and writes each draw's
    fragment total (scene 1: one draw of TRIANGLE_AREA written fragments) above its bar."""
    svg = tmp_path / "p.svg"
    res = CliRunner().invoke(main, ["stats", str(captures_dir / "scene1_triangle"), "--plot", str(svg), "--json"])
    assert res.exit_code == 0, res.output
    text = svg.read_text()
    for label in (
        "fragment fates",
        "fragments",
        "geometry",
        "ms",
        "draw",
        "written",
        "scissor",
        "alpha test",
        "stencil test",
        "depth test",
        "vertices shaded",
        "primitives rasterized",
        str(TRIANGLE_AREA),
    ):
        assert f"<!-- {label} -->" in text, label  # matplotlib marks each text element with a comment
    png = tmp_path / "frames.png"
    res = CliRunner().invoke(
        main, ["stats", str(captures_dir / "scene1_triangle"), "--per", "frame", "--plot", str(png), "--csv"]
    )
    assert res.exit_code == 0 and Image.open(png).size == (1000, 750)
    res = CliRunner().invoke(main, ["stats", str(captures_dir / "scene1_triangle"), "--plot", str(tmp_path / "p.gif")])
    assert res.exit_code == 2 and "use .png, .svg or .pdf" in res.stderr


def test_fate_stack_adds_up_to_the_rasterized_fragments() -> None:
    from picaemu.analysis.plot import fate_stack

    rows = [
        {
            "fragments_rasterized": 100,
            "fragments_written": 50,
            "killed_scissor": 5,
            "killed_alpha": 10,
            "killed_stencil": 0,
            "killed_depth": 20,
        },
        {"fragments_rasterized": 7, "fragments_written": 7},
    ]
    stack = fate_stack(rows)
    assert [label for label, _, _ in stack] == [
        "written",
        "scissor",
        "alpha test",
        "stencil test",
        "depth test",
        "other",
    ]
    assert np.array_equal(sum(v for _, _, v in stack), [100, 7]) and np.array_equal(stack[-1][2], [15, 0])


def test_kernel_loading_is_not_draw_time() -> None:
    """A draw that has to compile a kernel: the compile time is moved from time_s to kernels_s (numba's compiler
    lock, measured by KernelClock), the rest stays."""
    import time

    import numba

    from picaemu.analysis.stats import KernelClock, KernelTimedSink

    class CompilingDraw:
        """Stands in for the pipeline's draw: it times itself as Pipeline.draw does and needs a new kernel."""

        def draw(self, call) -> None:
            start = time.perf_counter()
            kernel = numba.njit(lambda a: a * 2 + 1)
            kernel(np.arange(4))
            call.stats["time_s"] = time.perf_counter() - start

    class Call:
        def __init__(self) -> None:
            self.stats: dict = {}

    call = Call()
    with KernelClock() as clock:
        KernelTimedSink(CompilingDraw(), clock).draw(call)
        compiled = clock.seconds
    assert compiled > 0 and call.stats["kernels_s"] == compiled
    assert 0 <= call.stats["time_s"] < compiled  # whatever the draw did besides compiling


def test_stats_replays_through_the_compiled_loop() -> None:
    """``picaemu stats`` times the route a render takes: the draws run in the compiled draw loop (a few loop
    calls for 300 draws, not one Python draw each), their counters are the staged path's, and the loop's draws
    share each call's time."""
    from picaemu.replay import Replay
    from samples.game_scene import SCENES
    from tests.test_fused_loop import _loop_calls
    from tests.test_pipeline import reference

    capture = SCENES["game_objects_300"]()
    with _loop_calls() as calls:
        rows = collect(capture).rows
    assert len(rows) == 300 and {r["route"] for r in rows} == {"compiled"}
    assert 1 <= len(calls) <= 10  # the first draw of each of the scene's four states, the frame's events
    assert all(r["time_ms"] >= 0 for r in rows) and sum(r["time_ms"] for r in rows) > 0
    staged = Replay(capture, pipeline=reference(), checkpoints=False)
    staged.run()
    for row, draw in zip(rows, staged.draws, strict=True):
        counters = {k: v for k, v in draw.stats.items() if k != "time_s"}
        assert {k: row[k] for k in counters} == counters
