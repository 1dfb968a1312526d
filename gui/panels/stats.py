"""Statistics panel: the pipeline's per-draw counters (``picaemu.pipeline.STAT_KEYS`` + time) from the index, the
per-frame sums, and the figure of ``picaemu stats --plot`` (``picaemu.analysis.plot``: fragment fates, geometry,
time) on a matplotlib Qt canvas, with the current draw marked. Double-click a draw row to run to it."""

from __future__ import annotations

import warnings

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget

from picaemu.analysis import plot as stats_plot
from picaemu.debug.timeline import Timeline
from picaemu.pipeline import STAT_KEYS

# a dock squeezed to a few pixels cannot hold the axes; matplotlib says so at every repaint
warnings.filterwarnings("ignore", message="constrained_layout not applied", category=UserWarning)

REDRAW_MS = 150  # stepping redraws the figure at most this often, and only while the panel is visible
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


class StatsPanel(QWidget):
    run_to_draw = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.per_draw = TableModel(COLUMNS, lambda r, c: str(r[COLUMNS[c]]), parent=self)
        self.per_frame = TableModel(COLUMNS, lambda r, c: str(r.get(COLUMNS[c], "")), parent=self)
        self.figure = stats_plot.figure([], "draw")
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.canvas.setMinimumHeight(160)
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
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.canvas)
        split.addWidget(tabs)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.label)
        lay.addWidget(split, 1)
        self.draw_view.doubleClicked.connect(self._activated)
        self.rows: list[dict] = []
        self.current: int | None = None
        self._stale = False
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._draw)

    def _draw(self) -> None:
        if self.isVisible():
            self.canvas.draw_idle()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.canvas.draw_idle()

    def set_timeline(self, tl: Timeline | None) -> None:
        self.rows = [draw_row(d) for d in tl.draws] if tl is not None else []
        self.per_draw.set_rows(tuple(self.rows))
        self.per_frame.set_rows(tuple(frame_rows(self.rows)))
        self.label.setText(f"{len(self.rows)} draws")
        self.figure.clear()
        stats_plot.figure(self.rows, "draw", current=self.current, into=self.figure)
        self._redraw.start()

    def set_current_draw(self, draw: int | None) -> None:
        self.current = draw
        stats_plot.mark(self.figure, draw)
        self._redraw.start()

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to_draw.emit(self.rows[index.row()]["draw"])
