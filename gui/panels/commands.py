"""Command stream panel: the frame / GX command / draw / packet / write / field tree with a filter, "jump to
offset" and double-click = run to that row (``run_to`` signal with a ``Cursor``)."""

from __future__ import annotations

from picaemu.gui.models.command_tree import CommandTreeModel
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QTreeView, QVBoxLayout, QWidget

from picaemu.debug.timeline import Cursor, Timeline


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
        top = QHBoxLayout()
        top.addWidget(self.filter, 2)
        top.addWidget(self.jump, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.filter.editingFinished.connect(lambda: self.model.set_filter(self.filter.text()))
        self.jump.returnPressed.connect(self._jump)
        self.view.doubleClicked.connect(self._activated)
        self.current = Cursor(0, 0)

    def set_timeline(self, tl: Timeline | None) -> None:
        self.model.set_timeline(tl)

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
