"""Breakpoints panel: a checkable list (toggle), an add form (kind, register name/id, optional value, draw number),
remove. ``changed(list[Breakpoint])`` fires on every edit; the main window persists the list per capture."""

from __future__ import annotations

from picaemu.gui.rows import add_rows
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.timeline import BreakKind, Breakpoint
from picaemu.errors import PicaError


class BreakpointPanel(QWidget):
    changed = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.kind = QComboBox()
        self.kind.addItems([k.value for k in BreakKind])
        self.register = QLineEdit(placeholderText="register (name or 0x id)")
        self.value = QLineEdit(placeholderText="value (optional)")
        self.draw = QLineEdit(placeholderText="draw # (optional)")
        self.mask = QLineEdit(placeholderText="mask (optional)")
        self.field = QLineEdit(placeholderText="field == meaning (e.g. func == GREATER)")
        self.add = QPushButton("Add")
        self.remove = QPushButton("Remove")
        self.list = QListWidget()
        self.error = QLabel("")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        add_rows(
            lay, (self.kind, self.register, self.draw), (self.value, self.mask), (self.field, self.add, self.remove)
        )
        self.error.setWordWrap(True)  # a refusal lists the valid values: it wraps rather than widening the dock
        lay.addWidget(self.error)
        lay.addWidget(self.list)
        self.add.clicked.connect(self._add)
        self.remove.clicked.connect(self._remove)
        self.list.itemChanged.connect(self._toggled)
        self.breakpoints: list[Breakpoint] = []

    def set_breakpoints(self, bps: list[Breakpoint], *, notify: bool = False) -> None:
        self.breakpoints = list(bps)
        self.list.blockSignals(True)
        self.list.clear()
        for bp in self.breakpoints:
            item = QListWidgetItem(bp.text())
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if bp.enabled else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.blockSignals(False)
        if notify:
            self.changed.emit(self.breakpoints)

    def add_breakpoint(self, bp: Breakpoint) -> None:
        self.set_breakpoints([*self.breakpoints, bp], notify=True)

    def _add(self) -> None:
        try:
            value = int(self.value.text(), 0) if self.value.text().strip() else None
            mask = int(self.mask.text(), 0) if self.mask.text().strip() else None
            draw = int(self.draw.text(), 0) if self.draw.text().strip() else None
        except ValueError as err:
            self.error.setText(str(err))
            return
        field, _, equals = self.field.text().partition("==")
        if field.strip() and not equals.strip():
            self.error.setText("a field condition reads: field == meaning")
            return
        kind = BreakKind(self.kind.currentText())
        if kind is BreakKind.REGISTER_WRITE and not self.register.text().strip():
            self.error.setText("a register-write breakpoint needs a register")
            return
        bp = Breakpoint(
            kind, self.register.text().strip(), value, draw, mask=mask, field=field.strip(), equals=equals.strip()
        )
        try:
            bp.validate()
        except PicaError as err:  # refused now, not silently never hit
            self.error.setText(str(err))
            return
        self.error.setText("")
        self.add_breakpoint(bp)

    def _remove(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.breakpoints):
            self.set_breakpoints(self.breakpoints[:row] + self.breakpoints[row + 1 :], notify=True)

    def _toggled(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        bp = self.breakpoints[row]
        on = item.checkState() == Qt.CheckState.Checked
        if bp.enabled != on:
            self.breakpoints[row] = Breakpoint(bp.kind, bp.register, bp.value, bp.draw, on)
            self.changed.emit(self.breakpoints)
