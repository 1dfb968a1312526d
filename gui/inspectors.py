"""The main window's Surface and Fragment docks (issue 16 items 3-4): their panels, the requests they send the worker
and the results they show, kept beside ``main_window`` rather than in it.

- Surface (``panels.surface``): decodes on the worker at the window's position (``jobs.surface``); follows pixels
  picked in the framebuffer view; its render-target buttons use the pipeline state the window receives.
- Fragment (``panels.fragment``): "Debug fragment" on a pixel-history row runs ``jobs.fragment``; a double-click on
  a row goes to that row's draw.
- Why? (``panels.why``): its button (and Debug > Why?) runs ``jobs.why`` on the current draw: the draw selected in
  the Draws list or the statistics table (a click runs to it), or the last one at the window's position.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from picaemu.gui.panels.fragment import FragmentPanel
from picaemu.gui.panels.surface import SurfacePanel
from picaemu.gui.panels.why import WhyPanel
from picaemu.gui.worker import JobResult

from picaemu.debug import jobs

if TYPE_CHECKING:
    from picaemu.gui.main_window import MainWindow


class Inspectors:
    KINDS = ("surface", "fragment", "why")

    def __init__(self, win: MainWindow) -> None:
        self.win = win
        self.surface, self.fragment, self.why = SurfacePanel(), FragmentPanel(), WhyPanel()

    def connect(self) -> None:
        """Wire the panels to the window's other panels (they exist once the window has built them)."""
        win = self.win
        win.framebuffer.pixel_picked.connect(self.surface.follow_window_pixel)
        win.history.goto_draw.connect(win.run_to_draw)
        win.history.debug_wanted.connect(self._request_fragment)
        self.surface.wanted.connect(self._request_surface)
        self.why.why_wanted.connect(self.request_why)

    def request_why(self) -> int | None:
        """Ask why the current draw shows what it shows; the job's id (None before the first draw)."""
        draw = self.win._current_draw()
        if draw is None:
            self.why.show_why(None, "no draw has run yet at this position")
            return None
        self.win.docks["Why?"].raise_()
        return self.win.worker.submit("why", partial(jobs.why, draw=draw))

    def _request_surface(self, request: tuple) -> None:
        if self.win.timeline is not None:
            self.win.worker.submit("surface", partial(jobs.surface, cursor=self.win.target, request=request))

    def _request_fragment(self, request: tuple) -> None:
        if self.win.timeline is not None:
            draw, window, index = request
            self.win.worker.submit("fragment", partial(jobs.fragment, draw=draw, window=window, index=index))

    def show_state(self, state: dict[str, Any] | None) -> None:
        """The current draw's pipeline state (``jobs.pipeline_state``): its render targets for the Surface panel."""
        self.surface.set_render_targets((state or {}).get("framebuffer"))

    def handle(self, result: JobResult) -> bool:
        """Show a (not stale) result of one of ``KINDS``, its error in the panel; False for any other kind."""
        if result.kind not in self.KINDS:
            return False
        show = {
            "surface": self.surface.show_surface,
            "fragment": self.fragment.show_fragment,
            "why": self.why.show_why,
        }[result.kind]
        try:
            if result.error is not None:
                show(None, result.error_text)
            else:
                show(result.value)
                if result.kind == "fragment":
                    self.win.docks["Fragment"].raise_()
        except Exception as err:  # a panel that cannot show a result must not take the app down
            self.win.show_error(f"showing {result.kind}", f"{type(err).__name__}: {err}")
        return True
