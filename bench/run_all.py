"""Rerun every benchmark of bench/ with short settings and print one Markdown table of their headline figures, headed
by what a figure depends on: the machine (CPU model, cores, RAM, numba's target CPU, a memory-bandwidth
calibration), the load average before and after, the date, the commit and whether picaemu's kernel cache was warm.
With it a reader checks a figure of bench/RESULTS.md in minutes, on their own machine.

Each benchmark runs as its own process (``python bench/NAME.py ARGS``, exactly as a reader would run it alone) with
the short arguments of ``BENCHES``; its headline figures are read from what it prints (``Figure.pattern``). A
benchmark that fails, times out or cannot run here (``Bench.requires``: a program or module missing) gets a row
that names the reason; a figure its output does not contain reads "not in output". The figures are those of short
runs (fewer repeats, fewer scenes): compare them with RESULTS.md's as a check of the order of magnitude and of the
ratios, and rerun one benchmark alone with its default settings for the exact figure.

Run from the repository root: ``python bench/run_all.py [--only NAME ...] [--skip NAME ...] [--keep DIR]``
(``--keep`` saves every benchmark's whole output there; ``--read DIR`` rebuilds the table from such a folder).
About 7 minutes of wall time (2 of CPU) on the project's 2-core VM at load 6-7 with a warm kernel cache
(bench/RESULTS.md, "Checking a figure"); with a cold cache the first benchmarks compile the kernels first.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBER = r"([-\d.,]+)"


@dataclass(frozen=True)
class Figure:
    """One headline figure: ``pattern`` is a regular expression (multiline) whose first group is the value; with
    ``pick`` "max" or "min" the figure is the largest / smallest value over every match (a column of a table).
    ``clock`` says whether the benchmark timed it in wall time (most do) or in CPU time of its process: on a shared
    machine a wall-time figure moves with the load far more than a CPU-time one."""

    label: str
    pattern: str
    unit: str = ""
    pick: str = "first"
    clock: str = "wall"  # what the benchmark times: "wall" (perf_counter: grows with the load), "CPU", "—" (a count)


@dataclass(frozen=True)
class Bench:
    """A benchmark script, the short arguments it runs with here, its headline figures and what it needs."""

    script: str
    args: tuple[str, ...]
    figures: tuple[Figure, ...]
    requires: tuple[str, ...] = ()  # "module:NAME" or "program:NAME"


@dataclass
class Outcome:
    """What one benchmark run gave: its output, exit status, wall and CPU seconds (its process and children)."""

    stdout: str
    returncode: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    problem: str = ""  # why there are no figures (not runnable here, failed, timed out); "" when it ran


def cell(first: str, column: int) -> str:
    """Pattern of the number in the ``column``-th cell (1 = the cell after the first) of the Markdown table row
    whose first cell starts with ``first``; a leading "x" / "×" of a ratio is left out."""
    return rf"^\| {re.escape(first)}[^|]*\|" + r"[^|]*\|" * (column - 1) + r"\s*[x×]?" + NUMBER


GAME = "samples/captures/game_cubes_1000.pica"
CUBES = "game_cubes_1000"
GUI = ("module:PySide6",)
GL = ("module:OpenGL",)
BENCHES: tuple[Bench, ...] = (
    Bench(
        "bench_shader.py",
        (),
        (
            Figure(
                "20-instruction shader, 100 k vertices", r"^uniform flow.*-> " + NUMBER, "M vertices/s", clock="CPU"
            ),
            Figure("divergent IFC vs uniform flow", r"^divergent IFC.*\(" + NUMBER + "x", "x the time", clock="CPU"),
            Figure("4-vertex draw", r"^4-vertex draw : " + NUMBER, "us", clock="CPU"),
        ),
    ),
    Bench(
        "bench_decode.py",
        (),
        (
            Figure(
                "decode + apply, draws recorded",
                r"^decode \+ apply, draws recorded.*?" + NUMBER + " M writes",
                "M writes/s",
            ),
            Figure("`picaemu decode` of 100 k words", r"^picaemu decode \(packets\)\s*:\s*" + NUMBER, "s"),
        ),
    ),
    Bench(
        "bench_raster.py",
        ("--repeat", "2"),
        (
            Figure(
                "100 large Gouraud triangles, whole draw",
                r"^large.*Gouraud.*pipeline draw:.*? " + NUMBER + " M frag",
                "M fragments/s",
            ),
            Figure(
                "10 k small Gouraud triangles, whole draw",
                r"^small.*Gouraud.*pipeline draw:\s*" + NUMBER + " M tri",
                "M triangles/s",
            ),
        ),
    ),
    Bench(
        "bench_fragment.py",
        ("--repeat", "1"),
        (
            Figure(
                "color path: 2 textures, 3 TEV stages", r"^color path.*? " + NUMBER + " M fragments/s", "M fragments/s"
            ),
        ),
    ),
    Bench(
        "bench_lighting.py",
        (),
        (
            Figure(
                "fragment lighting, 2 lights", r"^lighting:.*= " + NUMBER + " M frag/s", "M fragments/s", clock="CPU"
            ),
            Figure("procedural texture", r"^proctex:.*= " + NUMBER + " M texel/s", "M texels/s", clock="CPU"),
        ),
    ),
    Bench(
        "bench_draw_state.py",
        ("--repeat", "200"),
        (
            Figure("draw state after a draw call + matrix upload", cell("draw call + matrix upload", 1), "us"),
            Figure("every stage decoded (no cache)", cell("baseline", 1), "us"),
        ),
    ),
    Bench(
        "bench_frame.py",
        ("--runs", "2", "--scenes", CUBES, "game_sprites_1000", "game_lit_300"),
        (
            Figure(f"{CUBES} frame", cell(CUBES, 2), "ms"),
            *(
                Figure(f"{s} frame ÷ merged twin", cell(s, 4), "x")
                for s in (CUBES, "game_sprites_1000", "game_lit_300")
            ),
            Figure(f"{CUBES} frame ÷ merged twin, a fresh Replay", cell(CUBES, 9), "x"),
        ),
    ),
    Bench(
        "bench_replay.py",
        ("--runs", "2"),
        (
            Figure(
                "slowest sample, CPU per frame",
                r"^\|[^|]+\|[^|]+\|[^|]+\|[^|]+\|\s*" + NUMBER + r" \| (?:yes|NO)",
                "ms",
                "max",
                "CPU",
            ),
            Figure("`picaemu render` start to PNG", r"^`picaemu render` sample.*?: " + NUMBER + " s wall", "s (wall)"),
        ),
    ),
    Bench(
        "bench_work_model.py",
        ("--frames", "1", "--repeats", "2"),
        (
            Figure("cost per fragment rasterized", r"^cost per fragment rasterized: " + NUMBER, "ns"),
            Figure("cost per vertex shaded", r"^cost per vertex shaded: " + NUMBER, "ns"),
            Figure("minicraft frame 0 ÷ its work model", cell("minicraft", 8), "x"),
        ),
    ),
    Bench(
        "bench_capdiff.py",
        ("--repeat", "1"),
        (Figure("`picaemu diff` of equal captures ÷ render", rf"^\| {CUBES}\.pica \|[^|]*\|[^|(]*\(×" + NUMBER, "x"),),
    ),
    Bench("bench_lint.py", ("--runs", "1", GAME), (Figure(f"lint ÷ render, {CUBES}", cell(CUBES, 4), "x"),)),
    Bench("bench_find.py", ("--captures", GAME), (Figure(f"open {CUBES}", cell(CUBES, 2), "ms"),)),
    Bench(
        "bench_info.py",
        ("--runs", "3"),
        (Figure("`picaemu info` minicraft, start to finish, median", cell("this checkout", 1), "s", clock="CPU"),),
    ),
    Bench(
        "bench_debugger.py",
        ("--captures", GAME),
        (
            Figure(f"open {CUBES}", rf"^\| {CUBES}\.pica \| 1000 \| " + NUMBER, "ms"),
            Figure("jump to a draw, median", rf"^\| {CUBES}\.pica \| 1000 \| [\d.]+ \| " + NUMBER, "ms"),
        ),
    ),
    Bench("bench_gui.py", ("--ks", "1,8"), (Figure("step back one draw, K = 8, median", cell("8", 4), "ms"),), GUI),
    Bench(
        "bench_gui_panels.py",
        ("--jumps", "5"),
        (
            Figure(f"open {CUBES} in the GUI", r"^open " + NUMBER + " ms", "ms"),
            Figure("jump until every panel shows it, median", r"every panel shows it: median " + NUMBER, "ms"),
        ),
        GUI,
    ),
    Bench(
        "bench_gui_settle.py",
        ("--jumps", "3"),
        (Figure("settled after a jump, slowest layout (median)", cell("", 1), "ms", "max"),),
        GUI,
    ),
    Bench(
        "bench_gl.py", ("--runs", "2", "--scenes", CUBES), (Figure(f"GL speed-up, {CUBES}", cell(CUBES, 3), "x"),), GL
    ),
    Bench(
        "bench_gl_fill.py",
        ("--runs", "2"),
        (Figure("GL speed-up, procedural texture", cell("procedural texture", 3), "x"),),
        GL,
    ),
    Bench(
        "bench_gl_floor.py",
        ("--runs", "2"),
        (Figure("software frame ÷ bare PyOpenGL floor", cell("software / floor", 1), "x"),),
        GL,
    ),
    Bench(
        "bench_record.py",
        ("--samples", "cube"),
        (
            Figure("record the cube sample (one frame)", r"^cube .* in " + NUMBER + " s", "s"),
            Figure("round trip of a 4-byte read", r"round trip of one 4-byte read " + NUMBER, "us"),
        ),
        ("program:qemu-arm", "program:arm-linux-gnueabihf-gcc"),
    ),
    Bench(
        "bench_batch.py",
        ("--repeat", "1", "--no-dask"),
        (
            Figure("`picaemu batch` of the samples, -j 1", r"^local -j 1 +(?:\S+\s+){2}" + NUMBER, "captures/min"),
            Figure("same, -j 2", r"^local -j 2 +(?:\S+\s+){2}" + NUMBER, "captures/min"),
        ),
    ),
    Bench(
        "bench_compile.py",
        ("--cases", "1"),
        (
            Figure(
                "first draw, empty cache: numba compiling",
                r"^first draw, primary color\s+fresh cache.*compiling\s+" + NUMBER,
                "s",
            ),
            Figure(
                "first draw, from the cache", r"^first draw, primary color\s+from cache.*first call\s+" + NUMBER, "s"
            ),
        ),
    ),
    Bench(
        "fuzz.py",
        (
            "--count",
            "packets=2000",
            "--count",
            "capture=40",
            "--count",
            "shbin=40",
            "--count",
            "info=40",
            "--no-baseline",
        ),
        (
            Figure("crashes", r"^\w+ +\d+ inputs .* crashes " + NUMBER, "", "max", "—"),
            Figure("hangs", r"^\w+ +\d+ inputs .* hangs " + NUMBER, "", "max", "—"),
        ),
    ),
)


def missing(requirement: str) -> str:
    """Why ``requirement`` ("module:NAME" / "program:NAME") is not met here, or ""."""
    kind, name = requirement.split(":", 1)
    if kind == "module":
        return "" if importlib.util.find_spec(name) else f"needs the Python module {name}"
    return "" if shutil.which(name) else f"needs the program {name}"


def run(bench: Bench, timeout_s: float) -> Outcome:
    """Run one benchmark as ``python bench/SCRIPT ARGS`` from the repository root."""
    for requirement in bench.requires:
        if why := missing(requirement):
            return Outcome("", problem=f"not run: {why}")
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    cmd = [sys.executable, str(ROOT / "bench" / bench.script), *bench.args]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return Outcome(out, -1, time.perf_counter() - start, 0.0, f"timed out after {timeout_s:.0f} s")
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
    problem = ""
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        problem = f"failed (exit {done.returncode}): {last[:160]}"
    return Outcome(done.stdout + done.stderr, done.returncode, wall, cpu, problem)


def figures(bench: Bench, outcome: Outcome) -> list[tuple[str, str, str]]:
    """(label, value, unit) of each headline figure of ``bench`` in ``outcome``'s output."""
    found = []
    for fig in bench.figures:
        values = [m.group(1).rstrip(".,") for m in re.finditer(fig.pattern, outcome.stdout, re.MULTILINE)]
        if values and fig.pick != "first":
            choose = max if fig.pick == "max" else min
            values = [choose(values, key=lambda v: float(v.replace(",", "")))]
        found.append((fig.label, values[0] if values else "not in output", fig.unit))
    return found


