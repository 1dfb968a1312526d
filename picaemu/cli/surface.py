"""``picaemu surface``: any memory of a capture as a picture (the GUI's surface viewer on the command line).

``picaemu surface CAPTURE --address A --format F --size WxH [--linear] [--after-draw N] [--channels rgba]
[--plane depth|stencil] [--range LO,HI] [--lcd] [-o OUT.png] [--pixel X,Y]``: formats are the 14 texture formats,
the color buffer formats (same layouts) and D16 / D24 / D24S8 (``picaemu.debug.surface``). ``-o`` writes the
displayed picture; ``--pixel`` prints one pixel's raw word and decoded value as JSON (X, Y in the memory-order
picture; with ``--lcd`` in the LCD orientation, mapped back through ``picaemu.gx.lcd.lcd_to_memory``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from picaemu.cli.common import INT, compiles_kernels, examples, fail, reports_errors
from picaemu.debug import replay as drp
from picaemu.debug import surface as sf
from picaemu.formats.files import image_format
from picaemu.formats.image import write_rgba
from picaemu.gx.lcd import lcd_to_memory

_T = TypeVar("_T", int, float)


def _pair(text: str, kind: Callable[[str], _T], sep: str, what: str) -> tuple[_T, _T]:
    """Two ``kind`` values of ``text`` separated by ``sep``; click's BadParameter naming ``what`` otherwise."""
    try:
        a, b = (kind(v) for v in text.lower().split(sep))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not {what}") from None
    return a, b


@click.command(
    "surface",
    epilog=examples(
        "picaemu surface samples/captures/blending.pica --address 0x18000000 --format RGBA8 --size 240x400"
        " --lcd -o c.png",
        "picaemu surface CAPTURE --address 0x18100000 --format D24S8 --size 240x400 --pixel 10,20",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--address", required=True, type=INT, help="Physical address of the first byte.")
@click.option("--format", "fmt", required=True, help="Texture format name/alias, or D16, D24, D24S8.")
@click.option("--size", required=True, metavar="WxH", help="Width x height in pixels (multiples of 8 when tiled).")
@click.option("--linear", is_flag=True, help="Rows one after the other instead of 8x8 Morton tiles.")
@click.option("--after-draw", type=int, default=None, help="Read memory just after this draw (default: the end).")
@click.option("--channels", default="rgba", show_default=True, help="Color channels to show (one alone: grey).")
@click.option(
    "--plane",
    type=click.Choice(sf.PLANES),
    default="depth",
    show_default=True,
    help="Depth formats: which plane to show.",
)
@click.option(
    "--range",
    "value_range",
    default=None,
    metavar="LO,HI",
    help="Depth formats: the values shown black..white (default: the surface's min..max).",
)
@click.option("--lcd", is_flag=True, help="Turn the picture as the LCD shows a render target.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="PNG of the displayed picture.")
@click.option("--pixel", default=None, metavar="X,Y", help="Print this pixel's raw word and decoded value (JSON).")
@reports_errors
@compiles_kernels
def surface(
    capture: Path,
    address: int,
    fmt: str,
    size: str,
    linear: bool,
    after_draw: int | None,
    channels: str,
    plane: str,
    value_range: str | None,
    lcd: bool,
    output: Path | None,
    pixel: str | None,
) -> None:
    """Any memory of a capture decoded as a texture, color or depth surface."""
    width, height = _pair(size, int, "x", "WxH")
    if output is None and pixel is None:
        fail("nothing to do: give -o OUT.png and/or --pixel X,Y")
    if output is not None:
        image_format(output)
    replay = drp.open(capture)
    if after_draw is None:
        replay.run()
    s = replay.debugger.surface_view(address, fmt, width, height, not linear, after_draw)
    if output is not None:
        depth_range = None if value_range is None else _pair(value_range, float, ",", "LO,HI")
        picture = sf.render_surface(s, channels, depth_range, plane, lcd)
        write_rgba(output, picture)
        click.echo(f"{s.format} {width}x{height} at 0x{address:08X} ({'linear' if linear else 'tiled'}) -> {output}")
    if pixel is not None:
        x, y = _pair(pixel, int, ",", "X,Y")
        if lcd:
            x, y = lcd_to_memory(x, y, width)
        click.echo(json.dumps(sf.readout(s, x, y)))
