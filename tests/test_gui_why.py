"""The debugger's "Why?" panel (pytest-qt, offscreen): on the stencil sample, whose first draw writes the stencil
buffer only (DEPTH_COLOR_MASK writes no channel), the button on the selected draw shows the same answer as
``picaemu why``: the verdict, the detail and the stage table, the deciding stage highlighted; the menu action asks
for the current draw. Screenshots go to ``PICAEMU_SHOTS`` (default: the test's tmp_path)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.panels.why import DECIDED, WhyPanel
from PySide6.QtCore import Qt

from picaemu.debug import replay as drp
from picaemu.debug.why import STAGES
from tests import test_gui_window
from tests.test_gui_find import shots
from tests.test_gui_window import WAIT_MS, open_scene, settle

pytestmark = pytest.mark.gui
window = test_gui_window.window
STENCIL = Path(__file__).resolve().parent.parent / "samples" / "captures" / "stencil.pica"


def table_rows(panel) -> list[tuple[str, ...]]:
    t = panel.table
    return [tuple(t.item(r, c).text() for c in range(t.columnCount())) for r in range(t.rowCount())]


def test_why_button_on_the_selected_draw(qtbot, window, tmp_path: Path) -> None:
    open_scene(qtbot, window, STENCIL)
    window.run_to_draw(0)
    settle(qtbot, window)
    panel = window.inspectors.why
    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() > 0, timeout=WAIT_MS)
    replay = drp.open(STENCIL)
    expected = replay.debugger.why(0)
    assert panel.verdict.text() == "<b>draw 0 (frame 0): color-mask</b>"
    assert panel.detail.text() == expected.detail
    assert table_rows(panel) == [(s.stage, str(s.into), str(s.out), s.unit) for s in expected.stages]
    assert [r[0] for r in table_rows(panel)] == list(STAGES)
    row = list(STAGES).index("color write mask")
    assert panel.table.item(row, 0).background().color() == DECIDED
    assert panel.table.item(row - 1, 0).background().color() != DECIDED
    window.docks["Why?"].raise_()
    settle(qtbot, window)
    shot = shots(tmp_path) / "why_panel.png"
    assert window.grab().save(str(shot)) and shot.stat().st_size > 1000
    alone = WhyPanel()  # the picture of docs/images/gui_why.png: the same answer in a panel of its own
    qtbot.addWidget(alone)
    alone.resize(760, 430)
    alone.show_why(expected)
    alone.show()
    shot = shots(tmp_path) / "why_panel_only.png"
    assert alone.grab().save(str(shot)) and shot.stat().st_size > 1000


def test_why_menu_action_asks_for_the_current_draw(qtbot, window) -> None:
    open_scene(qtbot, window, STENCIL)
    window.run_to_draw(2)
    settle(qtbot, window)
    panel = window.inspectors.why
    window.actions_by_text["Why? (current draw)"].trigger()
    qtbot.waitUntil(lambda: "draw 2" in panel.verdict.text(), timeout=WAIT_MS)
    assert panel.verdict.text() == "<b>draw 2 (frame 0): visible</b>"
    assert all(panel.table.item(r, 0).background().color() != DECIDED for r in range(panel.table.rowCount()))
