"""The debugger's main window: dockable panels around the framebuffer view, menus, shortcuts, status bar,
drag and drop, recent files and remembered layout (QSettings), breakpoints persisted per capture.

All replay work goes to the one ``Worker`` (``gui.jobs`` functions); results come back through ``_on_result``,
stale ones are dropped. Moving (step / continue / run to) computes the target ``Cursor`` here from the immutable
timeline and asks for a ``Snapshot``; panels then ask for what they show (textures, shader, vertices, probes).
Errors are shown in a non-blocking dialog naming the error type and kept in ``last_error``; the window stays
usable.
"""

from __future__ import annotations

import json
import os
from functools import partial

from picaemu.gui import layout
from picaemu.gui.attach import LiveAttach
from picaemu.gui.comparison import Comparisons
from picaemu.gui.find_requests import FindRequests
from picaemu.gui.follow_ups import FollowUps
from picaemu.gui.inspectors import Inspectors
from picaemu.gui.opening import Opening
from picaemu.gui.panels.breakpoints import BreakpointPanel
from picaemu.gui.panels.commands import CommandPanel
from picaemu.gui.panels.console import ConsolePanel
from picaemu.gui.panels.draws import DrawsPanel
from picaemu.gui.panels.edit_replay import EditReplayPanel
from picaemu.gui.panels.framebuffer import FramebufferPanel
from picaemu.gui.panels.mesh import MeshPanel
from picaemu.gui.panels.pipeline_state import PipelineStatePanel
from picaemu.gui.panels.pixel_history import PixelHistoryPanel
from picaemu.gui.panels.registers import RegisterPanel
from picaemu.gui.panels.shader import ShaderPanel
from picaemu.gui.panels.stats import StatsPanel
from picaemu.gui.panels.textures import TexturePanel
from picaemu.gui.worker import JobResult, Worker
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox

from picaemu.debug import console, jobs
from picaemu.debug.snapshot import Snapshot
from picaemu.debug.timeline import Breakpoint, Cursor, Timeline, Unit, breakpoint_stops

STEP_KEYS = {  # (unit, forward) -> shortcut
    (Unit.PACKET, True): "F10",
    (Unit.PACKET, False): "Shift+F10",
    (Unit.DRAW, True): "F11",
    (Unit.DRAW, False): "Shift+F11",
    (Unit.LIST, True): "F9",
    (Unit.LIST, False): "Shift+F9",
    (Unit.FRAME, True): "F12",
    (Unit.FRAME, False): "Shift+F12",
}


def opening_position(tl: Timeline) -> Cursor:
    """Where a capture opens: the end of the first frame that draws (a CiTrace's first frame is often setup only),
    else the end."""
    if tl.draws and tl.frame_ends:
        frame = tl.draws[0].frame
        if frame < len(tl.frame_ends):
            return Cursor(tl.frame_ends[frame] + 1, 0)
    return tl.end


