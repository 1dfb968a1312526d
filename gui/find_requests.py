"""The main window's requests and results for finding draws (issue 16 item 1): the Find panel's searches and
program list, the Draws panel's footprint thumbnails. A mixin of ``MainWindow`` (before ``QMainWindow`` in its
bases): it uses the window's ``worker``, ``timeline``, ``find`` and ``draws``; results arrive through the window's
``_got_<kind>`` dispatch."""

from __future__ import annotations

from functools import partial

from picaemu.gui.worker import JobResult

from picaemu.debug import jobs


class FindRequests:
    def focus_find(self) -> None:
        """Ctrl+F: show the Find panel with its search box focused."""
        self.docks["Find"].show()
        self.docks["Find"].raise_()
        self.find.query.setFocus()
        self.find.query.selectAll()

    def search(self, text: str) -> int | None:
        """The Find panel's query on the worker (``jobs.search``); the hits go back to the panel."""
        if self.timeline is None:
            return self.find.show_error("open a capture first")
        return self.worker.submit("search", partial(jobs.search, text=text))

    def _got_search(self, result: JobResult) -> None:
        self.find.show_hits(result.value)

    def _got_programs(self, result: JobResult) -> None:
        self.find.set_programs(result.value)

    def _request_footprints(self, draws: list[int]) -> None:
        if self.timeline is not None:
            zoom = self.draws.zoom.isChecked()
            self.worker.submit("footprints", partial(jobs.footprints, draws=draws, zoom=zoom))

    def _got_footprints(self, result: JobResult) -> None:
        timeline, zoom, images = result.value
        fresh = timeline is self.timeline and zoom == self.draws.zoom.isChecked()  # not for an earlier model
        self.draws.set_thumbnails(images if fresh else {})  # a void batch still ends: the next one may go
