"""Debugger operations at game scale, on the bundled game-like captures (samples/game_scene.py): opening (read +
index: one rendering pass with draw-boundary checkpoints), a jump to every draw in a random order (median, max),
one draw step forward and back, pixel history of the busiest pixel of the capture (every fragment of every draw
there, with its fate), the checkpoint memory held; the worker's side of a panel refresh after a jump
(``picaemu.debug.jobs``: snapshot, registers/pipeline state, textures, shader, mesh vertices; median over random
draws, Qt painting not included); and the edit-and-replay round trip (``Editor.edit``: restore, edit, replay to
the frame end, both pictures and the diff) at an early, a middle and the last draw.

Side by side (issue #26's target): ``picaemu render`` of a capture against the debugger's open + index + one pixel
history + one fragment debug of the same capture, each in its own fresh process (wall time of the process, peak
RSS from ``resource.getrusage(RUSAGE_CHILDREN)``), with the debugger's own open / history / fragment / jump times.

Run from the repository root: ``python bench/bench_debugger.py [--captures samples/captures/game_cubes_1000.pica]``
(a first run compiles the kernels; the figures are of a second, warm process). Prints Markdown tables.
``--probes-only``: only the in-process table (open, jumps, pixel history, the probes of the busiest pixel's last
draw: its overlays, ``probe.probe_draw``, and the fragment debugger, ``fragment.debug_fragment``; the last frame's
fragment map, ``probe.frame_fragment_map``; the overlays of the draw with the largest window box); ``--cpu``: its
times in CPU seconds of this process (``time.process_time``: a shared machine's load swings wall time).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.debug import fragment, jobs, probe  # noqa: E402
from picaemu.debug.edit_replay import Editor  # noqa: E402
from picaemu.debug.session import Session  # noqa: E402

DEFAULT = [ROOT / "samples" / "captures" / f"{name}.pica" for name in ("game_cubes_1000", "game_sprites_1000")] + [
    ROOT / "tests" / "data" / "games" / "minicraft.pica"
]

DEBUGGER_RUN = """
import json, sys, time
import numpy as np
import picaemu
start = time.perf_counter()
replay = picaemu.open(sys.argv[1])
dbg = replay.debugger
opened = time.perf_counter() - start
tl = dbg.timeline
at = time.perf_counter()
history = replay.pixel_history(200, 120, space="screen")
hist = time.perf_counter() - at
at = time.perf_counter()
if history:
    replay.debug_fragment(history[-1].draw, 200, 120, space="screen")
frag = time.perf_counter() - at
jumps = []
for draw in np.random.default_rng(5).integers(0, len(tl.draws), 20):
    at = time.perf_counter()
    dbg.session.goto(tl.after_draw(int(draw)))
    jumps.append(time.perf_counter() - at)
print(json.dumps({"open": opened, "history": hist, "fragments": len(history), "fragment": frag,
                  "jump_median": float(np.median(jumps)), "jump_max": max(jumps),
                  "checkpoints": dbg.session.checkpoint_bytes, "total": opened + hist + frag}))
"""


def _child(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB, stdout) of one fresh process (RUSAGE_CHILDREN holds the largest child so far, so
    each measurement runs in a fresh helper that reports its own child's figure)."""
    probe_code = (
        "import resource, subprocess, sys, time, json; t = time.perf_counter(); "
        "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout; "
        "print(json.dumps([time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out]))"
    )
    wall, rss_kib, out = json.loads(
        subprocess.run([sys.executable, "-c", probe_code, *argv], check=True, capture_output=True, text=True).stdout
    )
    return wall, rss_kib / 1024, out


def side_by_side(path: Path) -> str:
    """One row: render vs debugger (open + index + pixel history + fragment debug) time and peak memory."""
    render_wall, render_rss, _ = _child(
        [str(Path(sys.executable).parent / "picaemu"), "render", str(path), "-o", "/tmp/bench_debugger_render.png"]
    )
    dbg_wall, dbg_rss, out = _child([sys.executable, "-c", DEBUGGER_RUN, str(path)])
    f = json.loads(out)
    return (
        f"| {path.name} | {render_wall:.1f} s / {render_rss:.0f} MiB | {dbg_wall:.1f} s / {dbg_rss:.0f} MiB | "
        f"x{dbg_wall / render_wall:.2f} / x{dbg_rss / render_rss:.2f} | {f['open']:.1f} | "
        f"{f['history'] * 1e3:.0f} ({f['fragments']}) | {f['fragment'] * 1e3:.0f} | "
        f"{f['jump_median'] * 1e3:.1f} / {f['jump_max'] * 1e3:.1f} | {f['checkpoints'] / 2**20:.0f} MiB |"
    )


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


clock = time.perf_counter  # ``--cpu``: time.process_time


def ms(start: float) -> float:
    return (clock() - start) * 1e3


