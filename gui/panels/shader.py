"""Shader view: disassembly of the bound vertex (or geometry) shader with the entry point marked and uniform names
when the capture carries them, the float / int / bool uniform tables, and a trace: pick a vertex (unit "vs") or a
GS invocation (unit "gs") of the current draw, step through its executed instructions forward and back with the
sources, result, flags and a watch list.

Requests go out through ``wanted(request)``: ``("shader", unit)``, ``("trace", unit, index)``, ``("source",
unit)`` ("Edit source…": the program as picasso source, for the edit-and-replay panel); the main window answers
with ``show_shader`` / ``show_trace`` (the source goes to the edit panel). "Line map…" reads the ``X.shbin.map`` that
``picaemu shader asm`` writes (``picaemu.shader.linemap``): while it matches the shown program's code, the listing
and the trace's steps show the source file:line of each instruction; a bad or mismatched map is said in the panel.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from picaemu.gui.models.table import TableModel, compact, fit_columns
from picaemu.gui.rows import add_rows
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSlider,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.state_views import ShaderView
from picaemu.shader import linemap
from picaemu.shader.trace import masked_result

TRACE_HEADERS = ("Step", "PC", "Instruction", "Sources", "Result", "cmp", "a0", "aL")


def _vec(v) -> str:
    """``(x, y, z, w)``; a None component (a lane the write mask leaves alone) shows as ``-``."""
    return "(" + ", ".join("-" if x is None else f"{x:.5g}" for x in v) + ")"


_TRACE_CELLS = (
    lambda i, r: str(i),
    lambda i, r: f"0x{r.step.pc:03X}",
    lambda i, r: r.text,
    lambda i, r: " ".join(_vec(s) for s in r.step.sources),
    lambda i, r: _vec(masked_result(r.step.result, r.step.mask)) if r.step.result is not None else "",
    lambda i, r: f"{int(r.step.cmp[0])}{int(r.step.cmp[1])}",
    lambda i, r: f"({r.step.a0[0]}, {r.step.a0[1]})",
    lambda i, r: str(r.step.aL),
)


def destination(text: str) -> str:
    """Destination register of a disassembled instruction (``dp4 o0.x, ...`` -> ``o0``; '' if none)."""
    parts = text.split(None, 1)
    if len(parts) < 2:
        return ""
    return parts[1].split(",")[0].split(".")[0].strip()


def watch_values(records: list, upto: int, names: list[str]) -> dict[str, str]:
    """Each watched register as the steps 0..``upto`` left it: every lane holds the last value a write whose mask
    included that lane put there (``-`` for lanes no traced step wrote; "—" for a register never written)."""
    lanes: dict[str, list] = {n: [None] * 4 for n in names}
    for r in records[: upto + 1]:
        dst = destination(r.text)
        if dst in lanes and r.step.result is not None:
            for i, value in enumerate(masked_result(r.step.result, r.step.mask)):
                if value is not None:
                    lanes[dst][i] = value
    return {n: _vec(v) if any(x is not None for x in v) else "—" for n, v in lanes.items()}


class ShaderPanel(QWidget):
    wanted = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.unit = QComboBox()
        self.unit.addItems(["vs", "gs"])
        self.listing = QListWidget()
        self.listing.setFont(mono)
        self.uniforms = TableModel(("Uniform", "x", "y", "z", "w"), lambda r, c: r[c], parent=self)
        self.uniform_view = QTableView()
        compact(self.uniform_view)
        self.uniform_view.setModel(self.uniforms)
        self.vertex = QSpinBox()
        self.vertex.setRange(0, 65535)
        self.index_label = QLabel("vertex")
        self.trace_button = QPushButton("Trace vertex")
        self.edit_source = QPushButton("Edit source…")
        self.edit_source.setToolTip("Edit the program at the current draw and replay the frame (Edit and replay)")
        self.map_button = QPushButton("Line map…")
        self.map_button.setToolTip(
            "Show the source file:line of each instruction (X.shbin.map from picaemu shader asm)"
        )
        self.map_label = QLabel("")
        self.map_label.setWordWrap(True)
        self.slider = QSlider()
        self.slider.setOrientation(self.slider.orientation().Horizontal)
        self.back, self.forward = QPushButton("◀ step"), QPushButton("step ▶")
        self.watch = QLineEdit("o0 r0 r1")
        self.watch_label = QLabel("")
        self.trace_model = TableModel(TRACE_HEADERS, lambda ir, c: _TRACE_CELLS[c](*ir), parent=self)
        self.trace_view = QTableView()
        compact(self.trace_view)
        self.trace_view.setModel(self.trace_model)
        steps = QHBoxLayout()
        for w in (self.back, self.slider, self.forward):
            steps.addWidget(w)
        split = QSplitter()
        split.addWidget(self.listing)
        split.addWidget(self.uniform_view)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        add_rows(
            lay,
            (self.unit, self.index_label, self.vertex, self.trace_button),
            (QLabel("watch"), self.watch, self.edit_source),
            (self.map_button, self.map_label),
        )
        lay.addWidget(split, 2)
        lay.addLayout(steps)
        lay.addWidget(self.watch_label)
        lay.addWidget(self.trace_view, 1)
        self.unit.currentTextChanged.connect(self._unit_changed)
        self.trace_button.clicked.connect(
            lambda: self.wanted.emit(("trace", self.unit.currentText(), self.vertex.value()))
        )
        self.slider.valueChanged.connect(self.select_step)
        self.edit_source.clicked.connect(lambda: self.wanted.emit(("source", self.unit.currentText())))
        self.map_button.clicked.connect(self._choose_map)
        self.back.clicked.connect(lambda: self.slider.setValue(self.slider.value() - 1))
        self.forward.clicked.connect(lambda: self.slider.setValue(self.slider.value() + 1))
        self.watch.editingFinished.connect(lambda: self.select_step(self.slider.value()))
        self.view: ShaderView | None = None
        self.records: list = []
        self.line_map: linemap.LineMap | None = None  # as read; shown while it matches the program's code

    def _unit_changed(self, unit: str) -> None:
        what = "GS invocation" if unit == "gs" else "vertex"
        self.index_label.setText(what)
        self.trace_button.setText(f"Trace {what}")
        self.wanted.emit(("shader", unit))

    def _choose_map(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Shader line map", "", "Line maps (*.map *.shbin);;All files (*)")
        if path:
            self.load_line_map(path)

    def load_line_map(self, path: str) -> None:
        """Read the line map of ``path`` (a SHBIN or its ``.map``); the listing and the trace show source lines
        while it matches the shown program's code (a bad map is said in the panel, never raised)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", linemap.LineMapWarning)
            self.line_map = linemap.read(path)
        self.map_label.setText(str(caught[0].message) if caught else "")
        if self.view is not None:
            self.show_shader(self.view)

    def _source(self, pc: int) -> str | None:
        """``file:line`` of the instruction at ``pc`` when a line map matches the shown program."""
        lm, view = self.line_map, self.view
        if lm is None or view is None or not lm.matches(view.setup.code):
            return None
        return lm.at(pc)

    def show_shader(self, view: ShaderView) -> None:
        self.view = view
        self.listing.clear()
        lines = list(view.lines)
        lm = self.line_map
        if lm is not None:
            if lm.matches(view.setup.code):
                lines = [f"{text}  ; {self._source(pc)}" if self._source(pc) else text for pc, text in enumerate(lines)]
                self.map_label.setText(f"source lines from {', '.join(Path(f).name for f in lm.files)}")
            else:
                self.map_label.setText("line-map-mismatch: the map was written for other code; source lines not shown")
        self.listing.addItems(lines)
        if 0 <= view.entry < self.listing.count():
            self.listing.item(view.entry).setBackground(QColor(200, 230, 255))
        setup = view.setup
        rows = [
            (f"c{i} {setup.names.get(f'c{i}', '')}".strip(), *(f"{x:.6g}" for x in setup.float_uniforms[i]))
            for i in range(len(setup.float_uniforms))
        ]
        rows += [(f"i{i}", *(str(int(x)) for x in setup.int_uniforms[i])) for i in range(len(setup.int_uniforms))]
        rows += [(f"b{i}", str(bool(b)), "", "", "") for i, b in enumerate(setup.bool_uniforms)]
        self.uniforms.set_rows(tuple(rows))
        fit_columns(self.uniform_view)  # whole numbers, never cut to "…"

    def show_trace(self, what: str, records: list) -> None:
        """``what`` names the traced vertex / invocation (``vertex 3``, ``GS invocation 0``)."""
        self.records = records
        self.trace_model.set_rows(tuple(enumerate(records)))
        fit_columns(self.trace_view)  # the table scrolls sideways rather than cutting its cells
        self.slider.setRange(0, max(len(records) - 1, 0))
        self.slider.setValue(0)
        self.select_step(0)
        self.watch_label.setText(f"{what}: {len(records)} steps")

    def select_step(self, step: int) -> None:
        if not self.records or not 0 <= step < len(self.records):
            return
        self.trace_view.selectRow(step)
        pc = self.records[step].step.pc
        if 0 <= pc < self.listing.count():
            self.listing.setCurrentRow(pc)
        names = self.watch.text().split()
        values = watch_values(self.records, step, names)
        source = self._source(pc)
        where = f"step {step}, pc 0x{pc:03X}" + (f" ({source})" if source else "")
        self.watch_label.setText(f"{where}: " + "  ".join(f"{k}={v}" for k, v in values.items()))
