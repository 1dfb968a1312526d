"""Texture viewer: every texture unit as bound at the current draw (units 0-2 from memory, unit 3 procedural) with
format, size, address, levels and cube faces; channel views (RGB / A / R / G / B), save PNG; and a free view of
any address x format x size (all 14 formats).

The panel asks for pictures through ``wanted(request)``: ``("unit", unit, face, level)`` or
``("free", address, format, width, height, level)``; the main window decodes on the worker and calls
``show_texture``.
"""

from __future__ import annotations

import numpy as np
from picaemu.gui.image_view import ImageView, save_png
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.state_views import CHANNEL_MODES, BoundTexture, channel_view
from picaemu.regs.blocks.texturing import TEXTURE_FORMATS


class TexturePanel(QWidget):
    wanted = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.units = QListWidget()
        self.units.setMaximumHeight(90)
        self.units.setMinimumHeight(40)
        self.channel = QComboBox()
        self.channel.addItems(CHANNEL_MODES)
        self.face, self.level = QSpinBox(), QSpinBox()
        self.face.setRange(0, 5)
        self.level.setRange(0, 10)
        self.save = QPushButton("Save PNG…")
        self.image = ImageView()
        self.info = QLabel("")
        self.address = QLineEdit("0x18000000")
        self.format = QComboBox()
        self.format.addItems([TEXTURE_FORMATS[k] for k in sorted(TEXTURE_FORMATS)])
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box in (self.width_box, self.height_box):
            box.setRange(8, 1024)
            box.setValue(64)
        self.decode = QPushButton("Decode")
        free = QFormLayout()
        free.addRow("address", self.address)
        free.addRow("format", self.format)
        size = QHBoxLayout()
        size.addWidget(self.width_box)
        size.addWidget(self.height_box)
        size.addWidget(self.decode)
        free.addRow("width × height", size)
        row = QHBoxLayout()
        for w in (QLabel("channels"), self.channel, QLabel("face"), self.face, QLabel("level"), self.level, self.save):
            row.addWidget(w)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.units)
        lay.addLayout(row)
        lay.addWidget(self.info)
        lay.addWidget(self.image, 1)
        lay.addLayout(free)
        self.bound: list[BoundTexture] = []
        self.rgba: np.ndarray | None = None
        self.units.currentRowChanged.connect(self._request_unit)
        self.face.valueChanged.connect(self._request_unit)
        self.level.valueChanged.connect(self._request_unit)
        self.channel.currentTextChanged.connect(self._redraw)
        self.decode.clicked.connect(self.request_free)
        self.save.clicked.connect(self._save)

    def set_bound(self, bound: list[BoundTexture]) -> None:
        self.bound = bound
        row = max(self.units.currentRow(), 0)
        self.units.blockSignals(True)
        self.units.clear()
        self.units.addItems([t.text() for t in bound])
        self.units.setCurrentRow(min(row, len(bound) - 1))
        self.units.blockSignals(False)
        self._request_unit()

    def _request_unit(self) -> None:
        row = self.units.currentRow()
        if 0 <= row < len(self.bound):
            self.wanted.emit(("unit", self.bound[row].unit, self.face.value(), self.level.value()))

    def request_free(self) -> None:
        try:
            address = int(self.address.text(), 0)
        except ValueError:
            self.info.setText(f"not an address: {self.address.text()!r}")
            return
        self.wanted.emit(
            (
                "free",
                address,
                self.format.currentText(),
                self.width_box.value(),
                self.height_box.value(),
                self.level.value(),
            )
        )

    def show_texture(self, rgba: np.ndarray | None, text: str) -> None:
        self.rgba = rgba
        self.info.setText(text)
        self._redraw()

    def _redraw(self) -> None:
        self.image.set_image(None if self.rgba is None else channel_view(self.rgba, self.channel.currentText()))

    def texel(self, column: int, row: int) -> tuple[int, ...]:
        return tuple(int(v) for v in self.rgba[row, column])

    def _save(self) -> None:
        if self.rgba is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save PNG", "texture.png", "PNG (*.png)")
        if path:
            save_png(self.rgba, path)
