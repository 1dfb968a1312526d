"""``picaemu regs``: look registers up in the register table, decode a value, regenerate docs/registers.md."""

from __future__ import annotations

from pathlib import Path

import click

from picaemu import regs as regtable
from picaemu.cli.common import INT, examples, fail
from picaemu.command.listing import decoded_fields, fields_text
from picaemu.formats.files import write_text
from picaemu.regs.docs import register_section, render_markdown

DOCS_PATH = Path("docs") / "registers.md"


@click.command("regs", epilog=examples(
    "picaemu regs GPUREG_DEPTHBUFFER_FORMAT --value 0x3", "picaemu regs 0x117", "picaemu regs | grep -i fog"))
@click.argument("register", required=False)
@click.option("--value", type=INT, help="Decode this 32-bit value with the register's fields.")
@click.option("--write-docs", "write_docs", is_flag=True, help=f"Rewrite {DOCS_PATH} from the table.")
def regs_command(register: str | None, value: int | None, write_docs: bool) -> None:
    """Show REGISTER (name, GPUREG_ name, alias or 0xID) from the register table; list all without it."""
    if write_docs:
        DOCS_PATH.parent.mkdir(exist_ok=True)
        write_text(DOCS_PATH, render_markdown())
        click.echo(f"wrote {DOCS_PATH}")
        return
    if register is None:
        for r in regtable.all_registers():
            click.echo(f"0x{r.id:03X}  {r.name:44s} {r.kind.value:10s} {r.doc}")
        return
    try:
        reg = regtable.by_name(register)
    except KeyError:
        fail(f"no register named {register!r}")
    for line in register_section(reg):
        click.echo(line)
    if value is not None:
        click.echo(f"value 0x{value:08X}: {fields_text(reg.id, value) or decoded_fields(reg.id, value)}")
