"""Work model of a frame: how far a frame's time is from its work, priced by two unit costs measured in the same run.

1. Cost per fragment rasterized: full-screen Gouraud quads (two triangles covering the 400x240 top screen, colors
   interpolated, primary color out, no depth test), each draw's time / its fragments.
2. Cost per vertex shaded: one large off-screen draw (``--vertices`` distinct vertices, a triangle list wholly
   outside the view, so every triangle is clipped away: no fragment), its time / its vertices.

Both are the median over ``--repeats`` frames of a calibration capture of their own (one per kind: a loop call's
draws share its time). Then each frame of each capture (default:
``tests/data/games/minicraft.pica`` when present and the bundled game samples ``samples/captures/game_*.pica``)
is timed the way ``picaemu stats`` times it (``picaemu.analysis.stats.collect``: per-draw replay time without
kernel loading, summed per frame; after a first, warming replay of the same capture) and printed beside
``model = fragments rasterized x cost_fragment + vertices shaded x cost_vertex`` and ``time / model``: 1 means the
frame costs what its work costs in the best case; more is per-draw overhead, features slower than Gouraud
(textures, lighting, blending), the reference route (``route`` column of ``picaemu stats``).

``--cpu`` times every draw by the replaying thread's CPU time (``picaemu.draw.clock = time.thread_time``) instead of
wall time: on a machine shared with other jobs, wall-time unit costs and frames swing by x2-3 between runs.

Run from the repository root: ``python bench/bench_work_model.py [CAPTURE ...] [--frames N] [--repeats R] [--cpu]``.
Prints Markdown tables for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.formats import pica  # noqa: E402

from picaemu import draw as draw_mod  # noqa: E402
from picaemu.analysis import stats as st  # noqa: E402
from picaemu.builder import CaptureBuilder  # noqa: E402
from samples._common import SCREEN, VS_COLOR  # noqa: E402

WIDTH, HEIGHT = 400, 240  # the top screen the builder renders to (``samples._common.SCREEN``)
MINICRAFT = ROOT / "tests" / "data" / "games" / "minicraft.pica"
QUADS = 8  # full-screen quads per calibration frame


def calibration(quads: int, vertices: int, repeats: int) -> pica.Capture:
    """``repeats`` frames of ``quads`` full-screen Gouraud quads, or (``quads`` 0) of one off-screen draw of
    ``vertices``. The two kinds are timed in captures of their own: the compiled loop runs a frame's draws in one
    call and ``stats`` gives each draw an equal share of it, so a frame mixing them would price each by both."""
    b = CaptureBuilder(name="work model calibration")
    rng = np.random.default_rng(0)
    quad = np.array(
        [[0, 0], [WIDTH, 0], [WIDTH, HEIGHT], [0, 0], [WIDTH, HEIGHT], [0, HEIGHT]], np.float32
    )  # two triangles, counter-clockwise
    n = vertices - vertices % 3
    pos = np.zeros((6 + n, 4), np.float32)
    pos[:6, :2] = quad
    pos[6:, :2] = rng.uniform(-3 * WIDTH, -2 * WIDTH, (n, 2))  # left of the screen: clipped away
    pos[:, 3] = 1.0
    colors = rng.uniform(0, 1, (6 + n, 4)).astype(np.float32)
    for _ in range(repeats):
        b.begin_frame()
        b.shader(VS_COLOR)
        b.uniforms(0, SCREEN)
        b.passthrough_tev()
        b.vertices([pos, colors])
        for _ in range(quads):
            b.draw(6)
        if not quads:
            b.draw(n, first=6)
        b.end_frame()
    return b.capture()


def warm_rows(capture: pica.Capture | Path) -> st.Statistics:
    """``picaemu stats``'s rows of the second of two replays (the first loads or compiles the kernels)."""
    st.collect(capture)
    return st.collect(capture)


def unit_costs(quads: int, vertices: int, repeats: int) -> tuple[float, float, str, str]:
    """(ms per fragment rasterized, ms per vertex shaded, each calibration draw kind's route)."""
    fills = warm_rows(calibration(quads, vertices, repeats)).rows
    shades = warm_rows(calibration(0, vertices, repeats)).rows
    assert all(r["fragments_rasterized"] == WIDTH * HEIGHT for r in fills)
    assert all(r["fragments_rasterized"] == 0 and r["vertices_shaded"] > 0 for r in shades)
    fragment = statistics.median(r["time_ms"] / r["fragments_rasterized"] for r in fills)
    vertex = statistics.median(r["time_ms"] / r["vertices_shaded"] for r in shades)
    return fragment, vertex, fills[0]["route"], shades[0]["route"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = [*([MINICRAFT] if MINICRAFT.exists() else []), *sorted((ROOT / "samples" / "captures").glob("game_*"))]
    parser.add_argument("captures", nargs="*", type=Path, default=default)
    parser.add_argument("--frames", type=int, default=0, help="frames per capture in the table (0: all)")
    parser.add_argument("--repeats", type=int, default=5, help="calibration frames")
    parser.add_argument(
        "--vertices", type=int, default=4095, help="off-screen draw size (the compiled vertex side takes < 4096)"
    )
    parser.add_argument("--cpu", action="store_true", help="time draws by thread CPU time, not wall time")
    args = parser.parse_args()
    if args.cpu:
        draw_mod.clock = time.thread_time
    clock = "thread CPU time" if args.cpu else "wall time"
    fragment, vertex, fill_route, shade_route = unit_costs(QUADS, args.vertices, args.repeats)
    print(f"draws timed in {clock}")
    print(f"cost per fragment rasterized: {fragment * 1e6:.2f} ns (full-screen Gouraud quads, route {fill_route})")
    print(f"cost per vertex shaded: {vertex * 1e6:.1f} ns (an off-screen draw of {args.vertices}, route {shade_route})")
    print()
    print("| capture | frame | draws | compiled | fragments | vertices | time ms | model ms | time / model |")
    print("|---|---|---|---|---|---|---|---|---|")
    summaries = []
    for path in args.captures:
        result = warm_rows(path)
        frames = st.per_frame(result.rows, result.frames)
        shown = frames[: args.frames] if args.frames else frames
        ratios = []
        for f in shown:
            model = f["fragments_rasterized"] * fragment + f["vertices_shaded"] * vertex
            ratio = f["time_ms"] / model if model else float("nan")
            ratios.append(ratio)
            print(
                f"| {path.stem} | {f['frame']} | {f['draws']} | {f['compiled']} | {f['fragments_rasterized']} | "
                f"{f['vertices_shaded']} | {f['time_ms']:.2f} | {model:.2f} | x{ratio:.1f} |",
                flush=True,
            )
        summaries.append(
            f"- {path.stem}: median time / model x{statistics.median(ratios):.1f} over {len(ratios)} frames; "
            f"{st.route_summary(result.rows)}"
        )
    print()
    print("\n".join(summaries))


if __name__ == "__main__":
    main()