def table(results: list[tuple[Bench, Outcome]]) -> list[str]:
    """The Markdown table of every benchmark's headline figures (one row per figure), with its run's times."""
    lines = [
        "| benchmark (short settings) | figure | value | unit | timed in | run wall / CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for bench, outcome in results:
        name = f"`{bench.script} {' '.join(bench.args)}`".replace(" `", "`")
        times = f"{outcome.wall_s:.0f} / {outcome.cpu_s:.0f}" if outcome.wall_s else "—"
        if outcome.problem:
            lines.append(f"| {name} | — | {outcome.problem.replace('|', '/')} | | | {times} |")
            continue
        for (label, value, unit), fig in zip(figures(bench, outcome), bench.figures, strict=True):
            lines.append(f"| {name} | {label} | {value} | {unit} | {fig.clock} | {times} |")
            name = times = ""
    return lines


def _meminfo_gib() -> str:
    text = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    match = re.search(r"MemTotal:\s+(\d+) kB", text)
    return f"{int(match.group(1)) / 2**20:.1f} GiB" if match else "unknown"


def _cpu_model() -> str:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE)
    simd = [f for f in ("avx2", "avx512f") if flags and f in flags.group(1).split()]
    return f"{match.group(1) if match else platform.processor()} ({', '.join(simd) or 'no avx2'})"


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def bandwidth_gbs() -> float:
    """A machine calibration: the best of 10 copies of a 64 MiB numpy array, GB/s read + written per second of CPU
    time (wall time would measure the other jobs' share of the core). Compare it between machines before comparing
    their figures."""
    import numpy as np

    src = np.ones(2**24, np.float32)
    dst = np.zeros_like(src)  # pages touched before the timing
    best = float("inf")
    for _ in range(10):
        start = time.process_time()
        np.copyto(dst, src)
        best = min(best, time.process_time() - start)
    return 2 * src.nbytes / best / 1e9


