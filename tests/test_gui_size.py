"""The debugger at real-game size (issue 26 item 6), driven offscreen in a real event loop on the minicraft capture
(tests/data/games/minicraft.pica, 40 frames, 507 draws) and the bundled samples: the default layout at 1366x768,
follow-up work after a jump (cancelled, only for panels on screen), the pipeline-state export and values, enum
breakpoints, overlay legends and the papercuts of the GUI review. Screenshots go to the test's tmp directory."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui import layout
from picaemu.gui.legend import OVERLAYS, legend_html
from picaemu.gui.main_window import MainWindow
from picaemu.gui.models.state_tree import value_text
from picaemu.gui.models.table import TableModel, compact, fit_columns
from picaemu.gui.panels.mesh import FILL, MeshView3D
from picaemu.gui.worker import Worker
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QTableView

from picaemu.debug.timeline import BreakKind, Breakpoint
from picaemu.errors import PicaError
from tests.conftest import REPO
from tests.test_gui_window import WAIT_MS, goto, open_scene, settle

pytestmark = pytest.mark.gui
MINICRAFT = REPO / "tests" / "data" / "games" / "minicraft.pica"
SAMPLES = REPO / "samples" / "captures"
SCREEN = (1366, 768)


@pytest.fixture
def small_window(qtbot, tmp_path):
    """A first start (no saved layout) at 1366x768, hidden panels not updated (the default)."""
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(*SCREEN)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.worker.stop()


def _shot(widget, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    assert widget.grab().save(str(path))
    return path


def _tree_texts(model, parent=None) -> list[str]:
    """Every value cell (column 1) of a state tree, depth first."""
    from PySide6.QtCore import QModelIndex

    parent = parent if parent is not None else QModelIndex()
    out = []
    for row in range(model.rowCount(parent)):
        out.append(model.index(row, 1, parent).data() or "")
        out += _tree_texts(model, model.index(row, 0, parent))
    return out


def test_default_layout_fits_1366x768_and_gives_the_picture_half(qtbot, small_window, tmp_path: Path) -> None:
    win = small_window
    open_scene(qtbot, win, MINICRAFT)
    qtbot.wait(50)
    assert (win.width(), win.height()) == SCREEN
    hint = win.minimumSizeHint()
    assert hint.width() <= SCREEN[0] and hint.height() <= SCREEN[1]
    column = int(SCREEN[0] * layout.COLUMN_SHARE)
    for title, dock in win.docks.items():  # no dock forces the column (and so the window) wider
        assert dock.minimumSizeHint().width() <= column, title
    picture = win.framebuffer.image
    share = picture.width() * picture.height() / (win.width() * win.height())
    assert share >= 0.5, f"picture {picture.width()}x{picture.height()} is {share:.0%} of the window"
    assert win.docks["Command stream"].isVisible() and win.docks["Registers"].isVisible()
    _shot(win, tmp_path, "default_layout_1366x768")


def test_default_layout_comes_back_from_a_wide_saved_one(qtbot, small_window) -> None:
    win = small_window
    win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, win.docks["Surface"])
    win.docks["Textures"].setFloating(True)
    win.actions_by_text["Default layout"].trigger()
    qtbot.wait(50)
    assert all(win.dockWidgetArea(d) == Qt.DockWidgetArea.LeftDockWidgetArea for d in win.docks.values())
    assert not win.docks["Textures"].isFloating()
    assert win.framebuffer.image.width() * win.framebuffer.image.height() >= 0.5 * win.width() * win.height()


def test_default_size_fits_the_screen() -> None:
    assert layout.default_size((1366, 728)) == (1366, 728)
    assert layout.default_size((2560, 1440)) == layout.DEFAULT_SIZE


def test_follow_ups_only_for_panels_on_screen(qtbot, small_window, tmp_path: Path) -> None:
    """After a jump, only the docks on screen ask the worker (Registers is the raised tab; Pipeline state, Textures,
    Shader and Mesh are behind it); raising a dock asks for its data at the current position."""
    win = small_window
    submitted: list[str] = []
    submit = win.worker.submit
    win.worker.submit = lambda kind, fn, **kw: submitted.append(kind) or submit(kind, fn, **kw)
    open_scene(qtbot, win, MINICRAFT)
    goto(qtbot, win, win.timeline.after_draw(300))
    assert "snapshot" in submitted
    assert not {"pipeline_state", "textures", "shader", "vertices"} & set(submitted)
    assert win.pipeline_state.draw is None
    submitted.clear()
    win.docks["Pipeline state"].raise_()
    qtbot.waitUntil(lambda: win.pipeline_state.draw == 300, timeout=WAIT_MS)
    win.docks["Mesh"].raise_()
    qtbot.waitUntil(lambda: "draw 300" in win.mesh.label.text(), timeout=WAIT_MS)
    settle(qtbot, win)
    assert submitted == ["pipeline_state", "vertices"]
    submitted.clear()
    win.docks["Pipeline state"].raise_()  # shown again at the same position: nothing asked twice
    settle(qtbot, win)
    assert submitted == []


def test_a_jump_cancels_the_previous_positions_follow_ups(qtbot) -> None:
    """Worker rules: a cancelled kind's waiting request never runs and a running one comes back stale; an urgent
    request runs before the waiting ones; a LOW kind runs last and is told to stop when another job waits."""
    worker = Worker()
    gate, ran, results, preempted = threading.Event(), [], [], []
    worker.done.connect(results.append)  # delivered on this thread's event loop
    try:
        worker.submit("history", lambda _: gate.wait(30) and ran.append("history"))
        while worker.idle or worker._pending:  # the blocking job has started
            pass
        worker.submit("footprints", lambda _: preempted.append(worker.preempted()) or ran.append("footprints"))
        worker.submit("textures", lambda _: ran.append("textures"))
        worker.submit("shader", lambda _: ran.append("shader"))
        worker.cancel(("textures", "history"))
        worker.submit("snapshot", lambda _: ran.append("snapshot"), urgent=True)
        worker.submit("vertices", lambda _: ran.append("vertices"))
        gate.set()
        qtbot.waitUntil(lambda: len(results) == 5, timeout=WAIT_MS)
    finally:
        worker.stop()
    assert ran == ["history", "snapshot", "shader", "vertices", "footprints"]
    assert preempted == [False]
    assert [r.kind for r in results if r.stale] == ["history"]


def test_pipeline_state_values_and_html_export(qtbot, small_window, tmp_path: Path) -> None:
    """B1: the export keeps the "changed" highlight (a real CSS rule, not doubled braces); B4: no internal plan
    objects, disabled stages read "off", floats at float32 precision; the first draw says it has nothing to
    compare with."""
    win = small_window
    open_scene(qtbot, win, MINICRAFT)
    win.docks["Pipeline state"].raise_()
    goto(qtbot, win, win.timeline.after_draw(5))
    panel = win.pipeline_state
    qtbot.waitUntil(lambda: panel.draw == 5, timeout=WAIT_MS)
    assert "fragment_ops" not in panel.state
    texts = _tree_texts(panel.model)
    assert not [t for t in texts if ("<" in t and ">" in t) or t == "None"]
    digits = [n.replace(".", "").lstrip("0") for t in texts for n in re.findall(r"\d+\.\d+", t)]
    assert max(len(d) for d in digits) <= 9, "floats printed past float32 precision"
    rows = {panel.model.index(r, 0).data(): panel.model.index(r, 1).data() for r in range(panel.model.rowCount())}
    assert rows["gas"] == "off" and rows["lighting"] == "off"
    page = panel.html()
    assert ".changed{background:#ffeca0}" in page and "}}" not in page
    assert panel.changed and 'class="changed"' in page
    goto(qtbot, win, win.timeline.after_draw(0))
    qtbot.waitUntil(lambda: panel.draw == 0, timeout=WAIT_MS)
    assert "since nothing" not in panel.label.text() and "first draw" in panel.label.text()
    _shot(panel, tmp_path, "pipeline_state")


def test_fitted_columns_are_as_wide_as_qts_own_fit(qtbot) -> None:
    """``fit_columns`` (font metrics over the cells' text) gives each column the width Qt's
    ``resizeColumnsToContents`` gives it: never narrower (no cell cut to "…"), at most a pixel wider."""
    rng = np.random.default_rng(7)
    numbers = [
        (f"c{i} projection" if i % 9 == 0 else f"i{i}", *(f"{x:.6g}" for x in rng.normal(0, 10.0 ** (i % 12), 4)))
        for i in range(60)
    ]
    rows = (*numbers, ("b3", "True", "", "", ""), ("a uniform name wider than its column's header", "1", "", "", ""))
    model = TableModel(("Uniform", "x", "y", "z", "w"), lambda r, c: r[c])
    view = QTableView()
    qtbot.addWidget(view)
    compact(view)
    view.setModel(model)
    model.set_rows(rows)
    view.show()
    fit_columns(view)
    fitted = [view.columnWidth(c) for c in range(5)]
    view.resizeColumnsToContents()
    for column, width in enumerate(fitted):
        assert 0 <= width - view.columnWidth(column) <= 1, (column, width, view.columnWidth(column))


def test_value_text_formats_for_reading() -> None:
    assert value_text("lod", None) == "off"
    assert value_text("s", 0.10000000149011612) == "0.1"
    assert value_text("texcoords", (0.5, 0.30000001192092896)) == "(0.5, 0.3)"
    assert value_text("x", [1.0, 2.5]) == "1.0, 2.5"
    assert value_text("color_address", 0x18000000) == "0x18000000"
    assert value_text("big", 1e300) == "1e+300"


def test_enum_breakpoints_accept_the_tables_spellings_and_refuse_others(qtbot, small_window) -> None:
    """B5: ``func == notequal`` is the table's "not equal"; an unknown value is refused with the valid ones; on
    minicraft every spelling of "clamp to border" stops at the same 342 writes."""
    alpha = Breakpoint(BreakKind.REGISTER_WRITE, "GPUREG_FRAGOP_ALPHA_TEST", field="func", equals="notequal")
    alpha.validate()
    word = 3 << 4  # func (bits 4-6) = 3, "not equal"
    assert alpha.matches(0x104, word) and not alpha.matches(0x104, 2 << 4)
    with pytest.raises(PicaError, match="valid: never, always, equal, not_equal"):
        Breakpoint(BreakKind.REGISTER_WRITE, "GPUREG_FRAGOP_ALPHA_TEST", field="func", equals="sometimes").validate()
    win = small_window
    open_scene(qtbot, win, MINICRAFT)
    hits = {
        spelling: Breakpoint(BreakKind.REGISTER_WRITE, "GPUREG_TEXUNIT0_PARAM", field="wrap_s", equals=spelling).hits(
            win.timeline
        )
        for spelling in ("clamp to border", "clamptoborder", "CLAMP_TO_BORDER")
    }
    assert len(hits["clamp to border"]) == 342
    assert hits["clamptoborder"] == hits["CLAMP_TO_BORDER"] == hits["clamp to border"]
    panel = win.breakpoints
    panel.kind.setCurrentText(BreakKind.REGISTER_WRITE.value)
    panel.register.setText("GPUREG_FRAGOP_ALPHA_TEST")
    panel.field.setText("func == sometimes")
    panel.add.click()
    assert "not_equal" in panel.error.text() and panel.breakpoints == []
    panel.field.setText("func == notequal")
    panel.add.click()
    assert panel.error.text() == "" and panel.breakpoints[0].equals == "notequal"


def test_every_overlay_has_a_legend(qtbot, small_window, tmp_path: Path) -> None:
    win = small_window
    open_scene(qtbot, win, SAMPLES / "game_cubes_300.pica")
    fb = win.framebuffer
    assert fb.legend.isHidden()
    for box in (fb.wire, fb.overdraw, fb.depth_fail, fb.stencil_fail, fb.scissor, fb.frame_map_box):
        box.setChecked(True)
    settle(qtbot, win)
    assert fb.legend_names == ["overdraw", "depth fail", "stencil fail", "wireframe", "frame complexity"]
    assert "scissor disabled" in fb.info.text()  # no box to draw, so none in the legend
    assert "#ffdc00" in legend_html(["scissor"])  # the box's own colour (image_view.RECT_RGB)
    assert fb.legend.isVisible() and "fragments per pixel in the frame so far" in fb.legend.text()
    assert set(OVERLAYS) >= {*fb.legend_names, "GL difference"}
    assert "#00ff40" in legend_html(["wireframe"])  # the wireframe's own colour (probe.WIRE_RGBA)
    _shot(fb, tmp_path, "overlays_with_legend")
    for box in (fb.wire, fb.overdraw, fb.depth_fail, fb.stencil_fail, fb.scissor, fb.frame_map_box):
        box.setChecked(False)
    assert fb.legend.isHidden()


def test_gl_side_counts_seconds_until_the_rendering_arrives(qtbot) -> None:
    from picaemu.gui.panels.framebuffer import FramebufferPanel

    panel = FramebufferPanel()
    qtbot.addWidget(panel)
    asked = []
    panel.backend_diff_wanted.connect(lambda: asked.append(1))
    panel.gl_box.setChecked(True)
    assert asked == [1] and panel._gl_timer.isActive()
    assert panel.gl_info.text().startswith("rendering the draw with OpenGL … 0 s (the first use starts EGL")
    panel.set_backend_diff(None, "BackendUnavailable: no EGL")
    assert not panel._gl_timer.isActive() and panel.gl_info.text() == "BackendUnavailable: no EGL"


def test_console_echoes_and_runs_on_enter(qtbot, small_window) -> None:
    win = small_window
    open_scene(qtbot, win, SAMPLES / "triangle.pica")
    console = win.console
    console.input.setFocus()
    qtbot.keyClicks(console.input, "len(timeline.draws)")
    qtbot.keyClick(console.input, Qt.Key.Key_Return)
    settle(qtbot, win)
    assert console.output.toPlainText().splitlines()[-2:] == [">>> len(timeline.draws)", str(len(win.timeline.draws))]
    assert console.input.toPlainText() == ""
    qtbot.keyClick(console.input, Qt.Key.Key_Up)
    assert console.input.toPlainText() == "len(timeline.draws)"


def test_find_forgets_the_query_of_the_previous_capture(qtbot, small_window) -> None:
    win = small_window
    open_scene(qtbot, win, SAMPLES / "triangle.pica")
    win.find.query.setText("draw 0")
    win.find.query.returnPressed.emit()
    settle(qtbot, win)
    open_scene(qtbot, win, SAMPLES / "cube.pica")
    assert win.find.query.text() == "" and win.find.hits == []


def test_sorted_statistics_column_is_on_screen_with_its_indicator(qtbot, small_window, tmp_path: Path) -> None:
    win = small_window
    open_scene(qtbot, win, SAMPLES / "game_cubes_300.pica")
    win.docks["Statistics"].raise_()
    settle(qtbot, win)
    view = win.stats.draw_view
    last = view.model().columnCount() - 1
    view.sortByColumn(last, Qt.SortOrder.DescendingOrder)
    qtbot.wait(20)
    header = view.horizontalHeader()
    assert header.isSortIndicatorShown() and header.sortIndicatorSection() == last
    x = header.sectionViewportPosition(last)
    assert 0 <= x < view.viewport().width(), "the sorted column is off screen"
    assert "sorted by" in win.stats.label.text() and "descending" in win.stats.label.text()
    _shot(win.stats, tmp_path, "statistics_sorted")


def test_mesh_view_is_framed_on_the_draw(qtbot) -> None:
    view = MeshView3D()
    qtbot.addWidget(view)
    view.resize(200, 200)
    tri = np.array([[[0.50, 0.50, 0.5, 1.0], [0.52, 0.50, 0.5, 1.0], [0.50, 0.53, 0.5, 1.0]]], np.float32)
    view.set_triangles(tri)  # a sprite of a few pixels in the corner of the screen
    pts = view.projected().reshape(-1, 2)
    extent = pts.max(axis=0) - pts.min(axis=0)
    assert np.isclose(extent.max(), FILL * 200, rtol=1e-3)
    assert np.allclose((pts.max(axis=0) + pts.min(axis=0)) / 2, 100, atol=1e-3)
