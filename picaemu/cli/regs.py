"""``picaemu regs``: look registers up in the register table (internal ids and external GPU registers), decode a
value, regenerate docs/registers.md."""

from __future__ import annotations

from pathlib import Path

import click

from picaemu import regs as regtable
from picaemu.cli.common import INT, examples, fail
from picaemu.command.listing import decoded_fields, fields_text
from picaemu.formats.files import write_text
from picaemu.regs import Space
from picaemu.regs.docs import address_text, register_section, render_markdown

DOCS_PATH = Path("docs") / "registers.md"


@click.command(
    "regs",
    epilog=examples(
        "picaemu regs GPUREG_DEPTHBUFFER_FORMAT --value 0x3",
        "picaemu regs 0x117",
        "picaemu regs | grep -i fog",
        "picaemu regs PPF_FLAGS --value 0x1003",
        "picaemu regs 0x10400470",
    ),
)
@click.argument("register", required=False)
@click.option("--value", type=INT, help="Decode this 32-bit value with the register's fields.")
@click.option("--write-docs", "write_docs", is_flag=True, help=f"Rewrite {DOCS_PATH} from the table.")
def regs_command(register: str | None, value: int | None, write_docs: bool) -> None:
    """Show REGISTER (name, GPUREG_ name, alias, 0xID, an external register's name such as PPF_FLAGS, or a
    physical address 0x104xxxxx) from the register table; list all without it (internal, then external)."""
    if write_docs:
        DOCS_PATH.parent.mkdir(exist_ok=True)
        write_text(DOCS_PATH, render_markdown())
        click.echo(f"wrote {DOCS_PATH}")
        return
    if register is None:
        for r in (*regtable.all_registers(), *regtable.external_registers()):
            click.echo(f"{address_text(r):10s}  {r.name:44s} {r.kind.value:10s} {r.doc}")
        return
    try:
        reg = regtable.by_name(register)
    except KeyError:
        fail(f"no register named {register!r}")
    for line in register_section(reg):
        click.echo(line)
    if value is not None and reg.space is Space.EXTERNAL:
        decoded = regtable.decode_fields(reg, value)
        click.echo(f"value 0x{value:08X}: " + " ".join(f"{f.name}={f.text}" for f in decoded.fields))
    elif value is not None:
        click.echo(f"value 0x{value:08X}: {fields_text(reg.id, value) or decoded_fields(reg.id, value)}")
