"""Surface / memory viewer: any address x any texture, color or depth format x any width/height, tiled or linear
(``picaemu.debug.surface``), with R/G/B/A toggles, a depth/stencil plane with a value range or auto-range, zoom,
and a hover readout of the pixel's coordinates, raw word and decoded value. Render targets fill in from the current
draw's framebuffer registers and can be shown as the LCD shows them (turned); picking maps between the shown
orientation and memory through ``picaemu.gx.lcd`` (``lcd_to_memory`` / ``memory_to_lcd``), and a pixel picked in
the framebuffer view is marked here too (``follow_window_pixel``).

The panel asks for a decode through ``wanted((address, format, width, height, tiled))``; the main window decodes on
the worker and calls ``show_surface``. Toggles, range and orientation re-render the kept ``Surface`` here without
asking the worker again (``render_surface``; cheap numpy on the GUI thread).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from picaemu.gui.image_view import ImageView
from picaemu.gui.rows import add_rows
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.surface import DEPTH_FORMATS, MAX_SIDE, PLANES, Surface, auto_range, readout, render_surface
from picaemu.fragment.framebuffer import memory_row
from picaemu.gx.lcd import lcd_to_memory, memory_to_lcd
from picaemu.regs.blocks.texturing import TEXTURE_FORMATS

FORMATS = (*(TEXTURE_FORMATS[k] for k in sorted(TEXTURE_FORMATS)), *DEPTH_FORMATS)
ZOOMS = ("fit", "1x", "2x", "4x", "8x", "16x")


class SurfacePanel(QWidget):
    wanted = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.address = QLineEdit("0x18000000")
        self.format = QComboBox()
        self.format.addItems(FORMATS)
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box in (self.width_box, self.height_box):
            box.setRange(1, MAX_SIDE)
            box.setValue(64)
        self.tiled = QCheckBox("tiled")
        self.tiled.setChecked(True)
        self.decode, self.color_target, self.depth_target = (
            QPushButton(t) for t in ("Decode", "Color buffer", "Depth buffer")
        )
        self.channels = {c: QCheckBox(c.upper()) for c in "rgba"}
        for c, box in self.channels.items():
            box.setChecked(c != "a")
        self.plane = QComboBox()
        self.plane.addItems(PLANES)
        self.auto = QCheckBox("auto range")
        self.auto.setChecked(True)
        self.lo, self.hi = QDoubleSpinBox(), QDoubleSpinBox()
        for box, value in ((self.lo, 0.0), (self.hi, 1.0)):
            box.setRange(0.0, 255.0)
            box.setDecimals(6)
            box.setSingleStep(0.01)
            box.setValue(value)
        self.lcd = QCheckBox("LCD orientation")
        self.zoom = QComboBox()
        self.zoom.addItems(ZOOMS)
        self.image = ImageView()
        self.info, self.hover, self.pick_label = QLabel("no surface"), QLabel(""), QLabel("")
        self._layout()
        self.surface: Surface | None = None
        self.targets: dict[str, Any] | None = None
        self.shown: np.ndarray | None = None
        self.decode.clicked.connect(self.request)
        self.color_target.clicked.connect(lambda: self.show_target("color"))
        self.depth_target.clicked.connect(lambda: self.show_target("depth"))
        for w in (*self.channels.values(), self.auto, self.lcd):
            w.toggled.connect(self.redraw)
        for w in (self.lo, self.hi):
            w.valueChanged.connect(self.redraw)
        self.plane.currentTextChanged.connect(self.redraw)
        self.zoom.currentTextChanged.connect(self._zoom)
        self.image.hovered.connect(self._hovered)
        self.image.picked.connect(self._picked)

    def _layout(self) -> None:
        grid = QGridLayout()
        grid.addWidget(QLabel("address"), 0, 0)
        grid.addWidget(self.address, 0, 1)
        grid.addWidget(self.format, 0, 2)
        grid.addWidget(self.tiled, 0, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(grid)
        add_rows(
            lay,
            (QLabel("size"), self.width_box, QLabel("×"), self.height_box, self.decode),
            (QLabel("this draw's"), self.color_target, self.depth_target),
            (*self.channels.values(), self.plane, self.auto),
            (QLabel("range"), self.lo, self.hi),
            (self.lcd, QLabel("zoom"), self.zoom),
        )
        lay.addWidget(self.info)
        lay.addWidget(self.image, 1)
        lay.addWidget(self.hover)
        lay.addWidget(self.pick_label)
        for label in (self.info, self.hover, self.pick_label):  # long read-outs wrap instead of widening the dock
            label.setWordWrap(True)

    # -- requests ----------------------------------------------------------------------------------------
    def request(self) -> None:
        try:
            address = int(self.address.text(), 0)
        except ValueError:
            self.info.setText(f"not an address: {self.address.text()!r}")
            return
        self.info.setText("decoding …")
        self.wanted.emit(
            (
                address,
                self.format.currentText(),
                self.width_box.value(),
                self.height_box.value(),
                self.tiled.isChecked(),
            )
        )

    def set_render_targets(self, framebuffer: dict[str, Any] | None) -> None:
        """The current draw's framebuffer state (``pipeline_state_of(...)["framebuffer"]``), for the buttons."""
        self.targets = framebuffer if framebuffer and "error" not in framebuffer else None
        for button in (self.color_target, self.depth_target):
            button.setEnabled(self.targets is not None)

    def show_target(self, which: str) -> None:
        """Fill the fields with the current draw's color or depth buffer, show it as the LCD does, decode."""
        fb = self.targets
        if fb is None:
            return
        self.address.setText(f"0x{fb[f'{which}_address']:08X}")
        self.format.setCurrentText("RGBA5551" if fb[f"{which}_format"] == "RGB5A1" else fb[f"{which}_format"])
        self.width_box.setValue(fb["width"])
        self.height_box.setValue(fb["height"])
        self.tiled.setChecked(True)
        self.lcd.setChecked(True)
        self.request()

    # -- showing -----------------------------------------------------------------------------------------
    def show_surface(self, surface: Surface | None, error: str = "") -> None:
        self.surface = surface
        if surface is None:
            self.info.setText(error)
            self.image.set_image(None)
            return
        self.info.setText(
            f"{surface.format} {surface.width}x{surface.height} at 0x{surface.address:08X}, "
            f"{'tiled' if surface.tiled else 'linear'}"
        )
        for w in self.channels.values():  # only the controls that apply to this kind of surface
            w.setEnabled(not surface.is_depth)
        for w in (self.plane, self.auto, self.lo, self.hi):
            w.setEnabled(surface.is_depth)
        if surface.is_depth and self.auto.isChecked():
            self._set_range(*auto_range(surface, self.plane.currentText()))
        self.redraw()

    def _set_range(self, lo: float, hi: float) -> None:
        for box, value in ((self.lo, lo), (self.hi, hi)):
            box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(False)

    def redraw(self) -> None:
        s = self.surface
        if s is None:
            return
        channels = "".join(c for c, box in self.channels.items() if box.isChecked()) or "rgb"
        plane = self.plane.currentText() if s.format == "D24S8" else "depth"
        if s.is_depth and self.auto.isChecked():
            self._set_range(*auto_range(s, plane))
        shown = render_surface(s, channels, (self.lo.value(), self.hi.value()), plane, self.lcd.isChecked())
        if self.shown is None or self.shown.shape != shown.shape:  # a new shape refits the view: say so
            self.zoom.blockSignals(True)
            self.zoom.setCurrentText("fit")
            self.zoom.blockSignals(False)
        self.shown = shown
        self.image.set_image(shown)

    def _zoom(self, text: str) -> None:
        if text == "fit":
            self.image.fit()
        else:
            self.image.set_zoom(float(text.rstrip("x")))

    # -- picking -----------------------------------------------------------------------------------------
    def to_memory(self, x: int, y: int) -> tuple[int, int]:
        """A pixel of the shown picture -> the memory-order pixel (column, row) it shows."""
        return lcd_to_memory(x, y, self.surface.width) if self.lcd.isChecked() else (x, y)

    def show_memory_pixel(self, x: int, y: int) -> tuple[int, int]:
        """Mark memory pixel (x, y) in the shown orientation; returns where it is shown."""
        where = memory_to_lcd(x, y, self.surface.width) if self.lcd.isChecked() else (x, y)
        self.image.mark = where
        self.image.update()
        return where

    def _target(self) -> dict[str, Any] | None:
        """The current framebuffer state when the shown surface is one of its render targets, else None."""
        s, fb = self.surface, self.targets
        if (
            s is None
            or fb is None
            or (s.width, s.height) != (fb["width"], fb["height"])
            or s.address not in (fb["color_address"], fb["depth_address"])
        ):
            return None
        return fb

    def follow_window_pixel(self, x: int, y: int) -> tuple[int, int] | None:
        """A pixel picked elsewhere (window coordinates, y up): when the shown surface is one of the current render
        targets, mark it here and read it out; returns where it is shown (None otherwise)."""
        fb = self._target()
        if fb is None:
            return None
        where = self.show_memory_pixel(x, memory_row(y, fb["height"], fb["flipped"]))
        self.pick_label.setText("picked " + self.describe(*where))
        return where

    def describe(self, x: int, y: int) -> str:
        mx, my = self.to_memory(x, y)
        r = readout(self.surface, mx, my)
        raw = "—" if r["raw"] is None else f"0x{r['raw']:X}"
        value = (
            f"RGBA {r['rgba']}"
            if "rgba" in r
            else f"depth {r['depth']:.6f} (0x{r['depth_raw']:X})"
            + ("" if r["stencil"] is None else f" stencil {r['stencil']}")
        )
        turned = f"shown ({x}, {y}) = " if self.lcd.isChecked() else ""
        fb = self._target()  # a render target: its window coordinates too (memory_row maps rows both ways)
        window = f" = window ({mx}, {memory_row(my, fb['height'], fb['flipped'])})" if fb is not None else ""
        return f"{turned}memory pixel ({mx}, {my}){window}: raw {raw}, {value}"

    def _hovered(self, x: int, y: int) -> None:
        if self.surface is not None:
            self.hover.setText(self.describe(x, y))

    def _picked(self, x: int, y: int) -> None:
        if self.surface is not None:
            self.pick_label.setText("picked " + self.describe(x, y))
