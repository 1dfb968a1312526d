"""``picaemu lint`` beside a plain render of the same capture (issue #27 target: lint ≤ 2× render).

Per capture, ``--runs`` of each, alternating, in one process after a warm-up of each (numba's cache loaded, page
faults paid); the ratio is the median over the runs of lint ÷ the render just before it (on a busy machine the
load moves between runs, a pair sees about the same), the times are medians. *render* = a ``Replay`` with the
software pipeline and no checkpoints run through every event, then the top screen read (what ``picaemu render``
does after loading); *lint* = ``picaemu.lint.lint`` of the loaded capture (its own replay without rendering,
every check). Loading the capture file is not timed in either. Run from the repository root:
``python bench/bench_lint.py [--runs 7] [CAPTURE ...]`` (default: the 1000-draw samples and the game capture).
Prints a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.lint import lint  # noqa: E402
from picaemu.replay import Replay  # noqa: E402
from picaemu.replay.capture import load_capture  # noqa: E402

DEFAULT = [*sorted(ROOT.glob("samples/captures/*1000*.pica")), ROOT / "tests/data/games/minicraft.pica"]

CLOCK = [time.perf_counter]  # ``--cpu``: time.process_time (the kernels run on the calling thread)


def render_s(capture) -> float:
    start = CLOCK[0]()
    replay = Replay(capture, checkpoints=False)
    replay.run()
    replay.screen()
    return CLOCK[0]() - start


def lint_s(capture) -> tuple[float, int]:
    start = CLOCK[0]()
    findings = lint(capture)
    return CLOCK[0]() - start, len(findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--cpu", action="store_true", help="time with the process's CPU clock (steadier than wall on a busy machine)"
    )
    parser.add_argument("captures", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    print("| capture | draws | render ms (median) | lint ms (median) | lint ÷ render (median of pairs) | findings |")
    print("|---|---|---|---|---|---|")
    for path in args.captures:
        capture = load_capture(path)
        render_s(capture), lint_s(capture)  # warm-up
        renders, lints = [], []
        for _ in range(args.runs):
            renders.append(render_s(capture))
            seconds, count = lint_s(capture)
            lints.append(seconds)
        draws = Replay(capture, checkpoints=False, record_draws=False)
        draws.run()
        r, n = statistics.median(renders), statistics.median(lints)
        ratio = statistics.median(b / a for a, b in zip(renders, lints, strict=True))
        cells = f"{draws.processor.draw_count} | {1000 * r:.0f} | {1000 * n:.0f} | ×{ratio:.2f} | {count}"
        print(f"| {path.name} | {cells} |")


if __name__ == "__main__":
    main()
