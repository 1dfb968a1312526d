"""The ``picaemu`` command: one click group, one module per subcommand."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="picaemu")
def main() -> None:
    """picaemu: emulate and inspect the Nintendo 3DS PICA200 GPU."""


def _register() -> None:
    from picaemu.cli.decode import decode

    for command in (decode,):
        main.add_command(command)


_register()
