"""``picaemu batch INPUTS... -o OUTDIR [--jobs N] [--compare REFDIR --tolerance T]``: headless replay for CI.

Every input (a .pica, .ctf or c3dcap directory; a directory without a manifest is searched for captures) is
replayed in a process pool; the top screen at the end is written to ``OUTDIR/<name>.png``. A rich progress bar and
a summary table go to stderr. With ``--compare`` each picture is checked against ``REFDIR/<name>.png``: a channel
differing by more than the tolerance is a regression; ``OUTDIR/<name>.diff.png`` shows where (differing pixels in
red over a dimmed copy of the picture) and ``OUTDIR/report.json`` / ``report.html`` summarise the run. Exit status
1 when any capture fails or regresses, 0 otherwise (2 for bad arguments). A corrupt or crashing capture is a
failed row with its error (a worker process that dies is replaced; its captures are retried one by one, alone);
the other captures still render and the reports are always written.
"""

from __future__ import annotations

import html
import json
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from pathlib import Path

import click
import numpy as np

from picaemu.cli.common import note_first_compile, reports_errors
from picaemu.errors import PicaError
from picaemu.formats.files import refuse_overwrite, save_image, write_text
from picaemu.formats.image import read_rgba
from picaemu.replay import BACKENDS, default_pipeline

DIFF_DIM = 3  # unchanged pixels are shown at 1/3 brightness in diff images
Task = tuple[str, str, str, str]  # (capture path, output name, output directory, rendering backend)
WORKER_DIED = "the worker process died while replaying this capture (killed, out of memory or crashed)"


@dataclass
class Outcome:
    name: str
    source: str
    status: str  # ok, failed, regression, missing reference
    frames: int = 0
    draws: int = 0
    seconds: float = 0.0
    max_diff: int | None = None
    bad_pixels: int | None = None
    error: str = ""


def capture_names(paths: list[Path]) -> list[str]:
    """Output names: a scene directory's name, a file's name with dots as underscores; repeats get -2, -3..."""
    names: list[str] = []
    for path in paths:
        base = path.name if path.is_dir() else path.name.replace(".", "_")
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base}-{k}"
        names.append(name)
    return names


def find_inputs(paths: tuple[Path, ...]) -> list[Path]:
    """Captures named on the command line; plain directories are searched (c3dcap scenes, .pica, .ctf)."""
    from picaemu.replay import is_capture

    found: list[Path] = []
    for p in paths:
        if is_capture(p):
            found.append(p)
        elif p.is_dir():
            found += sorted(q for q in p.rglob("*") if q.suffix in (".pica", ".ctf") or (q / "manifest.json").is_file())
    return found


def replay_one(source: str, name: str, out_dir: str, backend: str = "software") -> Outcome:
    """Worker: replay one capture and write its top-screen PNG. Any error (a corrupt capture, and even a bug of
    picaemu's) becomes a failed outcome naming it, so one bad capture never stops the batch."""
    from picaemu.replay import open as open_capture

    path = Path(source)
    outcome = Outcome(name, source, "ok")
    start = time.perf_counter()
    try:
        replay = open_capture(path, checkpoints=False, backend=backend)
        replay.run()
        dest = Path(out_dir) / f"{outcome.name}.png"
        refuse_overwrite(dest, path)
        save_image(dest, replay.screen())
        outcome.frames, outcome.draws = len(replay.frames), len(replay.draws)
    except (PicaError, OSError) as err:
        outcome.status, outcome.error = "failed", str(err)
    except Exception as err:  # a bug must not take the other captures down; it is reported as such
        outcome.status, outcome.error = "failed", f"internal error {type(err).__name__}: {err}"
    outcome.seconds = round(time.perf_counter() - start, 3)
    return outcome


def _pool(jobs: int, backend: str) -> ProcessPoolExecutor:
    """Worker processes; those of the GL backend start fresh (spawn): a GL context does not survive a fork."""
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(
        "spawn" if backend == "gl" else None))


def _isolated(task: Task) -> Outcome:
    """Replay one capture alone in a fresh worker process: the way to tell which capture killed a pool."""
    with _pool(1, task[3]) as pool:
        try:
            return pool.submit(replay_one, *task).result()
        except BrokenProcessPool:
            return Outcome(task[1], task[0], "failed", error=WORKER_DIED)


def replay_all(tasks: list[Task], jobs: int, advance: Callable[[], None]) -> list[Outcome]:
    """Outcomes of ``replay_one`` for every (source, name, out_dir, backend) task, in task order. With ``jobs`` > 1 in a
    process pool; captures in flight when a worker process dies are replayed again one by one, each alone."""
    if jobs == 1:
        outcomes = []
        for task in tasks:
            outcomes.append(replay_one(*task))
            advance()
        return outcomes
    done: dict[str, Outcome] = {}
    suspects: list[Task] = []
    with _pool(jobs, tasks[0][3] if tasks else "software") as pool:
        futures = {pool.submit(replay_one, *task): task for task in tasks}
        for future in as_completed(futures):
            try:
                outcome = future.result()
            except BrokenProcessPool:
                suspects.append(futures[future])
                continue
            done[outcome.name] = outcome
            advance()
    for task in suspects:
        done[task[1]] = _isolated(task)
        advance()
    return [done[task[1]] for task in tasks]


