"""Pixel history picked in whichever picture the framebuffer panel shows (pytest-qt, offscreen), on minicraft (both
screens, two render targets): a pick in a screen lists the fragments of the render target that screen shows, as
``Debugger.pixel_history(space="screen")`` gives them; a pick in the colour buffer those of the target at the
position, as ``space="buffer"`` gives them for the screen showing that target; the other target's draws never.
Screenshots land in ``tmp_path`` (and in $PICAEMU_SHOTS when set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.main_window import MainWindow

import picaemu
from picaemu.debug import history, pick
from picaemu.debug.screen_map import RenderTarget
from tests.test_gui_window import WAIT_MS, goto, open_scene, settle, window  # noqa: F401 (the window fixture)

pytestmark = pytest.mark.gui
GAME = Path(__file__).parent / "data" / "games" / "minicraft.pica"
TOP, BOTTOM = "0x18000000", "0x1805DC00"  # minicraft's two colour buffers


@pytest.fixture(scope="module")
def game():
    return picaemu.open(GAME)


def _click(qtbot, win: MainWindow, view: str, column: int, row: int) -> None:
    """A click on picture pixel (column, row) of ``view`` in the framebuffer panel, then the history's answer."""
    win.framebuffer.view_box.setCurrentText(view)
    win.history.model.set_rows(())
    win.framebuffer.image.picked.emit(column, row)  # what ImageView emits for a click there
    qtbot.waitUntil(lambda: win.worker.idle and bool(win.history.model.rows), timeout=WAIT_MS)
    settle(qtbot, win)


def _targets(win: MainWindow, game) -> set[str]:
    """The render targets the listed fragments' draws drew into."""
    session = game.debugger.session
    return {RenderTarget.of(pick.draw_target(session, f.draw)).as_dict()["address"] for f in win.history.model.rows}


def _rows(win: MainWindow) -> list[tuple]:
    return [(r.draw, r.fate, r.color_before, r.color_after, r.depth_before) for r in win.history.model.rows]


def _api(fragments) -> list[tuple]:
    return [(f.draw, f.fate, f.color_before, f.color_after, f.depth_before) for f in fragments]


def _shot(win: MainWindow, tmp_path: Path, name: str) -> None:
    win.docks["Pixel history"].raise_()
    path = tmp_path / f"{name}.png"
    assert win.grab().save(str(path)) and path.stat().st_size > 1000
    if os.environ.get("PICAEMU_SHOTS"):
        shutil.copy(path, Path(os.environ["PICAEMU_SHOTS"]) / path.name)


def test_picks_in_either_screen_and_the_buffer_list_only_that_target(
    qtbot,
    window: MainWindow,  # noqa: F811
    game,
    tmp_path: Path,
) -> None:
    open_scene(qtbot, window, GAME)
    goto(qtbot, window, window.timeline.end)
    hist = window.history
    for screen, (x, y), address in (("top", (200, 120), TOP), ("bottom", (160, 100), BOTTOM)):
        _click(qtbot, window, screen, x, y)
        assert _rows(window) == _api(game.pixel_history(x, y, space="screen", screen=screen))
        assert _targets(window, game) == {address}
        assert f"{screen} screen ({x}, {y})" in hist.label.text() and address[2:] in hist.label.text()
        _shot(window, tmp_path, f"history_{screen}_screen")
    # the colour buffer at the end: the target the registers name there, picked at PNG (column, row)
    fb = window.snapshot.images["color"]
    column, row = 120, 150
    _click(qtbot, window, "color", column, row)
    address = _targets(window, game)
    assert len(address) == 1 and address <= {TOP, BOTTOM}
    screen = "top" if address == {TOP} else "bottom"
    assert _rows(window) == _api(game.pixel_history(column, row, space="buffer", screen=screen))
    assert f"window x={column} y={fb.shape[0] - 1 - row}" in hist.label.text()
    _shot(window, tmp_path, "history_color_buffer")


def test_a_pick_outside_every_picture_is_named_in_the_panel(qtbot, window: MainWindow) -> None:  # noqa: F811
    """No dialog, no error of the window: the panel says why (the soak test picks anywhere)."""
    open_scene(qtbot, window, GAME)
    window.pick_pixel(300, 10)  # both colour buffers are 240 wide
    settle(qtbot, window)
    assert window.last_error == "" and "is outside the 240x" in window.history.label.text()


def test_view_history_mid_frame_covers_the_frame_so_far(game) -> None:
    """At a position inside frame 20, a colour-buffer pick covers that frame's draws before the position into the
    target named there; right after the frame's FrameEnd, the frame that just ended (its draws into the target named
    then)."""
    session, tl = game.debugger.session, game.debugger.timeline
    frame = [d for d in tl.draws if d.frame == 20]
    middle = frame[len(frame) // 2]
    for cursor, last in ((tl.after_draw(middle.index), middle.index), (tl.frame_start(21), frame[-1].index)):
        found = history.view_history(session, cursor, "color", 100, 200)
        assert found.span == (tl.frame_start(20), cursor)
        drawn = {f.draw for f in found.fragments}
        assert drawn and all(frame[0].index <= d <= last for d in drawn)
        assert {RenderTarget.of(pick.draw_target(session, d)) for d in drawn} == {found.at.target}
