"""``FixedColumns``: the column count and horizontal header titles of a tree model with fixed columns."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex


class FixedColumns:
    """Mixin (before ``QAbstractItemModel`` in the bases): ``HEADERS`` names the columns."""

    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.HEADERS)):
            return self.HEADERS[section]
        return None