def kernel_cache_state() -> str:
    """Whether picaemu's kernel cache for these sources holds compiled kernels (a cold one compiles first)."""
    sys.path.insert(0, str(ROOT))
    from picaemu import kernel_cache

    where = kernel_cache.kernel_dir()
    count = len(list(where.rglob("*.nbi"))) if where and where.exists() else 0
    return f"warm ({count} kernels in {where})" if count else f"cold (nothing in {where}: the first runs compile)"


def machine() -> list[str]:
    """Markdown lines that say what the figures depend on, taken before the runs."""
    import llvmlite.binding
    import numba
    import numpy

    commit = _git("rev-parse", "--short", "HEAD")
    if _git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    now = datetime.datetime.now(datetime.UTC)
    return [
        f"- machine: {_cpu_model()}, {os.cpu_count()} cores, {_meminfo_gib()} RAM; numba target CPU "
        f"{llvmlite.binding.get_host_cpu_name()}; memory copy {bandwidth_gbs():.1f} GB/s (CPU time)",
        f"- software: Python {platform.python_version()}, numpy {numpy.__version__}, numba {numba.__version__}",
        f"- date: {now:%Y-%m-%d %H:%M} UTC; commit {commit}",
        f"- kernel cache: {kernel_cache_state()}",
    ]


