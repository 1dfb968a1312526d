"""A generic read-only table model: ``TableModel(headers, rows, cell)`` over an immutable sequence of rows.

``cell(row_object, column) -> str`` is called lazily from ``data()`` for the visible cells only; optional
``background(row_object, column) -> QColor | None`` colors cells; optional ``sort_value(row_object, column)``
answers ``SORT_ROLE`` with the cell's raw value (numbers sort as numbers in a ``QSortFilterProxyModel`` whose sort
role is ``SORT_ROLE``); optional ``header_tips`` are the horizontal headers' tooltips. ``set_rows`` swaps the whole
sequence (model reset). Used by the stats, mesh, uniform, trace, pixel-history and breakpoint tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

Index = QModelIndex | QPersistentModelIndex
SORT_ROLE = Qt.ItemDataRole.UserRole


class TableModel(QAbstractTableModel):
    def __init__(
        self,
        headers: Sequence[str],
        cell: Callable[[Any, int], str],
        background: Callable[[Any, int], QColor | None] | None = None,
        parent=None,
        *,
        sort_value: Callable[[Any, int], Any] | None = None,
        header_tips: Sequence[str] = (),
    ) -> None:
        super().__init__(parent)
        self.headers = tuple(headers)
        self.cell = cell
        self.background = background
        self.sort_value = sort_value
        self.header_tips = tuple(header_tips)
        self.rows: Sequence[Any] = ()

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.cell(row, index.column())
        if role == Qt.ItemDataRole.BackgroundRole and self.background is not None:
            return self.background(row, index.column())
        if role == SORT_ROLE:
            return (
                self.sort_value(row, index.column()) if self.sort_value is not None else self.cell(row, index.column())
            )
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return self.header_tips[section] if 0 <= section < len(self.header_tips) else None
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.headers[section] if 0 <= section < len(self.headers) else None
        return str(section)


def compact(view) -> None:
    """One text line per row in a QTableView (no word wrap, fixed row height)."""
    view.setWordWrap(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
