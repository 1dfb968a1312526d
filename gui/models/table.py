"""A generic read-only table model: ``TableModel(headers, rows, cell)`` over an immutable sequence of rows.

``cell(row_object, column) -> str`` is called lazily from ``data()`` for the visible cells only; optional
``background(row_object, column) -> QColor | None`` colors cells; optional ``sort_value(row_object, column)``
answers ``SORT_ROLE`` with the cell's raw value (numbers sort as numbers in a ``QSortFilterProxyModel`` whose sort
role is ``SORT_ROLE``); optional ``header_tips`` are the horizontal headers' tooltips. ``set_rows`` swaps the whole
sequence (model reset). Used by the stats, mesh, uniform, trace, pixel-history and breakpoint tables.
``fit_columns(view)`` sizes a view's columns to their widest cells as Qt's ``resizeColumnsToContents`` does, by
the view's font metrics over the cells' text instead of asking the model every role of every cell (~50 ms for the
shader panel's 116 uniform rows, at every step).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import QStyle

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


def fit_columns(view) -> None:
    """Each column of ``view`` (a QTableView over a ``TableModel``) as wide as its widest cell's text plus the item
    margins of the view's style (``PM_FocusFrameHMargin`` + 1 each side, and the grid line), or its header's size
    hint if wider: the widths ``resizeColumnsToContents`` gives for plain-text cells."""
    model: TableModel = view.model()
    metrics = QFontMetricsF(view.font())  # fractional advances, rounded up once as Qt's item layout does
    margin = 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)
    margin += 1 if view.showGrid() else 0
    header = view.horizontalHeader()
    for column in range(len(model.headers)):
        widest = max((metrics.horizontalAdvance(model.cell(row, column)) for row in model.rows), default=0.0)
        view.setColumnWidth(column, max(math.ceil(widest) + margin, header.sectionSizeHint(column)))
