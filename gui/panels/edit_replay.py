"""Edit and replay panel (RenderDoc's edit and replay): a list of edits at the current draw — register fields and
words, float uniforms, a shader program — the scope ("from this draw on" / "this draw only"), and the result:
original | edited | diff side by side with the figures (pixels changed, fragments written before -> after).

Edits are text in ``picaemu.debug.edits`` syntax (``DEPTH_COLOR_MASK.depth_func=always``, ``c4=(1, 0, 0, 1)``);
the registers panel's "Edit…" and the shader panel's "Edit source…" fill them in. A shader edit is the program in
the source box, kept as ``("shader", unit, source)``. ``replay_wanted(draw, edits, scope)`` asks the main window
to run ``picaemu.debug.jobs.edit``; ``show_result`` shows what comes back; "Revert" drops the edits and the result
(the session's replay is never changed, so there is nothing else to undo).
"""

from __future__ import annotations

from picaemu.gui.image_view import ImageView
from picaemu.gui.rows import add_rows
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.edit_replay import EditResult
from picaemu.debug.edits import ShaderEdit, edit_for_state_row, parse_edit
from picaemu.errors import PicaError

SCOPES = (("from this draw on", "from"), ("this draw only", "draw"))


class EditReplayPanel(QWidget):
    replay_wanted = Signal(int, object, str)  # draw, tuple of edits (text or ShaderEdit), scope

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.draw_label = QLabel("no draw")
        self.line = QLineEdit(placeholderText="DEPTH_COLOR_MASK.depth_func=always   or   c4=(1, 0, 0, 1)")
        self.add = QPushButton("Add")
        self.edits = QListWidget()
        self.remove = QPushButton("Remove")
        self.scope = QComboBox()
        for text, _ in SCOPES:
            self.scope.addItem(text)
        self.replay = QPushButton("Replay")
        self.revert = QPushButton("Revert")
        self.source = QPlainTextEdit()
        self.source.setFont(mono)
        self.source.setPlaceholderText('shader source (the shader panel\'s "Edit source…" loads the bound program)')
        self.source_unit = "vs"
        self.add_shader = QPushButton("Add shader edit")
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.views = {name: ImageView() for name in ("original", "edited", "diff")}
        self._build()
        self.draw: int | None = None
        self.result: EditResult | None = None
        self.shader_edit: ShaderEdit | None = None
        self.add.clicked.connect(lambda: self.add_edit(self.line.text()))
        self.line.returnPressed.connect(lambda: self.add_edit(self.line.text()))
        self.remove.clicked.connect(lambda: self._remove(self.edits.currentRow()))
        self.add_shader.clicked.connect(self.add_shader_edit)
        self.replay.clicked.connect(self.request)
        self.revert.clicked.connect(self.clear)

    def _build(self) -> None:
        left = QWidget()
        left_lay = QVBoxLayout(left)
        left_lay.setContentsMargins(0, 0, 0, 0)
        left_lay.addWidget(QLabel("edits"))
        left_lay.addWidget(self.edits, 1)
        left_lay.addWidget(self.source, 2)
        left_lay.addWidget(self.add_shader)
        pictures = QSplitter()
        for name, view in self.views.items():
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(QLabel(name))
            lay.addWidget(view, 1)
            pictures.addWidget(box)
        for view in self.views.values():  # three pictures side by side must fit the dock column
            view.setMinimumWidth(100)
        for box in (self.edits, self.source):  # short boxes: the dock column holds other docks above
            box.setMinimumHeight(40)
        split = QSplitter(Qt.Orientation.Vertical)  # edits above the pictures: the dock column is narrow
        split.addWidget(left)
        split.addWidget(pictures)
        split.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        add_rows(lay, (self.draw_label, self.line, self.add), (self.remove, self.scope, self.replay, self.revert))
        lay.addWidget(self.summary)
        lay.addWidget(split, 1)

    # -- the edit list -------------------------------------------------------------------------------------
    def set_draw(self, draw: int | None) -> None:
        """The draw the edits apply at (the current position's last draw)."""
        self.draw = draw
        self.draw_label.setText(f"at draw {draw}" if draw is not None else "no draw yet")

    def add_edit(self, text: str) -> bool:
        """Check ``text`` (``parse_edit``) and append it; a bad edit is named in the summary and not added."""
        try:
            parse_edit(text)
        except PicaError as err:
            self.summary.setText(f"not added: {err}")
            return False
        self.edits.addItem(text.strip())
        self.line.clear()
        return True

    def propose(self, text: str) -> None:
        """Put ``text`` in the line to be changed and added (the registers panel's "Edit…")."""
        self.line.setText(text)
        self.line.setFocus()
        self.summary.setText("change the value, then Add and Replay")

    def propose_state_row(self, path: str, shown: str, regs) -> None:
        """Propose the edit for a pipeline-state row (``edit_for_state_row``), or say why there is none."""
        try:
            self.propose(edit_for_state_row(path, shown, regs))
        except PicaError as err:
            self.summary.setText(str(err))

    def show_source(self, draw: int, unit: str, source: str) -> None:
        self.source_unit = unit
        self.source.setPlainText(source)
        self.summary.setText(f"{unit} program of draw {draw}: edit it, then Add shader edit and Replay")

    def add_shader_edit(self) -> bool:
        try:
            edit = ShaderEdit(self.source_unit, self.source.toPlainText())
        except PicaError as err:
            self.summary.setText(f"not added: {err}")
            return False
        self.shader_edit = edit
        self.edits.addItem(f"{self.source_unit}.shader=<source box>")
        return True

    def _remove(self, row: int) -> None:
        item = self.edits.takeItem(row)
        if item is not None and item.text().endswith(".shader=<source box>"):
            self.shader_edit = None

    def current_edits(self) -> tuple:
        """The edits in list order: text, or the ``ShaderEdit`` the source box gave."""
        return tuple(
            self.shader_edit if self.edits.item(i).text().endswith("<source box>") else self.edits.item(i).text()
            for i in range(self.edits.count())
        )

    # -- replay and result -----------------------------------------------------------------------------------
    def request(self) -> bool:
        edits = self.current_edits()
        if self.draw is None or not edits:
            self.summary.setText("go to a draw and add an edit first")
            return False
        self.summary.setText(f"replaying from draw {self.draw} …")
        self.replay_wanted.emit(self.draw, edits, SCOPES[self.scope.currentIndex()][1])
        return True

    def show_result(self, result: EditResult) -> None:
        self.result = result
        for name, view in self.views.items():
            view.set_image(getattr(result, name), fit=True)
        before = result.stats_original.get("fragments_written", 0)
        after = result.stats_edited.get("fragments_written", 0)
        total_before = result.totals_original.get("fragments_written", 0)
        total_after = result.totals_edited.get("fragments_written", 0)
        self.summary.setText(
            f"draw {result.draw}, {next(t for t, s in SCOPES if s == result.scope)}: "
            f"{result.changed_pixels} pixels changed; fragments written by the draw {before} → {after}, to the end "
            f"of the frame {total_before} → {total_after} ({result.draws_replayed} draws replayed)"
        )

    def show_error(self, text: str) -> None:
        self.summary.setText(f"replay failed: {text}")

    def clear(self) -> None:
        """Revert: no edits, no result."""
        self.edits.clear()
        self.shader_edit = None
        self.result = None
        for view in self.views.values():
            view.set_image(None)
        self.summary.setText("reverted: the original frame")
