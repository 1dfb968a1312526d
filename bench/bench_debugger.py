"""Debugger operations at game scale, on the bundled game-like captures (samples/game_scene.py): opening (read +
index: one rendering pass with draw-boundary checkpoints), a jump to random draws (median, max), one draw step
forward and back, pixel history of the busiest pixel of the frame (every fragment of every draw there, with its
fate), and the checkpoint memory held.

Run from the repository root: ``python bench/bench_debugger.py [--captures samples/captures/game_cubes_1000.pica]``
(a first run compiles the kernels; the figures are of a second, warm process). Prints a Markdown table.
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

from picaemu.debug import probe  # noqa: E402
from picaemu.debug.session import Session  # noqa: E402

DEFAULT = [ROOT / "samples" / "captures" / f"{name}.pica" for name in ("game_cubes_1000", "game_sprites_1000")]


def busiest_pixel(session: Session) -> tuple[int, int]:
    """The drawn window pixel held by the most draw bounds (the worst case for pixel history)."""
    session.goto(session.timeline.end)
    fb = session.replay.framebuffer_state()
    image = session.replay.color_buffer()[::-1]  # row = window y
    count = np.zeros((fb.height, fb.width), np.int32)
    for d in session.timeline.draws:
        if d.bounds is not None:
            x0, y0, x1, y1 = d.bounds
            count[y0 : y1 + 1, x0 : x1 + 1] += 1
    count[(image == image[0, 0]).all(axis=2)] = 0  # background: nothing drawn there
    y, x = np.unravel_index(int(count.argmax()), count.shape)
    return int(x), int(y)


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def measure(path: Path, jumps: int = 40) -> str:
    start = time.perf_counter()
    session = Session.open(path)
    tl = session.index()
    opened = ms(start)
    rng = np.random.default_rng(5)
    times = []
    for draw in rng.integers(0, len(tl.draws), jumps):
        start = time.perf_counter()
        session.goto(tl.after_draw(int(draw)))
        times.append(ms(start))
    middle = len(tl.draws) // 2
    session.goto(tl.after_draw(middle))
    start = time.perf_counter()
    session.goto(tl.after_draw(middle + 1))
    forward = ms(start)
    start = time.perf_counter()
    session.goto(tl.after_draw(middle))
    back = ms(start)
    pixel = busiest_pixel(session)
    start = time.perf_counter()
    history = probe.pixel_history(session, pixel)
    hist = ms(start)
    return (f"| {path.name} | {len(tl.draws)} | {opened:.0f} | {statistics.median(times):.1f} / {max(times):.1f} | "
            f"{forward:.1f} / {back:.1f} | {hist:.0f} ({len(history)} fragments, "
            f"{len(probe.candidate_draws(session, pixel))} draws) | {session.checkpoint_bytes / 2**20:.0f} MiB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args()
    print("| capture | draws | open ms | jump ms median / max | step fwd / back ms | pixel history ms | "
          "checkpoints |")
    print("|---|---|---|---|---|---|---|")
    for path in args.captures:
        print(measure(path), flush=True)


if __name__ == "__main__":
    main()
