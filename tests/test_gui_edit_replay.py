"""The Edit and replay panel in a real event loop (pytest-qt): edits from the registers and shader panels, the
replay on the worker, original | edited | diff, revert — on the hand-built scene of tests/test_edit_replay.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica
from picaemu.gui.main_window import MainWindow

from picaemu.debug.timeline import Cursor
from tests.test_edit_replay import BLUE, HIDDEN, HIDDEN_AREA, SIDE_AREA, VS_YELLOW, landscape, rgba, scene_capture
from tests.test_gui_window import WAIT_MS, goto, open_scene, settle, window  # noqa: F401 (the fixture)

pytestmark = pytest.mark.gui


def replayed(qtbot, win: MainWindow) -> None:
    panel = win.edit_replay
    qtbot.waitUntil(
        lambda: panel.result is not None or panel.summary.text().startswith("replay failed"), timeout=WAIT_MS
    )
    settle(qtbot, win)


@pytest.fixture
def opened(qtbot, window: MainWindow, tmp_path: Path) -> MainWindow:  # noqa: F811
    path = tmp_path / "edit_scene.pica"
    pica.write(path, scene_capture())
    open_scene(qtbot, window, path)
    tl = window.timeline
    goto(qtbot, window, Cursor(tl.draws[1].event, tl.draws[1].packet + 1))  # right after draw 1, the hidden rect
    return window


def test_register_edit_from_the_registers_panel(qtbot, opened: MainWindow, tmp_path: Path) -> None:
    win, panel = opened, opened.edit_replay
    assert panel.draw == 1
    model = win.registers.model
    reg = model.find("DEPTH_COLOR_MASK")
    row = next(r for r in range(model.rowCount(reg)) if model.index(r, 0, reg).data() == "depth_func")
    win.registers.view.setCurrentIndex(model.index(row, 0, reg))
    assert win.registers.edit_selected() == "GPUREG_DEPTH_COLOR_MASK.depth_func=greater"
    assert panel.line.text() == "GPUREG_DEPTH_COLOR_MASK.depth_func=greater"
    panel.line.setText(panel.line.text().replace("greater", "always"))
    panel.add.click()
    assert panel.edits.count() == 1
    panel.replay.click()
    replayed(qtbot, win)
    result = panel.result
    assert result.changed_pixels == HIDDEN_AREA
    assert result.stats_edited["fragments_written"] - result.stats_original["fragments_written"] == HIDDEN_AREA
    assert (landscape(result.edited, HIDDEN) == rgba(BLUE)).all()
    assert f"{HIDDEN_AREA} pixels changed" in panel.summary.text()
    for name in ("original", "edited", "diff"):
        assert panel.views[name].image is not None
    shot = tmp_path / "gui_edit_replay.png"
    assert panel.grab().save(str(shot)) and shot.stat().st_size > 1000
    panel.revert.click()
    assert panel.edits.count() == 0 and panel.result is None and panel.views["edited"].image is None


def test_shader_edit_from_the_shader_panel(qtbot, opened: MainWindow) -> None:
    win, panel = opened, opened.edit_replay
    win.shader.edit_source.click()
    qtbot.waitUntil(lambda: "mov o1, c4" in panel.source.toPlainText(), timeout=WAIT_MS)
    panel.source.setPlainText(VS_YELLOW)
    assert panel.add_shader.isEnabled() and panel.add_shader_edit()
    panel.add_edit("c4=(1, 1, 1, 1)")  # besides: ignored by the yellow program, kept by the list
    panel.scope.setCurrentIndex(0)  # from this draw on: draw 2 (the side rect) turns yellow as well
    panel.replay.click()
    replayed(qtbot, win)
    assert panel.result.changed_pixels == SIDE_AREA  # draw 1 stays hidden; draw 2 was green
    assert [type(e).__name__ for e in panel.result.edits] == ["ShaderEdit", "UniformEdit"]


def test_bad_edits_are_named_in_the_panel(qtbot, opened: MainWindow) -> None:
    panel = opened.edit_replay
    assert not panel.add_edit("DEPTH_COLOR_MASK.depth_func=sometimes")
    assert "is not one of" in panel.summary.text() and panel.edits.count() == 0
    panel.source.setPlainText(".proc main\n    frobnicate o0\n.end\n")
    assert not panel.add_shader_edit() and "vs shader" in panel.summary.text()
    assert not panel.request() and "add an edit first" in panel.summary.text()
    assert np.all(panel.views["diff"].image is None)


def find_row(model, path: str, parent=None):
    """The index of the pipeline-state row at dotted ``path``."""
    from PySide6.QtCore import QModelIndex

    index = parent or QModelIndex()
    for key in path.split("."):
        index = next(
            model.index(r, 0, index) for r in range(model.rowCount(index)) if model.index(r, 0, index).data() == key
        )
    return index


def test_pipeline_state_rows_propose_edits(qtbot, opened: MainWindow) -> None:
    win, panel = opened, opened.edit_replay
    state = win.pipeline_state
    qtbot.waitUntil(lambda: state.draw == 1, timeout=WAIT_MS)
    state.view.setCurrentIndex(find_row(state.model, "depth_stencil.depth_func"))
    assert state.edit_selected() == ("depth_stencil.depth_func", "6")
    assert panel.line.text() == "GPUREG_DEPTH_COLOR_MASK.depth_func=greater"
    state.view.setCurrentIndex(find_row(state.model, "vs_uniforms.float_uniforms.c4"))
    state.edit_selected()
    assert panel.line.text() == "vs.c4=(0.0, 0.0, 1.0, 1.0)"  # draw 1's blue
    state.view.setCurrentIndex(find_row(state.model, "depth_stencil"))
    assert state.edit_selected() is None  # a stage part, not a value
