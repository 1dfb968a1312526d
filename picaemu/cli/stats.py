"""``picaemu stats CAPTURE``: per-draw or per-frame statistics of a replay (table, CSV or JSON), a bar chart,
and ATTILA-style fragment maps. Counters come from ``picaemu.stats``; see docs/captures.md."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click

from picaemu import stats as st
from picaemu.cli.common import reports_errors
from picaemu.formats.files import image_format, refuse_overwrite, save_image

TRANSPOSE_UP_TO = 8


def _table(rows: list[dict], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if len(rows) <= TRANSPOSE_UP_TO:  # counters down the side, one column per draw/frame: fits a terminal
        table.add_column("counter", justify="left")
        for i in range(len(rows)):
            table.add_column(str(i), justify="right")
        for col in columns:
            table.add_row(col, *(str(row.get(col, "")) for row in rows))
    else:
        for col in columns:
            table.add_column(col, justify="left" if col == "kind" else "right")
        for row in rows:
            table.add_row(*(str(row.get(c, "")) for c in columns))
    Console().print(table)


def _csv(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@click.command("stats")
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--per", type=click.Choice(["draw", "frame"]), default="draw", show_default=True)
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout.")
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Bar chart PNG of fragments written per draw or frame.")
@click.option("--fragment-map", nargs=2, type=(click.Choice(st.FRAGMENT_MAPS), Path), default=(None, None),
              metavar="KIND OUT.png",
              help="Fragment map of the last frame: depth-complexity (fragments shaded) or overdraw (written).")
@reports_errors
def stats(capture: Path, per: str, as_csv: bool, as_json: bool, plot: Path | None,
          fragment_map: tuple[str | None, Path | None]) -> None:
    """Replay CAPTURE and report what every draw (or frame) did."""
    kind, map_path = fragment_map
    for out in (plot, map_path):
        if out is not None:
            image_format(out)  # an unknown suffix fails now, not after the replay
            refuse_overwrite(out, capture)
    result = st.collect(capture, fragment_map=kind)
    rows = result.rows if per == "draw" else st.per_frame(result.rows, result.frames)
    if as_json:
        click.echo(json.dumps({"per": per, "rows": rows, "not_measured": list(st.NOT_MEASURED)}, indent=1))
    elif as_csv:
        click.echo(_csv(rows), nl=False)
    else:
        missing = f" (not measured: {', '.join(st.NOT_MEASURED)})" if st.NOT_MEASURED else ""
        _table(rows, f"{capture.name}: per {per}{missing}")
    if plot is not None:
        values = [float(r.get("fragments_written", 0)) for r in rows]
        labels = [str(r[per]) for r in rows]
        save_image(plot, st.bar_chart(values, labels, f"fragments written per {per}"))
    if kind is not None and map_path is not None:
        if not result.fragment_maps:
            click.echo("warning: no fragments were rasterized; no fragment map written", err=True)
        else:
            last = max(result.fragment_maps)
            save_image(map_path, st.heatmap(result.fragment_maps[last]))
