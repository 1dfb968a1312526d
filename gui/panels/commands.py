"""Command stream panel: the frame / marker / GX command / draw / packet / write / field tree with a filter, "jump to
offset" and double-click = run to that row (``run_to`` signal with a ``Cursor``); bookmarks: "Bookmark" saves the
current position under a name, "Rename" / "Remove" act on the selected bookmark row (``picaemu.debug.bookmarks``:
saved beside the capture file at once; failures are shown in the panel)."""

from __future__ import annotations

from collections.abc import Sequence

from picaemu.gui.models.command_tree import CommandTreeModel
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QHBoxLayout, QInputDialog, QLabel, QLineEdit, QPushButton, QTreeView, QVBoxLayout, QWidget

from picaemu.debug import bookmarks
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.errors import PicaError


class CommandPanel(QWidget):
    run_to = Signal(object)  # Cursor

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = CommandTreeModel(self)
        self.filter = QLineEdit(placeholderText="filter: register name, 0x id, =value, draw N")
        self.jump = QLineEdit(placeholderText="jump to offset (hex) in the current list")
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setColumnWidth(0, 280)
        self.note = QLabel("")
        top = QHBoxLayout()
        top.addWidget(self.filter, 2)
        top.addWidget(self.jump, 1)
        for text, slot in (("Bookmark", self.ask_bookmark), ("Rename", self._ask_rename), ("Remove", self._remove)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            top.addWidget(button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.note)
        lay.addWidget(self.view)
        self.filter.editingFinished.connect(lambda: self.model.set_filter(self.filter.text()))
        self.jump.returnPressed.connect(self._jump)
        self.view.doubleClicked.connect(self._activated)
        self.current = Cursor(0, 0)
        self.capture = ""  # the open capture's path: bookmarks live beside it

    def set_timeline(
        self, tl: Timeline | None, capture: str = "", markers: Sequence[bookmarks.MarkerGroup] = ()
    ) -> None:
        """A newly opened capture (``capture``: its path; its bookmarks are loaded from beside it) and its marker
        groups."""
        self.capture = capture
        self.note.setText("")
        marks = self._edit(bookmarks.load) if capture else []
        self.model.set_timeline(tl, marks or [], markers)

    # -- bookmarks ---------------------------------------------------------------------------------------
    def _edit(self, change, *args) -> list | None:
        """``change(capture, *args)`` (a ``picaemu.debug.bookmarks`` function); a failure is said in the panel."""
        try:
            return change(self.capture, *args)
        except PicaError as err:
            self.note.setText(f"bookmarks: {type(err).__name__}: {err}")
            return None

    def add_bookmark(self, name: str) -> None:
        """Save the current position as bookmark ``name``."""
        marks = self._edit(bookmarks.add, name, self.current)
        if marks is not None:
            self.note.setText(f"bookmarked {self.current.text()} as {name.strip()!r}")
            self.model.set_bookmarks(marks)

    def rename_bookmark(self, old: str, new: str) -> None:
        marks = self._edit(bookmarks.rename, old, new)
        if marks is not None:
            self.note.setText(f"renamed bookmark {old!r} to {new.strip()!r}")
            self.model.set_bookmarks(marks)

    def remove_bookmark(self, name: str) -> None:
        marks = self._edit(bookmarks.remove, name)
        if marks is not None:
            self.note.setText(f"removed bookmark {name!r}")
            self.model.set_bookmarks(marks)

    def selected_bookmark(self) -> bookmarks.Bookmark | None:
        return self.model.bookmark_at(self.view.currentIndex())

    def ask_bookmark(self) -> None:
        if self.model.timeline is None:
            return
        draw = self.model.timeline.last_draw(self.current)
        name, ok = QInputDialog.getText(self, "Bookmark", "name", text=f"draw {draw}" if draw is not None else "")
        if ok:
            self.add_bookmark(name)

    def _ask_rename(self) -> None:
        mark = self.selected_bookmark()
        if mark is None:
            self.note.setText("select a bookmark row to rename it")
            return
        name, ok = QInputDialog.getText(self, "Rename bookmark", "name", text=mark.name)
        if ok:
            self.rename_bookmark(mark.name, name)

    def _remove(self) -> None:
        mark = self.selected_bookmark()
        if mark is None:
            self.note.setText("select a bookmark row to remove it")
        else:
            self.remove_bookmark(mark.name)

    def set_cursor(self, cursor: Cursor) -> None:
        """Follow the replay position: select (without running) the row of the last executed packet / event."""
        self.current = cursor
        index = self.model.locate(cursor)
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)

    def _activated(self, index: QModelIndex) -> None:
        cursor = self.model.cursor_of(index)
        if cursor is not None:
            self.run_to.emit(cursor)

    def _jump(self) -> None:
        try:
            offset = int(self.jump.text(), 16)
        except ValueError:
            return
        tl = self.model.timeline
        if tl is None:
            return
        event = self.current.event
        lists = [e.index for e in tl.events if e.is_list]
        candidates = [e for e in lists if e <= event] or lists
        if not candidates:
            return
        self.model.set_filter("")
        self.filter.clear()
        index = self.model.find_offset(candidates[-1], offset)
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)
