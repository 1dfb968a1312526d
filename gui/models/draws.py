"""The draw list with lazily built footprint thumbnails (``picaemu.debug.footprint``).

``DrawListModel`` has one row per draw of an immutable ``Timeline``: DisplayRole "draw N" and its fragments
written, ToolTipRole the draw's kind, counters and bounds, ``DRAW_ROLE`` the draw number, DecorationRole its
footprint icon. An icon not built yet is asked for the first time a view paints its row (``data`` is only called
for what a view shows: give the view uniform item sizes): the row goes into ``pending`` and, once the event loop is
idle, ``wanted`` is emitted with the pending draws the ``is_visible`` predicate still accepts (rows scrolled away
meanwhile are dropped). Results come back through ``set_thumbnails``; built icons stay cached until the next
``set_timeline``. ``requested`` records every draw ever asked for (tests, status).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from picaemu.gui.image_view import to_qimage
from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap

from picaemu.debug.timeline import Timeline

Index = QModelIndex | QPersistentModelIndex
DRAW_ROLE = Qt.ItemDataRole.UserRole
BATCH = 24  # footprints per worker job: a screenful, a few ms each


class DrawListModel(QAbstractListModel):
    wanted = Signal(list)  # draws whose footprints a view shows and nobody has built yet

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.icons: dict[int, QIcon] = {}
        self.pending: set[int] = set()
        self.requested: set[int] = set()
        self.busy = False  # a batch is out
        self.is_visible: Callable[[int], bool] = lambda draw: True
        self._placeholder = QIcon()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(0)
        self._flush.timeout.connect(self.request_pending)

    def set_timeline(self, tl: Timeline | None, placeholder_size: tuple[int, int] = (60, 100)) -> None:
        self.beginResetModel()
        self.timeline = tl
        self.icons, self.pending, self.requested, self.busy = {}, set(), set(), False
        pixmap = QPixmap(*placeholder_size)
        pixmap.fill(QColor(48, 48, 56))
        self._placeholder = QIcon(pixmap)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.timeline is None else len(self.timeline.draws)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.timeline is None or not 0 <= index.row() < len(self.timeline.draws):
            return None
        d = self.timeline.draws[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"draw {d.index}\n{d.stats.get('fragments_written', 0)} px"
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"draw {d.index} ({d.kind}), frame {d.frame}: {d.stats.get('fragments_rasterized', 0)} fragments "
                f"rasterized, {d.stats.get('fragments_written', 0)} written; window bounds {d.bounds}"
            )
        if role == DRAW_ROLE:
            return d.index
        if role == Qt.ItemDataRole.DecorationRole:
            icon = self.icons.get(d.index)
            if icon is None:
                self._want(d.index)
                return self._placeholder
            return icon
        return None

    @property
    def waiting(self) -> bool:
        """A batch is out, or painted rows are about to ask for one (the event loop has not run the flush yet)."""
        return self.busy or self._flush.isActive()

    def _want(self, draw: int) -> None:
        if draw not in self.pending:
            self.pending.add(draw)
            self._flush.start()

    def request_pending(self) -> None:
        """Emit ``wanted`` with up to ``BATCH`` pending draws that are still visible, unless a batch is out."""
        if self.busy:
            return
        self.pending = {d for d in self.pending if d not in self.icons and self.is_visible(d)}
        batch = sorted(self.pending)[:BATCH]
        if batch:
            self.busy = True
            self.requested.update(batch)
            self.wanted.emit(batch)

    def set_thumbnails(self, images: dict[int, np.ndarray]) -> None:
        """Footprint images ((h, w, 3) uint8) by draw: cache their icons, repaint their rows, ask for the rest."""
        self.busy = False
        for draw, image in images.items():
            self.icons[draw] = QIcon(QPixmap.fromImage(to_qimage(image)))
            self.pending.discard(draw)
            row = self.index(draw, 0)
            self.dataChanged.emit(row, row, [Qt.ItemDataRole.DecorationRole])
        if self.pending:
            self._flush.start()

    def clear_icons(self) -> None:
        """Forget every built icon (the thumbnails changed kind): the rows on screen ask again as they repaint."""
        self.icons, self.pending = {}, set()
        if self.rowCount():
            self.dataChanged.emit(
                self.index(0, 0), self.index(self.rowCount() - 1, 0), [Qt.ItemDataRole.DecorationRole]
            )

    def batch_failed(self) -> None:
        """The batch out could not be built: forget its draws (asked again only when painted again)."""
        self.busy = False
        self.pending.clear()
