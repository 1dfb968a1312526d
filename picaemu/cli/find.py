"""``picaemu find CAPTURE``: where a register is written (with a value), where a value is written, which draws
sample a texture address or run a shader program (``picaemu.debug.find`` through ``Debugger.find``); with
``--programs``, every distinct shader program and the draws that run it (the hashes ``--shader`` takes).
One line per hit (``event E + P packets  draw D  what``), or JSON lines with ``--json``.

``picaemu footprint CAPTURE --draw N OUT.png``: the debugger's draw thumbnail (``picaemu.debug.footprint``): the
render target after the draw, the draw's own pixels bright, the rest dimmed, its bounds outlined.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from picaemu.cli.common import compiles_kernels, examples, reports_errors
from picaemu.debug import replay as drp
from picaemu.debug.find import program_table
from picaemu.formats.files import refuse_overwrite, save_image


def _number(_ctx: click.Context, _param: click.Parameter, text: str | None) -> int | None:
    try:
        return None if text is None else int(text, 0)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a number (0x... for hex)") from None


@click.command(
    "find",
    epilog=examples(
        "picaemu find samples/captures/game_cubes_1000.pica --texture 0x180BBC00",
        "picaemu find samples/captures/game_cubes_1000.pica --register TEXUNIT0_ADDR1",
        "picaemu find samples/captures/game_cubes_1000.pica --register BLEND_FUNC --field 'rgb_src=one'",
        "picaemu find samples/captures/game_cubes_1000.pica --programs",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--register", default=None, metavar="NAME", help="Writes of this register (table name, alias, id).")
@click.option(
    "--value",
    default=None,
    callback=_number,
    metavar="WORD",
    help="Writes of this 32-bit word (of --register when given).",
)
@click.option(
    "--field",
    default="",
    metavar="FIELD=MEANING",
    help="Writes of --register whose field holds this (number, enum name, float, true/false).",
)
@click.option(
    "--texture",
    default=None,
    callback=_number,
    metavar="ADDRESS",
    help="Draws with an enabled texture unit 0-2 at this physical address.",
)
@click.option("--shader", default=None, metavar="HASH[@ENTRY]", help="Draws running this program (--programs).")
@click.option("--programs", is_flag=True, help="List the shader programs and how many draws run each.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@reports_errors
@compiles_kernels
def find(
    capture: Path,
    register: str | None,
    value: int | None,
    field: str,
    texture: int | None,
    shader: str | None,
    programs: bool,
    as_json: bool,
) -> None:
    """Find register writes or draws in a capture: by register, written value, texture address or shader."""
    replay = drp.open(capture)  # the debugger holds its replay weakly
    debugger = replay.debugger
    if programs:
        for row in program_table(debugger.session.draw_states):
            click.echo(
                json.dumps(row)
                if as_json
                else f"{row['program']}  {row['draws']} draws ({row['first']}..{row['last']})"
            )
        return
    for hit in debugger.find(register=register, value=value, texture=texture, shader=shader, field=field):
        if as_json:
            click.echo(json.dumps(hit.as_dict()))
        else:
            where = hit.cursor.text()
            draw = "-" if hit.draw is None else hit.draw
            click.echo(f"{where:<24} draw {draw:>5}  {hit.text}")


@click.command(
    "footprint",
    epilog=examples(
        "picaemu footprint samples/captures/game_cubes_1000.pica --draw 37 draw37.png",
        "picaemu footprint samples/captures/game_cubes_1000.pica --draw 37 --zoom draw37_zoom.png",
        "picaemu footprint samples/captures/cube.pica --draw 0 --step 1 cube.png",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.argument("output", type=click.Path(path_type=Path))
@click.option("--draw", type=int, required=True, help="The draw whose footprint to show.")
@click.option("--step", type=int, default=4, show_default=True, help="Keep every STEP-th pixel of every STEP-th row.")
@click.option("--zoom", is_flag=True, help="Show the region around the draw (3x its bounds), not the whole target.")
@reports_errors
@compiles_kernels
def footprint(capture: Path, output: Path, draw: int, step: int, zoom: bool) -> None:
    """A draw's footprint as a picture (PNG): the render target after the draw, the pixels the draw wrote at
    full brightness, pixels where all its fragments were killed tinted red, the rest dimmed, its bounds in yellow.
    """
    refuse_overwrite(output, capture)
    replay = drp.open(capture)  # the debugger holds its replay weakly
    save_image(output, replay.debugger.footprint(draw, step, zoom).image)


@click.command(
    "bookmarks",
    epilog=examples(
        "picaemu bookmarks capture.pica",
        "picaemu bookmarks capture.pica --add 'first blended' --draw 14",
        "picaemu bookmarks capture.pica --rename 'first blended' blend --json",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--add", "add_name", default=None, metavar="NAME", help="Bookmark the position after --draw.")
@click.option("--draw", type=int, default=None, help="The draw --add bookmarks (the position right after it).")
@click.option("--rename", nargs=2, default=None, metavar="OLD NEW", help="Rename a bookmark.")
@click.option("--remove", "remove_name", default=None, metavar="NAME", help="Remove a bookmark.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: markers and bookmarks.")
@reports_errors
@compiles_kernels
def bookmarks(
    capture: Path,
    add_name: str | None,
    draw: int | None,
    rename: tuple[str, str] | None,
    remove_name: str | None,
    as_json: bool,
) -> None:
    """The capture's debug markers (and the draws each groups) and your bookmarks, kept beside the capture in
    CAPTURE.bookmarks.json; --add / --rename / --remove change them (the file is rewritten atomically).
    """
    if add_name is not None and draw is None:
        raise click.UsageError("--add needs --draw")
    replay = drp.open(capture)  # the debugger holds its replay weakly
    debugger = replay.debugger
    if add_name is not None and draw is not None:
        marks = debugger.add_bookmark(add_name, draw)
    elif rename:
        marks = debugger.rename_bookmark(*rename)
    elif remove_name is not None:
        marks = debugger.remove_bookmark(remove_name)
    else:
        marks = debugger.bookmarks()
    groups = debugger.markers()
    if as_json:
        click.echo(
            json.dumps(
                {
                    "markers": [
                        {"text": g.text, "frame": g.frame, "event": g.event, "draws": [g.draws.start, g.draws.stop]}
                        for g in groups
                    ],
                    "bookmarks": [b.as_dict() for b in marks],
                },
                indent=1,
            )
        )
        return
    for g in groups:
        span = f"draws {g.draws.start}..{g.draws.stop - 1}" if g.draws else "no draws"
        click.echo(f"marker  #{g.event} [frame {g.frame}] {g.text!r}: {span}")
    for b in marks:
        click.echo(f"bookmark  {b.cursor.text():<24} {b.name}")
