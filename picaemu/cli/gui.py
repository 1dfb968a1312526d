"""``picaemu gui [CAPTURE]``: the Qt debugger (needs PySide6: ``pip install picaemu[gui]``). Qt is imported only
when the command runs, so the rest of the CLI works without it."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("gui")
@click.argument("capture", required=False, type=click.Path(exists=True, path_type=Path))
def gui(capture: Path | None) -> None:
    """Open the debugger, optionally on CAPTURE (.pica, .ctf or c3dcap scene directory)."""
    try:
        from picaemu.gui.app import run
    except ImportError as err:
        raise click.ClickException(f"the debugger needs PySide6 ({err}); install picaemu[gui]") from None
    raise SystemExit(run(str(capture) if capture else None))
