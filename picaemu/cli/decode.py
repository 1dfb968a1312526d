"""``picaemu decode FILE``: list a raw command buffer packet by packet (or register write by write)."""

from __future__ import annotations

from pathlib import Path

import click

from picaemu.cli.common import INT, fail, load_memory_blocks
from picaemu.command.listing import ListingWriter
from picaemu.command.processor import CommandProcessor
from picaemu.errors import PicaError
from picaemu.memory import PhysicalMemory


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--writes", is_flag=True, help="List the expanded register writes instead of packets.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--base", type=INT, default=0, help="Physical address of the buffer (for jumps); default 0.")
@click.option("--mem", "mem", multiple=True, metavar="ADDR=FILE", help="Load FILE into emulated memory at ADDR.")
def decode(file: Path, writes: bool, as_json: bool, base: int, mem: tuple[str, ...]) -> None:
    """Decode the command buffer FILE (little-endian u32 words) and print every packet.

    Jumps (CMDBUF_JUMP0/1) are followed into emulated memory (load it with --mem). Every packet of the buffer is
    listed, also those after the GPUREG_FINALIZE write that ends a list on the GPU (citro3d pads with a second
    one). On a bad buffer the packets before the fault are listed, then a one-line error names the byte offset;
    the exit status is 2.
    """
    memory = PhysicalMemory()
    error: str | None = None
    try:
        load_memory_blocks(memory, mem)
    except PicaError as err:
        fail(str(err))
    listing = ListingWriter(click.echo, writes=writes, as_json=as_json)
    processor = CommandProcessor(memory)
    processor.stop_at_finalize = False
    processor.attach(listing)
    try:
        processor.run(file.read_bytes(), address=base)
    except PicaError as err:
        error = str(err)
    listing.flush()
    if error is not None:
        fail(error)
