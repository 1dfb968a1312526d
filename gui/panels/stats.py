"""Statistics panel: the pipeline's per-draw counters (``picaemu.pipeline.STAT_KEYS`` + time) from the index, the
per-frame sums, and a small bar plot of one chosen counter per draw. Double-click a draw row to run to it."""

from __future__ import annotations

from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, QRectF, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QTableView, QTabWidget, QVBoxLayout, QWidget

from picaemu.debug.timeline import Timeline
from picaemu.pipeline import STAT_KEYS

COLUMNS = ("frame", "draw", "kind", *STAT_KEYS, "time_ms")


def draw_row(d) -> dict:
    row = {"frame": d.frame, "draw": d.index, "kind": d.kind}
    row.update({k: d.stats.get(k, 0) for k in STAT_KEYS})
    row["time_ms"] = round(1000.0 * float(d.stats.get("time_s", 0.0)), 3)
    return row


def frame_rows(rows: list[dict]) -> list[dict]:
    frames: dict[int, dict] = {}
    for r in rows:
        acc = frames.setdefault(r["frame"], {"frame": r["frame"], "draw": 0, "kind": ""})
        acc["draw"] += 1
        for k in (*STAT_KEYS, "time_ms"):
            acc[k] = round(acc.get(k, 0) + r[k], 3)
    return [frames[f] for f in sorted(frames)]


class BarPlot(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(90)
        self.values: list[float] = []
        self.current: int | None = None

    def set_values(self, values: list[float], current: int | None = None) -> None:
        self.values, self.current = values, current
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(250, 250, 250))
        if not self.values:
            return
        top = max(max(self.values), 1e-9)
        w = self.width() / len(self.values)
        for i, v in enumerate(self.values):
            h = (self.height() - 4) * v / top
            color = QColor(230, 120, 40) if i == self.current else QColor(60, 120, 200)
            p.fillRect(QRectF(i * w + 1, self.height() - h, max(w - 2, 1), h), color)


class StatsPanel(QWidget):
    run_to_draw = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.per_draw = TableModel(COLUMNS, lambda r, c: str(r[COLUMNS[c]]), parent=self)
        self.per_frame = TableModel(COLUMNS, lambda r, c: str(r.get(COLUMNS[c], "")), parent=self)
        self.counter = QComboBox()
        self.counter.addItems([*STAT_KEYS, "time_ms"])
        self.counter.setCurrentText("fragments_written")
        self.plot = BarPlot()
        self.label = QLabel("")
        tabs = QTabWidget()
        self.draw_view = QTableView()
        compact(self.draw_view)
        self.draw_view.setModel(self.per_draw)
        frame_view = QTableView()
        compact(frame_view)
        frame_view.setModel(self.per_frame)
        tabs.addTab(self.draw_view, "per draw")
        tabs.addTab(frame_view, "per frame")
        row = QHBoxLayout()
        row.addWidget(QLabel("plot"))
        row.addWidget(self.counter)
        row.addWidget(self.label, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(row)
        lay.addWidget(self.plot)
        lay.addWidget(tabs)
        self.counter.currentTextChanged.connect(lambda _: self._plot())
        self.draw_view.doubleClicked.connect(self._activated)
        self.rows: list[dict] = []
        self.current: int | None = None

    def set_timeline(self, tl: Timeline | None) -> None:
        self.rows = [draw_row(d) for d in tl.draws] if tl is not None else []
        self.per_draw.set_rows(tuple(self.rows))
        self.per_frame.set_rows(tuple(frame_rows(self.rows)))
        self.label.setText(f"{len(self.rows)} draws")
        self._plot()

    def set_current_draw(self, draw: int | None) -> None:
        self.current = draw
        self._plot()

    def _plot(self) -> None:
        key = self.counter.currentText()
        self.plot.set_values([float(r[key]) for r in self.rows], self.current)

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to_draw.emit(self.rows[index.row()]["draw"])
