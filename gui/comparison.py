"""A/B comparisons in the debugger window, kept beside ``main_window`` rather than in it:

- the structured difference of the states at two draws of the open capture (``jobs.state_diff``, the engine's
  ``picaemu.debug.state_diff``: registers by field, uniforms by name, textures by content hash, shader programs
  by disassembly): asked by the pipeline-state panel's "Diff A → this draw" and by the register panel's
  "Diff A → here", shown in the pipeline-state panel;
- the draw the pipeline-state panel's highlights compare with (its "compare with A" box): a change asks the state
  again (``jobs.pipeline_state`` with ``base``);
- two captures side by side (File › Compare with capture…, ``picaemu gui A --compare B``): ``jobs.capture_diff``
  (the engine's ``picaemu.debug.capture_diff``, fresh replays of both files) finds where they part; B opens in a
  second window beside this one, each window goes to its side's first differing draw, and this window's
  pipeline-state panel shows the state difference there (its title says where they part, or that they are
  equal).
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

from picaemu.gui.worker import JobResult
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from picaemu.debug import jobs
from picaemu.debug.capture_diff import CaptureDiff

if TYPE_CHECKING:
    from picaemu.gui.main_window import MainWindow


class Comparisons:
    KINDS = ("state_diff", "capture_diff")

    def __init__(self, win: MainWindow) -> None:
        self.win = win
        self.partner: MainWindow | None = None  # the window showing capture B
        self.result: CaptureDiff | None = None

    def connect(self) -> None:
        """Wire the panels (they exist once the window has built them)."""
        win = self.win
        win.pipeline_state.diff_wanted.connect(self.request_state_diff)
        win.pipeline_state.base_changed.connect(self.request_state)
        win.registers.state_diff_wanted.connect(self.request_state_diff)

    def request_state(self) -> int | None:
        """The pipeline state at the window's position, compared with the panel's draw A."""
        win = self.win
        if win.timeline is None or win.snapshot is None:
            return None
        base = win.pipeline_state.base_draw
        return win.worker.submit("pipeline_state", partial(jobs.pipeline_state, cursor=win.snapshot.cursor, base=base))

    def request_state_diff(self, draw_a: int) -> int | None:
        """The difference from draw ``draw_a`` to the current draw, for the pipeline-state panel."""
        win = self.win
        draw_b = win.snapshot.last_draw if win.snapshot is not None else None
        if win.timeline is None or draw_b is None:
            return None
        win.docks["Pipeline state"].raise_()
        return win.worker.submit("state_diff", partial(jobs.state_diff, draw_a=draw_a, draw_b=draw_b))

    def compare_with(self, path_b: str, path_a: str = "") -> int | None:
        """Compare the open capture (or ``path_a``, being opened) with the capture file ``path_b`` (module
        docstring)."""
        win = self.win
        path_a = path_a or win.path
        if not path_a:
            win.status.setText("open a capture first, then compare it with another")
            return None
        win.status.setText(f"comparing {os.path.basename(path_a)} with {os.path.basename(path_b)} …")
        return win.worker.submit("capture_diff", partial(jobs.capture_diff, path_a=path_a, path_b=str(path_b)))

    def handle(self, result: JobResult) -> bool:
        """Show a (not stale) result of one of ``KINDS``; False for any other kind."""
        if result.kind not in self.KINDS:
            return False
        panel = self.win.pipeline_state
        if result.error is not None:
            if result.kind == "state_diff":
                panel.show_diff("difference", None, result.error_text)
            else:
                self.win.show_error("Compare captures", result.error_text)
            return True
        if result.kind == "state_diff":
            a, b, diff = result.value
            panel.show_diff(f"draw {a} → draw {b}", diff)
        else:
            self._show_capture_diff(result.value)
        return True

    def _show_capture_diff(self, result: CaptureDiff) -> None:
        win = self.win
        self.result = result
        name_a, name_b = (os.path.basename(side["capture"]) for side in (result.a, result.b))
        summary = f"{name_a} vs {name_b}: {result.summary()}"
        win.status.setText(summary)
        win.setWindowTitle(f"picaemu debugger — {summary}")  # the status bar moves on with the window
        if result.equal:
            win.pipeline_state.show_diff(f"{name_a} vs {name_b}", {}, "")
            return
        title = f"{name_a} draw {result.first_draw} → {name_b} draw {result.first_draw_b}"
        win.pipeline_state.show_diff(title, result.state or {}, "" if result.state is not None else result.summary())
        win.docks["Pipeline state"].raise_()
        if result.first_draw is not None:
            win.run_to_draw(result.first_draw)
        partner = self._open_partner(result.b["capture"], result.first_draw_b)
        partner.pipeline_state.show_diff(title, result.state or {})

    def close_partner(self) -> None:
        """Close capture B's window (it deletes itself on close), if one is open."""
        if self.partner is not None:
            self.partner.close()

    def _forget_partner(self) -> None:
        self.partner = None

    def _open_partner(self, path: str, draw: int | None) -> MainWindow:
        """Capture B in a second window, the right half of the screen (this window the left), at ``draw``."""
        from picaemu.gui.main_window import MainWindow

        win = self.win
        if self.partner is None:
            self.partner = partner = MainWindow(win.settings)
            # closing B's window stops its worker for good: delete it then (with its session) and open a new one
            # for the next comparison
            partner.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            partner.destroyed.connect(self._forget_partner)
        partner = self.partner
        screen = (win.screen() or QGuiApplication.primaryScreen()).availableGeometry()
        half = screen.width() // 2
        win.setGeometry(screen.x(), screen.y(), half, screen.height())
        left = max(screen.x() + half, win.frameGeometry().right() + 1)  # a window wider than half: beside it
        partner.setGeometry(left, screen.y(), screen.width() - half, screen.height())
        partner.open_at_draw = draw
        partner.show()
        partner.open_path(path)
        partner.docks["Pipeline state"].raise_()
        return partner
