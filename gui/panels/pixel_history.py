"""Pixel history panel: every rasterized fragment of every draw that touched the picked pixel, in order — draw,
primitive, interpolated inputs, TEV output, and its exact fate (written, or the scissor / alpha / stencil / depth
test that killed it, from the pipeline's fragment observer) with the blended color written, and the color and
depth buffers before and after it. Scissor-rejected fragments were never interpolated or shaded: their input
cells read "—". Double-clicking a row emits ``goto_draw(draw)``; "Debug fragment" on the selected row
emits ``debug_wanted((draw, window pixel, index of the fragment among the draw's at the pixel))``.

The pixel is picked in whichever picture the framebuffer panel shows: the render target at the position (its draws
in the frame so far) or a screen (traced back through the display transfer that showed it to the render target it
came from: that target's draws in the frame the transfer ran in, up to it). Only the picked target's draws are
listed (``picaemu.debug.history``); the label names the target and the pixel in it."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QLabel, QPushButton, QTableView, QVBoxLayout, QWidget

from picaemu.debug.history import ViewHistory
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
PICK_HINT = "pick a pixel in the framebuffer view: the render target or a screen"


def _vec(v: tuple | None, digits: int = 4) -> str:
    return NONE if v is None else "(" + ", ".join(f"{x:.{digits}g}" for x in v) + ")"


def _ints(v: tuple | None) -> str:
    return "" if v is None else "(" + ", ".join(str(x) for x in v) + ")"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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
        self.label = QLabel(PICK_HINT)
        self.label.setWordWrap(True)
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

    def show_history(self, history: ViewHistory | None, where: str = "") -> None:
        """The picked pixel's fragments up to position ``where`` (None: no pixel picked)."""
        records = () if history is None else history.fragments
        self.model.set_rows(records)
        if history is None:
            self.label.setText(PICK_HINT)
            return
        killed = sum(f.code is not Fate.WRITTEN for f in records)
        draws = len({f.draw for f in records})
        at = f" up to {where}" if where else ""
        self.label.setText(
            f"{history.text()}{at}: {_count(len(records), 'fragment')} of {_count(draws, 'draw')} into this target, "
            f"{killed} killed"
        )

    def show_error(self, text: str) -> None:
        """A pick that could not be traced (outside the target, a screen pixel no transfer wrote)."""
        self.model.set_rows(())
        self.label.setText(text)
