"""The reports of ``picaemu batch``: ``report.json``, an HTML page and JUnit XML, from the outcomes.

- ``report.json``: ``{"threshold", "references", "captures": [outcome...]}``, each outcome with its per-frame
  checks (``picaemu.analysis.imagediff.FrameCheck``: status, max diff, bad pixels, PSNR, paths).
- ``report.html``: one table row per frame (a capture that could not run: one row with its error): capture,
  frame, status, max diff, bad pixels, PSNR, seconds, then the reference, the output and the diff picture side
  by side (paths relative to the page, so the folder can be moved or served as it is). Clicking a column header
  sorts by it (numbers as numbers; again: reversed); a text box filters by capture name and a list by status.
  The page is self-contained (inline script and style, no network).
- JUnit XML (``--junit FILE``): one ``testsuite`` "picaemu batch", one ``testcase`` per capture: a regression or
  missing reference is a ``failure``, a capture that could not run (failed, timed out) an ``error``.
"""

from __future__ import annotations

import html
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import asdict
from pathlib import Path
from typing import Any

from picaemu.formats.files import write_text

NOT_RUN = frozenset({"failed", "timeout"})
REGRESSED = frozenset({"regression", "missing reference"})

SCRIPT = """
const table = document.getElementById("results");
const body = table.tBodies[0];
function applyFilter() {
  const text = document.getElementById("filter").value.toLowerCase();
  const status = document.getElementById("status").value;
  let shown = 0;
  for (const row of body.rows) {
    const keep = row.dataset.capture.toLowerCase().includes(text) && (status === "" || row.dataset.status === status);
    row.hidden = !keep;
    if (keep) shown += 1;
  }
  document.getElementById("shown").textContent = shown + " of " + body.rows.length + " rows";
}
function sortBy(th) {
  const index = th.cellIndex;
  const numeric = th.dataset.type === "num";
  const descending = th.dataset.order === "asc";
  for (const other of table.tHead.rows[0].cells) { delete other.dataset.order; }
  th.dataset.order = descending ? "desc" : "asc";
  const key = row => row.cells[index].dataset.value ?? row.cells[index].textContent;
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    let x = key(a), y = key(b);
    if (numeric) { x = x === "" ? -Infinity : Number(x); y = y === "" ? -Infinity : Number(y); }
    const order = x < y ? -1 : x > y ? 1 : 0;
    return descending ? -order : order;
  });
  for (const row of rows) body.appendChild(row);
}
for (const th of table.tHead.rows[0].cells) {
  if (th.dataset.type) th.addEventListener("click", () => sortBy(th));
}
document.getElementById("filter").addEventListener("input", applyFilter);
document.getElementById("status").addEventListener("change", applyFilter);
applyFilter();
"""

STYLE = """
body { font: 13px sans-serif; margin: 1em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
th[data-type] { cursor: pointer; background: #eee; }
th[data-order="asc"]::after { content: " \\25B2"; }
th[data-order="desc"]::after { content: " \\25BC"; }
tr[data-status="ok"] td.status, tr[data-status="updated"] td.status { color: #2e7d32; }
tr[data-status="regression"] td.status, tr[data-status="failed"] td.status,
tr[data-status="timeout"] td.status, tr[data-status^="missing"] td.status { color: #c62828; font-weight: bold; }
img { width: 200px; image-rendering: pixelated; }
"""

COLUMNS = (
    ("capture", "text"),
    ("frame", "num"),
    ("status", "text"),
    ("max diff", "num"),
    ("bad pixels", "num"),
    ("PSNR dB", "num"),
    ("seconds", "num"),
    ("reference", ""),
    ("output", ""),
    ("diff", ""),
    ("note", ""),
)


def outcome_dict(o: Any) -> dict[str, Any]:
    return asdict(o)


def write_json(outcomes: list[Any], path: Path, threshold: int | None, references: Path | None) -> None:
    write_text(
        path,
        json.dumps(
            {
                "threshold": threshold,
                "references": None if references is None else str(references),
                "captures": [outcome_dict(o) for o in outcomes],
            },
            indent=1,
        ),
    )


def _img(path: str | None, page_dir: Path) -> str:
    if not path:
        return "<td></td>"
    rel = Path(os.path.relpath(path, page_dir)).as_posix()
    return f'<td><a href="{html.escape(rel)}"><img src="{html.escape(rel)}" alt="{html.escape(rel)}"></a></td>'


