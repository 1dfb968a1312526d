"""Replay benchmark: frame time of every sample scene and of the shared real scenes, and the wall time of
``picaemu render`` from process start to the first PNG written.

Frame time = (time of a replay of the whole capture) / frames, median of ``--runs`` runs after one warm-up run
(which also fills numba's compile cache); each run starts from the initial checkpoint. Wall and CPU time are both
reported (the machine is shared: CPU time is the fairer one-core figure). Run from the repository root:
``python bench/bench_replay.py [--runs 7]``. Prints a Markdown table (paste into bench/results/replay.md).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.formats import pica  # noqa: E402

from picaemu.replay import Replay, load_capture  # noqa: E402
from samples.generate import SAMPLES, build  # noqa: E402

SHARED = ROOT.parent / "shared" / "captures"
TARGET_MS = 33.0
TARGET_RENDER_S = 1.5


def frame_ms(capture: pica.Capture, runs: int) -> tuple[float, float, int, int]:
    """(median wall ms per frame, median CPU ms per frame, frames, draws) of steady-state replays.

    One Replay is warmed up by a full run (compile cache, page faults of fresh memory); each measured run then
    restores the initial checkpoint (not timed) and replays every event.
    """
    replay = Replay(capture, checkpoints=False)  # only the initial checkpoint: none is taken while timing
    replay.run()
    frames, draws = max(len(replay.frames), 1), len(replay.draws)
    wall, cpu = [], []
    for _ in range(runs):
        replay.run_to(0)
        w0, c0 = time.perf_counter(), time.process_time()
        replay.run()
        wall.append((time.perf_counter() - w0) / frames)
        cpu.append((time.process_time() - c0) / frames)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu), frames, draws


def render_wall_s(source: Path, runs: int) -> float:
    """Median wall time of ``picaemu render SOURCE -o OUT.png`` as a fresh process (warm compile cache)."""
    exe = Path(sys.executable).with_name("picaemu")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs + 1):
            start = time.perf_counter()
            subprocess.run([str(exe), "render", str(source), "-o", f"{tmp}/out.png"], check=True)
            if i:
                times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rows = []
    cases = [(name, build(name)) for name in SAMPLES]
    cases += [
        (f"shared {p.name}", load_capture(p))
        for p in (SHARED / "scene1_triangle", SHARED / "scene2_textured_quad")
        if p.is_dir()
    ]
    for name, capture in cases:
        wall, cpu, frames, draws = frame_ms(capture, args.runs)
        rows.append((name, frames, draws, wall, cpu))
    print("| scene | frames | draws | median wall ms / frame | median CPU ms / frame | CPU <= 33 ms |")
    print("|---|---:|---:|---:|---:|:---:|")
    for name, frames, draws, wall, cpu in rows:
        print(f"| {name} | {frames} | {draws} | {wall:.1f} | {cpu:.1f} | {'yes' if cpu <= TARGET_MS else 'NO'} |")
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "texture_formats.pica"
        pica.write(sample, build("texture_formats"))
        for label, source in (
            ("sample texture_formats.pica", sample),
            ("shared scene2 legacy .ctf", SHARED / "citrace" / "scene2_textured_quad.legacy.ctf"),
        ):
            if source.exists():
                wall = render_wall_s(source, max(3, args.runs // 2))
                ok = "yes" if wall <= TARGET_RENDER_S else "NO"
                print(f"\n`picaemu render` {label}: {wall:.2f} s wall, process start to PNG (<= 1.5 s: {ok})")


if __name__ == "__main__":
    main()
