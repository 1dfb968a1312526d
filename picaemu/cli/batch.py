"""``picaemu batch INPUTS... -o OUTDIR``: headless replay for CI, on local worker processes or a Dask cluster.

Every input (a .pica, .ctf or c3dcap directory; a directory without a manifest is searched for captures) is one
capture, named by its file's stem or its scene folder's name (repeats get -2, -3...). Each capture is replayed
once, forwards, and the top screen after every frame is written to ``OUTDIR/<name>/<NNNN>.png`` (frame number,
4 digits; a capture without a frame end: its final state as ``0000.png``). References use the same layout,
``REFDIR/<name>/<NNNN>.png``, so ``--update-references`` simply writes the outputs there and ``picaemu
diff-images REFDIR OUTDIR`` compares the same pairs. A capture whose reference is one picture,
``REFDIR/<name>.png`` (and no ``REFDIR/<name>/`` folder), has its last frame compared with it.

With ``--compare REFDIR`` every frame is compared (``picaemu.analysis.imagediff``: a channel differing by more than
``--threshold`` is a bad pixel; PSNR), diff pictures go to ``OUTDIR/<name>/<NNNN>.diff.png``. The reports
(``picaemu.batch.report``: ``report.json``, ``report.html``, and ``--junit FILE``) are always written. Progress
is one line per capture on stderr, in the order captures finish; the summary table goes to stdout.

Exit status: 0 every capture ran (and matched); 1 some frame regressed or has no reference (``EXIT_REGRESSED``);
4 some capture could not run: failed or timed out (``EXIT_NOT_RUN``; it wins over 1); 2 bad arguments; 3 a bug.
``--backend gl`` renders with the OpenGL backend (``picaemu.gl``) instead of the software pipeline. Work runs
in ``--jobs`` local worker processes (``picaemu.batch.local``, with a hard per-capture timeout) or, with
``--scheduler ADDRESS``, on a Dask cluster (``picaemu.batch.cluster``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from picaemu.analysis.imagediff import (
    DIFF_SUFFIX,
    MISSING_OUTPUT,
    MISSING_REFERENCE,
    REGRESSION,
    UPDATED,
    FrameCheck,
    check_pair,
    diff_path_for,
)
from picaemu.batch import report
from picaemu.batch.task import OK, decode_result, make_task
from picaemu.cli.common import compiles_kernels, exclusive, info, print_table, quiet_option, reports_errors
from picaemu.errors import PicaError
from picaemu.formats.files import refuse_overwrite, write_atomic
from picaemu.replay import BACKENDS, default_pipeline

EXIT_REGRESSED = 1
EXIT_NOT_RUN = 4
DEFAULT_TIMEOUT = 600.0
FRAME_NAME = re.compile(r"^\d{4,}\.png$")
EXAMPLES = """
Examples:

\b
  picaemu batch samples/captures -o out --compare samples/reference
  picaemu batch samples/captures -o out --compare samples/reference --junit out/junit.xml -j 2
  picaemu batch NEW_CAPTURES -o out --compare refs --update-references
  picaemu batch samples/captures -o out --scheduler tcp://127.0.0.1:8786
"""


@dataclass
class Outcome:
    """One capture's row: ``status`` ok, regression, missing reference, updated, failed or timeout; ``checks``
    one ``FrameCheck`` per frame (status "rendered" without ``--compare``)."""

    name: str
    source: str
    status: str
    frames: int = 0
    draws: int = 0
    seconds: float = 0.0
    max_diff: int | None = None
    bad_pixels: int | None = None
    error: str = ""
    checks: list[FrameCheck] = field(default_factory=list)


def capture_names(paths: list[Path]) -> list[str]:
    """Output names: a scene directory's name, a file's stem; repeats get -2, -3..."""
    names: list[str] = []
    for path in paths:
        base = path.name if path.is_dir() else path.stem
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base}-{k}"
        names.append(name)
    return names


def find_inputs(paths: tuple[Path, ...]) -> list[Path]:
    """Captures named on the command line; plain directories are searched (c3dcap scenes, .pica, .ctf)."""
    from picaemu.replay import CAPTURE_SUFFIXES, claims_capture

    found: list[Path] = []
    for p in paths:
        if claims_capture(p):
            found.append(p)
        elif p.is_dir():
            found += sorted(q for q in p.rglob("*") if q.suffix in CAPTURE_SUFFIXES or (q / "manifest.json").is_file())
    return found


def replay_all(tasks: list[dict[str, Any]], jobs: int, scheduler: str | None) -> Iterator[bytes]:
    """Result bytes of every task (``picaemu.batch.task``), in completion order."""
    if scheduler is not None:
        from picaemu.batch.cluster import run_cluster

        return run_cluster(tasks, scheduler)
    from picaemu.batch.local import run_local

    return run_local(tasks, jobs)


def _clear_frames(folder: Path) -> None:
    """Remove the frame pictures and diff pictures an earlier run left in a capture's output folder."""
    if folder.is_dir():
        for p in folder.iterdir():
            if p.is_file() and (FRAME_NAME.match(p.name) or p.name.endswith(DIFF_SUFFIX)):
                p.unlink()


