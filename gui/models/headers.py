"""``FixedColumns``: the column count and horizontal header titles of a tree model with fixed columns;
``NodeTree``: the index / parent / row-count plumbing of a tree model over node objects."""

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
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None


class NodeTree(FixedColumns):
    """Mixin (before ``QAbstractItemModel`` in the bases) for a tree of nodes that know their ``parent`` and
    ``row``: the model sets ``_root`` and implements ``_children(node) -> list``; the index's internal pointer is
    the node."""

    def _node(self, index: Index) -> Any:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, self._children(self._node(parent))[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        p = index.internalPointer().parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children(self._node(parent)))
