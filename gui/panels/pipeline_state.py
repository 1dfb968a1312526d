"""Pipeline-state panel (RenderDoc's per-stage view): the current draw's decoded state, one top-level row per
stage part (vertex input, shaders and their uniforms, primitives, clipping / viewport / raster, each texture unit,
TEV stages written as equations, fog, lighting, blend / depth / stencil, render targets), rows that changed since
the draw chosen as A ("compare with": the previous draw by default) highlighted, and an HTML export.

"Diff A → this draw" asks for the structured difference of the two draws (``diff_wanted(A)``; the engine's
``picaemu.debug.state_diff``: registers by field, uniforms by name, textures by content hash, shader programs by
disassembly), shown in the tree under the state; ``show_diff`` also shows the difference two captures part at
(``picaemu diff``, File › Compare with capture…). "Edit…" hands the selected row to the edit-and-replay panel
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
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.api import changed_paths

PREVIOUS = -1  # the base spin box's value for "the draw before"


class PipelineStatePanel(QWidget):
    edit_wanted = Signal(str, str)  # dotted path of the selected row, its value as shown
    base_changed = Signal()  # the draw the highlights compare with changed: the state is asked for again
    diff_wanted = Signal(int)  # draw A of "Diff A → this draw"

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
        self.base = QSpinBox(minimum=PREVIOUS, maximum=PREVIOUS, specialValueText="previous draw")
        self.base.setToolTip("Draw A: the highlights show what changed since it")
        self.diff = QPushButton("Diff A → this draw")
        self.diff.setToolTip("Registers by field, uniforms by name, textures by content, shader programs")
        self.diff_label = QLabel("")
        self.diff_model = StateTreeModel(self)
        self.diff_view = QTreeView()
        self.diff_view.setModel(self.diff_model)
        self.diff_view.setUniformRowHeights(True)
        self.diff_view.setColumnWidth(0, 260)
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.edit)
        top.addWidget(self.export)
        compare = QHBoxLayout()
        compare.addWidget(QLabel("compare with A ="))
        compare.addWidget(self.base)
        compare.addWidget(self.diff)
        compare.addStretch(1)
        lower = QWidget()
        lower_lay = QVBoxLayout(lower)
        lower_lay.setContentsMargins(0, 0, 0, 0)
        lower_lay.addWidget(self.diff_label)
        lower_lay.addWidget(self.diff_view)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(lower)
        split.setSizes([3, 1])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addLayout(compare)
        lay.addWidget(split)
        self.export.clicked.connect(self._export_dialog)
        self.edit.clicked.connect(self.edit_selected)
        self.base.valueChanged.connect(lambda _: self.base_changed.emit())
        self.diff.clicked.connect(self.ask_diff)
        self._state_json = "null"  # the shown state as JSON text: the panel holds no reference to its objects
        self.changed: set[str] = set()
        self.draw: int | None = None
        self.since: int | None = None  # the draw the highlights compare with
        self.diff_json = "null"  # the shown difference as JSON text

    @property
    def base_draw(self) -> int | None:
        """Draw A chosen in the spin box; None for "the draw before"."""
        value = self.base.value()
        return None if value == PREVIOUS else value

    def set_draw_count(self, count: int) -> None:
        """The capture's draws: A can be any of them."""
        self.base.setMaximum(count - 1)

    def ask_diff(self) -> int | None:
        """Emit ``diff_wanted`` with draw A (the previous draw by default); returns it."""
        if self.draw is None:
            self.diff_label.setText("no draw at this position to compare")
            return None
        base = self.base_draw if self.base_draw is not None else self.draw - 1
        if base < 0:
            self.diff_label.setText("draw 0 has no previous draw: choose A")
            return None
        self.diff_json = "null"
        self.diff_label.setText(f"comparing draw {base} with draw {self.draw} …")
        self.diff_wanted.emit(base)
        return base

    @property
    def difference(self) -> dict[str, Any] | None:
        return json.loads(self.diff_json)

    def show_diff(self, title: str, diff: dict[str, Any] | None, error: str = "") -> None:
        """A structured state difference (``picaemu.debug.state_diff``) under ``title``; every row is a change."""
        self.diff_json = json.dumps(diff)
        self.diff_model.set_state(diff or {})
        if error:
            self.diff_label.setText(f"{title}: {error}")
            return
        counts = ", ".join(f"{_entries(k, v)} {k}" for k, v in (diff or {}).items())
        self.diff_label.setText(f"{title}: {counts or 'the same state'}")
        self.diff_view.expandToDepth(2)

    @property
    def state(self) -> dict[str, Any] | None:
        """The shown state (plain data, rebuilt from its JSON text)."""
        return json.loads(self._state_json)

    def show_state(
        self,
        draw: int | None,
        state: dict[str, Any] | None,
        previous: dict[str, Any] | None,
        since: int | None = None,
    ) -> None:
        """The state at ``draw``; rows that differ from ``previous`` (the state at draw ``since``) are
        highlighted."""
        self.draw, self.since, self._state_json = draw, since, json.dumps(state)
        self.changed = changed_paths(previous, state) if state is not None and previous is not None else set()
        self.model.set_state(state, self.changed)
        if state is None:
            self.label.setText("no draw has run yet at this position")
            return
        if previous is None:  # the first draw of the capture: nothing to compare with
            self.label.setText(f"draw {draw}: the first draw (no earlier draw to compare with)")
            return
        parts = {p.split(".")[0] for p in self.changed}
        self.label.setText(f"draw {draw}: {len(parts)} stage part(s) differ from draw {since} (highlighted)")

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


def _entries(section: str, value: dict[str, Any]) -> int:
    """How many things differ in a section of a state difference: uniforms count per register, not per unit."""
    return sum(len(unit) for unit in value.values()) if section == "uniforms" else len(value)


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
