"""``picaemu stats CAPTURE``: per-draw or per-frame statistics of a replay (table, CSV or JSON on stdout), the
statistics figure (``picaemu.analysis.plot``: fragment fates, geometry, time; PNG, SVG or PDF) and ATTILA-style
fragment maps. Counters and routes come from ``picaemu.analysis.stats``; see docs/captures.md. The routes' summary
line goes to stderr (none with ``--quiet``). The table is tab-separated when stdout is not a terminal (nothing is
cut); on a terminal a capture of up to ``TRANSPOSE_UP_TO`` rows is shown with the counters down the side."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import click

from picaemu.analysis import stats as st
from picaemu.cli.common import compiles_kernels, exclusive, info, print_table, quiet_option, reports_errors
from picaemu.formats.files import image_format, is_stdout, refuse_overwrite, save_image

TRANSPOSE_UP_TO = 8
EXAMPLES = """
Examples:

\b
  picaemu stats samples/captures/cube.pica
  picaemu stats samples/captures/animation.pica --per frame --csv > frames.csv
  picaemu stats samples/captures/game_cubes_300.pica --plot stats.svg
  picaemu stats samples/captures/stencil.pica --fragment-map overdraw overdraw.png
"""


def _table(rows: list[dict], title: str) -> None:
    if rows and sys.stdout.isatty() and len(rows) <= TRANSPOSE_UP_TO:  # counters down the side: fits a terminal
        columns = list(dict.fromkeys(k for row in rows for k in row))
        print_table(
            [{"counter": c, **{str(i): row.get(c, "") for i, row in enumerate(rows)}} for c in columns], title=title
        )
    else:
        print_table(rows, title=title)


def _csv(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@click.command("stats", epilog=EXAMPLES)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--per", type=click.Choice(["draw", "frame"]), default="draw", show_default=True)
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout.")
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    metavar="OUT.png|OUT.svg",
    help="Figure of fragment fates, geometry and time per draw or frame (PNG, SVG or PDF by suffix).",
)
@click.option(
    "--fragment-map",
    nargs=2,
    type=(click.Choice(st.FRAGMENT_MAPS), Path),
    default=(None, None),
    metavar="KIND OUT.png",
    help="Fragment map of the last frame: depth-complexity (fragments shaded) or overdraw (written).",
)
@quiet_option
@reports_errors
@compiles_kernels
def stats(
    capture: Path,
    per: str,
    as_csv: bool,
    as_json: bool,
    plot: Path | None,
    fragment_map: tuple[str | None, Path | None],
) -> None:
    """Replay CAPTURE and report what every draw (or frame) did.

    time_ms is each draw's replay time; kernels_ms the time it spent loading or compiling numba kernels (not in
    time_ms). route is "compiled" when both sides of the draw ran in compiled code, else "reference: <reason>";
    per frame, compiled counts those draws, and a summary line on stderr counts every route.
    """
    from picaemu.analysis import plot as stats_plot

    exclusive(csv=as_csv, json=as_json)
    kind, map_path = fragment_map
    plot_to_stdout = plot is not None and is_stdout(plot)
    if plot_to_stdout and (as_csv or as_json):
        raise click.UsageError("--plot - and the --csv/--json text cannot both go to stdout: name a file")
    if plot is not None:
        stats_plot.file_format(plot)  # an unknown suffix fails now, not after the replay
        refuse_overwrite(plot, capture)
    if map_path is not None:
        image_format(map_path)
        refuse_overwrite(map_path, capture)
    result = st.collect(capture, fragment_map=kind)
    rows = result.rows if per == "draw" else st.per_frame(result.rows, result.frames)
    if as_json:
        click.echo(json.dumps({"per": per, "rows": rows, "not_measured": list(st.NOT_MEASURED)}, indent=1))
    elif as_csv:
        click.echo(_csv(rows), nl=False)
    elif not plot_to_stdout:  # the figure is what stdout carries then
        missing = f" (not measured: {', '.join(st.NOT_MEASURED)})" if st.NOT_MEASURED else ""
        _table(rows, f"{capture.name}: per {per}{missing}")
    if plot is not None:
        stats_plot.save(stats_plot.figure(rows, per, f"{capture.name}: per {per}"), plot)
    info(st.route_summary(result.rows))
    if kind is not None and map_path is not None:
        if not result.fragment_maps:
            click.echo("warning: no fragments were rasterized; no fragment map written", err=True)
        else:
            last = max(result.fragment_maps)
            save_image(map_path, st.heatmap(result.fragment_maps[last]))
