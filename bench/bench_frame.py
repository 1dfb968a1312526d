"""Game-scale frame benchmark: each game-like scene of ``samples/game_scene.py`` (hundreds to thousands of draws
with texture, TEV, blend and uniform changes between them) beside its merged twin (the same triangles in one
draw), measured in the same run, and the ratio of the two — the fixed cost a draw adds beyond its work.

Time = best of ``--runs`` replays of the whole frame after one warm-up replay (numba's compile cache, page faults);
each replay restores the initial checkpoint first (not timed). Both pictures are compared: they must be equal
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


def frame_s(
    capture: pica.Capture,
    runs: int,
    pipeline: PipelineSink | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int, np.ndarray]:
    """(best seconds of a whole-frame replay by ``clock``, draws, the top screen), with ``pipeline`` (default: the
    software one)."""
    replay = Replay(capture, checkpoints=False, pipeline=pipeline)
    replay.run()
    best = float("inf")
    for _ in range(runs):
        replay.run_to(0)
        start = clock()
        replay.run()
        best = min(best, clock() - start)
    return best, len(replay.draws), replay.screen()


def fresh_s(capture: pica.Capture, runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Best seconds by ``clock`` of ``Replay(capture).run()`` on a new replay each time (the API's defaults)."""
    Replay(capture).run()
    best = float("inf")
    for _ in range(runs):
        replay = Replay(capture)
        start = clock()
        replay.run()
        best = min(best, clock() - start)
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
        capture, twin = SCENES[name](), SCENES[name](merged=True)
        frame, draws, image = frame_s(capture, args.runs, clock=clock)
        merged, _, merged_image = frame_s(twin, args.runs, clock=clock)
        per_draw = (frame - merged) / max(draws - 1, 1)
        same = "yes" if np.array_equal(image, merged_image) else "NO"
        fresh, fresh_merged = fresh_s(capture, args.runs, clock), fresh_s(twin, args.runs, clock)
        print(
            f"| {name} | {draws} | {frame * 1e3:.1f} | {merged * 1e3:.1f} | x{frame / merged:.1f} | "
            f"{per_draw * 1e6:.0f} us | {same} | {fresh * 1e3:.1f} | {fresh_merged * 1e3:.1f} | "
            f"x{fresh / fresh_merged:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