class MainWindow(Opening, QMainWindow):
    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("picaemu", "debugger")
        self.setWindowTitle("picaemu debugger")
        self.resize(*layout.default_size(self.screen().availableGeometry().size().toTuple()))
        self.setAcceptDrops(True)
        self.worker = Worker(self)  # a child: deleted with the window (see gui.worker)
        self.worker.done.connect(self._on_result)
        self.worker.progress.connect(lambda text: self.status.setText(text))
        self.timeline: Timeline | None = None
        self.snapshot: Snapshot | None = None
        self.path = ""
        self.last_error = ""
        self.target = Cursor(0, 0)
        self.history_pixel: tuple[str, int, int] | None = None  # (view, x, y) picked, re-asked at every position
        self.opening = ""  # the capture being opened (``path`` changes once it has opened)
        self.open_at_draw: int | None = None  # where the capture being opened opens (else ``opening_position``)
        self._recent_on_open = False
        self._build_panels()
        self.live = LiveAttach(self)  # File › Attach…: a live session (gui/attach.py)
        self._build_menus()
        self.status = QLabel("open a capture (File › Open, or drop it here)")
        self.statusBar().addWidget(self.status, 1)
        self.restoreGeometry(self.settings.value("geometry", b""))
        self.restoreState(self.settings.value("state", b""))

    # -- construction ------------------------------------------------------------------------------------
    def _dock(self, title: str, widget) -> QDockWidget:
        """A dock for ``widget``, placed by ``default_layout``."""
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.docks[title] = dock
        return dock

    def _build_panels(self) -> None:
        self.docks: dict[str, QDockWidget] = {}
        self.framebuffer = FramebufferPanel()
        self.setCentralWidget(self.framebuffer)
        self.commands, self.registers = CommandPanel(), RegisterPanel()
        self.history, self.textures, self.shader = PixelHistoryPanel(), TexturePanel(), ShaderPanel()
        self.mesh, self.stats, self.breakpoints = MeshPanel(), StatsPanel(), BreakpointPanel()
        self.draws, self.pipeline_state, self.console = DrawsPanel(), PipelineStatePanel(), ConsolePanel()
        self.edit_replay = EditReplayPanel()
        self.inspectors = Inspectors(self)  # the Surface and Fragment docks
        self.finding = FindRequests(self)  # the Find dock; thumbnails, statistics and search requests
        self.comparisons = Comparisons(self)  # state differences between draws, captures side by side
        self.find = self.finding.find
        self.follow_ups = FollowUps(self)  # what a move asks for after its snapshot
        widgets = {
            "Command stream": self.commands,
            "Draws": self.draws,
            "Find": self.find,
            "Breakpoints": self.breakpoints,
            "Lint": self.finding.lint,
            "Registers": self.registers,
            "Pipeline state": self.pipeline_state,
            "Pixel history": self.history,
            "Fragment": self.inspectors.fragment,
            "Why?": self.inspectors.why,
            "Textures": self.textures,
            "Surface": self.inspectors.surface,
            "Shader": self.shader,
            "Mesh": self.mesh,
            "Statistics": self.stats,
            "Python": self.console,
            "Edit and replay": self.edit_replay,
        }
        for title, widget in widgets.items():
            self._dock(title, widget)
        self.default_layout()
        self._sized = False
        self.commands.run_to.connect(self.move_to)
        self.console.submitted.connect(self.run_console)
        self.framebuffer.frame_map_wanted.connect(self._request_frame_map)
        self._console_scope: dict = {}
        self.stats.run_to_draw.connect(self.run_to_draw)
        self.draws.run_to_draw.connect(self.run_to_draw)
        self.framebuffer.pixel_picked.connect(self.pick_pixel)
        self.framebuffer.screen_picked.connect(self.pick_in_view)
        self.framebuffer.overlays_wanted.connect(self._request_probe)
        self.framebuffer.backend_diff_wanted.connect(self._request_backend_diff)
        self.textures.wanted.connect(self._request_texture)
        self.inspectors.connect()
        self.finding.connect()
        self.comparisons.connect()
        self.follow_ups.connect()
        self.shader.wanted.connect(self._shader_request)
        self.breakpoints.changed.connect(self._save_breakpoints)
        self.registers.edit_wanted.connect(self._propose_edit)
        self.pipeline_state.edit_wanted.connect(self._propose_state_edit)
        self.edit_replay.replay_wanted.connect(self.request_edit)

    def default_layout(self) -> None:
        """The layout of a first start (``gui.layout``); sizes follow once the window is shown."""
        layout.arrange(self, self.docks)

    def _update_hidden(self, on: bool) -> None:
        self.follow_ups.update_hidden = on
        if on and self.snapshot is not None:
            self.follow_ups.after_move(self.snapshot)

    def reset_layout(self) -> None:
        """View › Default layout: the first start's layout and sizes, whatever was saved."""
        self.default_layout()
        for dock in self.docks.values():  # docks the user closed come back
            dock.show()
        layout.size(self, self.docks)

    def _action(self, menu, text: str, slot, shortcut: str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        self.actions_by_text[text] = action
        return action

    def _build_menus(self) -> None:
        self.actions_by_text: dict[str, QAction] = {}
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "Open…", self._open_dialog, "Ctrl+O")
        self._action(file_menu, "Open c3dcap scene folder…", self._open_folder_dialog)
        self._action(file_menu, "Open raw command list…", self._open_raw_dialog)
        self._action(file_menu, "Compare with capture…", self._compare_dialog)
        self._action(file_menu, "Attach to a running program…", self.live.attach_dialog)
        self.recent_menu = file_menu.addMenu("Recent")
        self._fill_recent()
        self._action(file_menu, "Quit", self.close, "Ctrl+Q")
        debug = self.menuBar().addMenu("&Debug")
        for (unit, forward), key in STEP_KEYS.items():
            text = f"{'Step' if forward else 'Back'} {unit.value}"
            self._action(debug, text, partial(self.step, unit, forward), key)
        self._action(debug, "Continue to breakpoint", partial(self.continue_, True), "F5")
        self._action(debug, "Reverse continue", partial(self.continue_, False), "Shift+F5")
        self._action(debug, "Go to start", lambda: self.move_to(Cursor(0, 0)), "Home")
        self._action(debug, "Go to end", lambda: self.timeline and self.move_to(self.timeline.end), "End")
        self._action(debug, "Find…", self.finding.focus_find, "Ctrl+F")
        self._action(debug, "Bookmark here…", self.commands.ask_bookmark, "Ctrl+B")
        self._action(debug, "Why? (current draw)", self.inspectors.request_why, "Ctrl+Y")
        self.live.build_menu()
        view = self.menuBar().addMenu("&View")
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        self._action(view, "Default layout", self.reset_layout)
        hidden = self._action(view, "Update hidden panels", self._update_hidden)
        hidden.setCheckable(True)
        hidden.setToolTip("after every move, also compute the panels behind other tabs (slower moves)")

    # -- moving ------------------------------------------------------------------------------------------
    def move_to(self, cursor: Cursor) -> int | None:
        if self.timeline is None:
            return None
        self.target = cursor
        self.status.setText(f"going to {cursor.text()} …")
        self.follow_ups.cancel()
        return self.worker.submit("snapshot", partial(jobs.snapshot, cursor=cursor), urgent=True)

    def step(self, unit: Unit, forward: bool = True) -> int | None:
        if self.timeline is None:
            return None
        return self.move_to(self.timeline.step(self.target, unit, forward))

    def run_to_draw(self, draw: int) -> int | None:
        return self.move_to(self.timeline.after_draw(draw)) if self.timeline is not None else None

    def continue_(self, forward: bool = True) -> int | None:
        if self.timeline is None:
            return None
        try:
            stops = breakpoint_stops(self.breakpoints.breakpoints, self.timeline)
        except Exception as err:
            self.show_error("Breakpoints", f"{type(err).__name__}: {err}")
            return None
        target = Timeline.seek(stops, self.target, forward) if stops else self.target
        if target == self.target:  # say so and stay, rather than running silently to an end
            self.status.setText(f"no breakpoint hit {'after' if forward else 'before'} {self.target.text()}")
            return None
        return self.move_to(target)

    # -- panel requests ----------------------------------------------------------------------------------
    def _current_draw(self) -> int | None:
        return self.snapshot.last_draw if self.snapshot is not None else None

    def _request_backend_diff(self) -> None:
        draw = self._current_draw()
        if draw is None:
            self.framebuffer.set_backend_diff(None, "no draw has run yet at this position")
        else:
            self.worker.submit("backend_diff", partial(jobs.backend_diff, draw=draw))

    def _got_backend_diff(self, result: JobResult) -> None:
        self.framebuffer.set_backend_diff(result.value)

    def _request_probe(self) -> None:
        draw = self._current_draw()
        if draw is not None:
            self.worker.submit("probe", partial(jobs.draw_probe, draw=draw))

    def _request_texture(self, request: tuple) -> None:
        if self.timeline is not None:
            self.worker.submit("texture", partial(jobs.texture_picture, cursor=self.target, request=request))

    def _shader_request(self, request: tuple) -> None:
        if self.timeline is None:
            return
        if request[0] == "shader":
            self.worker.submit("shader", partial(jobs.shader, cursor=self.target, unit=request[1]))
        elif (draw := self._current_draw()) is None:
            return
        elif request[0] == "source":
            self.docks["Edit and replay"].raise_()
            self.worker.submit("shader_source", partial(jobs.shader_source, draw=draw, unit=request[1]))
        else:
            _, unit, index = request
            self.worker.submit("trace", partial(jobs.trace, draw=draw, vertex=index, unit=unit))

    def _propose_edit(self, text: str) -> None:
        self.docks["Edit and replay"].raise_()
        self.edit_replay.propose(text)

    def _propose_state_edit(self, path: str, shown: str) -> None:
        if self.snapshot is not None:
            self.docks["Edit and replay"].raise_()
            self.edit_replay.propose_state_row(path, shown, self.snapshot.regs)

    def request_edit(self, draw: int, changes: tuple, scope: str) -> int | None:
        """Edit and replay at ``draw`` on the worker (``jobs.edit``); the result goes to the edit panel."""
        if self.timeline is None:
            return None
        return self.worker.submit("edit", partial(jobs.edit, draw=draw, edits=changes, scope=scope))

    def pick_pixel(self, x: int, y: int) -> int | None:
        """Pixel history of window pixel (x, y) of the render target at the position."""
        return self.pick_in_view("color", x, y)

    def pick_in_view(self, view: str, x: int, y: int) -> int | None:
        """Pixel history of the pixel picked in ``view`` (``picaemu.debug.history.view_history``)."""
        if self.timeline is None:
            return None
        self.history_pixel = (view, x, y)
        self.history.label.setText(f"{view} pixel ({x}, {y}): replaying draws …")
        return self.worker.submit("history", partial(jobs.history, view=view, x=x, y=y, cursor=self.target))

    # -- results -----------------------------------------------------------------------------------------
    def _on_result(self, result: JobResult) -> None:
        if (
            self.finding.handle(result)
            or result.stale
            or self.live.handle(result)
            or self.inspectors.handle(result)
            or self.comparisons.handle(result)
        ):
            return
        if result.error is not None:
            self._failed(result)
            return
        if result.kind.startswith("console"):
            self.console.show_output(result.value)
            return
        handler = getattr(self, f"_got_{result.kind}", None)
        try:
            if handler is not None:
                handler(result)
        except Exception as err:  # a panel that cannot show a result must not take the app down
            self.show_error(f"showing {result.kind}", f"{type(err).__name__}: {err}")

    def _failed(self, result: JobResult) -> None:
        if result.kind == "texture":
            self.textures.show_texture(None, result.error_text)
        elif result.kind == "vertices":
            self.mesh.show_message(result.error_text)
        elif result.kind == "backend_diff":  # no EGL: one line beside the picture, no dialog
            self.framebuffer.set_backend_diff(None, result.error_text)
        elif result.kind == "trace":  # an index past the draw: clear the old trace rather than keep showing it
            self.shader.show_trace(result.error_text, [])
        elif result.kind == "edit":  # a bad edit is named in the panel, the window goes on
            self.edit_replay.show_error(result.error_text)
        elif result.kind == "history":  # a pick no draw or transfer explains: named in the panel
            self.history.show_error(result.error_text)
        else:
            self.show_error(f"{result.kind} failed", result.error_text)
        if result.kind == "open":  # the previous capture, title and recent files stay as they were
            self.status.setText(f"could not open {self.opening}")

    def show_error(self, title: str, text: str) -> None:
        self.last_error = text
        self.status.setText(text)
        box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _got_open(self, result: JobResult) -> None:
        opened: jobs.Opened = result.value
        self.path = self.opening
        if self._recent_on_open:
            self._remember(self.path)
        self.history_pixel = None  # a pick on the previous capture means nothing here
        self._console_scope.clear()  # the console's names belonged to the previous session
        self.history.show_history(None)
        self.setWindowTitle(f"picaemu debugger — {os.path.basename(self.path)}")
        self.show_timeline(opened, plot=not self.live.running)  # a live session plots when it pauses or ends
        tl = opened.timeline
        fault = opened.fault
        if fault is not None:
            self.show_error(
                "Capture fault",
                f"the capture stops replaying at a fault: {type(fault).__name__}: "
                f"{fault}\nEverything before it can be inspected.",
            )
        draw, self.open_at_draw = self.open_at_draw, None
        self.move_to(tl.after_draw(draw) if draw is not None and 0 <= draw < len(tl.draws) else opening_position(tl))

    def show_timeline(self, opened: jobs.Opened, *, plot: bool = True) -> None:
        """The panels that list events and draws, on a new timeline (an open; a live session's new frames:
        ``plot=False`` leaves the statistics figure as it was)."""
        self.timeline = tl = opened.timeline
        self.commands.set_timeline(tl, self.path, opened.markers)
        self.stats.set_timeline(tl, plot=plot)
        self.draws.set_draws(tl)
        self.finding.opened()
        self.breakpoints.set_breakpoints(self._load_breakpoints())
        self.pipeline_state.set_draw_count(len(tl.draws))

    def _got_snapshot(self, result: JobResult) -> None:
        snap: Snapshot = result.value
        self.snapshot = snap
        tl = self.timeline
        draw = (
            f"draw {snap.last_draw} ({snap.last_draw + 1} of {len(tl.draws)} run)"
            if snap.last_draw is not None
            else f"no draw run (of {len(tl.draws)})"
        )  # draws are numbered from 0; the count from 1
        self.status.setText(
            f"frame {snap.frame} | {draw} | event {snap.cursor.event}/{len(tl.events)} "
            f"packet {snap.cursor.packet} | {1000 * result.seconds:.1f} ms"
        )
        self.commands.set_cursor(snap.cursor)
        self.registers.show_snapshot(snap)
        self.framebuffer.show_snapshot(snap)
        self.stats.set_current_draw(snap.last_draw)
        self.draws.select(snap.last_draw)
        self.follow_ups.after_move(snap)

    def _got_textures(self, result: JobResult) -> None:
        self.textures.set_bound(result.value[1])

    def _got_texture(self, result: JobResult) -> None:
        self.textures.show_texture(*result.value)

    def _got_shader(self, result: JobResult) -> None:
        self.shader.show_shader(result.value)

    def _got_trace(self, result: JobResult) -> None:
        self.shader.show_trace(f"{self.shader.index_label.text()} {self.shader.vertex.value()}", result.value)

    def _got_vertices(self, result: JobResult) -> None:
        self.mesh.show_vertices(self._current_draw(), result.value)

    def _got_probe(self, result: JobResult) -> None:
        self.framebuffer.set_probe(result.value)

    def _request_frame_map(self) -> None:
        if self.timeline is not None:
            self.worker.submit("frame_map", partial(jobs.fragment_map, cursor=self.target, kind="depth-complexity"))

    def _got_frame_map(self, result: JobResult) -> None:
        self.framebuffer.set_frame_map(result.value)

    def run_console(self, source: str) -> int | None:
        """Run Python typed into the console on the worker (the replay's thread); the output comes back as a job."""
        if self.timeline is None:
            self.console.show_output("open a capture first")
            return None
        scope = self._console_scope

        def job(session):
            if not scope:
                scope.update(console.namespace(session))
            return console.run(session, source, scope)

        return self.worker.submit(f"console {id(source)}", job)  # every statement runs: none coalesces

    def _got_edit(self, result: JobResult) -> None:
        self.edit_replay.show_result(result.value)

    def _got_shader_source(self, result: JobResult) -> None:
        self.edit_replay.show_source(*result.value)

    def _got_pipeline_state(self, result: JobResult) -> None:
        self.pipeline_state.show_state(*result.value)
        self.inspectors.show_state(result.value[1])

    def _got_history(self, result: JobResult) -> None:
        where = self.snapshot.cursor.text() if self.snapshot is not None else ""
        self.history.show_history(result.value, where)

    # -- breakpoints and settings ------------------------------------------------------------------------
    def _bp_key(self) -> str:
        return "breakpoints/" + self.path.replace("/", "|").replace("\\", "|")

    def _load_breakpoints(self) -> list[Breakpoint]:
        try:
            return [Breakpoint.from_dict(d) for d in json.loads(self.settings.value(self._bp_key(), "[]"))]
        except (TypeError, ValueError, KeyError):
            return []

    def _save_breakpoints(self, bps: list[Breakpoint]) -> None:
        if self.path:
            self.settings.setValue(self._bp_key(), json.dumps([bp.to_dict() for bp in bps]))

    def showEvent(self, event) -> None:
        """First show without a saved layout: the default layout's sizes (the picture gets most of the room)."""
        super().showEvent(event)
        if not self._sized and not self.settings.value("state"):
            self._sized = True
            layout.size(self, self.docks)

    def closeEvent(self, event) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState())
        self.settings.sync()
        self.live.detach()
        self.worker.stop()
        self.comparisons.close_partner()  # capture B's window goes with this one
        super().closeEvent(event)
