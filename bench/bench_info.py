"""``picaemu info`` start to finish, as a user runs it: wall and CPU time (user + sys of the child process) of
``picaemu info CAPTURE`` over several runs, with bytecode written (the environment's PYTHONDONTWRITEBYTECODE is
dropped for the child, and an untimed first run writes it).

``--baseline PICAEMU`` times another ``picaemu`` executable (another checkout's venv, e.g. ``main``'s) in turn
with this one, run for run, so that both see the same load: a before / after on a shared machine. Wall time grows
with the load of the machine; CPU time much less: read CPU first.

Run from the repository root: ``python bench/bench_info.py [CAPTURE] [--runs N] [--baseline PATH]``
(default: tests/data/games/minicraft.pica, 5 runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAME = "tests/data/games/minicraft.pica"


def _this_picaemu() -> str:
    beside = Path(sys.executable).with_name("picaemu")
    return str(beside) if beside.exists() else shutil.which("picaemu") or "picaemu"


def timed(exe: str, capture: str) -> tuple[float, float]:
    """(wall s, CPU s) of one ``exe info capture``; its output is checked to be a summary."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([exe, "info", capture], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "draws: " not in done.stdout:
        raise SystemExit(f"{exe} info {capture}: no summary in its output")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", nargs="?", default=GAME)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="another picaemu executable, timed in turn with this one")
    args = parser.parse_args()
    exes = {"this checkout": _this_picaemu()}
    if args.baseline:
        exes = {"baseline": args.baseline, **exes}
    for exe in exes.values():
        timed(exe, args.capture)  # untimed: writes bytecode, loads the disk cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in exes}
    load0 = os.getloadavg()[0]
    for _ in range(args.runs):
        for name, exe in exes.items():
            times[name].append(timed(exe, args.capture))
    load1 = os.getloadavg()[0]
    print(f"picaemu info {args.capture}: {args.runs} runs each, load average {load0:.1f} -> {load1:.1f}")
    print("| picaemu | CPU s (user + sys), median | CPU min | wall s, median | wall min |")
    print("|---|---|---|---|---|")
    for name, rows in times.items():
        cpu, wall = [c for _, c in rows], [w for w, _ in rows]
        print(
            f"| {name} | {statistics.median(cpu):.2f} | {min(cpu):.2f} | {statistics.median(wall):.2f} "
            f"| {min(wall):.2f} |"
        )


if __name__ == "__main__":
    main()
