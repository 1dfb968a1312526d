"""``picaemu convert IN -o OUT``: between capture kinds.

IN: a .pica capture, a CiTrace .ctf (either layout) or a c3dcap scene directory. OUT's suffix picks the kind:
``.pica`` (``--codec zstd|zlib|raw``) or ``.ctf`` (``--layout new|legacy``; what CiTrace cannot hold — markers,
GS state, LUTs — is listed as a warning on stderr). Writes are atomic. Exit status 2 with a one-line message on
bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from picaemu.cli.common import examples, reports_errors
from picaemu.errors import FormatError
from picaemu.formats import citrace, pica
from picaemu.formats.files import refuse_overwrite, write_atomic
from picaemu.gx import convert as gxconvert
from picaemu.replay import load_capture

CODECS = {"zstd": pica.Codec.ZSTD, "zlib": pica.Codec.ZLIB, "raw": pica.Codec.RAW}


@click.command(
    "convert",
    epilog=examples(
        "picaemu convert tests/data/captures/scene2_textured_quad -o quad.pica",
        "picaemu convert quad.pica -o quad.ctf --layout legacy",
    ),
)
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Destination: .pica or .ctf"
)
@click.option(
    "--codec",
    type=click.Choice(sorted(CODECS)),
    default="zstd",
    show_default=True,
    help=".pica: compression of state, events and blobs.",
)
@click.option(
    "--layout",
    type=click.Choice([layout.value for layout in citrace.Layout]),
    default="new",
    show_default=True,
    help=".ctf: register-write layout.",
)
@reports_errors
def convert(source: Path, output: Path, codec: str, layout: str) -> None:
    """Convert the capture SOURCE (.pica, .ctf or c3dcap directory) to OUTPUT (.pica or .ctf)."""
    refuse_overwrite(output, source)
    capture = load_capture(source)
    suffix = output.suffix.lower()
    if suffix == ".pica":
        pica.write(output, capture, codec=CODECS[codec])
    elif suffix == ".ctf":
        trace, lost = gxconvert.to_citrace(capture, citrace.Layout(layout))
        for item in lost:
            click.echo(f"warning: CiTrace cannot hold {item}; dropped", err=True)
        write_atomic(output, citrace.build(trace))
    else:
        raise FormatError(f"unknown output kind {suffix!r} (use .pica or .ctf)", path=str(output))
    events = len(capture.events)
    click.echo(f"{source} -> {output}: {events} events, {len(capture.blobs)} memory blocks")