def compare(outcome: Outcome, out_dir: Path, ref_dir: Path, tolerance: int) -> None:
    """Check one rendered picture against its reference; writes the diff image on a mismatch."""
    ref_path = ref_dir / f"{outcome.name}.png"
    if not ref_path.is_file():
        outcome.status = "missing reference"
        return
    got = read_rgba(out_dir / f"{outcome.name}.png")[:, :, :3].astype(np.int16)
    ref = read_rgba(ref_path)[:, :, :3].astype(np.int16)
    if got.shape != ref.shape:
        outcome.status, outcome.error = "regression", f"size {got.shape[:2]} differs from reference {ref.shape[:2]}"
        return
    diff = np.abs(got - ref).max(axis=2)
    bad = diff > tolerance
    outcome.max_diff, outcome.bad_pixels = int(diff.max()), int(bad.sum())
    if bad.any():
        outcome.status = "regression"
        picture = (got // DIFF_DIM).astype(np.uint8)
        picture[bad] = (255, 0, 0)
        save_image(out_dir / f"{outcome.name}.diff.png", picture)


def write_reports(outcomes: list[Outcome], out_dir: Path, tolerance: int | None) -> None:
    write_text(out_dir / "report.json", json.dumps({"tolerance": tolerance, "captures": [asdict(o) for o in
                                                                                       outcomes]}, indent=1))
    rows = []
    for o in outcomes:
        diff = f'<img src="{html.escape(o.name)}.diff.png" width="200">' if o.status == "regression" else ""
        rows.append(f"<tr><td>{html.escape(o.name)}</td><td>{o.status}</td><td>{o.frames}</td><td>{o.draws}</td>"
                    f"<td>{o.max_diff if o.max_diff is not None else ''}</td><td>{o.bad_pixels or ''}</td>"
                    f'<td><img src="{html.escape(o.name)}.png" width="200"></td><td>{diff}</td>'
                    f"<td>{html.escape(o.error)}</td></tr>")
    write_text(
        out_dir / "report.html",
        "<!doctype html><meta charset=utf-8><title>picaemu batch</title><table border=1>"
        "<tr><th>capture</th><th>status</th><th>frames</th><th>draws</th><th>max diff</th><th>bad pixels</th>"
        "<th>picture</th><th>diff</th><th>error</th></tr>" + "".join(rows) + "</table>\n")


def _summary(outcomes: list[Outcome]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="picaemu batch")
    for col in ("capture", "status", "frames", "draws", "s", "max diff", "error"):
        table.add_column(col)
    for o in outcomes:
        table.add_row(o.name, o.status, str(o.frames), str(o.draws), f"{o.seconds:.2f}",
                      "" if o.max_diff is None else str(o.max_diff), o.error[:60])
    Console(stderr=True).print(table)


@click.command("batch")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True, help="Worker processes.")
@click.option("--compare", "ref_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Directory of reference PNGs (<name>.png).")
@click.option("--tolerance", type=click.IntRange(0, 255), default=2, show_default=True,
              help="Largest allowed per-channel difference.")
@click.option("--backend", type=click.Choice(BACKENDS), default="software", show_default=True,
              help="Rendering backend: the software pipeline (the reference) or OpenGL through EGL.")
@reports_errors
def batch(inputs: tuple[Path, ...], out_dir: Path, jobs: int, ref_dir: Path | None, tolerance: int,
          backend: str) -> None:
    """Replay every capture in INPUTS headlessly and write the top-screen PNGs to OUTDIR."""
    from rich.progress import Progress

    note_first_compile()

    sources = find_inputs(inputs)
    if not sources:
        raise click.UsageError("no captures found in the inputs")
    if backend != "software":
        default_pipeline(backend)  # one clear line now (BackendUnavailable) rather than a failure per capture
    out_dir.mkdir(parents=True, exist_ok=True)
    names = capture_names(sources)
    tasks = [(str(s), name, str(out_dir), backend) for s, name in zip(sources, names, strict=True)]
    with Progress(transient=True, console=None) as progress:
        bar = progress.add_task("replaying", total=len(sources))
        outcomes = replay_all(tasks, jobs, lambda: progress.advance(bar))
    if ref_dir is not None:
        for o in outcomes:
            if o.status == "ok":
                try:
                    compare(o, out_dir, ref_dir, tolerance)
                except (PicaError, OSError) as err:
                    o.status, o.error = "failed", f"comparing: {err}"
    write_reports(outcomes, out_dir, tolerance if ref_dir is not None else None)
    _summary(outcomes)
    failed = [o for o in outcomes if o.status not in ("ok",)]
    if failed:
        raise SystemExit(1)
