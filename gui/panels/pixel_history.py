"""Pixel history panel: every rasterized fragment of every draw that touched the picked pixel, in order — draw,
primitive, interpolated inputs, TEV output, and its exact fate (written, or the scissor / alpha / stencil / depth
test that killed it, from the pipeline's fragment observer) with the blended color written, and the color and
depth buffers before and after it. Scissor-rejected fragments were never interpolated or shaded: their input
cells read "—". Double-clicking a row emits ``goto_draw(draw)``; "Debug fragment" on the selected row
emits ``debug_wanted((draw, window pixel, index of the fragment among the draw's at the pixel))``."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QLabel, QPushButton, QTableView, QVBoxLayout, QWidget

from picaemu.debug.probe import FragmentRecord
from picaemu.fragment.ops import Fate

HEADERS = (
    "Draw",
    "Primitive",
    "Depth",
    "w",
    "Color",
    "Texcoord0",
    "TEV out",
    "Fate",
    "Written",
    "Color before",
    "Color after",
    "Depth before",
    "Depth after",
)
FATE_COLUMN = HEADERS.index("Fate")
KILLED = QColor(255, 210, 210)
WRITTEN = QColor(210, 255, 210)
NONE = "—"


def _vec(v: tuple | None, digits: int = 4) -> str:
    return NONE if v is None else "(" + ", ".join(f"{x:.{digits}g}" for x in v) + ")"


def _ints(v: tuple | None) -> str:
    return "" if v is None else "(" + ", ".join(str(x) for x in v) + ")"


def _num(v: float | int | None, fmt: str) -> str:
    return NONE if v is None else format(v, fmt)


_CELLS = (
    lambda f: str(f.draw),
    lambda f: _num(f.primitive, "d"),
    lambda f: _num(f.depth, ".6f"),
    lambda f: _num(f.w, ".4g"),
    lambda f: _vec(f.color),
    lambda f: _vec(f.texcoord0),
    lambda f: _ints(f.tev) or NONE,
    lambda f: f.fate,
    lambda f: _ints(f.blended),
    lambda f: _ints(f.color_before) or NONE,
    lambda f: _ints(f.color_after) or NONE,
    lambda f: _num(f.depth_before, ".6f"),
    lambda f: _num(f.depth_after, ".6f"),
)


class PixelHistoryPanel(QWidget):
    goto_draw = Signal(int)
    debug_wanted = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = TableModel(HEADERS, lambda f, c: _CELLS[c](f), self._background, self)
        self.view = QTableView()
        compact(self.view)
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.label = QLabel("pick a pixel in the framebuffer view")
        self.debug = QPushButton("Debug fragment")
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.debug)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.view.doubleClicked.connect(self._double_clicked)
        self.debug.clicked.connect(lambda: self.debug_row(self.view.currentIndex()))

    def _double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.goto_draw.emit(self.model.rows[index.row()].draw)

    def debug_row(self, index: QModelIndex) -> None:
        """Ask to debug the fragment of row ``index`` (its draw, window pixel and rank among the draw's fragments
        at the pixel)."""
        if not index.isValid():
            return
        rows = self.model.rows
        f = rows[index.row()]
        rank = sum(r.draw == f.draw for r in rows[: index.row()])
        self.debug_wanted.emit((f.draw, (f.x, f.y), rank))

    @staticmethod
    def _background(f: FragmentRecord, column: int) -> QColor | None:
        if column != FATE_COLUMN:
            return None
        return WRITTEN if f.code is Fate.WRITTEN else KILLED

    def show_history(self, pixel: tuple[int, int] | None, records: list[FragmentRecord], where: str = "") -> None:
        """The fragments at ``pixel`` up to position ``where`` (None: no pixel picked)."""
        self.model.set_rows(tuple(records))
        if pixel is None:
            self.label.setText("pick a pixel in the framebuffer view")
            return
        killed = sum(f.code is not Fate.WRITTEN for f in records)
        at = f" up to {where}" if where else ""
        self.label.setText(f"pixel x={pixel[0]} y={pixel[1]}{at}: {len(records)} fragments, {killed} killed")