def run_saved(bench: Bench, timeout_s: float, keep: Path | None) -> Outcome:
    """``run``, telling stderr which benchmark runs, and saving its output in ``keep`` when given."""
    print(f"running {bench.script} {' '.join(bench.args)}", file=sys.stderr, flush=True)
    outcome = run(bench, timeout_s)
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{bench.script}.out").write_text(outcome.stdout)
    return outcome


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    names = [b.script.removesuffix(".py") for b in BENCHES]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=names, metavar="NAME", help="run only these (bench_shader ...)")
    ap.add_argument("--skip", nargs="*", choices=names, default=[], metavar="NAME", help="leave these out")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds one benchmark may take")
    ap.add_argument("--keep", type=Path, help="save each benchmark's whole output in this folder")
    ap.add_argument("--read", type=Path, help="no runs: the table of the outputs a --keep run saved in this folder")
    args = ap.parse_args(argv)
    chosen = [
        b for b, n in zip(BENCHES, names, strict=True) if (not args.only or n in args.only) and n not in args.skip
    ]
    header = machine()
    if args.read:
        saved = [(b, args.read / f"{b.script}.out") for b in chosen]
        results = [
            (b, Outcome(f.read_text()) if f.exists() else Outcome("", problem="no saved output")) for b, f in saved
        ]
        header.append(f"- outputs read from {args.read} (the lines above describe this machine now)")
    else:
        before, start = load(), time.perf_counter()
        results = [(bench, run_saved(bench, args.timeout, args.keep)) for bench in chosen]
        header.append(f"- load average (1, 5, 15 min): {before} before, {load()} after")
        header.append(f"- whole run: {time.perf_counter() - start:.0f} s wall")
    print("\n".join([*header, "", *table(results)]))


if __name__ == "__main__":
    main()
