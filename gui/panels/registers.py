"""Register inspector panel: every register at the current position (internal, then the external GPU registers),
grouped by block, decoded fields,
highlight of what changed since the previous draw; "changed only", copy as JSON, and a state diff between a
marked position ("Mark A") and the current one: the registers here, and (``state_diff_wanted(A's draw)``) the whole
state difference of the two draws — uniforms, textures and shader programs too — in the pipeline-state panel;
"Edit…" hands the selected register or field to the edit-and-replay
panel (``edit_wanted``: the edit text that sets it to its current value, to change and replay)."""

from __future__ import annotations

import json

import numpy as np
from picaemu.gui.models.registers import RegisterModel
from picaemu.gui.rows import add_rows
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.snapshot import Snapshot
from picaemu.debug.state_views import diff_json, external_json, registers_json
from picaemu.debug.timeline import Cursor


class RegisterPanel(QWidget):
    edit_wanted = Signal(str)
    state_diff_wanted = Signal(int)  # the draw at A: the whole state difference from it to the current draw

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = RegisterModel(self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setColumnWidth(0, 230)
        self.changed_only = QCheckBox("changed only")
        self.find = QLineEdit(placeholderText="find register")
        self.copy = QPushButton("Copy JSON")
        self.mark = QPushButton("Mark A")
        self.diff = QPushButton("Diff A → here")
        self.edit = QPushButton("Edit…")
        self.edit.setToolTip("Edit the selected register or field at the current draw and replay the frame")
        self.info = QLabel("")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        add_rows(lay, (self.find, self.changed_only), (self.copy, self.mark, self.diff, self.edit))
        lay.addWidget(self.info)
        lay.addWidget(self.view)
        self.changed_only.toggled.connect(self.model.set_changed_only)
        self.copy.clicked.connect(self.copy_json)
        self.mark.clicked.connect(self.mark_a)
        self.diff.clicked.connect(self.show_diff)
        self.edit.clicked.connect(self.edit_selected)
        self.find.returnPressed.connect(self._find)
        self.snapshot: Snapshot | None = None
        self.marked: tuple[Cursor, np.ndarray] | None = None
        self.marked_draw: int | None = None
        self.diffing = False

    def show_snapshot(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.diffing = False
        self.model.set_registers(snap.regs, snap.prev_regs, snap.written, snap.gpu_regs)
        since = f"draw {snap.prev_draw}" if snap.prev_draw is not None else "the start of the capture"
        wrote = f" and written by the last packet ({len(snap.written)})" if snap.written else ""
        self.info.setText(f"at {snap.cursor.text()}; highlighted: changed since {since}{wrote}")

    def copy_json(self) -> str:
        if self.diffing and self.marked is not None and self.snapshot is not None:
            data = diff_json(self.marked[1], self.snapshot.regs)
        else:
            data = registers_json(self.model.regs)
            if self.model.gpu is not None:
                data.update(external_json(self.model.gpu))
        text = json.dumps(data, indent=1)
        QApplication.clipboard().setText(text)
        return text

    def mark_a(self) -> None:
        if self.snapshot is not None:
            self.marked = (self.snapshot.cursor, self.snapshot.regs.copy())
            self.marked_draw = self.snapshot.last_draw
            self.mark.setText(f"A = {self.snapshot.cursor.text()}")

    def show_diff(self) -> None:
        """Highlight (and keep only) the registers that differ between A and the current position."""
        if self.marked is None or self.snapshot is None:
            return
        self.diffing = True
        self.model.set_registers(self.snapshot.regs, self.marked[1], gpu=self.snapshot.gpu_regs)
        self.changed_only.setChecked(True)
        self.model.set_changed_only(True)
        n = int((self.marked[1] != self.snapshot.regs).sum())
        text = f"diff {self.marked[0].text()} → {self.snapshot.cursor.text()}: {n} registers differ"
        a, b = self.marked_draw, self.snapshot.last_draw
        if a is not None and b is not None and a != b:
            text += f"; draw {a} → draw {b} with uniforms, textures and shaders: Pipeline state"
            self.state_diff_wanted.emit(a)
        self.info.setText(text)

    def edit_selected(self) -> str | None:
        """Emit ``edit_wanted`` with the edit text of the selected row (None when nothing editable is selected)."""
        text = self.model.edit_text(self.view.currentIndex())
        if text is not None:
            self.edit_wanted.emit(text)
        return text

    def _find(self) -> None:
        try:
            index = self.model.find(self.find.text())
        except KeyError:
            self.info.setText(f"no register named {self.find.text()!r}")
            return
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)
            self.view.expand(index)
