"""``picaemu diff A [B] [--json] [--backend NAME]… [--every N]``: where two captures part
(``picaemu.debug.capture_diff``): the first draw whose output differs, the state difference there (registers by
field, uniforms by name, textures by content hash, shader programs by disassembly) and the pixels it changed.
One capture under two backends: ``picaemu diff CAPTURE --backend gl`` (A software, B OpenGL). Exit status 0 when
the captures' outputs are equal, 1 when they differ, 2 for an error. JSON schema: docs/diff.md."""

from __future__ import annotations

import json
from pathlib import Path

import click

from picaemu.cli.common import compiles_kernels, examples, info, reports_errors
from picaemu.cli.debug import _print_tree, print_difference
from picaemu.replay import BACKENDS

EXIT_DIFFERENT = 1


@click.command(
    "diff",
    epilog=examples(
        "picaemu diff samples/captures/game_cubes_300.pica other.pica",
        "picaemu diff samples/captures/game_cubes_300.pica other.pica --json > diff.json",
        "picaemu diff samples/captures/blending.pica --backend gl     # software against OpenGL",
        "picaemu diff a.pica b.pica --every 1                         # a point after every draw",
    ),
)
@click.argument("a", type=click.Path(exists=True, path_type=Path))
@click.argument("b", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON object (docs/diff.md) instead of text.")
@click.option(
    "--backend",
    "backends",
    type=click.Choice(BACKENDS),
    multiple=True,
    help="Rendering backend of B (once) or of A then B (twice); default software. B defaults to A.",
)
@click.option(
    "--every",
    type=click.IntRange(1, None),
    default=32,
    show_default=True,
    help="Draws of a frame between two output comparisons (1: after every draw; finds a difference a later "
    "draw hides again).",
)
@reports_errors
@compiles_kernels
def diff(a: Path, b: Path | None, as_json: bool, backends: tuple[str, ...], every: int) -> None:
    """Compare two captures draw by draw (or one capture under two backends): the first draw whose output differs,
    the state difference at that draw and the pixels it changed. Exit 0 when equal, 1 when they differ.
    """
    from picaemu.debug.capture_diff import diff_captures

    if len(backends) > 2:
        raise click.UsageError("--backend is given at most twice (A's, then B's)")
    backend_a, backend_b = ("software", *backends)[-2:] if backends else ("software", "software")
    result = diff_captures(a, b if b is not None else a, backend_a=backend_a, backend_b=backend_b, every=every)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=1))
    else:
        click.echo(result.summary())
        if result.pixels is not None:
            click.echo("pixels:")
            _print_tree(result.pixels, 1)
        if result.state is not None:
            click.echo("state (a -> b):" if result.state else "state: the same")
            print_difference(result.state, 1)
    info(f"a: {result.a['capture']} ({backend_a}), b: {result.b['capture']} ({backend_b})")
    if not result.equal:
        raise SystemExit(EXIT_DIFFERENT)