def store(data: bytes, out_dir: Path, inputs: list[Path]) -> Outcome:
    """Write one result's frames to ``OUTDIR/<name>/`` and return its outcome (checks: "rendered")."""
    fields, pictures = decode_result(data)
    outcome = Outcome(**{k: fields[k] for k in ("name", "source", "status", "frames", "draws", "seconds", "error")})
    folder = out_dir / outcome.name
    folder.mkdir(parents=True, exist_ok=True)
    _clear_frames(folder)
    for k, png in enumerate(pictures):
        dest = folder / f"{k:04d}.png"
        refuse_overwrite(dest, *inputs)
        write_atomic(dest, png)
        outcome.checks.append(FrameCheck(f"{outcome.name}/{dest.name}", "rendered", output=str(dest)))
    return outcome


def compare(outcome: Outcome, out_dir: Path, ref_dir: Path, threshold: int) -> None:
    """Check every frame against ``REFDIR/<name>/<NNNN>.png``; a reference frame the run did not produce is a
    ``missing output`` check. Sets the outcome's status and worst values."""
    keys = {c.key for c in outcome.checks}
    ref_folder = ref_dir / outcome.name
    single = ref_dir / f"{outcome.name}.png"  # one picture for the capture: its last frame
    if not ref_folder.is_dir() and single.is_file() and outcome.checks:
        last = outcome.checks[-1].key
        outcome.checks[-1] = check_pair(last, single, out_dir / last, threshold, diff_path_for(out_dir, last))
        _settle(outcome)
        return
    extra = (
        sorted(
            f"{outcome.name}/{p.name}"
            for p in ref_folder.glob("*.png")
            if FRAME_NAME.match(p.name) and f"{outcome.name}/{p.name}" not in keys
        )
        if ref_folder.is_dir()
        else []
    )
    outcome.checks = [
        check_pair(key, ref_dir / key, out_dir / key, threshold, diff_path_for(out_dir, key))
        for key in [*(c.key for c in outcome.checks), *extra]
    ]
    for c in outcome.checks:
        if c.status == MISSING_OUTPUT:
            c.error = "the reference has this frame; the capture rendered fewer"
    _settle(outcome)


def _settle(outcome: Outcome) -> None:
    """The outcome's worst values and status from its checks."""
    diffs = [c.max_diff for c in outcome.checks if c.max_diff is not None]
    outcome.max_diff = max(diffs) if diffs else None
    outcome.bad_pixels = sum(c.bad_pixels or 0 for c in outcome.checks) if diffs else None
    statuses = {c.status for c in outcome.checks}
    if statuses & {REGRESSION, MISSING_OUTPUT}:
        outcome.status = REGRESSION
    elif MISSING_REFERENCE in statuses:
        outcome.status = MISSING_REFERENCE


def write_references(outcome: Outcome, out_dir: Path, ref_dir: Path) -> None:
    """Write the outcome's frames as its references (stale reference frames of the capture are removed)."""
    folder = ref_dir / outcome.name
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.glob("*.png"):
        if FRAME_NAME.match(p.name):
            p.unlink()
    for c in outcome.checks:
        if c.status != MISSING_OUTPUT:
            write_atomic(ref_dir / c.key, (out_dir / c.key).read_bytes())
            c.status, c.reference = UPDATED, str(ref_dir / c.key)
    outcome.checks = [c for c in outcome.checks if c.status == UPDATED]
    outcome.status = UPDATED


def exit_status(outcomes: list[Outcome]) -> int:
    if any(o.status in report.NOT_RUN for o in outcomes):
        return EXIT_NOT_RUN
    if any(o.status in report.REGRESSED for o in outcomes):
        return EXIT_REGRESSED
    return 0


