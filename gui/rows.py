"""``add_rows(layout, *rows)``: panels' control bars as rows of widgets, left-aligned. The debugger must fit a
1366-px screen with the picture taking half of it (docs/gui.md, "Layout"), so a dock's controls are split into
rows that each fit a side column (~440 px) rather than one bar as wide as all of them."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QWidget


def add_rows(layout: QBoxLayout, *rows: Iterable[QWidget]) -> list[QHBoxLayout]:
    """Append one ``QHBoxLayout`` per row of ``rows`` to ``layout`` (widgets left-aligned, a stretch after them);
    returns the row layouts."""
    out = []
    for widgets in rows:
        row = QHBoxLayout()
        for w in widgets:
            row.addWidget(w)
        row.addStretch(1)
        layout.addLayout(row)
        out.append(row)
    return out
