"""Pipeline-state panel (RenderDoc's per-stage view): the current draw's decoded state, one top-level row per
stage part (vertex input, shaders and their uniforms, primitives, clipping / viewport / raster, each texture unit,
TEV stages written as equations, fog, lighting, blend / depth / stencil, render targets), rows that changed since
the previous draw highlighted, and an HTML export. The data comes from ``picaemu.debug.api.pipeline_state_of``
(the engine's answer, also ``picaemu state`` on the command line); this module only shows it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from picaemu.formats.files import write_text
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QTreeView, QVBoxLayout, QWidget

from picaemu.debug.api import changed_paths

CHANGED = QColor(255, 236, 160)
MAX_LIST_ROWS = 96  # longer lists (uniform files) show their first rows


class PipelineStatePanel(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = QStandardItemModel(0, 2, self)
        self.model.setHorizontalHeaderLabels(["stage / field", "value"])
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setColumnWidth(0, 260)
        self.label = QLabel("no draw")
        self.export = QPushButton("Export HTML…")
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.export)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.export.clicked.connect(self._export_dialog)
        self.state: dict[str, Any] | None = None
        self.changed: set[str] = set()
        self.draw: int | None = None

    def show_state(self, draw: int | None, state: dict[str, Any] | None, previous: dict[str, Any] | None) -> None:
        """The state at ``draw``; rows that differ from ``previous`` (the draw before) are highlighted."""
        self.model.removeRows(0, self.model.rowCount())
        self.draw, self.state = draw, state
        if state is None:
            self.label.setText("no draw has run yet at this position")
            self.changed = set()
            return
        self.changed = changed_paths(previous, state) if previous is not None else set()
        for key, value in state.items():
            self._add(self.model.invisibleRootItem(), key, value, key)
        parts = {p.split(".")[0] for p in self.changed}
        since = f"draw {draw - 1}" if draw else "nothing (the first draw)"
        self.label.setText(f"draw {draw}: {len(parts)} stage part(s) changed since {since} (highlighted)")

    def _add(self, parent: QStandardItem, key: str, value: Any, path: str) -> None:
        shown = "" if isinstance(value, dict | list) else _text(key, value)
        name, text = QStandardItem(str(key)), QStandardItem(shown)
        for item in (name, text):
            item.setEditable(False)
            if path in self.changed:
                item.setBackground(QBrush(CHANGED))
        parent.appendRow([name, text])
        if isinstance(value, dict):
            for k, v in value.items():
                self._add(name, k, v, f"{path}.{k}")
        elif isinstance(value, list):
            if all(not isinstance(v, dict | list) for v in value) or not value:
                text.setText(", ".join(_text(key, v) for v in value) if value else "[]")
                return
            for i, v in enumerate(value[:MAX_LIST_ROWS]):
                self._add(name, f"[{i}]", v, path)

    def html(self) -> str:
        """The shown state as one HTML page (a table per stage part; changed rows marked)."""
        if self.state is None:
            return "<!doctype html><title>picaemu pipeline state</title><p>no draw</p>"
        rows = []
        for key, value in self.state.items():
            mark = ' class="changed"' if key in self.changed else ""
            rows.append(f"<h2{mark}>{html.escape(key)}</h2>{_table(value, key, self.changed)}")
        return ("<!doctype html><meta charset=utf-8><title>picaemu pipeline state, draw "
                f"{self.draw}</title><style>table{{border-collapse:collapse}}td{{border:1px solid #bbb;"
                "padding:2px 6px;font-family:monospace}}.changed{{background:#ffeca0}}</style>"
                f"<h1>Pipeline state at draw {self.draw}</h1>" + "".join(rows))

    def export_html(self, path: str | Path) -> None:
        write_text(path, self.html())

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export pipeline state", "pipeline_state.html", "HTML (*.html)")
        if path:
            self.export_html(path)


def _text(key: str, value: Any) -> str:
    """A value as the panel shows it: addresses in hex, the rest as Python prints them."""
    if "address" in str(key) and isinstance(value, int) and not isinstance(value, bool):
        return f"0x{value:08X}"
    return str(value)


def _table(value: Any, path: str, changed: set[str]) -> str:
    if not isinstance(value, dict):
        return f"<p>{html.escape(str(value))}</p>"
    cells = []
    for k, v in value.items():
        sub = f"{path}.{k}"
        mark = ' class="changed"' if sub in changed else ""
        inner = _table(v, sub, changed) if isinstance(v, dict) else html.escape(_text(k, v))
        cells.append(f"<tr{mark}><td>{html.escape(str(k))}</td><td>{inner}</td></tr>")
    return "<table>" + "".join(cells) + "</table>"
