"""Find panel: the search box over ``picaemu.debug.find`` (register writes, written values, draws by texture address
or shader program), the capture's shader programs to pick from, and the hits as a table; clicking a hit runs to it.

``search(text)`` asks the main window to run a query (``jobs.search``), ``show_hits`` / ``show_error`` show the
answer, ``set_programs`` fills the program list (``jobs.programs``), ``run_to(Cursor)`` goes to a hit."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.find import Hit

HEADERS = ("position", "draw", "match")
PLACEHOLDER = (
    "texture 0x18000000 | reg TEXUNIT0_ADDR1 [= 0x...] | reg BLEND_FUNC.rgb_src = one | value 0x3F800000"
    " | shader HASH[@ENTRY]"
)


def _cell(hit: Hit, column: int) -> str:
    return (hit.cursor.text(), "-" if hit.draw is None else str(hit.draw), hit.text)[column]


class FindPanel(QWidget):
    search = Signal(str)
    run_to = Signal(object)  # Cursor

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.query = QLineEdit(placeholderText=PLACEHOLDER)
        self.query.setToolTip(PLACEHOLDER.replace(" | ", "\n"))
        self.programs = QComboBox()
        self.programs.setToolTip("the capture's shader programs: pick one to find the draws that run it")
        self.label = QLabel("")
        self.model = TableModel(HEADERS, _cell, parent=self)
        self.view = QTableView()
        compact(self.view)
        self.view.setModel(self.model)
        header = self.view.horizontalHeader()
        header.setStretchLastSection(True)
        header.setResizeContentsPrecision(0)  # visible rows only: thousands of hits stay lazy
        for column in (0, 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        top = QHBoxLayout()
        top.addWidget(self.query, 3)
        top.addWidget(self.programs, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.label)
        lay.addWidget(self.view, 1)
        self.query.returnPressed.connect(lambda: self._search(self.query.text()))
        self.programs.activated.connect(self._program_picked)
        self.view.clicked.connect(self._activated)
        self.view.activated.connect(self._activated)
        self.hits: list[Hit] = []
        self.asked = ""  # the query whose answer is awaited

    def _search(self, text: str) -> None:
        self.asked = text
        self.label.setText(f"searching {text!r} …")
        self.search.emit(text)

    def set_programs(self, rows: list[dict]) -> None:
        """The ``find.program_table`` rows; each item's data is its search text."""
        self.programs.clear()
        self.programs.addItem("shader programs…", "")
        for row in rows:
            self.programs.addItem(f"{row['program']} ({row['draws']} draws)", f"shader {row['program'].split()[1]}")

    def clear(self) -> None:
        """No hits, no query: a new capture opened (its draws and programs are not the previous one's)."""
        self.hits = []
        self.model.set_rows(())
        self.label.setText("")
        self.query.clear()
        self.asked = ""

    def show_hits(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.model.set_rows(tuple(hits))
        draws = len({h.draw for h in hits if h.draw is not None})
        self.label.setText(f"{self.asked!r}: {len(hits)} hit(s), {draws} draw(s) — click one to go there")

    def show_error(self, text: str) -> None:
        self.clear()
        self.label.setText(text)

    def _program_picked(self, row: int) -> None:
        text = self.programs.itemData(row)
        if text:
            self.query.setText(text)
            self._search(text)

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to.emit(self.hits[index.row()].cursor)