def _num(value: Any, shown: str | None = None) -> str:
    if value is None:
        return '<td data-value=""></td>'
    return f'<td data-value="{value}">{html.escape(shown if shown is not None else str(value))}</td>'


def _rows(o: Any, page_dir: Path) -> list[str]:
    cells = f"<td>{html.escape(o.name)}</td>"
    if not o.checks:
        return [
            f'<tr data-capture="{html.escape(o.name)}" data-status="{html.escape(o.status)}">{cells}'
            f'{_num(None)}<td class="status">{html.escape(o.status)}</td>{_num(None)}{_num(None)}{_num(None)}'
            f"{_num(o.seconds)}<td></td><td></td><td></td><td>{html.escape(o.error)}</td></tr>"
        ]
    rows = []
    for frame, c in enumerate(o.checks):
        psnr = _num(None) if c.max_diff is None else (_num(1e9, "inf") if c.psnr is None else _num(c.psnr))
        rows.append(
            f'<tr data-capture="{html.escape(o.name)}" data-status="{html.escape(c.status)}">{cells}'
            f'{_num(frame)}<td class="status">{html.escape(c.status)}</td>{_num(c.max_diff)}'
            f"{_num(c.bad_pixels)}{psnr}{_num(o.seconds)}{_img(c.reference, page_dir)}"
            f"{_img(c.output, page_dir)}{_img(c.diff, page_dir)}"
            f"<td>{html.escape(c.error or o.error)}</td></tr>"
        )
    return rows


def write_html(outcomes: list[Any], path: Path, threshold: int | None) -> None:
    statuses = sorted({c.status for o in outcomes for c in o.checks} | {o.status for o in outcomes if not o.checks})
    head = "".join(f'<th data-type="{kind}">{name}</th>' if kind else f"<th>{name}</th>" for name, kind in COLUMNS)
    options = "".join(f'<option value="{html.escape(s)}">{html.escape(s)}</option>' for s in statuses)
    body = "".join(row for o in outcomes for row in _rows(o, path.parent))
    limit = threshold if threshold is not None else "(no comparison)"
    summary = ", ".join(
        f"{sum(1 for o in outcomes if o.status == s)} {s}" for s in sorted({o.status for o in outcomes})
    )
    write_text(
        path,
        f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>picaemu batch</title>
<link rel="icon" href="data:,"><style>{STYLE}</style></head>
<body><h1>picaemu batch</h1>
<p>{len(outcomes)} captures: {html.escape(summary)}; threshold {limit}
</p>
<p><label>capture <input id="filter" type="search" placeholder="filter by name"></label>
<label>status <select id="status"><option value="">all</option>{options}</select></label>
<span id="shown"></span></p>
<table id="results"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
<script>{SCRIPT}</script>
</body></html>
""",
    )


def write_junit(outcomes: list[Any], path: Path) -> None:
    suite = ET.Element(
        "testsuite",
        name="picaemu batch",
        tests=str(len(outcomes)),
        failures=str(sum(o.status in REGRESSED for o in outcomes)),
        errors=str(sum(o.status in NOT_RUN for o in outcomes)),
        time=f"{sum(o.seconds for o in outcomes):.3f}",
    )
    for o in outcomes:
        case = ET.SubElement(
            suite, "testcase", classname="picaemu.batch", name=o.name, time=f"{o.seconds:.3f}", file=o.source
        )
        bad = [
            f"frame {k}: {c.status}"
            + (f", {c.bad_pixels} pixels differ by up to {c.max_diff}" if c.bad_pixels else "")
            + (f" ({c.error})" if c.error else "")
            for k, c in enumerate(o.checks)
            if not c.passed
        ]
        if o.status in NOT_RUN:
            ET.SubElement(case, "error", message=o.error, type=o.status).text = o.error
        elif o.status in REGRESSED:
            ET.SubElement(
                case, "failure", message=f"{len(bad)} of {len(o.checks)} frames: {o.status}", type=o.status
            ).text = "\n".join(bad)
        ET.SubElement(case, "system-out").text = f"{o.frames} frames, {o.draws} draws, {o.seconds:.3f} s"
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    write_text(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
