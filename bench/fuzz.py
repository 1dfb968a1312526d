"""picaemu's long fuzz campaign: mutated command buffers, captures, SHBINs, texture parameters, hostile draw
state and ``picaemu info`` on mutated captures, each input in a watched worker process; counts outcomes, crashes,
hangs and peak memory.

    python bench/fuzz.py                              # the default campaign (about 20 minutes on 2 cores)
    python bench/fuzz.py --count packets=2000 --count capture=500 --jobs 2
    python bench/fuzz.py --replay capture 1234        # run one input again, with its traceback

Inputs are ``tests.fuzz.mutate.make_input(kind, seed)`` (deterministic), run by ``tests.fuzz.runner.run_one``.
A worker runs seeds in order and reports each as a JSON line; the parent kills a worker that is silent for
``--hang`` seconds (a hang: that seed) or dies (a crash: that seed) and starts a new one at the next seed.
Memory: each worker returns the heap's free pages to the system (glibc's ``malloc_trim``) and resets its peak RSS
(``/proc/self/clear_refs``) before an input, and reads ``VmHWM`` after it: the peak is the input's own, not what an
earlier heavy input left in the heap (glibc keeps freed memory, the more so with ``picaemu.allocator``'s threshold;
without the trim, one 700 MB input of the twelfth session's capture seeds left 1,239 later inputs reading over
500 MB). A crash is any exception other than a PicaError (for ``info``: also its scan and a replay finding different
draws, ``tests.fuzz.targets.run_info``), or a dead worker; ``info`` outcomes "ok (replayed)" (the scan gave way to
a replay) and "ok, replay ERROR" (info answered, a replay failed) count as ok. The baseline printed first is the seed
inputs (unmutated) of each kind, in the same run. Results go to stdout and ``--json``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import ctypes
import json
import os
import select
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_COUNTS = {"packets": 60000, "capture": 12000, "shbin": 8000, "texture": 6000, "draw": 3000, "info": 6000}
HANG_SECONDS = 20.0
MEMORY_LIMIT_MB = 500.0


def _peak_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _release_freed_memory() -> None:
    """Give the heap's free pages back to the system (glibc); nothing elsewhere."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def worker(kind: str, start: int, count: int) -> None:
    """Run seeds start.. of ``kind``, one JSON line each on stdout."""
    from tests.fuzz.runner import quiet, run_one

    quiet()
    for seed in range(start, start + count):
        _release_freed_memory()
        _reset_peak()
        t0 = time.perf_counter()
        record: dict[str, object] = {"seed": seed}
        try:
            record["outcome"], record["packets"] = run_one(kind, seed)
        except Exception as err:
            frame = traceback.extract_tb(err.__traceback__)[-1]
            where = f"{Path(frame.filename).name}:{frame.lineno}"
            record["crash"] = f"{type(err).__name__} at {where}: {str(err)[:200]}"
        record["seconds"] = round(time.perf_counter() - t0, 4)
        record["peak_mb"] = round(_peak_mb(), 1)
        print(json.dumps(record), flush=True)


@dataclass
class Tally:
    inputs: int = 0
    packets: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    crashes: list[str] = field(default_factory=list)
    hangs: list[int] = field(default_factory=list)
    slowest: float = 0.0
    slowest_seed: int = -1
    peak_mb: float = 0.0
    over_memory: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, rec: dict) -> None:
        self.inputs += 1
        self.packets += int(rec.get("packets") or 0)
        if float(rec["seconds"]) > self.slowest:
            self.slowest, self.slowest_seed = float(rec["seconds"]), int(rec["seed"])
        self.peak_mb = max(self.peak_mb, float(rec["peak_mb"]))
        if float(rec["peak_mb"]) > MEMORY_LIMIT_MB:
            self.over_memory.append(int(rec["seed"]))
        if "crash" in rec:
            self.crashes.append(f"seed {rec['seed']}: {rec['crash']}")
        else:
            self.outcomes[str(rec["outcome"])] += 1


def _spawn(kind: str, start: int, count: int, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", kind, str(start), str(count)],
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
        env=env,
        cwd=REPO,
    )


def campaign(kind: str, start: int, count: int, hang: float, env: dict[str, str]) -> Tally:
    """Run seeds start..start+count of ``kind`` in watched workers (see the module docstring)."""
    tally, seed, end = Tally(), start, start + count
    t0 = time.perf_counter()
    while seed < end:
        proc = _spawn(kind, seed, end - seed, env)
        assert proc.stdout is not None
        while seed < end:
            ready, _, _ = select.select([proc.stdout], [], [], hang)
            line = proc.stdout.readline() if ready else None
            if line:
                rec = json.loads(line)
                tally.add(rec)
                seed = int(rec["seed"]) + 1
                continue
            if line is None:  # silent for ``hang`` seconds: the input in flight hangs
                tally.hangs.append(seed)
                proc.kill()
            else:  # the worker died
                proc.wait()
                tally.inputs += 1
                tally.crashes.append(f"seed {seed}: worker died with status {proc.returncode}")
            proc.wait()
            seed += 1
            break
        else:
            proc.wait()
    tally.seconds = time.perf_counter() - t0
    return tally


