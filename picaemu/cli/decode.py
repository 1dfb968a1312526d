"""``picaemu decode FILE``: list a raw command buffer packet by packet (or register write by write).

The listing streams: each packet is printed as the command processor reaches it, so memory stays flat. Work is
bounded by ``--max-bytes`` command bytes executed over the buffer and every buffer its jumps chain to.
"""

from __future__ import annotations

from pathlib import Path

import click

from picaemu.cli.common import INT, examples, fail, load_memory_blocks, reports_errors
from picaemu.command.listing import ListingWriter
from picaemu.command.processor import CommandProcessor
from picaemu.memory import PhysicalMemory
from picaemu.replay import is_capture

DEFAULT_MAX_BYTES = 4 << 20  # a real command list is tens to hundreds of KiB


@click.command(
    epilog=examples(
        "picaemu decode tests/data/captures/scene1_triangle/cmdlists/000.bin",
        "picaemu decode tests/data/captures/scene1_triangle/cmdlists/000.bin --writes --json | head -3",
    )
)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--writes", is_flag=True, help="List the expanded register writes instead of packets.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--base", type=INT, default=0, help="Physical address of the buffer (for jumps); default 0.")
@click.option("--mem", "mem", multiple=True, metavar="ADDR=FILE", help="Load FILE into emulated memory at ADDR.")
@click.option(
    "--max-bytes",
    type=INT,
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Stop with an error after executing this many command bytes (the file and its jump targets).",
)
@reports_errors
def decode(file: Path, writes: bool, as_json: bool, base: int, mem: tuple[str, ...], max_bytes: int) -> None:
    """Decode the command buffer FILE (little-endian u32 words) and print every packet.

    Jumps (CMDBUF_JUMP0/1) are followed into emulated memory (load it with --mem). Every packet of the buffer is
    listed, also those after the GPUREG_FINALIZE write that ends a list on the GPU (citro3d pads with a second
    one). On a bad buffer the packets before the fault are listed, then a one-line error names the byte offset;
    the exit status is 2.
    """
    if is_capture(file):
        fail(f"{file} is a capture, not a raw command list: list its events with `picaemu dump {file}`")
    size = file.stat().st_size
    if size > max_bytes:
        fail(f"{file}: {size} bytes, more than --max-bytes {max_bytes}")
    memory = PhysicalMemory()
    load_memory_blocks(memory, mem)
    processor = CommandProcessor(memory, byte_budget=max_bytes)
    processor.stop_at_finalize = False
    listing = ListingWriter(click.echo, writes=writes, as_json=as_json)
    processor.attach(listing)
    try:
        processor.run(file.read_bytes(), address=base)
    finally:
        listing.flush()  # the packets before a fault are listed before its error line
