"""Statistics panel: the pipeline's per-draw counters (``picaemu.pipeline.STAT_KEYS`` + time) from the index, the
per-frame sums, and the figure of ``picaemu stats --plot`` (``picaemu.analysis.plot``: fragment fates, geometry,
time) on a matplotlib Qt canvas, with the current draw marked.

Every column sorts (click its header; numbers sort as numbers through ``SORT_ROLE``); headers carry the full
counter names with units and meaning as tooltips (``picaemu.analysis.stats.COLUMN_DOCS``). Clicking a draw row or
a bar / step of the figure runs to that draw (``run_to_draw``), a frame row to the end of that frame (``run_to``
with a ``Cursor``); hovering the figure shows the entry's values.
Stepping moves only the marker: the figure is drawn whole once (matplotlib lays out and draws its text and bars
in ~0.1-1 s), its picture kept without the marker, and each move puts that picture back and draws the marker
lines over it (blitting, ~1 ms).
"depth complexity" asks for the whole-frame fragment map overlay (``frame_map_wanted``)."""

from __future__ import annotations

import warnings

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from picaemu.gui.models.table import SORT_ROLE, TableModel, compact
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from picaemu.analysis import plot as stats_plot
from picaemu.analysis.stats import COLUMN_DOCS
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.pipeline import STAT_KEYS

# a dock squeezed to a few pixels cannot hold the axes; matplotlib says so at every repaint
warnings.filterwarnings("ignore", message="constrained_layout not applied", category=UserWarning)

FIGURE_MIN_WIDTH, FIGURE_MIN_HEIGHT = 420, 420  # pixels the three panels need to keep their axes readable
REDRAW_MS = 150  # stepping redraws the figure at most this often, and only while the panel is visible
COLUMNS = ("frame", "draw", "kind", *STAT_KEYS, "time_ms")
DRAW_COLUMN = COLUMNS.index("draw")
HOVER_KEYS = ("fragments_rasterized", "fragments_written", "killed_depth", "vertices_shaded", "time_ms")


def header_tip(key: str) -> str:
    label, unit, doc = COLUMN_DOCS[key]
    return f"{label} ({unit}): {doc}" if unit else f"{label}: {doc}"


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


def _table(rows_model: TableModel) -> tuple[QTableView, QSortFilterProxyModel]:
    """A sortable view over ``rows_model`` (initially by draw, ascending), headers sized to their full text."""
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(rows_model)
    proxy.setSortRole(SORT_ROLE)
    view = QTableView()
    compact(view)
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.sortByColumn(DRAW_COLUMN, Qt.SortOrder.AscendingOrder)
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    header = view.horizontalHeader()
    header.setTextElideMode(Qt.TextElideMode.ElideNone)
    header.setResizeContentsPrecision(0)  # size columns from the visible rows only (1000 draws stay lazy)
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSortIndicatorShown(True)
    header.sortIndicatorChanged.connect(lambda column, _: show_column(view, column))
    return view, proxy


def show_column(view: QTableView, column: int) -> None:
    """Scroll ``view`` sideways so that ``column`` (just sorted on) is on screen."""
    model = view.model()
    if model.rowCount():
        view.scrollTo(model.index(view.rowAt(0) if view.rowAt(0) >= 0 else 0, column))
    else:
        view.horizontalScrollBar().setValue(view.horizontalHeader().sectionPosition(column))


def sort_text(view: QTableView) -> str:
    """ "sorted by <column> (ascending|descending)" for ``view``'s sort indicator."""
    header = view.horizontalHeader()
    name = view.model().headerData(header.sortIndicatorSection(), Qt.Orientation.Horizontal)
    order = "ascending" if header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder else "descending"
    return f"sorted by {name} ({order})"


