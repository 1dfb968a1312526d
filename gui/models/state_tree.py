"""A tree model over one immutable nested state (dicts and lists of plain values, as
``picaemu.debug.api.pipeline_state_of`` gives it): rows are keys, the second column the value; ``changed`` paths
(``picaemu.debug.api.changed_paths``) get a highlight. Nodes are built once per state; text is formatted lazily in
``data()``: nodes keep the text of each value, not the value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from picaemu.gui.models.headers import NodeTree
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTreeView

Index = QModelIndex | QPersistentModelIndex
CHANGED_HTML = "#ffeca0"  # changed rows: the tree's highlight and the HTML export's, one colour
CHANGED = QBrush(QColor(CHANGED_HTML))
FLOAT32_MAX = float(np.finfo(np.float32).max)
MAX_LIST_ROWS = 96  # longer lists of structures show their first rows


@dataclass(eq=False)
class StateNode:
    key: str
    text: str  # the value as shown ("" for a dict / list of structures: its children); text only, so that the
    path: str  # model keeps no reference to the state's objects (the GUI soak test counts references to None)
    parent: StateNode | None
    row: int
    children: list[StateNode] = field(default_factory=list, repr=False)


def float_text(value: float) -> str:
    """A float as the hardware holds it: the shortest text that reads back as the same float32 (``0.1``, not
    ``0.10000000149011612``); values beyond float32's range as ``%.7g``."""
    single = np.float32(value) if abs(value) < FLOAT32_MAX or not np.isfinite(value) else None
    return str(single) if single is not None else f"{value:.7g}"


def value_text(key: str, value: Any) -> str:
    """A value as the tree shows it: addresses in hex, a list of plain values on one line, tuples in parentheses,
    floats at float32 precision (``float_text``), a part or value that is absent (None: a disabled stage) as
    "off"."""
    if value is None:
        return "off"
    if isinstance(value, list):
        return ", ".join(value_text(key, v) for v in value) if value else "[]"
    if isinstance(value, tuple):
        return "(" + ", ".join(value_text(key, v) for v in value) + ")"
    if isinstance(value, float | np.floating):
        return float_text(float(value))
    if "address" in key and isinstance(value, int) and not isinstance(value, bool):
        return f"0x{value:08X}"
    return str(value)


def _build(key: str, value: Any, path: str, parent: StateNode | None, row: int) -> StateNode:
    structured = isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict | list) for v in value))
    node = StateNode(key, "" if structured else value_text(key, value), path, parent, row)
    if isinstance(value, dict):
        node.children = [
            _build(str(k), v, f"{path}.{k}" if path else str(k), node, i) for i, (k, v) in enumerate(value.items())
        ]
    elif structured:
        node.children = [_build(f"[{i}]", v, path, node, i) for i, v in enumerate(value[:MAX_LIST_ROWS])]
    return node


class StateTreeModel(NodeTree, QAbstractItemModel):
    HEADERS = ("stage / field", "value")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._root = StateNode("", "", "", None, 0)
        self.changed: frozenset[str] = frozenset()

    def set_state(self, state: dict[str, Any] | None, changed: set[str] = frozenset()) -> None:
        self.beginResetModel()
        self._root = _build("", state or {}, "", None, 0)
        self.changed = frozenset(changed)
        self.endResetModel()

    def _children(self, node: StateNode) -> list[StateNode]:
        return node.children

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node: StateNode = index.internalPointer()
        if role == Qt.ItemDataRole.BackgroundRole:
            return CHANGED if node.path in self.changed else None
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        if index.column() == 0:
            return node.key
        return node.text


def tree_view(model: StateTreeModel, key_width: int) -> QTreeView:
    """A tree view over ``model`` with uniform rows and a first column ``key_width`` pixels wide."""
    view = QTreeView()
    view.setModel(model)
    view.setUniformRowHeights(True)
    view.setColumnWidth(0, key_width)
    return view