def baseline() -> None:
    """The unmutated seed inputs, timed in this run."""
    from tests.fuzz import targets
    from tests.fuzz.mutate import capture_seeds, sample_captures, shbin_seeds
    from tests.fuzz.runner import quiet

    quiet()
    targets.run_capture(capture_seeds()[0])  # compile the kernels outside the timing
    for name, items, run in (
        ("capture", capture_seeds(), targets.run_capture),
        ("shbin", shbin_seeds(), targets.run_shbin),
        ("info", capture_seeds(), targets.run_info),
        ("draw", [c for _, c in sample_captures()], lambda c: targets.run_hostile_draws(c, [])),
    ):
        t0 = time.perf_counter()
        outcomes = collections.Counter(run(item) for item in items)
        ms = 1000 * (time.perf_counter() - t0) / len(items)
        print(f"baseline {name}: {len(items)} seed inputs, {ms:.1f} ms each, outcomes {dict(outcomes)}")


def report(kind: str, t: Tally) -> dict:
    ok = sum(n for o, n in t.outcomes.items() if o.startswith("ok"))  # info: "ok (replayed)", "ok, replay ..."
    named = sum(t.outcomes.values()) - ok
    print(
        f"{kind:8s} {t.inputs:7d} inputs in {t.seconds:7.1f} s ({t.inputs / max(t.seconds, 1e-9):7.1f}/s)"
        f"  packets {t.packets:9d}  ok {ok:6d}  named errors {named:6d}  crashes {len(t.crashes)}"
        f"  hangs {len(t.hangs)}  slowest {t.slowest:.2f} s (seed {t.slowest_seed})  peak {t.peak_mb:.0f} MB"
        f"  over {MEMORY_LIMIT_MB:.0f} MB {len(t.over_memory)}"
    )
    print(f"         errors: {dict(t.outcomes.most_common())}")
    for line in t.crashes[:20]:
        print(f"         CRASH {line}")
    if t.hangs:
        print(f"         HANG seeds {t.hangs[:20]}")
    return {
        "inputs": t.inputs,
        "packets": t.packets,
        "outcomes": dict(t.outcomes),
        "crashes": t.crashes,
        "hangs": t.hangs,
        "slowest_s": t.slowest,
        "slowest_seed": t.slowest_seed,
        "peak_mb": t.peak_mb,
        "over_memory": t.over_memory,
        "seconds": round(t.seconds, 1),
    }


def _counts(ap: argparse.ArgumentParser, texts: list[str]) -> dict[str, int]:
    """``--count`` KIND=N options as {kind: N}; a kind ``mutate`` does not make, or no N, is a usage error (a seed
    of an unknown kind would otherwise count as a crash of every input)."""
    from tests.fuzz.mutate import KINDS

    counts = {}
    for text in texts:
        kind, _, n = text.partition("=")
        if kind not in KINDS or not (n.isascii() and n.isdigit()):
            ap.error(f"--count {text}: expected KIND=N with KIND one of {', '.join(KINDS)}")
        counts[kind] = int(n)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", action="append", default=[], metavar="KIND=N", help="inputs of a kind (repeatable)")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", type=int, default=1, help="kinds run in parallel (one worker each)")
    ap.add_argument("--hang", type=float, default=HANG_SECONDS, help="seconds of silence that count as a hang")
    ap.add_argument(
        "--boundscheck",
        action="store_true",
        help="compile the numba kernels with bounds checks (own cache dir): out-of-bounds reads crash",
    )
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    ap.add_argument("--no-baseline", action="store_true", help="skip timing the unmutated seed inputs")
    ap.add_argument("--replay", nargs=2, metavar=("KIND", "SEED"), help="run one input, with its traceback")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return
    if args.replay:
        from tests.fuzz.runner import run_one

        print(run_one(args.replay[0], int(args.replay[1])))
        return
    counts = _counts(ap, args.count) if args.count else dict(DEFAULT_COUNTS)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if args.boundscheck:
        env.update(NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(REPO / ".numba-boundscheck"))
    print(
        f"picaemu fuzz campaign: {counts}, seeds from {args.start}, jobs {args.jobs}, hang {args.hang} s, "
        f"boundscheck {args.boundscheck}; machine: {os.cpu_count()} cores"
    )
    if not args.no_baseline:
        baseline()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(args.jobs) as pool:
        tallies = dict(
            zip(counts, pool.map(lambda k: campaign(k, args.start, counts[k], args.hang, env), counts), strict=True)
        )
    figures = {kind: report(kind, t) for kind, t in tallies.items()}
    if args.json:
        from picaemu.formats.files import write_text

        write_text(args.json, json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
