"""Mesh view: the current draw's vertex-loader inputs (v0-v15 per loaded vertex, or per submitted vertex of an
immediate-mode draw), vertex-shader outputs (o0-o15), geometry-shader outputs (o0-o15 of every EMIT, with the
triangles they form) when the draw uses a GS, and triangles before / after clipping, with a simple rotatable 3D
view (orthographic, QPainter) of the clip-space triangles (x / w, y / w, z / w), framed on the draw."""

from __future__ import annotations

import numpy as np
from picaemu.gui.models.table import TableModel, compact
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QLabel, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget

from picaemu.debug.state_views import DrawVertices


def _vec(v) -> str:
    return "(" + ", ".join(f"{x:.4g}" for x in v) + ")"


def _rows(indices: np.ndarray, regs: np.ndarray) -> tuple:
    return tuple((int(i), r) for i, r in zip(indices, regs, strict=True))


def _cell(row: tuple, c: int) -> str:
    return str(row[0]) if c == 0 else _vec(row[1][c - 1])


FILL = 0.9  # share of the 3D view the draw's bounds fill


class MeshView3D(QWidget):
    """Orthographic view of (T, 3, 4) clip-space triangles, framed on them (a sprite of a few pixels fills the view
    as a full-screen mesh does); drag to rotate."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMinimumSize(160, 160)
        self.tris = np.zeros((0, 3, 4), np.float32)
        self.yaw, self.pitch = 0.0, 0.0
        self._last: QPointF | None = None

    def set_triangles(self, tris: np.ndarray) -> None:
        self.tris = np.asarray(tris, np.float32)
        self.update()

    def rotated(self) -> np.ndarray:
        """(T, 3, 2) points of the triangles after the divide by w and the view rotation (x right, y up)."""
        if not len(self.tris):
            return np.zeros((0, 3, 2))
        w = np.where(np.abs(self.tris[..., 3:4]) > 1e-12, self.tris[..., 3:4], 1.0)
        p = self.tris[..., :3] / w
        cy, sy, cp, sp = np.cos(self.yaw), np.sin(self.yaw), np.cos(self.pitch), np.sin(self.pitch)
        x = p[..., 0] * cy + p[..., 2] * sy
        z = -p[..., 0] * sy + p[..., 2] * cy
        y = p[..., 1] * cp - z * sp
        return np.stack([x, y], axis=-1)

    def projected(self) -> np.ndarray:
        """(T, 3, 2) widget points: the draw framed, its rotated bounds filling ``FILL`` of the view, centred."""
        pts = self.rotated()
        finite = pts[np.isfinite(pts).all(axis=-1)]
        if not len(finite):
            return pts
        lo, hi = finite.min(axis=0), finite.max(axis=0)
        centre, extent = (lo + hi) / 2, max(float((hi - lo).max()), 1e-6)
        scale = FILL * min(self.width(), self.height()) / extent
        x = self.width() / 2 + (pts[..., 0] - centre[0]) * scale
        y = self.height() / 2 - (pts[..., 1] - centre[1]) * scale
        return np.stack([x, y], axis=-1)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(30, 30, 36))
        pen = QPen(QColor(0, 230, 120))
        p.setPen(pen)
        for tri in self.projected():
            p.drawPolygon(QPolygonF([QPointF(float(a), float(b)) for a, b in tri]))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._last = event.position()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._last is not None and event.buttons() & Qt.MouseButton.LeftButton:
            d = event.position() - self._last
            self.yaw += d.x() * 0.01
            self.pitch += d.y() * 0.01
            self._last = event.position()
            self.update()


class MeshPanel(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        heads = ("Vertex", *(f"{p}{i}" for p in "v" for i in range(16)))
        self.inputs = TableModel(heads, _cell, parent=self)
        self.outputs = TableModel(("Vertex", *(f"o{i}" for i in range(16))), _cell, parent=self)
        self.gs_outputs = TableModel(("Emit", *(f"o{i}" for i in range(16))), _cell, parent=self)
        self.clipped = TableModel(("Triangle", "v0", "v1", "v2"), _cell, parent=self)
        self.view3d = MeshView3D()
        self.label = QLabel("select a draw")
        self.label.setWordWrap(True)
        tabs = QTabWidget()
        for model, title in (
            (self.inputs, "loader inputs"),
            (self.outputs, "VS outputs"),
            (self.gs_outputs, "GS outputs"),
            (self.clipped, "post-clip positions"),
        ):
            view = QTableView()
            compact(view)
            view.setModel(model)
            tabs.addTab(view, title)
        split = QSplitter()
        split.addWidget(tabs)
        split.addWidget(self.view3d)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.label)
        lay.addWidget(split, 1)

    def show_vertices(self, draw: int, dv: DrawVertices) -> None:
        self.inputs.set_rows(_rows(dv.indices, dv.inputs))
        self.outputs.set_rows(_rows(dv.indices, dv.outputs))
        gs = dv.gs_outputs if dv.gs_outputs is not None else np.zeros((0, 16, 4), np.float32)
        self.gs_outputs.set_rows(_rows(np.arange(len(gs)), gs))
        self.clipped.set_rows(_rows(np.arange(len(dv.clipped)), dv.clipped))
        self.view3d.set_triangles(dv.triangles)
        gs_note = (
            f", GS: {dv.gs_invocations} invocations emitted {len(gs)} vertices" if dv.gs_outputs is not None else ""
        )
        self.label.setText(
            f"draw {draw}: {len(dv.indices)} unique vertices, {len(dv.order)} in the stream{gs_note}, "
            f"{len(dv.triangles)} triangles, {len(dv.clipped)} after clipping"
        )

    def show_message(self, text: str) -> None:
        self.label.setText(text)
        for m in (self.inputs, self.outputs, self.gs_outputs, self.clipped):
            m.set_rows(())
        self.view3d.set_triangles(np.zeros((0, 3, 4), np.float32))
