"""Draw thumbnails: one icon per draw showing its footprint (``picaemu.debug.footprint``: the render target after
the draw, the draw's own pixels highlighted, the rest dimmed, its bounds outlined), built lazily for the rows on
screen only (``gui.models.draws.DrawListModel``), with the draw's fragment count; a click runs to that draw.
"zoom to each draw" shows the region around each draw instead of the whole target (the icons are rebuilt).

``thumbnails_wanted(list)`` asks the main window for footprints; ``set_thumbnails`` hands them back."""

from __future__ import annotations

import numpy as np
from picaemu.gui.models.draws import DRAW_ROLE, DrawListModel
from PySide6.QtCore import QModelIndex, QSize, Signal
from PySide6.QtWidgets import QCheckBox, QListView, QVBoxLayout, QWidget

from picaemu.debug.timeline import Timeline

ICON = QSize(60, 100)


class DrawsPanel(QWidget):
    run_to_draw = Signal(int)
    thumbnails_wanted = Signal(list)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = DrawListModel(self)
        self.list = QListView()
        self.list.setViewMode(QListView.ViewMode.IconMode)
        self.list.setIconSize(ICON)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setMovement(QListView.Movement.Static)
        self.list.setUniformItemSizes(True)  # the view sizes every row from one: data() only for painted rows
        self.list.setModel(self.model)
        self.model.is_visible = self.row_visible
        self.zoom = QCheckBox("zoom to each draw")
        self.zoom.setToolTip("thumbnails of the region around each draw (3x its bounds) instead of the whole target")
        self.zoom.toggled.connect(lambda _: self.model.clear_icons())
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.zoom)
        lay.addWidget(self.list)
        self.list.clicked.connect(self._activated)
        self.list.activated.connect(self._activated)
        self.model.wanted.connect(self.thumbnails_wanted)

    def set_draws(self, tl: Timeline | None) -> None:
        self.model.set_timeline(tl, (ICON.width(), ICON.height()))

    def set_thumbnails(self, images: dict[int, np.ndarray]) -> None:
        self.model.set_thumbnails(images)

    def row_visible(self, draw: int) -> bool:
        """Whether row ``draw`` intersects the list's viewport (and the panel is shown)."""
        rect = self.list.visualRect(self.model.index(draw, 0))
        return self.list.isVisible() and rect.isValid() and rect.intersects(self.list.viewport().rect())

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_to_draw.emit(index.data(DRAW_ROLE))

    def select(self, draw: int | None) -> None:
        if draw is not None and 0 <= draw < self.model.rowCount():
            index = self.model.index(draw, 0)
            self.list.setCurrentIndex(index)
            self.list.scrollTo(index)
