"""Pipeline-state panel (RenderDoc's per-stage view): the current draw's decoded state, one top-level row per
stage part (vertex input, shaders and their uniforms, primitives, clipping / viewport / raster, each texture unit,
TEV stages written as equations, fog, lighting, blend / depth / stencil, render targets), rows that changed since
the previous draw highlighted, and an HTML export. "Edit…" hands the selected row to the edit-and-replay panel
(``edit_wanted(path, shown value)``; the main window turns it into an edit with
``picaemu.debug.edits.edit_for_state_row``). The data comes from ``picaemu.debug.api.pipeline_state_of``
(the engine's answer, also ``picaemu state`` on the command line); this module only shows it."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from picaemu.formats.files import write_text
from picaemu.gui.models.state_tree import CHANGED_HTML, StateTreeModel, value_text
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QTreeView, QVBoxLayout, QWidget

from picaemu.debug.api import changed_paths


class PipelineStatePanel(QWidget):
    edit_wanted = Signal(str, str)  # dotted path of the selected row, its value as shown

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = StateTreeModel(self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setColumnWidth(0, 260)
        self.label = QLabel("no draw")
        self.export = QPushButton("Export HTML…")
        self.edit = QPushButton("Edit…")
        self.edit.setToolTip("Edit the selected value at this draw and replay the frame (Edit and replay)")
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.edit)
        top.addWidget(self.export)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.export.clicked.connect(self._export_dialog)
        self.edit.clicked.connect(self.edit_selected)
        self._state_json = "null"  # the shown state as JSON text: the panel holds no reference to its objects
        self.changed: set[str] = set()
        self.draw: int | None = None

    @property
    def state(self) -> dict[str, Any] | None:
        """The shown state (plain data, rebuilt from its JSON text)."""
        return json.loads(self._state_json)

    def show_state(self, draw: int | None, state: dict[str, Any] | None, previous: dict[str, Any] | None) -> None:
        """The state at ``draw``; rows that differ from ``previous`` (the draw before) are highlighted."""
        self.draw, self._state_json = draw, json.dumps(state)
        self.changed = changed_paths(previous, state) if state is not None and previous is not None else set()
        self.model.set_state(state, self.changed)
        if state is None:
            self.label.setText("no draw has run yet at this position")
            return
        if previous is None:  # the first draw of the capture: nothing to compare with
            self.label.setText(f"draw {draw}: the first draw (no earlier draw to compare with)")
            return
        parts = {p.split(".")[0] for p in self.changed}
        self.label.setText(f"draw {draw}: {len(parts)} stage part(s) changed since draw {draw - 1} (highlighted)")

    def edit_selected(self) -> tuple[str, str] | None:
        """Emit ``edit_wanted`` for the selected leaf row; (path, shown) or None when no leaf is selected."""
        index = self.view.currentIndex()
        node = index.internalPointer() if index.isValid() else None
        if node is None or node.children:
            return None
        self.edit_wanted.emit(node.path, node.text)
        return node.path, node.text

    def html(self) -> str:
        """The shown state as one HTML page (a table per stage part; changed rows marked)."""
        state = self.state
        if state is None:
            return "<!doctype html><title>picaemu pipeline state</title><p>no draw</p>"
        rows = []
        for key, value in state.items():
            mark = ' class="changed"' if key in self.changed else ""
            rows.append(f"<h2{mark}>{html.escape(key)}</h2>{_table(value, key, self.changed)}")
        return (
            "<!doctype html><meta charset=utf-8><title>picaemu pipeline state, draw "
            f"{self.draw}</title><style>table{{border-collapse:collapse}}td{{border:1px solid #bbb;"
            f"padding:2px 6px;font-family:monospace}}.changed{{background:{CHANGED_HTML}}}</style>"
            f"<h1>Pipeline state at draw {self.draw}</h1>" + "".join(rows)
        )

    def export_html(self, path: str | Path) -> None:
        write_text(path, self.html())

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export pipeline state", "pipeline_state.html", "HTML (*.html)")
        if path:
            self.export_html(path)


def _table(value: Any, path: str, changed: set[str]) -> str:
    if not isinstance(value, dict):
        return f"<p>{html.escape(str(value))}</p>"
    cells = []
    for k, v in value.items():
        sub = f"{path}.{k}"
        mark = ' class="changed"' if sub in changed else ""
        inner = _table(v, sub, changed) if isinstance(v, dict) else html.escape(value_text(str(k), v))
        cells.append(f"<tr{mark}><td>{html.escape(str(k))}</td><td>{inner}</td></tr>")
    return "<table>" + "".join(cells) + "</table>"
