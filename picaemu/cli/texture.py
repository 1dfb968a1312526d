"""``picaemu texture``: decode PICA texture data to PNG and encode images into PICA texture data.

``picaemu texture decode FILE.bin --format NAME --width W --height H [--level N] [--offset BYTES] -o OUT.png``
decodes one mip level (``--level``; levels follow level 0 in the file) from ``--offset`` bytes into the file.
``picaemu texture encode IN.png --format NAME -o OUT.bin`` writes one tiled level (non-ETC formats).
Formats by name (RGBA8, RGB8, RGBA5551, RGB565, RGBA4, IA8, HILO8, I8, A8, IA4, I4, A4, ETC1, ETC1A4, or the
aliases RGB5A1, LA8, RG8, L8, LA4, L4) or by code 0-13. Errors print one line and exit with status 2.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from picaemu.cli.common import INT, compiles_kernels, examples, fail, reports_errors
from picaemu.formats.files import image_format, refuse_overwrite, write_atomic
from picaemu.formats.image import read_rgba, write_rgba
from picaemu.texture import decode_texture, encode_texture, texture_format
from picaemu.texture.formats import level_bytes, level_offset

MAX_FILE = 64 * 1024 * 1024  # bigger than any texture (1024 x 1024 RGBA8 with mips is 5.4 MiB)


@click.group(
    "texture",
    epilog=examples(
        "picaemu texture encode tests/golden/lit_sphere.png --format RGBA4 -o sphere.bin",
        "picaemu texture decode sphere.bin --format RGBA4 --width 64 --height 64 -o sphere.png",
    ),
)
def texture() -> None:
    """Decode and encode PICA200 texture data."""


@texture.command(
    "decode",
    epilog=examples(
        "picaemu texture decode sphere.bin --format RGBA4 --width 64 --height 64 -o sphere.png",
        "picaemu texture decode mips.bin --format ETC1 --width 128 --height 128 --level 1 -o level1.png",
    ),
)
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", required=True, help="Texture format name or code 0-13.")
@click.option("--width", required=True, type=INT, help="Level-0 width in texels (power of two, 8-1024).")
@click.option("--height", required=True, type=INT, help="Level-0 height in texels (power of two, 8-1024).")
@click.option("--level", default=0, type=INT, show_default=True, help="Mip level to decode.")
@click.option("--offset", default=0, type=INT, show_default=True, help="Byte offset of level 0 in the file.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="PNG to write.")
@reports_errors
@compiles_kernels
def decode_cmd(source: Path, fmt: str, width: int, height: int, level: int, offset: int, output: Path) -> None:
    """Decode texture data in SOURCE to a PNG (row 0 of the PNG = first row in memory = top of the image)."""
    if source.stat().st_size > MAX_FILE:
        fail(f"{source}: larger than {MAX_FILE} bytes, not a texture file")
    if offset < 0:
        fail("--offset must not be negative")
    image_format(output)
    refuse_overwrite(output, source)
    data = source.read_bytes()
    image = decode_texture(data, offset, width, height, fmt, level)
    write_rgba(output, image)
    f = texture_format(fmt)
    start = offset + level_offset(width, height, f, level)
    size = level_bytes(image.shape[1], image.shape[0], f)
    click.echo(
        f"{source}: {f.name} level {level} {image.shape[1]}x{image.shape[0]}, bytes {start}..{start + size} -> {output}"
    )


@texture.command(
    "encode",
    epilog=examples(
        "picaemu texture encode tests/golden/lit_sphere.png --format RGBA4 -o sphere.bin",
        "picaemu texture encode tests/golden/lit_sphere.png --format LA8 -o sphere_la8.bin",
    ),
)
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", required=True, help="Texture format name or code (not ETC1/ETC1A4).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="File to write.")
@reports_errors
@compiles_kernels
def encode_cmd(source: Path, fmt: str, output: Path) -> None:
    """Encode the image SOURCE (PNG or any Pillow format; top row first) as one tiled texture level."""
    refuse_overwrite(output, source)
    rgba: np.ndarray = read_rgba(source)
    data = encode_texture(rgba, fmt)
    write_atomic(output, data)
    click.echo(
        f"{source}: {rgba.shape[1]}x{rgba.shape[0]} -> {texture_format(fmt).name}, {len(data)} bytes -> {output}"
    )
