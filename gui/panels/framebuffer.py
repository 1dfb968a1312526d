"""Framebuffer panel: the render target (color, depth normalized over an adjustable range, stencil) and both LCD
screens at the current position; zoom / pan / pick (window coordinates and raw + decoded values); overlays of
the last draw computed by the software rasterizer (wireframe, overdraw; depth-test and stencil-test fail maps
from the pipeline's exact per-fragment fates) and the scissor box; save PNG.

``pixel_picked(x, y)`` (window coordinates, y up) is emitted for picks on render-target views,
``screen_picked(screen, column, row)`` for picks on the screens (the picture's column and row from the top);
``overlays_wanted()`` asks the main window for a probe of the current draw (``set_probe``). The "GL beside
software" toggle shows the current draw rendered by the OpenGL backend next to the picture, with the difference
from the software result as an overlay and the figures (``backend_diff_wanted()`` asks for
``picaemu.debug.backend_diff``; ``set_backend_diff`` shows it, or one line when EGL is unavailable).
"""

from __future__ import annotations

import time

import numpy as np
from picaemu.gui.image_view import ImageView, save_png
from picaemu.gui.legend import legend_html
from picaemu.gui.rows import add_rows
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from picaemu.debug.backend_diff import BackendDiff, difference_overlay
from picaemu.debug.probe import (
    DrawProbe,
    count_overlay,
    fate_overlay,
    overdraw_overlay,
    scissor_rect,
    wireframe_overlay,
)
from picaemu.debug.snapshot import Snapshot
from picaemu.fragment.ops import Fate

VIEWS = ("color", "alpha", "depth", "stencil", "top", "bottom")
TARGET_VIEWS = ("color", "alpha", "depth", "stencil")
DEPTH_MAX = float((1 << 24) - 1)
FATE_OVERLAYS = ((Fate.DEPTH, "depth fail"), (Fate.STENCIL, "stencil fail"))  # checkbox per fate map


