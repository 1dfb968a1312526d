"""The ``picaemu`` command: one click group, one module per subcommand."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="picaemu")
def main() -> None:
    """picaemu: emulate and inspect the Nintendo 3DS PICA200 GPU."""


def _register() -> None:
    from picaemu.cli.batch import batch
    from picaemu.cli.convert import convert
    from picaemu.cli.decode import decode
    from picaemu.cli.gui import gui
    from picaemu.cli.record import record
    from picaemu.cli.regs import regs_command
    from picaemu.cli.render import render
    from picaemu.cli.shader import shader
    from picaemu.cli.stats import stats
    from picaemu.cli.texture import texture

    for command in (batch, convert, decode, gui, record, regs_command, render, shader, stats, texture):
        main.add_command(command)


_register()
