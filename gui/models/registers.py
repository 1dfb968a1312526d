"""The register inspector model, generated from the register table: block -> register -> decoded field.

Columns: name, id (internal id, or an external register's physical address), value (hex word, or the field's raw
value), meaning (enum names / numbers from the table). The model shows one immutable (0x300,) uint32 register
file (``set_registers(regs, previous, written, gpu)``), and with ``gpu`` ((0x1000,) uint32, the external GPU
register file) the external registers' blocks after the internal ones; with
``previous`` (the registers at the previous draw, or the other side of a diff) rows whose word or field differs
get a highlight background and ``changed_only`` hides the rest. Formatting happens lazily in ``data()``.

Index encoding (``internalId``): 0 = a block row; ``b + 1`` = a register row under block ``b``;
``FIELD_FLAG | b << 12 | r`` = a field row under register row ``r`` of block ``b``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from picaemu.gui.models.headers import FixedColumns
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from picaemu import regs as regtable
from picaemu.debug import edits
from picaemu.debug.state_views import external_blocks, register_blocks
from picaemu.regs import Space, access
from picaemu.regs.docs import address_text

Index = QModelIndex | QPersistentModelIndex
FIELD_FLAG = 1 << 30
HEADERS = ("Name", "Id", "Value", "Meaning")
CHANGED = QColor(255, 236, 150)


class RegisterModel(FixedColumns, QAbstractItemModel):
    HEADERS = HEADERS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.regs = np.zeros(regtable.NUM_REGS, np.uint32)
        self.gpu: np.ndarray | None = None
        self.previous: np.ndarray | None = None
        self.written: frozenset[int] = frozenset()
        self.changed_only = False
        self._blocks = self._visible_blocks()

    # -- content -----------------------------------------------------------------------------------------
    def set_registers(
        self,
        regs: np.ndarray,
        previous: np.ndarray | None = None,
        written: tuple[int, ...] = (),
        gpu: np.ndarray | None = None,
    ) -> None:
        """Show ``regs`` (and the external registers of ``gpu``); internal rows that differ from ``previous`` or
        that ``written`` names are highlighted."""
        self.beginResetModel()
        self.regs = np.asarray(regs, np.uint32).copy()
        self.gpu = None if gpu is None else np.asarray(gpu, np.uint32).copy()
        self.previous = None if previous is None else np.asarray(previous, np.uint32).copy()
        self.written = frozenset(written)
        self._blocks = self._visible_blocks()
        self.endResetModel()

    def set_changed_only(self, on: bool) -> None:
        self.beginResetModel()
        self.changed_only = on
        self._blocks = self._visible_blocks()
        self.endResetModel()

    def _value(self, reg: regtable.Register) -> int:
        if reg.space is Space.EXTERNAL:
            return int(self.gpu[access.ext_index(reg.name)]) if self.gpu is not None else 0
        return int(self.regs[reg.id])

    def _changed(self, reg: regtable.Register) -> bool:
        if reg.space is Space.EXTERNAL:
            return False
        return reg.id in self.written or (
            self.previous is not None and int(self.previous[reg.id]) != int(self.regs[reg.id])
        )

    def _visible_blocks(self) -> list[tuple[str, tuple[regtable.Register, ...]]]:
        blocks = register_blocks() + (external_blocks() if self.gpu is not None else ())
        if not self.changed_only:
            return list(blocks)
        out = []
        for name, regs in blocks:
            kept = tuple(r for r in regs if self._changed(r))
            if kept:
                out.append((name, kept))
        return out

    def register_at(self, index: Index) -> regtable.Register | None:
        iid = index.internalId() if index.isValid() else 0
        if not index.isValid() or iid == 0:
            return None
        if iid & FIELD_FLAG:
            return self._blocks[(iid & ~FIELD_FLAG) >> 12][1][iid & 0xFFF]
        return self._blocks[iid - 1][1][index.row()]

    def edit_text(self, index: Index) -> str | None:
        """An edit-and-replay edit that sets the row to what it holds now (``picaemu.debug.edits.edit_text``):
        ``REG.field=VALUE`` for a field row, ``REG=0xWORD`` for a register row (None for the external registers:
        edits reach the internal ones)."""
        reg = self.register_at(index)
        if reg is None or reg.space is Space.EXTERNAL:
            return None
        fld = reg.fields[index.row()] if index.internalId() & FIELD_FLAG else None
        return edits.edit_text(self.regs, reg, fld)

    def find(self, name: str) -> QModelIndex:
        """Index of the register row called ``name`` (any table spelling), invalid if not shown."""
        reg = regtable.by_name(name)
        for b, (_, regs) in enumerate(self._blocks):
            for r, candidate in enumerate(regs):
                if candidate.id == reg.id:
                    return self.createIndex(r, 0, b + 1)
        return QModelIndex()

    # -- structure ---------------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0)
        pid = parent.internalId()
        if pid == 0:
            return self.createIndex(row, column, parent.row() + 1)
        if pid & FIELD_FLAG:
            return QModelIndex()
        return self.createIndex(row, column, FIELD_FLAG | (pid - 1) << 12 | parent.row())

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        iid = index.internalId()
        if iid == 0:
            return QModelIndex()
        if iid & FIELD_FLAG:
            b, r = (iid & ~FIELD_FLAG) >> 12, iid & 0xFFF
            return self.createIndex(r, 0, b + 1)
        return self.createIndex(iid - 1, 0, 0)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._blocks)
        if parent.column() != 0:
            return 0
        pid = parent.internalId()
        if pid == 0:
            return len(self._blocks[parent.row()][1])
        if pid & FIELD_FLAG:
            return 0
        return len(self._blocks[pid - 1][1][parent.row()].fields)

    # -- data --------------------------------------------------------------------------------------------
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        iid = index.internalId()
        if role == Qt.ItemDataRole.DisplayRole:
            if iid == 0:
                return self._block_text(index)
            if iid & FIELD_FLAG:
                return self._field_text(index)
            return self._register_text(index)
        if role == Qt.ItemDataRole.BackgroundRole and iid and self._row_changed(index):
            return CHANGED
        if role == Qt.ItemDataRole.ToolTipRole and iid:
            reg = self.register_at(index)
            return reg.doc if reg is not None else None
        return None

    def _block_text(self, index: QModelIndex) -> str | None:
        name, regs = self._blocks[index.row()]
        if index.column() == 0:
            return name
        if index.column() == 3:
            changed = sum(self._changed(r) for r in regs)
            return f"{len(regs)} registers" + (f", {changed} changed" if changed else "")
        return None

    def _register_text(self, index: QModelIndex) -> str | None:
        reg = self.register_at(index)
        value = self._value(reg)
        col = index.column()
        if col == 0:
            return reg.name
        if col == 1:
            return address_text(reg)
        if col == 2:
            return f"0x{value:08X}"
        if reg.fields:
            decoded = regtable.decode_fields(reg, value)
            return " ".join(f"{f.name}={f.text}" for f in decoded.fields)
        return reg.kind.value if hasattr(reg.kind, "value") else ""

    def _field_text(self, index: QModelIndex) -> str | None:
        reg = self.register_at(index)
        fld = reg.fields[index.row()]
        raw = fld.extract(self._value(reg))
        col = index.column()
        if col == 0:
            return fld.name
        if col == 1:
            return f"bits {fld.lo}-{fld.hi}" if fld.hi != fld.lo else f"bit {fld.lo}"
        if col == 2:
            return str(raw)
        return fld.describe(raw)

    def _row_changed(self, index: QModelIndex) -> bool:
        if self.previous is None:
            return False
        reg = self.register_at(index)
        if reg.space is Space.EXTERNAL:
            return False
        if not index.internalId() & FIELD_FLAG:
            return self._changed(reg)
        fld = reg.fields[index.row()]
        return fld.extract(int(self.regs[reg.id])) != fld.extract(int(self.previous[reg.id]))
