"""The "Why?" panel: where the selected draw's work went, stage by stage, and its verdict (``picaemu why`` on the
command line; the answer is ``picaemu.debug.why.Why``, computed on the worker by ``jobs.why``). The verdict and the
detail text head a table of stages (in, out, unit); the stage that decided the verdict is highlighted."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.why import STAGES, Why

HEADERS = ("stage", "in", "out", "unit")
DECIDED = QColor(255, 200, 200)  # the row of the stage that removed everything


class WhyPanel(QWidget):
    """``why_wanted()`` asks for the answer about the current draw; ``show_why`` shows it (or an error text)."""

    why_wanted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.button = QPushButton("Why?")
        self.button.setToolTip("where the current draw's work went, stage by stage, and why it shows nothing")
        self.button.clicked.connect(self.why_wanted)
        self.verdict = QLabel("select a draw and press Why?")
        self.detail = QLabel("")
        self.detail.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setStretchLastSection(True)
        top = QHBoxLayout()
        top.addWidget(self.button)
        top.addWidget(self.verdict, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.detail)
        lay.addWidget(self.table)

    def show_why(self, answer: Why | None, error: str = "") -> None:
        if answer is None:
            self.table.setRowCount(0)
            self.verdict.setText("")
            self.detail.setText(error)
            return
        self.verdict.setText(f"<b>draw {answer.draw} (frame {answer.frame}): {answer.verdict}</b>")
        self.detail.setText(answer.detail)
        decided = answer.decided_by
        self.table.setRowCount(len(answer.stages))
        for row, s in enumerate(answer.stages):
            for col, text in enumerate((s.stage, str(s.into), str(s.out), s.unit)):
                item = QTableWidgetItem(text)
                if col in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if s.stage == decided:
                    item.setBackground(QBrush(DECIDED))
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        if decided in STAGES:
            self.table.scrollToItem(self.table.item(list(STAGES).index(decided), 0))
