"""Python console dock: Python run on the worker thread with the replay in scope (``picaemu.debug.console``);
the output below. Enter runs the input (Shift+Enter starts a new line of a block; Ctrl+Enter runs a block too),
which is echoed as ``>>> source`` and cleared; Up / Down in an empty or one-line input recall earlier input.
Submitted through the worker like every other request."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut, QTextCursor
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
            "replay.pixel_history(120, 200)   (Enter runs, Shift+Enter: new line; names: replay, session, "
            "timeline, np, picaemu)"
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
        self.input.installEventFilter(self)
        self.history: list[str] = []
        self._recall = 0  # index into history while Up / Down browse it

    def eventFilter(self, watched, event) -> bool:
        """Enter runs, Shift+Enter is a new line; Up / Down recall history in a one-line input."""
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            key, mods = event.key(), event.modifiers()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
                self.submit()
                return True
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down) and "\n" not in self.input.toPlainText():
                self.recall(-1 if key == Qt.Key.Key_Up else 1)
                return True
        return super().eventFilter(watched, event)

    def recall(self, step: int) -> None:
        """Show the history entry ``step`` away from the one shown (past the newest: an empty input)."""
        self._recall = min(max(self._recall + step, 0), len(self.history))
        self.input.setPlainText(self.history[self._recall] if self._recall < len(self.history) else "")
        self.input.moveCursor(QTextCursor.MoveOperation.End)

    def submit(self) -> None:
        source = self.input.toPlainText().strip()
        if source:
            self.output.appendPlainText(">>> " + source.replace("\n", "\n... "))
            self.history.append(source)
            self._recall = len(self.history)
            self.input.clear()
            self.submitted.emit(source)

    def show_output(self, text: str) -> None:
        if text:
            self.output.appendPlainText(text.rstrip("\n"))
