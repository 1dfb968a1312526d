"""The surface viewer and fragment debugger in the Qt window (pytest-qt, offscreen): the hand-built scene of
tests/test_debug_fragment.py, whose per-stage values are worked out there by hand; surfaces against the pictures
the engine and the LCD give. Screenshots of both views land in ``tmp_path`` (and in $PICAEMU_SHOTS when set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.main_window import MainWindow
from picaemu.gui.panels.pixel_history import HEADERS
from PySide6.QtCore import Qt

from picaemu.gx.lcd import lcd_to_memory
from tests.test_debug_fragment import PIXEL, build
from tests.test_gui_window import WAIT_MS, open_scene, settle, window  # noqa: F401 (the window fixture)

pytestmark = pytest.mark.gui
WINDOW = (74, 264)  # PIXEL in window coordinates (y up)


def _shot(widget, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    assert widget.grab().save(str(path)) and path.stat().st_size > 1000
    if os.environ.get("PICAEMU_SHOTS"):
        shutil.copy(path, Path(os.environ["PICAEMU_SHOTS"]) / path.name)


def _cell(model, row: int, header: str) -> str:
    return model.index(row, HEADERS.index(header)).data()


def test_history_rows_debug_a_fragment_and_go_to_its_draw(
    qtbot,
    qtmodeltester,
    window: MainWindow,  # noqa: F811
    tmp_path: Path,
) -> None:
    open_scene(qtbot, window, build(tmp_path))
    hist, frag = window.history, window.inspectors.fragment
    window.pick_pixel(*WINDOW)
    qtbot.waitUntil(lambda: len(hist.model.rows) == 4, timeout=WAIT_MS)
    assert [_cell(hist.model, r, "Fate") for r in range(4)] == ["written", "written", "depth test", "stencil test"]
    assert _cell(hist.model, 1, "Color before") == "(255, 0, 0, 255)"
    assert _cell(hist.model, 1, "Depth before") == "0.750000" and _cell(hist.model, 1, "Depth after") == "0.900000"
    assert _cell(hist.model, 2, "Depth before") == _cell(hist.model, 2, "Depth after") == "0.900000"
    qtmodeltester.check(hist.model, force_py=True)
    hist.view.selectRow(1)
    qtbot.mouseClick(hist.debug, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: frag.model.rowCount() > 0, timeout=WAIT_MS)
    settle(qtbot, window)
    tree = {frag.model.index(r, 0).data(): frag.model.index(r, 0) for r in range(frag.model.rowCount())}
    assert list(tree)[:5] == ["fragment", "texture 0", "TEV stage 0", "TEV stage 1", "TEV stage 2"]

    def values(section: str) -> dict[str, str]:
        parent = tree[section]
        return {
            frag.model.index(r, 0, parent).data(): frag.model.index(r, 1, parent).data()
            for r in range(frag.model.rowCount(parent))
        }

    assert values("texture 0")["texel"] == "(112, 144, 100, 223)"
    assert values("TEV stage 1")["rgb 1: constant"] == "(55, 155, 205)"
    assert values("TEV stage 2")["output"] == "(101, 235, 200, 255)"
    assert values("depth test")["result"] == "passed" and values("stencil test")["stored"] == "5"
    assert "draw 1" in frag.label.text() and "written (compiled route)" in frag.label.text()
    assert values("fragment")["route"] == "compiled"
    assert values("fragment")["per-stage values"] == "the readable reference, which agrees with the route"
    qtmodeltester.check(frag.model, force_py=True)
    _shot(frag, tmp_path, "fragment_panel")
    hist.view.selectRow(2)  # the depth-killed fragment of draw 2: its failed test is highlighted
    qtbot.mouseClick(hist.debug, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "draw 2" in frag.label.text(), timeout=WAIT_MS)
    depth = next(
        frag.model.index(r, 0) for r in range(frag.model.rowCount()) if frag.model.index(r, 0).data() == "depth test"
    )
    assert frag.model.data(depth, Qt.ItemDataRole.BackgroundRole) is not None
    frag.view.scrollTo(depth)
    frag.resize(900, 700)
    _shot(frag, tmp_path, "fragment_depth_failed")
    hist.view.resizeColumnsToContents()
    hist.resize(1500, 200)
    _shot(hist, tmp_path, "pixel_history")
    index = hist.model.index(2, 0)
    hist.view.doubleClicked.emit(index)  # what a double-click on the row does
    qtbot.waitUntil(lambda: window.snapshot.last_draw == 2, timeout=WAIT_MS)
    settle(qtbot, window)
    assert window.snapshot.cursor == window.timeline.after_draw(2)


def test_surface_viewer_render_target_both_orientations(
    qtbot,
    window: MainWindow,  # noqa: F811
    tmp_path: Path,
) -> None:
    open_scene(qtbot, window, build(tmp_path))
    panel = window.inspectors.surface
    window.docks["Surface"].raise_()
    qtbot.waitUntil(lambda: panel.targets is not None, timeout=WAIT_MS)
    qtbot.mouseClick(panel.color_target, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.surface is not None, timeout=WAIT_MS)
    settle(qtbot, window)
    s = panel.surface
    assert (s.format, s.width, s.height, s.tiled) == ("RGBA8", 240, 400, True)
    assert panel.lcd.isChecked() and panel.image.image.shape == (240, 400, 4)
    assert panel.channels["r"].isEnabled() and not panel.plane.isEnabled()  # a color surface: no depth controls
    color = window.framebuffer.snapshot.images["color"]  # the framebuffer view's picture, GPU orientation
    np.testing.assert_array_equal(np.rot90(color[..., :3]), panel.image.image[..., :3])
    # a pick in LCD orientation names the memory pixel it shows, and that pixel maps back to where it was picked
    shown = (135, 240 - 1 - 74)  # PNG (74, 135): memory row 135 = screen column 135, its pixel 74 from the bottom
    assert lcd_to_memory(*shown, 240) == PIXEL
    panel.image.pick(*shown)
    assert f"memory pixel {PIXEL}" in panel.pick_label.text()
    assert panel.show_memory_pixel(*PIXEL) == shown and panel.image.mark == shown
    panel.image.mark = None  # forget the mark, then pick the same pixel in the framebuffer view
    window.framebuffer.image.pick(*PIXEL)  # the framebuffer view (GPU orientation, row 0 = top) -> window (74, 264)
    assert panel.image.mark == shown
    assert f"shown {shown} = memory pixel {PIXEL} = window {WINDOW}" in panel.pick_label.text()
    panel.image.hovered.emit(0, 239)  # the LCD's bottom-left corner shows memory pixel 0 of row 0
    assert "memory pixel (0, 0) = window (0, 399): raw 0x" in panel.hover.text()
    _shot(panel, tmp_path, "surface_color_lcd")
    panel.lcd.setChecked(False)
    assert panel.image.image.shape == (400, 240, 4)
    panel.image.pick(*PIXEL)
    assert f"memory pixel {PIXEL} = window {WINDOW}: raw 0x" in panel.pick_label.text()
    assert f"RGBA {tuple(int(v) for v in color[PIXEL[1], PIXEL[0]])}" in panel.pick_label.text()
    for c in "rgb":
        panel.channels[c].setChecked(c == "g")  # green alone: grey
    assert (panel.image.image[..., 0] == color[..., 1]).all()
    panel.zoom.setCurrentText("4x")
    assert panel.image.zoom == 4.0
    qtbot.mouseClick(panel.depth_target, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.surface is not None and panel.surface.format == "D24S8", timeout=WAIT_MS)
    settle(qtbot, window)
    assert panel.plane.isEnabled() and not panel.channels["r"].isEnabled()
    # auto range: the clear (0) .. draw 1 (0.9); draw 3, nearer, failed the stencil test
    assert panel.auto.isChecked() and panel.lo.value() == 0.0 and panel.hi.value() == pytest.approx(0.9, abs=1e-4)
    panel.lcd.setChecked(False)
    assert panel.zoom.currentText() == "fit"  # the turned picture was refitted
    panel.image.pick(*PIXEL)
    assert "depth 0.900000" in panel.pick_label.text() and "stencil 5" in panel.pick_label.text()
    panel.plane.setCurrentText("stencil")
    assert panel.hi.value() == 5.0
    _shot(panel, tmp_path, "surface_stencil")
    panel.format.setCurrentText("ETC1")
    panel.tiled.setChecked(False)
    qtbot.mouseClick(panel.decode, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.surface is None, timeout=WAIT_MS)
    assert "no linear ETC" in panel.info.text()
