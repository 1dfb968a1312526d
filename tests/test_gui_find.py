"""Finding the draw that matters among 1,000 in the Qt debugger (pytest-qt, offscreen), on
samples/captures/game_cubes_1000.pica: the sortable statistics table and its clickable figure, lazy footprint
thumbnails, the search box, capture markers and user bookmarks in the command tree. Expected draws come from the
scene generator's rules (``samples/game_scene.py``) and from the index's counters; screenshots go to
``PICAEMU_SHOTS`` (default: the test's tmp_path)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.panels.stats import COLUMNS, StatsPanel
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QImage
from pytestqt.modeltest import ModelTester

from picaemu.debug import jobs
from picaemu.debug.timeline import Cursor
from tests import test_gui_window
from tests.test_gui_window import WAIT_MS, open_scene, settle

pytestmark = pytest.mark.gui
window = test_gui_window.window  # the same window fixture (a shown MainWindow with its own settings file)
CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "game_cubes_1000.pica"


def shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("PICAEMU_SHOTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def session():
    return jobs.open_session(CAPTURE)


def click_header(qtbot, view, column: int) -> None:
    header = view.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def column_value(d, key: str):
    """The value the statistics table shows for draw ``d`` in column ``key``, from the index (as typed)."""
    if key in ("kind", "draw"):
        return d.kind if key == "kind" else d.index
    return round(1000 * d.stats.get("time_s", 0), 3) if key == "time_ms" else d.stats[key]


def test_statistics_table_sorts_every_column_numerically(qtbot, session, tmp_path: Path) -> None:
    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 700)
    panel.show()
    panel.set_timeline(session.timeline)
    ModelTester(None).check(panel.draw_proxy)
    draws = session.timeline.draws
    view = panel.draw_view
    for key in ("fragments_written", "killed_depth", "time_ms", "vertices_shaded", "kind", "draw"):
        col = COLUMNS.index(key)
        click_header(qtbot, view, col)  # first click: ascending
        shown = [column_value(draws[panel.draw_at_row(r)], key) for r in range(len(draws))]
        assert shown == sorted(shown), key  # numbers as numbers: "1000" after "999"
        click_header(qtbot, view, col)  # second click: descending
        shown = [column_value(draws[panel.draw_at_row(r)], key) for r in range(len(draws))]
        assert shown == sorted(shown, reverse=True), key
    col = COLUMNS.index("fragments_written")
    click_header(qtbot, view, col)
    click_header(qtbot, view, col)
    top = max(range(len(draws)), key=lambda i: (draws[i].stats["fragments_written"], -i))
    assert draws[panel.draw_at_row(0)].stats["fragments_written"] == draws[top].stats["fragments_written"]
    header = panel.per_draw.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
    tip = panel.per_draw.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert header == "fragments written" and tip.startswith("fragments written (fragments): ")
    assert view.horizontalHeader().sectionSize(col) >= view.fontMetrics().horizontalAdvance(header)  # not cut
    panel.grab().save(str(shots(tmp_path) / "stats_sorted.png"))


def test_clicking_the_figure_runs_to_the_draw_under_the_mouse(qtbot, session) -> None:
    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.resize(3200, 900)  # about 3 pixels per draw: a click lands on one draw
    panel.show()
    panel.set_timeline(session.timeline)
    panel.canvas.draw()
    asked: list[int] = []
    panel.run_to_draw.connect(asked.append)
    ax = panel.figure.axes[0]
    for draw in (0, 123, 777, 999):
        stats = session.timeline.draws[draw].stats
        x, y = ax.transData.transform((draw, stats["fragments_rasterized"] / 2))  # the middle of its bar
        ratio = panel.canvas.devicePixelRatioF()
        point = QPoint(round(x / ratio), round(panel.canvas.height() - y / ratio))
        qtbot.mouseMove(panel.canvas, point)
        assert panel.hover.text().startswith(f"draw {draw}: ")
        assert f"fragments written {stats['fragments_written']}," in panel.hover.text()
        qtbot.mouseClick(panel.canvas, Qt.MouseButton.LeftButton, pos=point)
        assert asked[-1] == draw
    asked.clear()
    qtbot.mouseClick(panel.canvas, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))  # outside the axes: nothing
    assert asked == []


def test_stepping_moves_the_marker_without_drawing_the_figure_again(qtbot, session) -> None:
    """The current-draw marker is blitted over the kept picture: no whole draw while stepping, and the canvas then
    holds what a whole draw at that draw gives."""
    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    panel.set_timeline(session.timeline)
    qtbot.wait(300)  # the draws the showing and the new figure asked for
    panel.canvas.draw()
    unmarked = np.array(panel.canvas.buffer_rgba())  # no current draw yet: the marker is hidden
    whole: list[object] = []
    panel.canvas.mpl_connect("draw_event", whole.append)
    ax = panel.figure.axes[0]
    for draw in (100, 600, 601):
        panel.set_current_draw(draw)
        qtbot.waitUntil(lambda: not panel._redraw.isActive(), timeout=WAIT_MS)
        changed = np.flatnonzero((np.asarray(panel.canvas.buffer_rgba()) != unmarked).any(axis=(0, 2)))
        x, _ = ax.transData.transform((draw, 0))
        assert len(changed) and abs(changed - x).max() <= 2  # this draw's marker alone: the last one is gone
    assert whole == []
    stepped = np.array(panel.canvas.buffer_rgba())
    panel.canvas.draw()
    assert len(whole) == 1 and np.array_equal(np.asarray(panel.canvas.buffer_rgba()), stepped)


def test_a_row_click_goes_to_that_draw_and_the_stats_button_shows_frame_complexity(
    qtbot, window, tmp_path: Path
) -> None:
    open_scene(qtbot, window, CAPTURE)
    window.docks["Statistics"].raise_()
    settle(qtbot, window)
    panel = window.stats
    view = panel.draw_view
    col = COLUMNS.index("fragments_written")
    click_header(qtbot, view, col)
    click_header(qtbot, view, col)
    for row in (0, 5):
        draw = panel.draw_at_row(row)
        rect = view.visualRect(panel.draw_proxy.index(row, 1))
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.waitUntil(lambda draw=draw: window.snapshot.last_draw == draw, timeout=WAIT_MS)
        settle(qtbot, window)
        assert window.snapshot.cursor == window.timeline.after_draw(draw)
        assert view.currentIndex().row() == row  # the row stays selected where the sort put it
    frame_rect = panel.frame_view.visualRect(panel.frame_proxy.index(0, 1))
    panel.frame_view.parentWidget().parentWidget().setCurrentIndex(1)  # the "per frame" tab
    qtbot.mouseClick(panel.frame_view.viewport(), Qt.MouseButton.LeftButton, pos=frame_rect.center())
    end = Cursor(window.timeline.frame_ends[0] + 1, 0)
    qtbot.waitUntil(lambda: window.snapshot.cursor == end, timeout=WAIT_MS)  # a frame row: the end of the frame
    settle(qtbot, window)
    qtbot.mouseClick(panel.frame_map, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.framebuffer.frame_map is not None, timeout=WAIT_MS)
    counts = window.framebuffer.frame_map
    run = window.timeline.draw_count_before(window.snapshot.cursor)  # the whole frame: every draw
    assert run == 1000
    rasterized_so_far = sum(
        d.stats["fragments_rasterized"] - d.stats["killed_scissor"] for d in window.timeline.draws[:run]
    )
    assert window.framebuffer.frame_map_box.isChecked() and int(counts.sum()) == rasterized_so_far
    window.grab().save(str(shots(tmp_path) / "window_stats.png"))


def visible_draws(panel) -> list[int]:
    return [d for d in range(panel.model.rowCount()) if panel.row_visible(d)]


def test_thumbnails_are_footprints_built_only_for_visible_rows(qtbot, window, tmp_path: Path) -> None:
    from picaemu.debug.footprint import footprint

    panel = window.draws
    window.docks["Draws"].raise_()
    batches: list[tuple[list[int], bool, bool]] = []  # each request, whether all its rows were on screen, waiting
    panel.model.wanted.connect(
        lambda draws: batches.append((draws, all(panel.row_visible(d) for d in draws), panel.model.waiting))
    )
    open_scene(qtbot, window, CAPTURE)
    qtbot.waitUntil(lambda: set(visible_draws(panel)) <= set(panel.model.icons), timeout=WAIT_MS)
    settle(qtbot, window)
    ModelTester(None).check(panel.model)
    shown = visible_draws(panel)
    assert 999 in shown and 0 < len(shown) < 200  # the window opens at the frame's end: the last draw selected
    panel.grab().save(str(shots(tmp_path) / "draws_bottom.png"))
    panel.list.scrollToTop()
    qtbot.waitUntil(lambda: set(visible_draws(panel)) <= set(panel.model.icons), timeout=WAIT_MS)
    settle(qtbot, window)
    assert 0 in visible_draws(panel)
    # a batch out counts as waiting (bench_gui_settle waits for it), and once every row on screen has its icon nothing
    # is out or about to be asked
    assert all(waiting for *_, waiting in batches)
    qtbot.waitUntil(lambda: not panel.model.waiting, timeout=WAIT_MS)
    assert batches and all(visible for _, visible, _ in batches)  # never a row that was not on screen
    # each asked for, again only when a move stopped its batch before it was built (Worker.preempted)
    assert {d for draws, *_ in batches for d in draws} == panel.model.requested
    assert len(panel.model.requested) < 400 and 500 not in panel.model.requested  # the middle was never shown
    panel.grab().save(str(shots(tmp_path) / "draws_top.png"))
    icon = panel.model.data(panel.model.index(3, 0), Qt.ItemDataRole.DecorationRole)
    image = icon.pixmap(60, 100).toImage().convertToFormat(QImage.Format.Format_RGB888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(100, image.bytesPerLine())[:, :180]
    # the icon is the engine's footprint (the worker's session; nothing else moves it while the worker is idle)
    assert np.array_equal(pixels.reshape(100, 60, 3), footprint(window.worker.session, 3).image)
    rect = panel.list.visualRect(panel.model.index(2, 0))
    qtbot.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.snapshot.last_draw == 2, timeout=WAIT_MS)
    settle(qtbot, window)


def test_search_box_finds_the_draws_that_bind_a_texture_and_goes_to_one(qtbot, window, tmp_path: Path) -> None:
    from picaemu.replay.info import capture_info
    from samples.game_scene import TEXTURES

    # the scene's 8 texture addresses in upload order (the writer merges adjacent uploads into one write)
    textures = sorted(row["address"] for row in capture_info(CAPTURE).textures)
    open_scene(qtbot, window, CAPTURE)
    panel = window.find
    window.docks["Breakpoints"].raise_()
    window.actions_by_text["Find…"].trigger()  # Ctrl+F: the Find panel comes up, its box focused
    qtbot.waitUntil(lambda: panel.query.hasFocus(), timeout=WAIT_MS)
    assert panel.programs.count() == 2  # the prompt and the scene's one vertex shader
    qtbot.keyClicks(panel.query, f"texture 0x{textures[5]:08X}")
    qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0, timeout=WAIT_MS)
    expected = [i for i in range(1000) if (i // 4) % TEXTURES == 5]  # samples/game_scene.py: rebinding every 4
    assert [h.draw for h in panel.hits] == expected
    assert panel.model.data(panel.model.index(0, 1)) == str(expected[0])
    panel.grab().save(str(shots(tmp_path) / "find_texture.png"))
    rect = panel.view.visualRect(panel.model.index(3, 0))
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.snapshot.last_draw == expected[3], timeout=WAIT_MS)
    settle(qtbot, window)
    window.grab().save(str(shots(tmp_path) / "window_find.png"))
    panel.programs.activated.emit(1)  # what picking the program in the combo box does
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1000, timeout=WAIT_MS)
    assert panel.query.text().startswith("shader ")
    panel.query.setText("colour red")
    qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "PicaError" in panel.label.text(), timeout=WAIT_MS)
    assert panel.model.rowCount() == 0 and window.last_error == ""  # said in the panel, no dialog


def test_markers_group_the_command_tree_and_bookmarks_persist(qtbot, window, tmp_path: Path) -> None:
    from picaemu.debug import bookmarks
    from tests.test_debug_bookmarks import marked_capture
    from tests.test_gui_window import goto

    capture = marked_capture(tmp_path / "marked.pica")
    open_scene(qtbot, window, capture)
    panel, model = window.commands, window.commands.model
    ModelTester(None).check(model)
    root = QModelIndex()
    assert [model.data(model.index(r, 0, root)) for r in range(model.rowCount(root))] == ["frame 0", "frame 1"]
    frame0 = model.index(0, 0, root)
    rows = [model.data(model.index(r, 0, frame0)) for r in range(model.rowCount(frame0))]
    assert rows[-2:] == ["▸ background", "▸ props"]  # setup events flat, then the two marker groups
    props = model.index(model.rowCount(frame0) - 1, 0, frame0)
    assert model.data(model.index(props.row(), 3, frame0)).endswith("draws 2..4")
    inside = [model.data(model.index(r, 0, props)) for r in range(model.rowCount(props))]
    assert any("CommandList" in t for t in inside) and inside[-1].endswith("FrameEnd")
    background = model.index(model.rowCount(frame0) - 2, 0, frame0)
    panel.view.expand(frame0)
    panel.view.expand(background)
    panel.view.doubleClicked.emit(background)  # what a double-click on the row emits
    qtbot.waitUntil(lambda: window.snapshot.last_draw == 1, timeout=WAIT_MS)  # the end of the group: its last draw
    settle(qtbot, window)
    goto(qtbot, window, window.timeline.after_draw(3))
    panel.add_bookmark("third prop")
    after = window.timeline.after_draw(3)
    assert bookmarks.load(capture) == [bookmarks.Bookmark(after.event, after.packet, "third prop")]
    top = model.index(0, 0, root)
    assert model.data(top) == "bookmarks" and model.data(model.index(0, 0, top)) == "★ third prop"
    assert model.data(model.index(0, 3, top)).endswith("after draw 3")
    panel.add_bookmark("third prop")  # a duplicate name is refused in the panel
    assert "already a bookmark" in panel.note.text() and window.last_error == ""
    panel.view.expand(top)
    panel.view.setCurrentIndex(model.index(0, 0, top))
    panel.rename_bookmark(panel.selected_bookmark().name, "props")
    goto(qtbot, window, window.timeline.after_draw(0))
    panel.view.doubleClicked.emit(model.index(0, 0, model.index(0, 0, root)))
    qtbot.waitUntil(lambda: window.snapshot.last_draw == 3, timeout=WAIT_MS)
    settle(qtbot, window)
    assert panel.note.text() == "renamed bookmark 'third prop' to 'props'"
    panel.view.collapseAll()
    frame0 = model.index(1, 0, root)  # after the bookmarks row (the reset made new indexes)
    for index in (
        model.index(0, 0, root),
        frame0,
        *(model.index(model.rowCount(frame0) - k, 0, frame0) for k in (1, 2)),
    ):
        panel.view.expand(index)
    panel.view.scrollToTop()
    panel.resize(620, 520)
    panel.grab().save(str(shots(tmp_path) / "commands_markers.png"))
    open_scene(qtbot, window, capture)  # reopened: the bookmark is read back from beside the capture
    assert model.data(model.index(0, 0, model.index(0, 0, QModelIndex()))) == "★ props"
    panel.view.setCurrentIndex(model.index(0, 0, model.index(0, 0, QModelIndex())))
    panel._remove()
    assert bookmarks.load(capture) == [] and model.data(model.index(0, 0, QModelIndex())) == "frame 0"


def test_zoomed_thumbnails_are_rebuilt_for_the_rows_on_screen(qtbot, window, tmp_path: Path) -> None:
    from picaemu.debug.footprint import footprint

    panel = window.draws
    window.docks["Draws"].raise_()
    open_scene(qtbot, window, CAPTURE)
    panel.list.scrollToTop()
    qtbot.waitUntil(lambda: set(visible_draws(panel)) <= set(panel.model.icons), timeout=WAIT_MS)
    settle(qtbot, window)
    before = len(panel.model.requested)
    panel.zoom.setChecked(True)
    assert not panel.model.icons  # every icon is of the other kind now
    qtbot.waitUntil(lambda: set(visible_draws(panel)) <= set(panel.model.icons), timeout=WAIT_MS)
    settle(qtbot, window)
    assert len(panel.model.requested) == before  # the same rows on screen, asked again: nothing new
    icon = panel.model.data(panel.model.index(3, 0), Qt.ItemDataRole.DecorationRole)
    image = icon.pixmap(60, 100).toImage().convertToFormat(QImage.Format.Format_RGB888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(100, image.bytesPerLine())[:, :180]
    assert np.array_equal(pixels.reshape(100, 60, 3), footprint(window.worker.session, 3, zoom=True).image)
    panel.grab().save(str(shots(tmp_path) / "draws_zoomed.png"))