def depth_picture(depth: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """(H, W) uint32 24-bit depth -> (H, W, 3) uint8 grey, ``lo``..``hi`` (0..1 of full scale) stretched."""
    d = depth.astype(np.float64) / DEPTH_MAX
    span = max(hi - lo, 1e-9)
    g = np.clip((d - lo) / span, 0.0, 1.0) * 255.0
    return np.repeat(np.rint(g).astype(np.uint8)[..., None], 3, axis=2)


def view_picture(snap: Snapshot, view: str, lo: float = 0.0, hi: float = 1.0) -> np.ndarray | None:
    img = snap.images
    if view == "color" and "color" in img:
        return img["color"][..., :3]
    if view == "alpha" and "color" in img:
        return np.repeat(img["color"][..., 3:4], 3, axis=2)
    if view == "depth" and "depth" in img:
        return depth_picture(img["depth"], lo, hi)
    if view == "stencil" and "stencil" in img:
        return np.repeat(img["stencil"][..., None], 3, axis=2)
    return img.get(view)


DEFAULT_OPACITY = 100  # percent of each overlay's own alpha (the slider lowers it)


def with_opacity(overlay: np.ndarray, percent: int) -> np.ndarray:
    """(H, W, 4) uint8 overlay with its alpha scaled by ``percent`` / 100 (0 hides it, 100 keeps it)."""
    out = overlay.copy()
    out[..., 3] = (overlay[..., 3].astype(np.uint16) * percent // 100).astype(np.uint8)
    return out


class FramebufferPanel(QWidget):
    pixel_picked = Signal(int, int)
    screen_picked = Signal(str, int, int)
    overlays_wanted = Signal()
    frame_map_wanted = Signal()
    backend_diff_wanted = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.view_box = QComboBox()
        self.view_box.addItems(VIEWS)
        self.lo, self.hi = QDoubleSpinBox(), QDoubleSpinBox()
        for box, value in ((self.lo, 0.0), (self.hi, 1.0)):
            box.setRange(0.0, 1.0)
            box.setDecimals(4)
            box.setSingleStep(0.01)
            box.setValue(value)
            box.valueChanged.connect(self.refresh)
        self.wire, self.overdraw, self.scissor = QCheckBox("wireframe"), QCheckBox("overdraw"), QCheckBox("scissor")
        self.frame_map_box = QCheckBox("frame complexity")  # the whole frame so far (ATTILA's fragment map)
        self.frame_map: np.ndarray | None = None
        self.fate_boxes = {fate: QCheckBox(text) for fate, text in FATE_OVERLAYS}
        self.opacity = QSlider(Qt.Orientation.Horizontal)  # overlays over the picture, 0..100 %
        self.opacity.setRange(0, 100)
        self.opacity.setValue(DEFAULT_OPACITY)
        self.opacity.setFixedWidth(90)
        self.opacity.setToolTip("overlay opacity")
        self.opacity.valueChanged.connect(self.refresh)
        self.depth_fail, self.stencil_fail = self.fate_boxes[Fate.DEPTH], self.fate_boxes[Fate.STENCIL]
        self.save = QPushButton("Save PNG…")
        self.gl_box = QCheckBox("GL beside software")
        self.gl_image, self.gl_info = ImageView(), QLabel("")
        self.gl_info.setWordWrap(True)  # the figures line must not widen the GL side
        self.gl_diff: BackendDiff | None = None
        self._gl_timer = QTimer(self)  # the seconds a GL rendering has taken so far, shown while it runs
        self._gl_timer.setInterval(1000)
        self._gl_timer.timeout.connect(self._gl_tick)
        self._gl_waiting, self._gl_used = 0.0, False
        self.image = ImageView()
        self.info = QLabel("no capture")
        self.pick_info = QLabel("")
        self.legend = QLabel("")  # what the colours of the overlays shown mean (hidden when none is)
        self.legend_names: list[str] = []  # the overlays the legend explains
        self._drawn: list[str] = []  # the overlays over the software picture
        self.legend.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        add_rows(
            lay,
            (self.view_box, QLabel("depth"), self.lo, self.hi, self.save, self.gl_box),
            (QLabel("overlays:"), *self._probe_boxes(), self.scissor, self.frame_map_box, self.opacity),
        )
        lay.addWidget(self.legend)
        self.legend.hide()
        lay.addWidget(self.info)
        pictures = QHBoxLayout()
        pictures.addWidget(self.image, 1)
        self.gl_side = QWidget()  # a widget, so that hiding it gives its room back to the picture
        gl_side = QVBoxLayout(self.gl_side)
        gl_side.setContentsMargins(0, 0, 0, 0)
        gl_side.addWidget(self.gl_info)
        gl_side.addWidget(self.gl_image, 1)
        pictures.addWidget(self.gl_side, 1)
        lay.addLayout(pictures, 1)
        lay.addWidget(self.pick_info)
        self._show_gl(False)
        self.gl_box.toggled.connect(self._gl_toggled)
        self.view_box.currentTextChanged.connect(self.refresh)
        for box in self._probe_boxes():
            box.toggled.connect(self._overlay_toggled)
        self.scissor.toggled.connect(self.refresh)
        self.frame_map_box.toggled.connect(self._frame_map_toggled)
        self.save.clicked.connect(self._save)
        self.image.picked.connect(self._picked)
        self.snapshot: Snapshot | None = None
        self.probe: DrawProbe | None = None

    def _probe_boxes(self) -> tuple[QCheckBox, ...]:
        """The overlays computed from a probe of the current draw."""
        return (self.wire, self.overdraw, *self.fate_boxes.values())

    def _wants_probe(self) -> bool:
        return any(box.isChecked() for box in self._probe_boxes())

    @property
    def view(self) -> str:
        return self.view_box.currentText()

    def show_snapshot(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.probe = None
        self.refresh()
        if self._wants_probe():
            self.overlays_wanted.emit()
        if self.gl_box.isChecked():
            self._ask_gl()

    def _ask_gl(self) -> None:
        """Ask for the GL rendering; until it comes, the GL side counts the seconds (the first use starts EGL and
        compiles the GL programs, which can take a minute on a busy machine)."""
        self._gl_waiting = time.monotonic()
        self._gl_tick()
        self._gl_timer.start()
        self.backend_diff_wanted.emit()

    def _gl_tick(self) -> None:
        seconds = time.monotonic() - self._gl_waiting
        first = "" if self._gl_used else " (the first use starts EGL and compiles the GL programs)"
        self.gl_info.setText(f"rendering the draw with OpenGL … {seconds:.0f} s{first}")

    def _show_gl(self, on: bool) -> None:
        self.gl_side.setVisible(on)

    def _gl_toggled(self, on: bool) -> None:
        self._show_gl(on)
        if on:
            self.gl_diff = None
            self._ask_gl()
        else:
            self._gl_timer.stop()

    def set_backend_diff(self, diff: BackendDiff | None, error: str = "") -> None:
        """The current draw by both backends, or ``error`` (one line: no EGL, no draw yet)."""
        self.gl_diff = diff
        self._gl_timer.stop()
        self._gl_used = True
        if diff is None:
            self.gl_image.set_image(None)
            self.gl_info.setText(error)
            self.show_legend(self._drawn)
            return
        self.gl_info.setText("OpenGL: " + diff.summary())
        self.show_legend(self._drawn)
        self.gl_image.set_image(diff.gl[..., :3])
        self.gl_image.set_overlays([with_opacity(difference_overlay(diff), self.opacity.value())])

    def set_probe(self, probe: DrawProbe | None) -> None:
        self.probe = probe
        self.refresh()

    def show_frame_map(self) -> None:
        """Turn the whole-frame overlay on (its toggle asks for the map), or ask for it again when it is on."""
        if self.frame_map_box.isChecked():
            self.frame_map_wanted.emit()
        else:
            self.frame_map_box.setChecked(True)

    def _frame_map_toggled(self, on: bool) -> None:
        if on:
            self.frame_map = None
            self.frame_map_wanted.emit()
        self.refresh()

    def set_frame_map(self, counts: np.ndarray | None) -> None:
        """The frame's depth-complexity counts (H, W), row 0 = top."""
        self.frame_map = counts
        self.refresh()

    def _overlay_toggled(self) -> None:
        if self.probe is None and self._wants_probe():
            self.overlays_wanted.emit()
        self.refresh()

    def picture(self) -> np.ndarray | None:
        if self.snapshot is None:
            return None
        return view_picture(self.snapshot, self.view, self.lo.value(), self.hi.value())

    def refresh(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        pic = self.picture()
        self.image.set_image(pic)
        if pic is None:
            self.info.setText(snap.errors.get(self.view, f"no {self.view} image"))
            return
        self.info.setText(snap.fb_text if self.view in TARGET_VIEWS else f"{self.view} screen (LCD output)")
        overlays, rects, names = [], [], []
        if self.view in TARGET_VIEWS:
            if self.probe is not None and self.probe.edges.shape == pic.shape[:2]:
                if self.overdraw.isChecked():
                    overlays.append(overdraw_overlay(self.probe))
                    names.append("overdraw")
                for fate, box in self.fate_boxes.items():
                    if box.isChecked():
                        overlays.append(fate_overlay(self.probe, fate))
                        names.append(box.text())
                if self.wire.isChecked():
                    overlays.append(wireframe_overlay(self.probe))
                    names.append("wireframe")
            if self.frame_map_box.isChecked() and self.frame_map is not None and self.frame_map.shape == pic.shape[:2]:
                overlays.append(count_overlay(self.frame_map))
                names.append("frame complexity")
            if self.scissor.isChecked():
                mode, rect = scissor_rect(snap.regs, pic.shape[0])
                rects = [rect] if rect else []
                names += ["scissor"] if rect else []
                self.info.setText(self.info.text() + f"; scissor {mode}")
        self.image.set_overlays([with_opacity(o, self.opacity.value()) for o in overlays], rects)
        self._drawn = names
        self.show_legend(names)

    def show_legend(self, names: list[str]) -> None:
        """The legend line of the overlays ``names`` drawn now (and of the GL difference when it is shown)."""
        if self.gl_box.isChecked() and self.gl_diff is not None:
            names = [*names, "GL difference"]
        self.legend_names = names
        self.legend.setText(legend_html(names))
        self.legend.setVisible(bool(names))

    def describe_pixel(self, column: int, row: int) -> str:
        snap = self.snapshot
        img = snap.images
        h = img["color"].shape[0] if "color" in img else 0
        if self.view not in TARGET_VIEWS:
            r, g, b = (int(v) for v in img[self.view][row, column])
            return f"{self.view} screen column {column} row {row}: RGB ({r}, {g}, {b})"
        parts = [f"window x={column} y={h - 1 - row}"]
        if "color" in img:
            parts.append("RGBA ({}, {}, {}, {})".format(*(int(v) for v in img["color"][row, column])))
        if "depth" in img:
            d = int(img["depth"][row, column])
            parts.append(f"depth 0x{d:06X} ({d / DEPTH_MAX:.6f})")
        if "stencil" in img:
            parts.append(f"stencil {int(img['stencil'][row, column])}")
        if self.probe is not None and self.probe.overdraw.shape[0] > row:
            counts = self.probe.fates[:, row, column]
            killed = ", ".join(
                f"{int(counts[f])} {f.name.lower()}-killed" for f in Fate if f is not Fate.WRITTEN and counts[f]
            )
            parts.append(f"draw {self.probe.draw}: {int(counts.sum())} fragments" + (f" ({killed})" if killed else ""))
        return ", ".join(parts)

    def _picked(self, column: int, row: int) -> None:
        if self.snapshot is None:
            return
        self.pick_info.setText(self.describe_pixel(column, row))
        if self.view in TARGET_VIEWS and "color" in self.snapshot.images:
            self.pixel_picked.emit(column, self.snapshot.images["color"].shape[0] - 1 - row)
        elif self.view not in TARGET_VIEWS:
            self.screen_picked.emit(self.view, column, row)

    def _save(self) -> None:
        pic = self.picture()
        if pic is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save PNG", f"{self.view}.png", "PNG (*.png)")
        if path:
            save_png(pic, path)
