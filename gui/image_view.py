"""``ImageView``: a zoomable, pannable picture of a numpy image with pixel picking and overlays (QPainter, no GL).

``set_image(rgb)`` takes (H, W, 3|4) uint8 (copied into a QImage); ``set_overlays(images, rects)`` draws (H, W, 4)
uint8 RGBA layers and (x, y, w, h) rectangles in image pixels on top. Wheel zooms about the mouse (nearest
neighbour), left-drag pans, a click emits ``picked(column, row)`` in image pixels (row 0 = top) and marks it;
moving the mouse over the picture emits ``hovered(column, row)``. ``set_zoom(z)`` zooms about the view's centre.
``to_qimage`` / ``save_png`` are shared with the other panels.
"""

from __future__ import annotations

import numpy as np
from picaemu.formats.files import save_image
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QWidget

ZOOM_STEP = 1.25
MIN_ZOOM, MAX_ZOOM = 0.125, 64.0
RECT_RGB = (255, 220, 0)  # outline of the rectangles drawn over the picture (the scissor box)
MARK_RGB = (255, 0, 255)  # outline of the picked pixel


def to_qimage(img: np.ndarray) -> QImage:
    """(H, W, 3|4) uint8 -> an owning QImage (RGB888 / RGBA8888)."""
    img = np.ascontiguousarray(img, np.uint8)
    h, w = img.shape[:2]
    fmt = QImage.Format.Format_RGBA8888 if img.shape[2] == 4 else QImage.Format.Format_RGB888
    return QImage(img.data, w, h, img.strides[0], fmt).copy()


def save_png(img: np.ndarray, path: str) -> None:
    """Write ``img`` (H, W, 3|4) uint8 as a picture by the suffix of ``path``, atomically (``files.save_image``)."""
    save_image(path, img)


class ImageView(QWidget):
    picked = Signal(int, int)
    hovered = Signal(int, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMinimumSize(120, 80)  # small enough for a picture in a dock of the 1366x768 default layout
        self.setMouseTracking(True)
        self.image: np.ndarray | None = None
        self._qimage: QImage | None = None
        self._overlays: list[QImage] = []
        self._rects: list[tuple[int, int, int, int]] = []
        self.zoom = 1.0
        self.offset = QPointF(0, 0)
        self.mark: tuple[int, int] | None = None
        self._drag: QPoint | None = None
        self._moved = False
        self._auto_fit = True  # refit on resize until the user zooms or pans

    def set_image(self, img: np.ndarray | None, *, fit: bool = False) -> None:
        first = self.image is None or img is None or self.image.shape[:2] != img.shape[:2]
        self.image = None if img is None else np.ascontiguousarray(img)
        self._qimage = None if img is None else to_qimage(img)
        if (first or fit) and img is not None:
            self.fit()
        self.update()

    def set_overlays(self, images: list[np.ndarray], rects: list[tuple[int, int, int, int]] = ()) -> None:
        self._overlays = [to_qimage(i) for i in images]
        self._rects = list(rects)
        self.update()

    def fit(self) -> None:
        self._auto_fit = True
        if self.image is None:
            return
        h, w = self.image.shape[:2]
        self.zoom = max(MIN_ZOOM, min(self.width() / w, self.height() / h, MAX_ZOOM))
        self.offset = QPointF((self.width() - w * self.zoom) / 2, (self.height() - h * self.zoom) / 2)
        self.update()

    def image_pos(self, pos: QPointF) -> tuple[int, int] | None:
        if self.image is None:
            return None
        x = int((pos.x() - self.offset.x()) // self.zoom)
        y = int((pos.y() - self.offset.y()) // self.zoom)
        h, w = self.image.shape[:2]
        return (x, y) if 0 <= x < w and 0 <= y < h else None

    def pick(self, column: int, row: int) -> None:
        self.mark = (column, row)
        self.update()
        self.picked.emit(column, row)

    # -- events ------------------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(40, 40, 48))
        if self._qimage is None:
            p.setPen(QColor(200, 200, 200))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no image")
            return
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        p.translate(self.offset)
        p.scale(self.zoom, self.zoom)
        p.drawImage(0, 0, self._qimage)
        for ov in self._overlays:
            p.drawImage(0, 0, ov)
        pen = QPen(QColor(*RECT_RGB))
        pen.setCosmetic(True)
        p.setPen(pen)
        for x, y, w, h in self._rects:
            p.drawRect(QRectF(x, y, w, h))
        if self.mark is not None:
            pen.setColor(QColor(*MARK_RGB))
            p.setPen(pen)
            p.drawRect(QRectF(self.mark[0], self.mark[1], 1, 1))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._auto_fit:
            self.fit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        self._auto_fit = False
        factor = ZOOM_STEP if event.angleDelta().y() > 0 else 1 / ZOOM_STEP
        new = max(MIN_ZOOM, min(MAX_ZOOM, self.zoom * factor))
        pos = event.position()
        self.offset = pos - (pos - self.offset) * (new / self.zoom)
        self.zoom = new
        self.update()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag, self._moved = event.position().toPoint(), False

    def set_zoom(self, zoom: float) -> None:
        """Zoom to ``zoom`` screen pixels per image pixel about the view's centre (stops refitting on resize)."""
        self._auto_fit = False
        new = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        centre = QPointF(self.width() / 2, self.height() / 2)
        self.offset = centre - (centre - self.offset) * (new / self.zoom)
        self.zoom = new
        self.update()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag is None and (where := self.image_pos(event.position())) is not None:
            self.hovered.emit(*where)
        if self._drag is not None:
            delta = event.position().toPoint() - self._drag
            if delta.manhattanLength() > 2 or self._moved:
                self._moved, self._auto_fit = True, False
                self.offset += QPointF(delta)
                self._drag = event.position().toPoint()
                self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag is not None and not self._moved:
            where = self.image_pos(event.position())
            if where is not None:
                self.pick(*where)
        self._drag = None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        self.fit()
