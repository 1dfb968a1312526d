"""Lint panel: the findings of ``picaemu lint`` (``jobs.lint``) as a table — severity, code, where (event, draw,
packet and its byte offset), message with the fix; errors tinted. Clicking a row runs the window to the finding's
position (after its draw, its packet or its event), which selects that packet in the command stream.

``wanted`` asks the main window for a lint run (the Run button; also once after a capture opens),
``show_findings`` / ``show_error`` show the answer, ``run_to(Cursor)`` goes to a finding."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableView, QVBoxLayout, QWidget

from picaemu.debug.timeline import Cursor
from picaemu.lint import Finding, Severity

HEADERS = ("severity", "code", "where", "message")
TIPS = ("error: hangs, faults or draws garbage on the console; warning: legal but suspicious", "docs/lint.md")
ERROR_TINT = QColor(255, 210, 210)
Row = tuple[Finding, Cursor]


def where(f: Finding) -> str:
    """``event E / draw D / packet P @0xOFFSET``, the parts that are known."""
    text = " / ".join(f"{name} {value}" for name, value in f.place())
    return text + (f" @0x{f.offset:X}" if f.offset >= 0 else "")


def _cell(row: Row, column: int) -> str:
    f = row[0]
    if column == 0:
        return f.severity.value
    if column == 1:
        return f.code
    return where(f) if column == 2 else f.text


def _tint(row: Row, column: int) -> QColor | None:
    return ERROR_TINT if row[0].severity is Severity.ERROR else None


class LintPanel(QWidget):
    wanted = Signal()
    run_to = Signal(object)  # Cursor

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel("open a capture, then Run")
        self.run = QPushButton("Run lint")
        self.run.setToolTip("validate the capture's command buffers (picaemu lint)")
        self.model = TableModel(HEADERS, _cell, _tint, parent=self, header_tips=TIPS)
        self.view = QTableView()
        compact(self.view)
        self.view.setModel(self.model)
        header = self.view.horizontalHeader()
        header.setStretchLastSection(True)
        for column in (0, 1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.run)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)
        self.run.clicked.connect(self.request)
        self.view.clicked.connect(self._activated)
        self.view.activated.connect(self._activated)
        self.rows: list[Row] = []

    def request(self) -> None:
        self.label.setText("linting …")
        self.wanted.emit()

    def clear(self) -> None:
        self.rows = []
        self.model.set_rows(())
        self.label.setText("")

    def show_findings(self, rows: list[Row]) -> None:
        self.rows = rows
        self.model.set_rows(tuple(rows))
        errors = sum(f.severity is Severity.ERROR for f, _ in rows)
        self.label.setText(
            f"{len(rows)} finding(s), {errors} error(s)" + (" — click one to go there" if rows else ": clean")
        )

    def show_error(self, text: str) -> None:
        self.clear()
        self.label.setText(text)

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to.emit(self.rows[index.row()][1])
