"""Batch throughput: ``picaemu batch``'s work over every sample capture three times (samples/captures: 18
captures, 21 frames, from one-draw scenes to a 3000-draw frame; 54 tasks), in captures per minute, on local
worker processes (-j 1, the baseline, and -j 2) and on a Dask LocalCluster of 1, 2 and 4 worker processes
(``--scheduler``), all in the same run. Each setting renders the batch twice in a row and reports the second
(the Dask workers are up and have loaded the kernels; the local pool starts its workers on every run, so its
second run includes start-up).

Run: ``python bench/bench_batch.py [--repeat N] [--no-dask]`` (Dask settings need the [cluster] extra).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picaemu.batch.cluster import run_cluster  # noqa: E402
from picaemu.batch.local import run_local  # noqa: E402
from picaemu.batch.task import decode_result, make_task  # noqa: E402
from picaemu.cli.batch import capture_names, find_inputs  # noqa: E402

REPEAT = 3  # the sample set three times: 54 captures, so that no single long capture bounds the batch


def tasks(repeat: int = REPEAT) -> list[dict]:
    sources = find_inputs((ROOT / "samples" / "captures",))
    return [
        make_task(f"{n}-{k}", str(s), 600.0)
        for k in range(repeat)
        for s, n in zip(sources, capture_names(sources), strict=True)
    ]


def timed(run) -> tuple[float, int]:
    start = time.perf_counter()
    frames = 0
    for data in run():
        outcome, pictures = decode_result(data)
        assert outcome["status"] == "ok", outcome
        frames += len(pictures)
    return time.perf_counter() - start, frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=REPEAT, help="times the sample set is in the batch")
    ap.add_argument("--no-dask", action="store_true", help="local worker processes only (no [cluster] extra needed)")
    args = ap.parse_args()
    work = tasks(args.repeat)
    print(f"{len(work)} captures; machine: see bench/RESULTS.md")
    print(f"{'setting':28s} {'first s':>8s} {'second s':>9s} {'captures/min':>13s} {'frames':>7s}")
    baseline = None
    for jobs in (1, 2):
        first, _ = timed(lambda jobs=jobs: run_local(work, jobs))
        second, frames = timed(lambda jobs=jobs: run_local(work, jobs))
        rate = 60 * len(work) / second
        baseline = baseline or rate
        print(f"{f'local -j {jobs}':28s} {first:8.1f} {second:9.1f} {rate:13.1f} {frames:7d}  x{rate / baseline:.2f}")
    if args.no_dask:
        return
    from distributed import LocalCluster

    for workers in (1, 2, 4):
        with (
            tempfile.TemporaryDirectory() as tmp,
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                host="127.0.0.1",
                local_directory=tmp,
            ) as cluster,
        ):
            first, _ = timed(lambda: run_cluster(work, cluster.scheduler_address))
            second, frames = timed(lambda: run_cluster(work, cluster.scheduler_address))
        rate = 60 * len(work) / second
        print(
            f"{f'dask {workers} worker(s)':28s} {first:8.1f} {second:9.1f} {rate:13.1f} {frames:7d}  "
            f"x{rate / baseline:.2f}"
        )


if __name__ == "__main__":
    main()