def measure(path: Path) -> str:
    """One row: open, a jump to every draw (in a random order), a step, the busiest pixel's history, an overlay
    probe of the last draw there and the fragment debugger on its last fragment."""
    start = clock()
    session = Session.open(path)
    tl = session.index()
    opened = ms(start)
    times = []
    for draw in np.random.default_rng(5).permutation(len(tl.draws)):
        start = clock()
        session.goto(tl.after_draw(int(draw)))
        times.append(ms(start))
    middle = len(tl.draws) // 2
    session.goto(tl.after_draw(middle))
    start = clock()
    session.goto(tl.after_draw(middle + 1))
    forward = ms(start)
    start = clock()
    session.goto(tl.after_draw(middle))
    back = ms(start)
    pixel = busiest_pixel(session)
    start = clock()
    history = probe.pixel_history(session, pixel)
    hist = ms(start)
    probes = "-"
    if history:
        start = clock()
        p = probe.probe_draw(session, history[-1].draw)
        overlay = ms(start)
        start = clock()
        fragment.debug_fragment(session, history[-1].draw, pixel, len(history) - 1 - _first_of_last(history))
        probes = f"{overlay:.0f} ({p.route}) / {ms(start):.0f}"
    start = clock()
    probe.frame_fragment_map(session, tl.end)
    frame_map = ms(start)
    largest = max(tl.draws, key=_area).index
    start = clock()
    big = probe.probe_draw(session, largest)
    big_probe = f"{ms(start):.0f} (draw {largest}, {int(big.overdraw.sum())} fragments, {big.route})"
    return (
        f"| {path.name} | {len(tl.draws)} | {opened:.0f} | {statistics.median(times):.1f} / {max(times):.1f} | "
        f"{forward:.1f} / {back:.1f} | {hist:.0f} ({len(history)} fragments, "
        f"{len(probe.candidate_draws(session, pixel))} draws) | {probes} | {frame_map:.0f} | {big_probe} | "
        f"{session.checkpoint_bytes / 2**20:.0f} MiB |"
    )


def _area(draw: object) -> int:
    """Window-box pixels of a timeline draw (0 without bounds)."""
    bounds = getattr(draw, "bounds", None)
    if bounds is None:
        return 0
    x0, y0, x1, y1 = bounds
    return (x1 - x0 + 1) * (y1 - y0 + 1)


def _first_of_last(history: list) -> int:
    """The index in ``history`` of the last draw's first fragment."""
    return next(k for k, f in enumerate(history) if f.draw == history[-1].draw)


PANELS = {  # panel -> the job its refresh runs after a jump to ``draw``
    "snapshot": lambda s, tl, d: jobs.snapshot(s, tl.after_draw(d)),
    "pipeline state": lambda s, tl, d: jobs.pipeline_state(s, tl.after_draw(d)),
    "textures": lambda s, tl, d: jobs.textures(s, tl.after_draw(d)),
    "shader": lambda s, tl, d: jobs.shader(s, tl.after_draw(d), "vs"),
    "mesh": lambda s, tl, d: jobs.vertices(s, d),
}


def panels_and_edits(path: Path, jumps: int = 10) -> str:
    """Median ms per panel job after random jumps, and the edit round trip at three draws."""
    session = Session.open(path)
    tl = session.index()
    rng = np.random.default_rng(7)
    times: dict[str, list[float]] = {name: [] for name in PANELS}
    for draw in rng.integers(0, len(tl.draws), jumps):
        session.goto(tl.after_draw(int(draw)))
        for name, job in PANELS.items():
            start = time.perf_counter()
            job(session, tl, int(draw))
            times[name].append(ms(start))
    editor = Editor(session)
    edits = []
    for draw in (10, len(tl.draws) // 2, len(tl.draws) - 1):
        start = time.perf_counter()
        result = editor.edit(draw, ["DEPTH_COLOR_MASK.depth_func=always"])
        edits.append(f"draw {draw}: {ms(start):.0f} ms ({result.draws_replayed} draws)")
    panels = ", ".join(f"{name} {statistics.median(t):.1f}" for name, t in times.items())
    return f"| {path.name} | {panels} | {'; '.join(edits)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--side-by-side-only", action="store_true", help="Only the render vs debugger table.")
    parser.add_argument("--probes-only", action="store_true", help="Only the in-process table (module docstring).")
    parser.add_argument("--cpu", action="store_true", help="In-process times in CPU seconds (time.process_time).")
    args = parser.parse_args()
    global clock
    clock = time.process_time if args.cpu else time.perf_counter
    if args.probes_only:
        _measure_table(args.captures)
        return
    print(
        "| capture | render: wall / peak RSS | debugger open+index+history+fragment: wall / peak RSS | ratio "
        "| open s | screen pixel history ms (fragments) | fragment debug ms | jump ms median / max | checkpoints |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for path in args.captures:
        print(side_by_side(path), flush=True)
    if args.side_by_side_only:
        return
    print()
    _measure_table(args.captures)
    print("\n| capture | panel job after a jump, median ms | edit and replay round trip (depth func always) |")
    print("|---|---|---|")
    for path in args.captures:
        print(panels_and_edits(path), flush=True)


def _measure_table(captures: list[Path]) -> None:
    print(
        "| capture | draws | open ms | jump to every draw, ms median / max | step fwd / back ms | pixel history ms "
        "| last draw there: overlay probe ms (route) / fragment debug ms | last frame's fragment map ms "
        "| overlay probe of the largest draw ms | checkpoints |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in captures:
        print(measure(path), flush=True)


if __name__ == "__main__":
    main()
