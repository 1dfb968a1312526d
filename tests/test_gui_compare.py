"""A/B comparisons in the Qt window (pytest-qt, offscreen): the pipeline-state panel's diff against any chosen draw
with uniforms, textures and shaders (bug B2: "Diff A → here" between draws 499 and 500 of the 1000-cube scene
listed registers only and missed the model matrix c4-c7), its highlights against a chosen draw A, and two captures
side by side at the first draw where they part. Screenshots land in ``tmp_path`` (and $PICAEMU_SHOTS when set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.formats import pica
from picaemu.gui.main_window import MainWindow
from PySide6.QtCore import QSettings

from samples.generate import CAPTURES
from tests.test_capture_diff import scene
from tests.test_gui_window import WAIT_MS, goto, open_scene, settle, window  # noqa: F401 (the window fixture)

pytestmark = pytest.mark.gui


def _shot(widget, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    assert widget.grab().save(str(path)) and path.stat().st_size > 1000
    if os.environ.get("PICAEMU_SHOTS"):
        shutil.copy(path, Path(os.environ["PICAEMU_SHOTS"]) / path.name)
    return path


def test_register_diff_a_to_here_shows_the_uniforms_too(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    open_scene(qtbot, window, CAPTURES / "game_cubes_1000.pica")
    goto(qtbot, window, window.timeline.after_draw(499))
    window.registers.mark.click()
    goto(qtbot, window, window.timeline.after_draw(500))
    panel = window.pipeline_state
    window.registers.diff.click()
    qtbot.waitUntil(lambda: panel.difference is not None, timeout=WAIT_MS)
    settle(qtbot, window)
    diff = panel.difference
    assert {"c4", "c6"} <= set(diff["uniforms"]["vs"])  # the model matrix moved the cube
    assert diff["uniforms"]["vs"]["c4"]["a"] != diff["uniforms"]["vs"]["c4"]["b"]
    assert "draw 499 → draw 500: 2 registers, 3 uniforms, 1 textures" in panel.diff_label.text()
    assert "Pipeline state" in window.registers.info.text()
    rows = [panel.diff_model.index(r, 0).data() for r in range(panel.diff_model.rowCount())]
    assert "uniforms" in rows
    _shot(panel, tmp_path, "pipeline_state_diff")


def test_pipeline_state_compares_with_any_draw(qtbot, window: MainWindow) -> None:  # noqa: F811
    """Draw 4 of the 300-cube scene against draw 0 (A chosen in the panel): the highlights and the structured
    difference both take A; the texture rebinds every 4 draws with the same picture (same content hash)."""
    open_scene(qtbot, window, CAPTURES / "game_cubes_300.pica")
    goto(qtbot, window, window.timeline.after_draw(4))
    panel = window.pipeline_state
    assert panel.since == 3 and "differ from draw 3" in panel.label.text()
    panel.base.setValue(0)
    qtbot.waitUntil(lambda: panel.since == 0, timeout=WAIT_MS)
    assert "differ from draw 0" in panel.label.text() and "texture0" in panel.changed
    assert panel.ask_diff() == 0
    qtbot.waitUntil(lambda: "draw 0 → draw 4" in panel.diff_label.text(), timeout=WAIT_MS)
    diff = panel.difference
    unit0 = diff["textures"]["0"]
    assert unit0["changed"] == ["addresses"] and unit0["a"]["hash"] == unit0["b"]["hash"]
    assert "c4" in diff["uniforms"]["vs"] and "shaders" not in diff
    panel.base.setValue(panel.base.minimum())  # back to "previous draw"
    qtbot.waitUntil(lambda: panel.since == 3, timeout=WAIT_MS)


def test_two_captures_side_by_side_at_the_first_differing_draw(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    a, b = tmp_path / "a.pica", tmp_path / "b.pica"
    pica.write(a, scene())
    pica.write(b, scene(shift_at=6))
    open_scene(qtbot, window, a)
    comparisons = window.comparisons
    comparisons.compare_with(str(b))
    qtbot.waitUntil(lambda: comparisons.partner is not None, timeout=WAIT_MS)
    partner = comparisons.partner
    assert isinstance(partner, MainWindow)
    try:
        qtbot.waitUntil(lambda: partner.snapshot is not None and partner.snapshot.last_draw == 6, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: window.snapshot.last_draw == 6, timeout=WAIT_MS)
        settle(qtbot, window)
        settle(qtbot, partner)
        assert "a.pica vs b.pica: first differing draw: draw 6" in window.windowTitle()
        assert set(window.pipeline_state.difference) == {"uniforms"}
        assert "a.pica draw 6 → b.pica draw 6" in window.pipeline_state.diff_label.text()
        assert partner.path == str(b) and partner.x() > window.x() + window.width() // 2  # B on the right
        assert comparisons.result is not None and comparisons.result.pixels["color"]["count"] == 80
        _shot(window, tmp_path, "compare_a")
        _shot(partner, tmp_path, "compare_b")
    finally:
        partner.worker.stop()
        partner.close()


def test_equal_captures_say_so(qtbot, tmp_path: Path) -> None:
    a = tmp_path / "a.pica"
    pica.write(a, scene())
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    try:
        open_scene(qtbot, win, a)
        win.comparisons.compare_with(str(a))
        qtbot.waitUntil(lambda: win.comparisons.result is not None, timeout=WAIT_MS)
        assert win.comparisons.result.equal and "a.pica vs a.pica: equal" in win.windowTitle()
        assert win.comparisons.partner is None and win.pipeline_state.difference == {}
    finally:
        win.worker.stop()
