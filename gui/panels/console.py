"""Python console dock: a line (or block, Ctrl+Enter) of Python run on the worker thread with the replay in scope
(``picaemu.debug.console``); the output below. Submitted through the worker like every other request."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget


class ConsolePanel(QWidget):
    submitted = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.output = QPlainTextEdit(readOnly=True)
        self.output.setFont(mono)
        self.input = QPlainTextEdit()
        self.input.setFont(mono)
        self.input.setPlaceholderText(
            "replay.pixel_history(120, 200)   (Ctrl+Enter runs; names: replay, session, timeline, np, picaemu)"
        )
        self.input.setMaximumHeight(90)
        self.run = QPushButton("Run (Ctrl+Enter)")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.output, 1)
        lay.addWidget(QLabel("Python, on the replay's thread:"))
        lay.addWidget(self.input)
        lay.addWidget(self.run, 0, Qt.AlignmentFlag.AlignRight)
        self.run.clicked.connect(self.submit)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, activated=self.submit)

    def submit(self) -> None:
        source = self.input.toPlainText().strip()
        if source:
            self.output.appendPlainText(">>> " + source.replace("\n", "\n... "))
            self.submitted.emit(source)

    def show_output(self, text: str) -> None:
        if text:
            self.output.appendPlainText(text.rstrip("\n"))
