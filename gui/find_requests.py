"""The main window's part in finding the draw that matters (issue 16 item 1), kept beside ``main_window`` rather
than in it (as ``gui.inspectors`` does for the Surface and Fragment docks):

- Find (``panels.find``): its searches run on the worker (``jobs.search``), the capture's programs are asked for
  once it opens (``jobs.programs``), a hit runs the window to its position; Ctrl+F focuses the search box.
- Draws (``panels.draws``): footprint thumbnails for the rows on screen (``jobs.footprints``); a batch computed for
  an earlier capture or kind of thumbnail is dropped, but still frees the next.
- Statistics (``panels.stats``): a frame row runs to the frame's end; its button turns the framebuffer view's
  whole-frame overlay on.
- Lint (``panels.lint``): ``picaemu lint`` on the worker (``jobs.lint``), asked for once a capture has opened (after
  the requests of the opening, which go first) and by the panel's Run button; a finding runs the window to it.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from picaemu.gui.panels.find import FindPanel
from picaemu.gui.panels.lint import LintPanel
from picaemu.gui.worker import JobResult
from PySide6.QtCore import QTimer

from picaemu.debug import jobs

if TYPE_CHECKING:
    from picaemu.gui.main_window import MainWindow


class FindRequests:
    KINDS = ("search", "programs", "footprints", "lint")

    def __init__(self, win: MainWindow) -> None:
        self.win = win
        self.find = FindPanel()
        self.lint = LintPanel()

    def connect(self) -> None:
        """Wire the panels to the window (they exist once the window has built them)."""
        win = self.win
        self.find.run_to.connect(win.move_to)
        self.find.search.connect(self.search)
        self.lint.run_to.connect(win.move_to)
        self.lint.wanted.connect(self.request_lint)
        win.stats.run_to.connect(win.move_to)
        win.stats.frame_map_wanted.connect(win.framebuffer.show_frame_map)
        win.draws.thumbnails_wanted.connect(self._request_footprints)

    def opened(self) -> None:
        """A capture has opened: no hits of the previous one; its programs for the picker."""
        self.find.clear()
        self.lint.clear()
        self.win.worker.submit("programs", jobs.programs)
        QTimer.singleShot(0, self.lint.request)  # after the window's first snapshot request

    def request_lint(self) -> int | None:
        """The Lint panel's run on the worker (``jobs.lint``); the findings go back to the panel."""
        if self.win.timeline is None:
            return self.lint.show_error("open a capture first")
        return self.win.worker.submit("lint", jobs.lint)

    def focus_find(self) -> None:
        """Ctrl+F: show the Find panel with its search box focused."""
        self.win.docks["Find"].show()
        self.win.docks["Find"].raise_()
        self.find.query.setFocus()
        self.find.query.selectAll()

    def search(self, text: str) -> int | None:
        """The Find panel's query on the worker (``jobs.search``); the hits go back to the panel."""
        if self.win.timeline is None:
            return self.find.show_error("open a capture first")
        return self.win.worker.submit("search", partial(jobs.search, text=text))

    def _request_footprints(self, draws: list[int]) -> None:
        if self.win.timeline is not None:
            zoom = self.win.draws.zoom.isChecked()
            stop = self.win.worker.preempted  # a move waiting stops the batch between two draws
            self.win.worker.submit("footprints", partial(jobs.footprints, draws=draws, zoom=zoom, stop=stop))

    def handle(self, result: JobResult) -> bool:
        """Show a result of one of ``KINDS`` (errors in the panels); False for any other kind."""
        if result.kind not in self.KINDS:
            return False
        if result.kind == "footprints":
            self._footprints(result)
        elif result.stale:
            pass  # a newer query or program list is on its way
        elif result.error is not None:  # said in the panel, no dialog
            (self.lint if result.kind == "lint" else self.find).show_error(result.error_text)
        elif result.kind == "lint":
            self.lint.show_findings(result.value)
        elif result.kind == "search":
            self.find.show_hits(result.value)
        else:
            self.find.set_programs(result.value)
        return True

    def _footprints(self, result: JobResult) -> None:
        """A batch of thumbnails: one batch is out at a time, so even a stale one (superseded by a new capture's)
        ends the wait; only a batch for the current capture and kind of thumbnail is shown."""
        draws = self.win.draws
        if result.error is not None:
            if not result.stale:
                draws.model.batch_failed()
                self.win.status.setText(f"draw thumbnails: {result.error_text}")
            return
        timeline, zoom, images = result.value
        fresh = timeline is self.win.timeline and zoom == draws.zoom.isChecked()
        draws.set_thumbnails(images if fresh else {})
