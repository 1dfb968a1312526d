"""Game-scale frame benchmark: each game-like scene of ``samples/game_scene.py`` (hundreds to thousands of draws
with texture, TEV, blend and uniform changes between them) beside its merged twin (the same triangles in one
draw), measured in the same run, and the ratio of the two — the fixed cost a draw adds beyond its work.

Time = best of ``--runs`` replays of the whole frame after one warm-up replay (numba's compile cache, page
faults), the scene's and its twin's runs alternated; each replay restores the initial checkpoint first (not
timed). Both pictures are compared: they must be equal
(the scenes are built so that they are). The last columns time what a caller of the API gets: the first replay of
a fresh ``Replay(capture)`` with its defaults (checkpoints and draw records on; best of ``--runs``, each a new
replay, after one warm-up): it also pays the plans of each state and the replay's checkpoints.
Run from the repository root: ``python bench/bench_frame.py [--runs 5]
[--scenes game_cubes_1000 ...] [--cpu]`` (``--cpu``: thread CPU time instead of wall time, steadier on a shared
machine). Prints a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.formats import pica  # noqa: E402

from picaemu.draw import PipelineSink  # noqa: E402
from picaemu.replay import Replay  # noqa: E402
from samples.game_scene import SCENES  # noqa: E402


def alternated(
    runs_of: list[tuple[pica.Capture, PipelineSink | None]], runs: int, clock: Callable[[], float] = time.perf_counter
) -> list[tuple[float, int, np.ndarray]]:
    """Per (capture, pipeline (None: the software one)): (best seconds of a whole-frame replay by ``clock``, draws,
    the top screen), the captures' runs alternated (a slow minute of a shared machine then slows them all alike)."""
    replays = [Replay(capture, checkpoints=False, pipeline=pipeline) for capture, pipeline in runs_of]
    for replay in replays:
        replay.run()
    best = [float("inf")] * len(replays)
    for _ in range(runs):
        for k, replay in enumerate(replays):
            replay.run_to(0)
            start = clock()
            replay.run()
            best[k] = min(best[k], clock() - start)
    return [(t, len(r.draws), r.screen()) for t, r in zip(best, replays, strict=True)]


def frame_s(
    capture: pica.Capture,
    runs: int,
    pipeline: PipelineSink | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int, np.ndarray]:
    """``alternated`` of one capture."""
    return alternated([(capture, pipeline)], runs, clock)[0]


def fresh_s(captures: tuple[pica.Capture, ...], runs: int, clock: Callable[[], float] = time.perf_counter) -> list:
    """Per capture: best seconds by ``clock`` of ``Replay(capture).run()`` on a new replay each time (the API's
    defaults), the captures alternated."""
    for capture in captures:
        Replay(capture).run()
    best = [float("inf")] * len(captures)
    for _ in range(runs):
        for k, capture in enumerate(captures):
            replay = Replay(capture)
            start = clock()
            replay.run()
            best[k] = min(best[k], clock() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scenes", nargs="*", default=list(SCENES))
    parser.add_argument("--cpu", action="store_true", help="time by the thread's CPU clock, not the wall clock")
    args = parser.parse_args()
    clock = time.thread_time if args.cpu else time.perf_counter
    print(
        "| scene | draws | frame ms | merged ms (1 draw) | ratio | fixed cost per draw | same picture "
        "| fresh Replay: frame ms | merged ms | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.scenes:
        pair = SCENES[name](), SCENES[name](merged=True)
        (frame, draws, image), (merged, _, merged_image) = alternated([(c, None) for c in pair], args.runs, clock)
        per_draw = (frame - merged) / max(draws - 1, 1)
        same = "yes" if np.array_equal(image, merged_image) else "NO"
        fresh, fresh_merged = fresh_s(pair, args.runs, clock)
        print(
            f"| {name} | {draws} | {frame * 1e3:.1f} | {merged * 1e3:.1f} | x{frame / merged:.1f} | "
            f"{per_draw * 1e6:.0f} us | {same} | {fresh * 1e3:.1f} | {fresh_merged * 1e3:.1f} | "
            f"x{fresh / fresh_merged:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
