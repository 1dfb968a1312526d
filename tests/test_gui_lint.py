"""The Lint dock (pytest-qt, offscreen): a capture with an out-of-memory draw and a uniform upload past c95 is
linted once it opens; the table passes the model tester; clicking a finding runs the window to it and selects its
packet in the command stream. A screenshot goes to ``PICAEMU_SHOTS`` (default: the test's tmp_path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.formats import pica
from pytestqt.modeltest import ModelTester

from picaemu.lint import Severity
from tests import test_gui_window
from tests.test_gui_find import shots
from tests.test_gui_window import open_scene, settle
from tests.test_lint import finished, frame

pytestmark = pytest.mark.gui
window = test_gui_window.window


def hostile(tmp_path: Path) -> Path:
    def upload_past_c95(b) -> None:
        b.uniforms(94, np.ones((3, 4)))

    path = tmp_path / "hostile.pica"
    pica.write(path, finished(frame(upload_past_c95, draw=lambda b: b.draw(6))))
    return path


def click_row(qtbot, view, row: int) -> None:
    from PySide6.QtCore import Qt

    rect = view.visualRect(view.model().index(row, 2))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_lint_panel_rows_jump_to_the_packet(qtbot, window, tmp_path: Path) -> None:
    open_scene(qtbot, window, hostile(tmp_path))
    panel = window.finding.lint
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=test_gui_window.WAIT_MS)
    ModelTester(qtbot).check(panel.model)
    codes = [f.code for f, _ in panel.rows]
    assert {"attribute-out-of-memory", "uniform-index-overflow"} <= set(codes)
    assert "2 error(s)" in panel.label.text()
    window.docks["Lint"].raise_()
    window.docks["Lint"].show()
    for code in ("uniform-index-overflow", "attribute-out-of-memory"):
        row = codes.index(code)
        finding, cursor = panel.rows[row]
        assert finding.severity is Severity.ERROR
        click_row(qtbot, panel.view, row)
        settle(qtbot, window)
        assert window.snapshot.cursor == cursor
        selected = window.commands.view.currentIndex()
        assert selected.isValid() and selected == window.commands.model.locate(cursor)
        if code == "attribute-out-of-memory":
            assert window.snapshot.last_draw == finding.draw == 0
    panel.grab().save(str(shots(tmp_path) / "lint_panel.png"))
    window.grab().save(str(shots(tmp_path) / "lint_window.png"))


def test_run_button_relints(qtbot, window, tmp_path: Path) -> None:
    open_scene(qtbot, window, hostile(tmp_path))
    panel = window.finding.lint
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=test_gui_window.WAIT_MS)
    panel.clear()
    panel.run.click()
    qtbot.waitUntil(lambda: bool(panel.rows), timeout=test_gui_window.WAIT_MS)
    assert panel.label.text().startswith(f"{len(panel.rows)} finding(s)")
