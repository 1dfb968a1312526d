"""``picaemu gui [CAPTURE]``: the Qt debugger (needs PySide6: ``pip install picaemu[gui]``). Qt is imported only
when the command runs, so the rest of the CLI works without it.

Without a display (no ``DISPLAY`` / ``WAYLAND_DISPLAY`` on Linux and no ``QT_QPA_PLATFORM`` chosen) Qt would
abort the process (status 134); the command says so in one line and exits with status 2 instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from picaemu.cli.common import examples, fail

NEEDS_DISPLAY = ("", "xcb", "wayland", "eglfs")  # QT_QPA_PLATFORM values that open a real window


def display_problem(environ: dict[str, str] | os._Environ[str], platform: str = sys.platform) -> str | None:
    """Why a Qt window cannot open here, or None."""
    if not platform.startswith("linux"):
        return None
    qpa = environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if qpa not in NEEDS_DISPLAY or environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display to open the debugger on (DISPLAY and WAYLAND_DISPLAY are unset); run it in a desktop "
        "session, or set QT_QPA_PLATFORM=offscreen for a window nobody sees"
    )


@click.command(
    "gui",
    epilog=examples(
        "picaemu gui samples/captures/cube.pica",
        "picaemu gui a.pica --compare b.pica     # side by side at the first draw where they part",
        "picaemu gui",
    ),
)
@click.argument("capture", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--compare",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A second capture: both open side by side at the first draw whose output differs (picaemu diff).",
)
def gui(capture: Path | None, compare: Path | None) -> None:
    """Open the debugger, optionally on CAPTURE (.pica, .ctf or c3dcap scene directory)."""
    if compare is not None and capture is None:
        raise click.UsageError("--compare needs a CAPTURE to compare with")
    problem = display_problem(os.environ)
    if problem is not None:
        fail(problem)
    try:
        from picaemu.gui.app import run
    except ImportError as err:
        fail(f"the debugger needs PySide6 ({err}); install picaemu[gui]")
    raise SystemExit(run(str(capture) if capture else None, str(compare) if compare else None))
