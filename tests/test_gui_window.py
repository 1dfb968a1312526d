"""The Qt debugger end to end (pytest-qt, offscreen): open, step, register values, step back, pick a pixel and
read its history, texture viewer texels, shader trace, mesh, stats, breakpoints, error dialogs, model testers,
screenshots. Expected values come from the shared captures' README and the register table."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.main_window import MainWindow
from picaemu.gui.models.command_tree import CommandTreeModel
from picaemu.gui.models.registers import RegisterModel
from picaemu.gui.models.table import TableModel
from picaemu.gui.panels.pixel_history import FATE_COLUMN
from picaemu.gui.worker import Worker
from PySide6.QtCore import QModelIndex, QPointF, QSettings, Qt

from picaemu.builder import CaptureBuilder
from picaemu.debug import jobs
from picaemu.debug.probe import FATE_RGBA, fate_mask
from picaemu.debug.session import Session
from picaemu.debug.timeline import BreakKind, Breakpoint, Cursor, Unit
from picaemu.fragment.ops import Fate
from picaemu.replay import Replay
from tests.test_gui_session import DRAW2_MASKS, HISTORIES, fates_scene

pytestmark = pytest.mark.gui
WAIT_MS = 60000


def settle(qtbot, win: MainWindow) -> None:
    qtbot.waitUntil(lambda: win.worker.idle, timeout=WAIT_MS)
    qtbot.wait(30)  # let the queued result signals arrive
    qtbot.waitUntil(lambda: win.worker.idle, timeout=WAIT_MS)
    qtbot.wait(30)


@pytest.fixture
def window(qtbot, tmp_path):
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1500, 950)
    win.follow_ups.update_hidden = True  # these tests read panels behind other tabs (View › Update hidden panels)
    win.show()
    yield win
    win.worker.stop()


def open_scene(qtbot, win: MainWindow, path: Path) -> None:
    win.open_path(str(path))
    qtbot.waitUntil(lambda: win.snapshot is not None or win.last_error != "", timeout=WAIT_MS)
    assert win.last_error == ""
    settle(qtbot, win)


def field_text(win: MainWindow, reg: str, field: str) -> str:
    model = win.registers.model
    index = model.find(reg)
    for row in range(model.rowCount(index)):
        if model.index(row, 0, index).data() == field:
            return model.index(row, 3, index).data()
    raise KeyError(field)


def goto(qtbot, win: MainWindow, cursor: Cursor) -> None:
    win.move_to(cursor)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.cursor == cursor, timeout=WAIT_MS)
    settle(qtbot, win)


def test_scene2_session(qtbot, window: MainWindow, captures_dir: Path, tmp_path: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene2_textured_quad")
    tl = window.timeline
    assert window.draws.model.rowCount() == 1  # its footprint thumbnail is built once the row is painted
    qtbot.waitUntil(lambda: 0 in window.draws.model.icons, timeout=WAIT_MS)
    assert not window.draws.model.icons[0].isNull()
    goto(qtbot, window, Cursor(0, 0))
    assert window.registers.model.data(window.registers.model.find("TEXUNIT0_DIM").siblingAtColumn(2)) == "0x00000000"
    window.step(Unit.DRAW)  # run to draw 0
    qtbot.waitUntil(lambda: window.snapshot.cursor == tl.after_draw(0), timeout=WAIT_MS)
    settle(qtbot, window)
    # README: a 64x64 RGBA8 texture, nearest filter, clamp to edge; depth tested with GREATER
    assert field_text(window, "TEXUNIT0_DIM", "width") == "64"
    assert field_text(window, "TEXUNIT0_DIM", "height") == "64"
    assert field_text(window, "TEXUNIT0_TYPE", "format") == "RGBA8"
    assert "greater" in field_text(window, "DEPTH_COLOR_MASK", "depth_func").lower()
    assert "draw 0 (1 of 1 run)" in window.status.text()
    back = tl.step(tl.after_draw(0), Unit.PACKET, forward=False)
    window.step(Unit.PACKET, forward=False)  # back one packet: before the trigger, texture still bound
    qtbot.waitUntil(lambda: window.snapshot.cursor == back, timeout=WAIT_MS)
    settle(qtbot, window)
    assert field_text(window, "TEXUNIT0_DIM", "width") == "64" and window.snapshot.last_draw is None
    # texture viewer: unit 0 as bound, cell (0, 0) yellow, cell (1, 0) = (36, 252, 160)
    window.textures.units.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.textures.rgba is not None, timeout=WAIT_MS)
    settle(qtbot, window)
    assert window.textures.texel(0, 0) == (255, 255, 0, 255)
    assert window.textures.texel(12, 3) == (36, 252, 160, 255)
    window.textures.channel.setCurrentText("A")
    assert window.textures.image.image[5, 5].tolist() == [255, 255, 255]
    # free view of every format at the same address decodes or names its error, never crashes
    for i in range(window.textures.format.count()):
        window.textures.format.setCurrentIndex(i)
        window.textures.request_free()
        settle(qtbot, window)
    window.textures.grab().save(str(tmp_path / "textures.png"))
    # mesh view of draw 0 (after stepping forward again)
    window.step(Unit.DRAW)
    qtbot.waitUntil(lambda: window.snapshot.cursor == tl.after_draw(0), timeout=WAIT_MS)
    settle(qtbot, window)
    assert window.mesh.inputs.rowCount() == 4 and window.mesh.view3d.tris.shape == (2, 3, 4)
    # shader trace of vertex 0, stepped forward and back
    window.shader.vertex.setValue(0)
    window.shader.trace_button.click()
    qtbot.waitUntil(lambda: len(window.shader.records) > 0, timeout=WAIT_MS)
    n = len(window.shader.records)
    window.shader.forward.click()
    window.shader.forward.click()
    window.shader.back.click()
    assert window.shader.slider.value() == 1 and "step 1" in window.shader.watch_label.text()
    assert window.shader.records[n - 1].text.startswith("end")


def test_scene1_pixel_history_and_overlays(qtbot, window: MainWindow, captures_dir: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    tl = window.timeline
    goto(qtbot, window, tl.after_draw(1))
    fb = window.framebuffer
    assert fb.view == "color" and fb.image.image.shape == (400, 240, 3)
    x, y = 90, 200  # landscape centroid (200, 90) of the triangle under the tilt projection
    fb.image.pick(x, 399 - y)
    assert f"window x={x} y={y}" in fb.pick_info.text()
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 1, timeout=WAIT_MS)
    rows = window.history.model.rows  # frame 1's draw (frame 1 cleared draw 0's triangle to the background)
    assert [f.draw for f in rows] == [1] and rows[0].fate == "written" and rows[0].color_before == (48, 48, 48, 255)
    assert all(abs(c - 85) <= 2 for c in rows[0].blended[:3])
    assert window.history.model.index(0, 7).data() == "written"
    fb.wire.setChecked(True)
    fb.overdraw.setChecked(True)
    qtbot.waitUntil(lambda: fb.probe is not None, timeout=WAIT_MS)
    assert fb.probe.draw == 1 and int(fb.probe.overdraw.sum()) == 240 * 180 // 2
    fb.view_box.setCurrentText("depth")
    assert fb.image.image.shape == (400, 240, 3)
    goto(qtbot, window, tl.end)  # the LCD shows the frame after its display transfer
    fb.view_box.setCurrentText("top")
    assert fb.image.image.shape == (240, 400, 3)
    top = fb.image.image
    assert top[239 - 90, 200].tolist() == pytest.approx([85, 85, 85], abs=2)  # (X, Y from the bottom)
    assert top[5, 5].tolist() == [0x30, 0x30, 0x30]


def test_exact_fates_history_and_fail_overlays(qtbot, qtmodeltester, window: MainWindow, tmp_path: Path) -> None:
    """tests.test_gui_session.fates_scene: scissor, stencil and depth kills, worked out by hand there."""
    path = tmp_path / "fates.pica"
    fates_scene().save(path)
    open_scene(qtbot, window, path)
    fb, hist = window.framebuffer, window.history
    assert window.snapshot.last_draw == 2
    for pixel, want in ((100, 110), HISTORIES[(100, 110)]), ((15, 120), HISTORIES[(15, 120)]):
        fb.image.pick(pixel[0], 399 - pixel[1])
        qtbot.waitUntil(lambda w=want: [(f.draw, f.fate) for f in hist.model.rows] == w, timeout=WAIT_MS)
        assert [hist.model.index(r, FATE_COLUMN).data() for r in range(len(want))] == [f for _, f in want]
        if pixel == (100, 110):  # A wrote red; B and C, killed there, found it and left it
            from picaemu.gui.panels.pixel_history import HEADERS

            before = [hist.model.index(r, HEADERS.index("Color before")).data() for r in range(3)]
            assert (
                before[1:] == ["(255, 0, 0, 255)"] * 2
                and hist.model.index(0, HEADERS.index("Written")).data() == "(255, 0, 0, 255)"
            )
            hist.view.resizeColumnsToContents()
            hist.resize(1400, 160)
            hist.grab().save(str(tmp_path / "pixel_history_before_after.png"))
    # the rasterizer knows a scissor-rejected fragment's primitive; it was never shaded
    assert hist.model.index(0, 1).data() in ("0", "1") and hist.model.index(0, 6).data() == "—"
    assert "1 fragment of 1 draw into this target, 1 killed" in hist.label.text()
    qtmodeltester.check(hist.model, force_py=True)
    fb.depth_fail.setChecked(True)
    qtbot.waitUntil(lambda: fb.probe is not None, timeout=WAIT_MS)
    settle(qtbot, window)
    assert fb.probe.draw == 2 and int(fate_mask(fb.probe, Fate.DEPTH).sum()) == DRAW2_MASKS[Fate.DEPTH]
    assert len(fb.image._overlays) == 1
    fb.stencil_fail.setChecked(True)
    assert len(fb.image._overlays) == 2 and int(fate_mask(fb.probe, Fate.STENCIL).sum()) == DRAW2_MASKS[Fate.STENCIL]
    fb.stencil_fail.setChecked(False)
    fb.image.pick(150, 399 - 120)
    assert "draw 2: 1 fragments (1 depth-killed)" in fb.pick_info.text()
    shot = fb.grab()
    assert shot.save(str(tmp_path / "framebuffer_depth_fail.png"))
    # the overlay is painted where draw 2's depth kills are (window (160, 135): magenta over B's green), not on
    # the written blue of (175, 130)
    assert shown_rgb(fb, shot.toImage(), 160, 135) == pytest.approx(
        blend_rgb(FATE_RGBA[Fate.DEPTH], (0, 255, 0)), abs=2
    )
    assert shown_rgb(fb, shot.toImage(), 175, 130) == [0, 0, 255]


def blend_rgb(over: tuple[int, int, int, int], under: tuple[int, int, int]) -> list[float]:
    a = over[3] / 255
    return [o * a + u * (1 - a) for o, u in zip(over[:3], under, strict=True)]


def shown_rgb(fb, image, x: int, y: int) -> list[int]:
    """The RGB the framebuffer panel shows at the centre of window pixel (x, y) (grabbed ``image`` of ``fb``)."""
    view = fb.image
    h = view.image.shape[0]
    local = view.offset + QPointF(x + 0.5, h - 1 - y + 0.5) * view.zoom
    c = image.pixelColor(view.mapTo(fb, local.toPoint()))
    return [c.red(), c.green(), c.blue()]


def test_breakpoints_continue_and_persist(qtbot, window: MainWindow, captures_dir: Path, tmp_path) -> None:
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    tl = window.timeline
    goto(qtbot, window, Cursor(0, 0))
    window.breakpoints.add_breakpoint(Breakpoint(BreakKind.DRAW))
    window.continue_(True)
    qtbot.waitUntil(lambda: window.snapshot.cursor == tl.after_draw(0), timeout=WAIT_MS)
    window.continue_(True)
    qtbot.waitUntil(lambda: window.snapshot.cursor == tl.after_draw(1), timeout=WAIT_MS)
    window.continue_(False)
    qtbot.waitUntil(lambda: window.snapshot.cursor == tl.after_draw(0), timeout=WAIT_MS)
    settle(qtbot, window)
    window.continue_(False)  # no breakpoint before draw 0's: it says so and stays
    settle(qtbot, window)
    assert window.snapshot.cursor == tl.after_draw(0) and window.status.text().startswith("no breakpoint hit")
    window.breakpoints.kind.setCurrentText(BreakKind.REGISTER_WRITE.value)
    window.breakpoints.register.setText("NO_SUCH_REGISTER")
    window.breakpoints.add.click()  # an unknown register is refused when added, not silently never hit
    assert "names no register" in window.breakpoints.error.text() and len(window.breakpoints.breakpoints) == 1
    window.breakpoints.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    saved = json.loads(window.settings.value(window._bp_key()))
    assert saved == [Breakpoint(BreakKind.DRAW, enabled=False).to_dict()]
    assert window._load_breakpoints() == [Breakpoint(BreakKind.DRAW, enabled=False)]


def test_errors_keep_the_app_alive(qtbot, window: MainWindow, tmp_path: Path, captures_dir: Path) -> None:
    bad = tmp_path / "bad.pica"
    bad.write_bytes(b"PICAcap\x1a" + b"\xff" * 40)
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: window.last_error != "", timeout=WAIT_MS)
    assert "FormatError" in window.last_error and window.timeline is None
    window.last_error = ""
    open_scene(qtbot, window, captures_dir / "scene1_triangle")  # still works afterwards
    assert len(window.timeline.draws) == 2
    good, recent = window.path, window._recent()
    window.open_path(str(bad))  # a failed open leaves the open capture, its title and the recent files alone
    qtbot.waitUntil(lambda: window.last_error != "", timeout=WAIT_MS)
    settle(qtbot, window)
    assert window.path == good and window._recent() == recent and len(window.timeline.draws) == 2


def test_pixel_history_follows_the_position(qtbot, window: MainWindow, captures_dir: Path) -> None:
    """The picked pixel's history is asked again at every move and says up to which position it goes (the draws of
    the frame shown there: scene 1 draws the triangle once in each of its two frames)."""
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    tl = window.timeline
    x, y = 90, 200  # inside both draws' triangle (scene 1)
    goto(qtbot, window, tl.end)
    window.pick_pixel(x, y)
    settle(qtbot, window)
    assert [f.draw for f in window.history.model.rows] == [1]
    goto(qtbot, window, tl.after_draw(0))
    qtbot.waitUntil(lambda: [f.draw for f in window.history.model.rows] == [0], timeout=WAIT_MS)
    assert tl.after_draw(0).text() in window.history.label.text()


def test_worker_newest_request_wins(qtbot) -> None:
    worker = Worker()
    seen, results = [], []
    worker.done.connect(results.append)
    try:
        worker.submit("slow", lambda _: time.sleep(0.3) or seen.append("first"))
        qtbot.wait(50)
        for name in ("second", "third", "fourth"):
            worker.submit("slow", lambda _, n=name: seen.append(n))
        qtbot.waitUntil(lambda: worker.idle, timeout=5000)
        qtbot.wait(50)
        assert seen == ["first", "fourth"]  # the waiting ones were replaced by the newest
        live = [r for r in results if not r.stale]
        assert len(live) == 1 and live[0].id == max(r.id for r in results)
        worker.submit("boom", lambda _: 1 / 0)
        qtbot.waitUntil(lambda: any(r.kind == "boom" for r in results), timeout=5000)
        assert next(r for r in results if r.kind == "boom").error_text.startswith("ZeroDivisionError")
    finally:
        worker.stop()


@pytest.fixture(scope="module")
def scene1_session(captures_dir: Path):
    return jobs.open_session(captures_dir / "scene1_triangle")


@pytest.mark.parametrize("text", ["", "draw 1", "VIEWPORT", "0x041", "=0x1", "no such thing"])
def test_command_tree_passes_the_model_tester(qtmodeltester, scene1_session, text: str) -> None:
    tree = CommandTreeModel()
    tree.set_timeline(scene1_session.timeline)
    tree.set_filter(text)
    assert (tree.rowCount() == 0) == (text == "no such thing")
    qtmodeltester.check(tree, force_py=True)
    tree.set_filter("")  # a reset while the tester watches
    assert tree.rowCount() == 2


@pytest.mark.parametrize("changed_only", [False, True])
def test_register_model_passes_the_model_tester(qtmodeltester, scene1_session, changed_only: bool) -> None:
    regs = RegisterModel()
    regs.set_registers(scene1_session.state_at_draw(1).regs, scene1_session.state_at_draw(0).regs * 0)
    regs.set_changed_only(changed_only)
    qtmodeltester.check(regs, force_py=True)
    regs.set_changed_only(not changed_only)


def test_register_model_shows_the_external_registers(qtmodeltester, qtbot, scene1_session, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QTreeView

    from picaemu.regs import access

    gpu = np.zeros(0x1000, np.uint32)
    gpu[access.ext_index("PDC0_FB_SIZE")] = 0x019000F0  # 240 x 400 (citrace.md: Citra's reset value)
    gpu[access.ext_index("PPF_FLAGS")] = 0x01001003  # flip, linear -> tiled, out RGB8, 2x1
    regs = RegisterModel()
    regs.set_registers(scene1_session.state_at_draw(1).regs, gpu=gpu)
    qtmodeltester.check(regs, force_py=True)
    row = regs.find("PDC0_FB_SIZE")
    assert row.isValid() and row.siblingAtColumn(1).data() == "0x1040045C"
    assert row.siblingAtColumn(3).data() == "width=240 height=400"
    flags = regs.find("0x10400C10")
    assert "out_format=RGB8" in flags.siblingAtColumn(3).data() and "scale=2x1" in flags.siblingAtColumn(3).data()
    assert "transfer engine" in [regs.index(b, 0).data() for b in range(regs.rowCount())]
    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(regs)
    view.resize(900, 300)
    view.setColumnWidth(0, 230)
    view.expand(flags.siblingAtColumn(0).parent())
    view.expand(flags.siblingAtColumn(0))
    view.scrollTo(flags)
    view.grab().save(str(tmp_path / "external_registers.png"))


def test_table_models_pass_the_model_tester(qtmodeltester, scene1_session) -> None:
    from picaemu.gui.panels.stats import COLUMNS, draw_row

    rows = tuple(draw_row(d) for d in scene1_session.timeline.draws)
    model = TableModel(COLUMNS, lambda r, c: str(r[COLUMNS[c]]))
    model.set_rows(rows)
    assert model.index(1, 1).data() == "1"
    qtmodeltester.check(model, force_py=True)
    model.set_rows(())


def test_command_tree_and_highlights(qtbot, window: MainWindow, captures_dir: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    tl = window.timeline
    tree = window.commands.model
    frame0 = tree.index(0, 0, QModelIndex())
    events = [tree.index(r, 0, frame0).data() for r in range(tree.rowCount(frame0))]
    list_row = next(i for i, t in enumerate(events) if "CommandList" in t)
    ev = tree.index(list_row, 0, frame0)
    draw = tree.index(0, 0, ev)
    assert draw.data().startswith("draw 0")
    trigger = tree.index(tree.rowCount(draw) - 1, 0, draw)
    assert "DRAW" in trigger.data() and tree.cursor_of(trigger) == tl.after_draw(0)
    write = tree.index(0, 0, trigger)
    assert write.data() == trigger.data().split()[0]
    window.commands.view.doubleClicked.emit(trigger)
    qtbot.waitUntil(lambda: window.snapshot is not None and window.snapshot.cursor == tl.after_draw(0), timeout=WAIT_MS)
    assert window.commands.view.currentIndex() == trigger  # the tree follows the position
    window.commands.jump.setText(f"{tl.events[tl.draws[0].event].packets[3].offset:X}")
    window.commands.jump.returnPressed.emit()
    assert tree.cursor_of(window.commands.view.currentIndex()) == tl.normalize(tl.draws[0].event, 4)
    inside = tl.events[tl.draws[0].event].packets[3].offset + 4  # the header word, inside the packet
    window.commands.jump.setText(f"{inside:X}")
    window.commands.jump.returnPressed.emit()
    assert tree.cursor_of(window.commands.view.currentIndex()) == tl.normalize(tl.draws[0].event, 4)
    goto(qtbot, window, tl.after_draw(1))
    reference = jobs.open_session(captures_dir / "scene1_triangle")  # independent: draw 0 vs draw 1 triggers
    regs0, regs1 = reference.state_at_draw(0).regs, reference.state_at_draw(1).regs
    assert np.array_equal(window.snapshot.regs, regs1) and window.snapshot.prev_draw == 0
    changed = set(np.flatnonzero(regs0 != regs1).tolist())
    assert changed  # the second list rewrites some state
    model = window.registers.model
    highlighted = set()
    for b in range(model.rowCount()):
        block = model.index(b, 0)
        for r in range(model.rowCount(block)):
            idx = model.index(r, 0, block)
            if model.data(idx, Qt.ItemDataRole.BackgroundRole) is not None:
                highlighted.add(model.register_at(idx).id)
    named = {i for i in changed if not state_reg_unknown(i)}
    # the packet just run (draw 1's trigger) wrote DRAWARRAYS: highlighted as written, though its value is equal
    from picaemu.regs import id_of

    assert window.snapshot.written == (id_of("DRAWARRAYS"),)
    assert highlighted == named | {id_of("DRAWARRAYS")}
    text = window.registers.copy_json()
    assert json.loads(text)["GPUREG_FRAMEBUFFER_DIM"]["id"] == 0x11E


def state_reg_unknown(reg_id: int) -> bool:
    from picaemu import regs

    return not any(r.id == reg_id for r in regs.all_registers())


def test_screenshots(qtbot, window: MainWindow, captures_dir: Path, tmp_path: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene2_textured_quad")
    window.framebuffer.wire.setChecked(True)
    qtbot.waitUntil(lambda: window.framebuffer.probe is not None, timeout=WAIT_MS)
    settle(qtbot, window)
    shots = {"main": window.grab()}
    shots.update({name: dock.widget().grab() for name, dock in window.docks.items()})
    for name, pixmap in shots.items():
        path = tmp_path / f"{name.replace(' ', '_')}.png"
        assert pixmap.save(str(path)) and path.stat().st_size > 1000, name
    image = shots["main"].toImage()
    assert image.width() >= 1000 and image.height() >= 700


def test_state_diff_between_two_positions(qtbot, window: MainWindow, captures_dir: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    tl = window.timeline
    first = tl.events[tl.draws[0].event]
    goto(qtbot, window, Cursor(first.index, 5))
    regs_a = window.snapshot.regs.copy()
    window.registers.mark.click()
    goto(qtbot, window, tl.after_draw(1))
    regs_b = window.snapshot.regs.copy()
    window.registers.diff.click()
    differ = np.flatnonzero(regs_a != regs_b)
    assert len(differ) > 0 and f"{len(differ)} registers differ" in window.registers.info.text()
    doc = json.loads(window.registers.copy_json())
    assert sorted(v["id"] for v in doc.values()) == differ.tolist()
    assert all(doc[k]["before"] == regs_a[v["id"]] and doc[k]["after"] == regs_b[v["id"]] for k, v in doc.items())


def test_image_view_zoom_pick(qtbot) -> None:
    from picaemu.gui.image_view import ImageView
    from PySide6.QtCore import QPointF

    view = ImageView()
    qtbot.addWidget(view)
    view.resize(200, 200)
    img = np.zeros((10, 20, 3), np.uint8)
    img[3, 7] = (255, 0, 0)
    view.set_image(img)
    view.fit()
    assert view.zoom == pytest.approx(10.0)
    centre = view.offset + QPointF(7.5, 3.5) * view.zoom  # the middle of image pixel (7, 3)
    assert view.image_pos(centre) == (7, 3) and view.image_pos(view.offset - QPointF(1, 1)) is None
    with qtbot.waitSignal(view.picked) as blocker:
        view.pick(7, 3)
    assert blocker.args == [7, 3]


def test_cli_registers_the_gui_command() -> None:
    from click.testing import CliRunner

    from picaemu.cli import main

    result = CliRunner().invoke(main, ["gui", "--help"])
    assert result.exit_code == 0 and "CAPTURE" in result.output


def test_geometry_shader_mesh_trace_and_uniform_names(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """gs_sprites built by the builder (so it carries uniform names): the mesh lists the 96 GS-emitted vertices,
    the shader view traces a GS invocation and labels c0 of the GS as ``size``."""
    from picaemu.formats import pica

    from samples import gs_sprites

    pica.write(tmp_path / "gs.pica", gs_sprites.build())
    open_scene(qtbot, window, tmp_path / "gs.pica")
    goto(qtbot, window, window.timeline.after_draw(0))
    assert window.mesh.gs_outputs.rowCount() == 96 and window.mesh.view3d.tris.shape == (48, 3, 4)
    assert "24 invocations" in window.mesh.label.text()
    window.shader.unit.setCurrentText("gs")
    settle(qtbot, window)
    assert window.shader.trace_button.text() == "Trace GS invocation"
    assert window.shader.uniforms.index(0, 0).data() == "c0 size"
    assert any("size" in window.shader.listing.item(i).text() for i in range(window.shader.listing.count()))
    window.shader.vertex.setValue(2)
    window.shader.trace_button.click()
    qtbot.waitUntil(lambda: len(window.shader.records) > 0, timeout=WAIT_MS)
    assert sum(r.text.startswith("emit") for r in window.shader.records) == 4
    assert window.shader.watch_label.text() == f"GS invocation 2: {len(window.shader.records)} steps"


def test_shader_trace_results_and_watch_follow_the_write_mask() -> None:
    """dp4 r0.x then dp4 r0.y then mov r0.zw: the watch shows each lane as its own write left it, and the Result
    column only the lanes an instruction wrote (the rest are not changed by it)."""
    from types import SimpleNamespace

    from picaemu.gui.panels.shader import _TRACE_CELLS, TRACE_HEADERS, watch_values

    def step(text: str, result: list[float], mask: int) -> SimpleNamespace:
        return SimpleNamespace(
            text=text,
            step=SimpleNamespace(result=result, mask=mask, pc=0, sources=[], cmp=(False, False), a0=(0, 0), aL=0),
        )

    records = [
        step("dp4 r0.x, c0, v0", [1.0, 1.0, 1.0, 1.0], 0b1000),
        step("dp4 r0.y, c1, v0", [2.0, 2.0, 2.0, 2.0], 0b0100),
        step("mov r0.zw, v1", [7.0, 8.0, 3.0, 4.0], 0b0011),
    ]
    assert watch_values(records, 0, ["r0", "r1"]) == {"r0": "(1, -, -, -)", "r1": "—"}
    assert watch_values(records, 2, ["r0"]) == {"r0": "(1, 2, 3, 4)"}
    result = TRACE_HEADERS.index("Result")
    assert _TRACE_CELLS[result](1, records[1]) == "(-, 2, -, -)"


def test_overlay_opacity_scales_only_the_overlay_alpha() -> None:
    from picaemu.gui.panels.framebuffer import with_opacity

    overlay = np.zeros((2, 2, 4), np.uint8)
    overlay[0, 0] = (255, 0, 255, 200)
    half = with_opacity(overlay, 50)
    assert half[0, 0].tolist() == [255, 0, 255, 100] and half[1, 1].tolist() == [0, 0, 0, 0]
    assert with_opacity(overlay, 0)[..., 3].max() == 0 and np.array_equal(with_opacity(overlay, 100), overlay)


def test_a_citrace_opens_on_its_first_drawing_frame(qtbot, window: MainWindow, captures_dir: Path) -> None:
    """scene1's CiTrace spends its first frame on setup: the window opens after the frame that draws, with a
    picture, not on a position whose registers name no render target."""
    open_scene(qtbot, window, captures_dir / "citrace" / "scene1_triangle.ctf")
    assert window.snapshot.last_draw == 0 and "color" in window.snapshot.images


def test_pipeline_state_panel_shows_the_draw_and_what_changed(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """On the 300-cube scene, draw 4 rebinds the texture: texture0 is highlighted, the TEV equation reads as
    texture 0 x primary color, and the HTML export holds both."""
    from pytestqt.modeltest import ModelTester

    from samples.generate import CAPTURES

    open_scene(qtbot, window, CAPTURES / "game_cubes_300.pica")
    goto(qtbot, window, window.timeline.after_draw(4))
    panel = window.pipeline_state
    qtbot.waitUntil(lambda: panel.draw == 4, timeout=WAIT_MS)
    ModelTester(None).check(panel.model)
    assert "texture0" in panel.changed and "tev" not in panel.changed
    equations = panel.state["tev_equations"]
    assert equations[0].startswith("stage 0: rgb = modulate(texture 0 [src.rgb], primary color [src.rgb])")
    assert all(line.endswith("pass-through)") for line in equations[1:])
    panel.export_html(tmp_path / "state.html")
    page = (tmp_path / "state.html").read_text()
    assert "Pipeline state at draw 4" in page and 'class="changed"' in page and "modulate" in page


def test_python_console_runs_on_the_replay(qtbot, window: MainWindow, captures_dir: Path) -> None:
    open_scene(qtbot, window, captures_dir / "scene1_triangle")
    out = window.console.output
    for source in (
        "len(timeline.draws)",
        "x = replay.pixel_history(90, 199, frame=1)",
        "[f.draw for f in x]",
        "undefined_name",
    ):
        window.console.input.setPlainText(source)
        window.console.submit()
        settle(qtbot, window)
    text = out.toPlainText()
    assert ">>> len(timeline.draws)\n2" in text
    assert ">>> [f.draw for f in x]\n[1]" in text  # the engine's pixel history (frame 1 draws draw 1), names kept
    assert "NameError: name 'undefined_name' is not defined" in text
    goto(qtbot, window, window.timeline.after_draw(0))  # the console moved the replay: moving still works
    assert window.snapshot.last_draw == 0


def test_statistics_panel_embeds_the_stats_figure(qtbot, scene1_session) -> None:
    """The panel shows the figure of ``picaemu stats --plot`` (three panels, the draws' fragment totals written
    above the bars) and marks the current draw."""
    from picaemu.gui.panels.stats import StatsPanel

    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.set_timeline(scene1_session.timeline)
    axes = panel.figure.axes
    assert [ax.get_title() for ax in axes][:2] == ["fragment fates", "geometry"]
    written = [d.stats["fragments_written"] for d in scene1_session.timeline.draws]
    assert [t.get_text() for t in axes[0].texts] == [f"{float(w):g}" for w in written]
    marker = [line for line in axes[0].lines if line.get_gid() == "current"]
    assert len(marker) == 1 and not marker[0].get_visible()
    panel.set_current_draw(1)
    assert marker[0].get_visible() and list(marker[0].get_xdata()) == [1, 1]


def _column_texts(model, parent=None) -> list[str]:
    """Every row's detail column (3), depth first, expanding the whole tree."""
    parent = parent if parent is not None else QModelIndex()
    out = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 3, parent)
        out.append(model.data(index) or "")
        out += _column_texts(model, model.index(row, 0, parent))
    return out