def write_reports(
    outcomes: list[Outcome],
    out_dir: Path,
    threshold: int | None,
    ref_dir: Path | None = None,
    junit: Path | None = None,
) -> None:
    report.write_json(outcomes, out_dir / "report.json", threshold, ref_dir)
    report.write_html(outcomes, out_dir / "report.html", threshold)
    if junit is not None:
        report.write_junit(outcomes, junit)


def _error(outcome: Outcome) -> str:
    """The capture's error, else the first frame's that has one (a size mismatch, a missing frame) and how many
    more do."""
    if outcome.error:
        return outcome.error
    errors = [f"{c.key}: {c.error}" for c in outcome.checks if c.error]
    return errors[0] + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else "") if errors else ""


def _summary(outcomes: list[Outcome]) -> None:
    print_table(
        [
            {
                "capture": o.name,
                "status": o.status,
                "frames": o.frames,
                "draws": o.draws,
                "seconds": f"{o.seconds:.2f}",
                "max diff": "" if o.max_diff is None else o.max_diff,
                "bad pixels": "" if o.bad_pixels is None else o.bad_pixels,
                "error": _error(o),
            }
            for o in outcomes
        ],
        title="picaemu batch",
    )


@click.command("batch", epilog=EXAMPLES)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder: <capture>/<NNNN>.png per frame, report.json, report.html.",
)
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="Local worker processes [default: 1].")
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786); needs [cluster].",
)
@click.option(
    "--compare",
    "ref_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Reference folder: <capture>/<NNNN>.png per frame.",
)
@click.option(
    "--threshold",
    "--tolerance",
    "threshold",
    type=click.IntRange(0, 255),
    default=2,
    show_default=True,
    help="Largest allowed per-channel difference.",
)
@click.option("--update-references", is_flag=True, help="Write the outputs into the --compare folder.")
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write JUnit XML here (one test case per capture).",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="software",
    show_default=True,
    help="Rendering backend: the software pipeline (the reference) or OpenGL through EGL.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds one capture may take; past it the capture is reported as timed out.",
)
@quiet_option
@reports_errors
@compiles_kernels
def batch(
    inputs: tuple[Path, ...],
    out_dir: Path,
    jobs: int | None,
    scheduler: str | None,
    ref_dir: Path | None,
    threshold: int,
    update_references: bool,
    junit: Path | None,
    backend: str,
    timeout: float,
) -> None:
    """Replay every capture in INPUTS headlessly; write every frame's top screen to OUTDIR."""
    exclusive(jobs=jobs, scheduler=scheduler)
    if update_references and ref_dir is None:
        raise click.UsageError("--update-references needs --compare REFDIR (the folder to write)")
    if ref_dir is not None and not update_references and not ref_dir.is_dir():
        raise click.UsageError(f"--compare {ref_dir}: no such folder")
    if ref_dir is not None and ref_dir.resolve() == out_dir.resolve():
        raise click.UsageError("--compare names the output folder itself")
    sources = find_inputs(inputs)
    if not sources:
        raise click.UsageError("no captures found in the inputs")
    if backend != "software":
        default_pipeline(backend)  # one clear line now (BackendUnavailable) rather than a failure per capture
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = [
        make_task(name, str(s), timeout, backend=backend)
        for s, name in zip(sources, capture_names(sources), strict=True)
    ]
    done: dict[str, Outcome] = {}
    for data in replay_all(tasks, jobs or 1, scheduler):
        outcome = store(data, out_dir, sources)
        if outcome.status == OK and ref_dir is not None:
            try:
                compare(outcome, out_dir, ref_dir, threshold)
                if update_references:
                    write_references(outcome, out_dir, ref_dir)
            except (PicaError, OSError) as err:
                outcome.status, outcome.error = "failed", f"comparing: {err}"
        done[outcome.name] = outcome
        plural = "" if outcome.frames == 1 else "s"
        info(
            f"[{len(done)}/{len(tasks)}] {outcome.name}: {outcome.status} ({outcome.frames} frame{plural}, "
            f"{outcome.seconds:.2f} s)" + (f": {outcome.error}" if outcome.error else "")
        )
    outcomes = [done[t["name"]] for t in tasks]
    write_reports(outcomes, out_dir, threshold if ref_dir is not None else None, ref_dir, junit)
    _summary(outcomes)
    raise SystemExit(exit_status(outcomes))
