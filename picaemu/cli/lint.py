"""``picaemu lint CAPTURE [--json] [--sarif OUT]``: the validation layer (``picaemu.lint``) on the command line.

Findings go to stdout (a table, or ``{"findings": [...]}`` with ``--json``); ``--sarif OUT`` also writes them as
SARIF 2.1.0, atomically (``-``: stdout, instead of the table). Exit status 1 when any finding is an error, 0
otherwise (2: the capture could not be read).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from picaemu.cli.common import compiles_kernels, examples, info, print_table, quiet_option, reports_errors

EXIT_FINDINGS = 1
COLUMNS = ["severity", "code", "event", "draw", "packet", "offset", "message"]


@click.command(
    "lint",
    epilog=examples(
        "picaemu lint samples/captures/cube.pica",
        "picaemu lint tests/data/games/minicraft.pica --json",
        "picaemu lint samples/captures/cube.pica --sarif lint.sarif",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help='Print {"findings": [...]} instead of the table.')
@click.option("--sarif", type=click.Path(path_type=Path), help="Also write the findings as SARIF 2.1.0 (- = stdout).")
@quiet_option
@reports_errors
@compiles_kernels
def lint(capture: Path, as_json: bool, sarif: Path | None) -> int:
    """Validate CAPTURE's command buffers like a graphics API validation layer: what would hang, fault or draw
    garbage on the console (errors) and what is legal but suspicious (warnings), each with the event, draw and
    packet, and the fix. Exit status 1 when any finding is an error. Codes: docs/lint.md.
    """
    from picaemu.formats.files import is_stdout, write_atomic
    from picaemu.lint import Severity, lint
    from picaemu.lint.sarif import sarif_log
    from picaemu.replay.capture import load_capture

    findings = lint(load_capture(capture))
    if sarif is not None:
        write_atomic(sarif, (json.dumps(sarif_log(findings, capture.as_posix()), indent=1) + "\n").encode())
    if as_json:
        click.echo(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=1))
    elif sarif is None or not is_stdout(sarif):
        rows = [
            {**f.as_dict(), "offset": f"0x{f.offset:X}" if f.offset >= 0 else "", "message": f.text} for f in findings
        ]
        if rows:
            print_table(rows, COLUMNS)
    errors = sum(f.severity is Severity.ERROR for f in findings)
    info(f"{len(findings)} finding(s), {errors} error(s)")
    return EXIT_FINDINGS if errors else 0