def test_command_tree_shows_uniform_uploads_as_vectors(qtmodeltester) -> None:
    """A float-uniform upload reads as the vectors it uploads (float24 and float32 word modes), and they are the
    values the command processor put in the uniform file."""
    b = CaptureBuilder()
    b.begin_frame()
    b.list.upload_float_uniforms("VSH", 5, [(1.5, -2.0, 0.25, 4.0), (0.0, 1.0, 8.0, -0.5)])
    b.list.upload_float_uniforms("VSH", 9, [(3.0, 2.0, 1.0, 0.125)], float32=True)
    b.end_frame()
    session = Session(Replay(b.capture()))
    tree = CommandTreeModel()
    tree.set_timeline(session.index())
    qtmodeltester.check(tree, force_py=True)
    texts = [t for t in _column_texts(tree) if t.startswith("vsh c")]
    assert texts == ["vsh c5 = (1.5, -2, 0.25, 4); vsh c6 = (0, 1, 8, -0.5)", "vsh c9 = (3, 2, 1, 0.125)"]
    uniforms = session.replay.state.vs.float_uniforms
    np.testing.assert_array_equal(uniforms[[5, 6, 9]], [[1.5, -2, 0.25, 4], [0, 1, 8, -0.5], [3, 2, 1, 0.125]])
