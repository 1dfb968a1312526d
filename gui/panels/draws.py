"""Draw thumbnails: the render target right after every draw (a quarter-size picture taken while indexing), with
the draw's fragment count; double-click runs to that draw."""

from __future__ import annotations

import numpy as np
from picaemu.gui.image_view import to_qimage
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from picaemu.debug.timeline import Timeline

ICON = QSize(60, 100)


class DrawsPanel(QWidget):
    run_to_draw = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setViewMode(QListView.ViewMode.IconMode)
        self.list.setIconSize(ICON)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setMovement(QListView.Movement.Static)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.list)
        self.list.itemDoubleClicked.connect(lambda item: self.run_to_draw.emit(item.data(Qt.ItemDataRole.UserRole)))

    def set_draws(self, tl: Timeline | None, thumbnails: list[np.ndarray | None] | None) -> None:
        self.list.clear()
        if tl is None:
            return
        for d in tl.draws:
            item = QListWidgetItem(f"draw {d.index}\n{d.stats.get('fragments_written', 0)} px")
            thumb = thumbnails[d.index] if thumbnails and d.index < len(thumbnails) else None
            if thumb is not None:
                item.setIcon(QIcon(QPixmap.fromImage(to_qimage(thumb))))
            item.setData(Qt.ItemDataRole.UserRole, d.index)
            self.list.addItem(item)

    def select(self, draw: int | None) -> None:
        if draw is not None and 0 <= draw < self.list.count():
            self.list.setCurrentRow(draw)
