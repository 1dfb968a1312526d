"""Pixel history panel: every rasterized fragment of every draw that touched the picked pixel, in order — draw,
primitive, interpolated inputs, TEV output, and its exact fate (written, or the scissor / alpha / stencil / depth
test that killed it, from the pipeline's fragment observer), the color buffer's pixel before it and the color it
wrote (both recorded by the compiled fragment pass). Scissor-rejected fragments were never interpolated or shaded:
their input cells read "—"."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QTableView, QVBoxLayout, QWidget

from picaemu.debug.probe import FragmentRecord
from picaemu.fragment.ops import Fate

HEADERS = ("Draw", "Primitive", "Depth", "w", "Color", "Texcoord0", "TEV out", "Fate", "Before", "Written")
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
    lambda f: _ints(f.color_before) or NONE,
    lambda f: _ints(f.blended),
)


class PixelHistoryPanel(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = TableModel(HEADERS, lambda f, c: _CELLS[c](f), self._background, self)
        self.view = QTableView()
        compact(self.view)
        self.view.setModel(self.model)
        self.label = QLabel("pick a pixel in the framebuffer view")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.label)
        lay.addWidget(self.view)

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
