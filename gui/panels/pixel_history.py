"""Pixel history panel: every fragment of every draw that touched the picked pixel, in order — draw, primitive,
interpolated inputs, TEV output, and the test that killed it or the blended color written."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from picaemu.gui.probe import FragmentRecord
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QTableView, QVBoxLayout, QWidget

HEADERS = ("Draw", "Primitive", "Depth", "w", "Color", "Texcoord0", "TEV out", "Fate", "Written")
KILLED = QColor(255, 210, 210)
WRITTEN = QColor(210, 255, 210)


def _vec(v: tuple, digits: int = 4) -> str:
    return "(" + ", ".join(f"{x:.{digits}g}" for x in v) + ")"


_CELLS = (
    lambda f: str(f.draw),
    lambda f: str(f.primitive),
    lambda f: f"{f.depth:.6f}",
    lambda f: f"{f.w:.4g}",
    lambda f: _vec(f.color),
    lambda f: _vec(f.texcoord0),
    lambda f: "({}, {}, {}, {})".format(*f.tev),
    lambda f: f.fate,
    lambda f: "({}, {}, {}, {})".format(*f.blended) if f.blended else "",
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
        if column != 7:
            return None
        return WRITTEN if f.fate == "written" else KILLED

    def show_history(self, pixel: tuple[int, int], records: list[FragmentRecord]) -> None:
        self.label.setText(f"pixel x={pixel[0]} y={pixel[1]}: {len(records)} fragments")
        self.model.set_rows(tuple(records))