class StatsPanel(QWidget):
    run_to_draw = Signal(int)
    run_to = Signal(object)  # Cursor: the end of a frame
    frame_map_wanted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        headers = [COLUMN_DOCS[c][0] for c in COLUMNS]
        tips = [header_tip(c) for c in COLUMNS]
        self.per_draw = TableModel(
            headers,
            lambda r, c: str(r[COLUMNS[c]]),
            parent=self,
            sort_value=lambda r, c: r[COLUMNS[c]],
            header_tips=tips,
        )
        self.per_frame = TableModel(
            headers,
            lambda r, c: str(r.get(COLUMNS[c], "")),
            parent=self,
            sort_value=lambda r, c: r.get(COLUMNS[c], ""),
            header_tips=tips,
        )
        self.figure = stats_plot.figure([], "draw")
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.canvas.setMinimumSize(FIGURE_MIN_WIDTH, FIGURE_MIN_HEIGHT)
        figure_area = QScrollArea()  # a short dock scrolls the figure instead of squashing its axes flat
        figure_area.setWidgetResizable(True)
        figure_area.setWidget(self.canvas)
        self.canvas.mpl_connect("button_press_event", self._plot_clicked)
        self.canvas.mpl_connect("motion_notify_event", self._plot_hover)
        self.label = QLabel("")
        self.hover = QLabel("")
        self.frame_map = QPushButton("whole-frame depth complexity")
        self.frame_map.setToolTip("overlay the frame's fragments per pixel (so far) on the framebuffer view")
        self.frame_map.clicked.connect(lambda: self.frame_map_wanted.emit())
        tabs = QTabWidget()
        self.draw_view, self.draw_proxy = _table(self.per_draw)
        self.frame_view, self.frame_proxy = _table(self.per_frame)
        tabs.addTab(self.draw_view, "per draw")
        tabs.addTab(self.frame_view, "per frame")
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(figure_area)
        split.addWidget(tabs)
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.frame_map)
        self.hover.setWordWrap(True)
        self.label.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.hover)
        lay.addWidget(split, 1)
        self.draw_view.horizontalHeader().sortIndicatorChanged.connect(self._show_count)
        self.draw_view.clicked.connect(self._activated)
        self.draw_view.activated.connect(self._activated)
        self.frame_view.clicked.connect(self._frame_activated)
        self.frame_view.activated.connect(self._frame_activated)
        self.timeline: Timeline | None = None
        self.rows: list[dict] = []
        self.current: int | None = None
        self._stale = False
        self._background = None  # the figure drawn whole without its marker (``copy_from_bbox``), None: draw again
        self.canvas.mpl_connect("draw_event", self._drawn)
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._draw)

    def _draw(self) -> None:
        if not self.isVisible():
            self._stale = True
        elif self._background is None:
            self.canvas.draw_idle()
        else:
            self.canvas.restore_region(self._background)
            self._draw_marker()
            self.canvas.blit(self.figure.bbox)

    def _markers(self) -> list:
        return [line for ax in self.figure.axes for line in ax.lines if line.get_gid() == stats_plot.CURRENT]

    def _draw_marker(self) -> None:
        for line in self._markers():
            line.axes.draw_artist(line)

    def _drawn(self, _event) -> None:
        """After a whole draw (the marker, animated, left out): keep the picture, then draw the marker on it."""
        self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        self._draw_marker()

    def resizeEvent(self, event) -> None:
        """Figure beside the table in a wide, short dock (the bottom area), above it otherwise."""
        super().resizeEvent(event)
        wide = event.size().width() > 2 * event.size().height()
        self.split.setOrientation(Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._draw()

    def set_timeline(self, tl: Timeline | None, *, plot: bool = True) -> None:
        """Tables and figure for ``tl``; ``plot=False`` leaves the figure (0.2-0.4 s of matplotlib) to a later
        ``plot`` (a live session re-plots when it pauses or ends, not at every frame)."""
        self.timeline = tl
        self.rows = [draw_row(d) for d in tl.draws] if tl is not None else []
        self.per_draw.set_rows(tuple(self.rows))
        self.per_frame.set_rows(tuple(frame_rows(self.rows)))
        self._show_count()
        if plot:
            self.plot()

    def plot(self) -> None:
        self.figure.clear()
        stats_plot.figure(self.rows, "draw", current=self.current, into=self.figure)
        for line in self._markers():
            line.set_animated(True)  # a whole draw leaves it out; ``_draw`` puts it on the kept picture
        self._background = None
        self._redraw.start()

    def _show_count(self, *_) -> None:
        self.label.setText(f"{len(self.rows)} draws, {sort_text(self.draw_view)}")

    def set_current_draw(self, draw: int | None) -> None:
        """Mark ``draw`` in the figure and select its row (wherever the sort put it) without running anywhere."""
        self.current = draw
        stats_plot.mark(self.figure, draw)
        self._redraw.start()
        if draw is not None and 0 <= draw < len(self.rows) and self.rows[draw]["draw"] == draw:
            row = self.draw_proxy.mapFromSource(self.per_draw.index(draw, 0))
            self.draw_view.selectionModel().setCurrentIndex(
                row, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.draw_view.scrollTo(row)

    def draw_at_row(self, view_row: int) -> int:
        """The draw shown in row ``view_row`` of the (sorted) per-draw table."""
        source = self.draw_proxy.mapToSource(self.draw_proxy.index(view_row, 0))
        return self.rows[source.row()]["draw"]

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to_draw.emit(self.draw_at_row(index.row()))

    def _frame_activated(self, index: QModelIndex) -> None:
        tl = self.timeline
        if not index.isValid() or tl is None:
            return
        source = self.frame_proxy.mapToSource(self.frame_proxy.index(index.row(), 0))
        frame = self.per_frame.rows[source.row()]["frame"]
        self.run_to.emit(Cursor(tl.frame_ends[frame] + 1, 0) if frame < len(tl.frame_ends) else tl.end)

    def entry_at(self, x: float | None) -> int | None:
        """The row index of the entry drawn nearest to data coordinate ``x`` of the figure (None if none)."""
        if x is None or not self.rows:
            return None
        k = min(max(round(x), 0), len(self.rows) - 1)  # rows are drawn at x = their draw number, 0..D-1
        return k if abs(self.rows[k]["draw"] - x) <= 0.5 else None

    def _plot_clicked(self, event) -> None:
        k = self.entry_at(event.xdata) if event.inaxes is not None else None
        if k is not None:
            self.run_to_draw.emit(self.rows[k]["draw"])

    def _plot_hover(self, event) -> None:
        k = self.entry_at(event.xdata) if event.inaxes is not None else None
        if k is None:
            self.hover.setText("")
            return
        row = self.rows[k]
        values = ", ".join(f"{COLUMN_DOCS[key][0]} {row[key]}" for key in HOVER_KEYS)
        self.hover.setText(f"draw {row['draw']}: {values} (click to go there)")
