"""The work a move sets off after its snapshot (issue 26 item 6), kept beside ``main_window`` rather than in it
(as ``gui.inspectors`` and ``gui.find_requests`` are):

- a move cancels the previous position's follow-ups still waiting (``Worker.cancel``), and its snapshot goes to
  the front of the worker's queue (``urgent``), so a jump never waits behind the last jump's panels;
- each panel's follow-up (``PANELS``: pipeline state, bound textures, shader, mesh, pixel history) is asked for only
  when one of the docks that show it is on screen (a tabified dock behind another is not); a dock that comes on
  screen later asks for its data then, once per position (``done``). View › "Update hidden panels" asks for all
  of them after every move, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDockWidget

from picaemu.debug import jobs
from picaemu.debug.snapshot import Snapshot
from picaemu.debug.timeline import Cursor

if TYPE_CHECKING:
    from picaemu.gui.main_window import MainWindow

# follow-up kind -> the docks that show its result
PANELS: dict[str, tuple[str, ...]] = {
    "pipeline_state": ("Pipeline state", "Surface"),  # Surface: its render-target buttons
    "textures": ("Textures",),
    "shader": ("Shader",),
    "vertices": ("Mesh",),
    "history": ("Pixel history",),
}
# every kind of request that belongs to one position: what a move cancels
POSITION_KINDS = (*PANELS, "texture", "frame_map", "probe", "backend_diff")


def on_screen(dock: QDockWidget) -> bool:
    """Whether ``dock`` shows: open, and not a tab behind another (Qt hides those)."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def _history_job(picked: tuple[str, int, int] | None, cursor: Cursor) -> Callable | None:
    """The pixel history of the pixel picked as (view, x, y) at ``cursor`` (None: nothing picked)."""
    if picked is None:
        return None
    view, x, y = picked
    return partial(jobs.history, view=view, x=x, y=y, cursor=cursor)


class FollowUps:
    def __init__(self, win: MainWindow) -> None:
        self.win = win
        self.done: set[str] = set()  # the kinds asked for at the current snapshot
        self.update_hidden = False

    def connect(self) -> None:
        """Ask for a dock's data when it comes on screen (a tab raised, a dock opened)."""
        for kind, titles in PANELS.items():
            for title in titles:
                self.win.docks[title].visibilityChanged.connect(partial(self._dock_shown, kind))

    def cancel(self) -> None:
        """A move starts: the follow-ups of the position being left are not wanted any more."""
        self.win.worker.cancel(POSITION_KINDS)
        self.done.clear()

    def after_move(self, snap: Snapshot) -> None:
        """The snapshot of a move has arrived: ask for the follow-ups of the panels on screen."""
        win = self.win
        self.done.clear()
        win.edit_replay.set_draw(snap.last_draw)
        if win.framebuffer.frame_map_box.isChecked():  # the picture is always on screen
            win.worker.submit("frame_map", partial(jobs.fragment_map, cursor=snap.cursor, kind="depth-complexity"))
        for kind in PANELS:
            if self.wanted(kind):
                self.request(kind, snap)

    def wanted(self, kind: str) -> bool:
        if kind == "history" and self.win.history_pixel is None:
            return False
        return self.update_hidden or any(on_screen(self.win.docks[t]) for t in PANELS[kind])

    def request(self, kind: str, snap: Snapshot) -> None:
        """Ask the worker for ``kind`` at ``snap`` (the mesh says so when no draw has run)."""
        self.done.add(kind)
        win, cursor, draw = self.win, snap.cursor, snap.last_draw
        job: Callable | None = {
            "pipeline_state": partial(jobs.pipeline_state, cursor=cursor, base=win.pipeline_state.base_draw),
            "textures": partial(jobs.textures, cursor=cursor),
            "shader": partial(jobs.shader, cursor=cursor, unit=win.shader.unit.currentText()),
            "vertices": None if draw is None else partial(jobs.vertices, draw=draw),
            "history": _history_job(win.history_pixel, cursor),
        }[kind]
        if job is None:
            win.mesh.show_message("no draw has run yet at this position")
        else:
            win.worker.submit(kind, job)

    def _dock_shown(self, kind: str, visible: bool) -> None:
        snap = self.win.snapshot
        if visible and snap is not None and kind not in self.done and self.wanted(kind):
            self.request(kind, snap)
