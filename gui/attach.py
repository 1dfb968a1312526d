"""A live session in the debugger (File › Attach…): record a running program and debug its frames as they come.

``LiveAttach`` runs ``picaemu record --live`` on a thread of its own (``picaemu-record``: the recorder with a
``LiveCapture``, so the capture file on disk grows by one complete frame per frame end, as with the CLI). Each
recorded frame is handed to the GUI thread (a queued Qt signal) and from there to the session's worker as a
``live`` job: the first one opens a session over the frames so far, later ones ``Session.extend`` it with the
frames it lacks (jobs of one kind coalesce, so frames that arrive while one is indexed are taken together).

- Following: while the target runs, the window goes to the end of the newest frame after each job.
- Pause (Live › Pause): the recorder thread waits at the next frame end, the program halted in its present; the
  session then holds every frame up to there and every panel works on them. Resume lets it go on.
- Detach (Live › Detach, closing the window): recording ends at the next frame end (or at once when paused) and the
  program runs on without breakpoints. Opening another capture meanwhile leaves it open: the recording goes on
  into the file, the window no longer follows.

``latencies``: per frame, seconds from the stop that ended it on the target (the top-screen present: the program
has submitted the whole frame) to the window showing that frame's end (the snapshot result handled).
"""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from typing import TYPE_CHECKING

from picaemu.formats import pica
from picaemu.gui.worker import JobResult
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog

from picaemu.debug import jobs
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.errors import TargetExited
from picaemu.record.gdb import GdbClient, parse_endpoint
from picaemu.record.live import LiveCapture, recording_meta
from picaemu.record.recorder import FrameDone, Recorder
from picaemu.record.symbols import find_hooks

if TYPE_CHECKING:
    from picaemu.gui.main_window import MainWindow


class LiveAttach(QObject):
    """See the module docstring."""

    recorded = Signal(object)  # FrameDone, from the recording thread
    state = Signal(str)  # "paused", "done: <why>" (an end by design), "error: <message>"; from that thread

    def __init__(self, win: MainWindow) -> None:
        super().__init__()
        self.win = win
        self.recorded.connect(self._frame)
        self.state.connect(self._state)
        self.frames: list[FrameDone] = []  # every frame recorded, in order (GUI thread)
        self.recorder: Recorder | None = None
        self.session: Session | None = None  # the live session (the worker's, once the first frame is indexed)
        self.output = ""
        self.running = self.paused = False
        self.latencies: dict[int, float] = {}
        self._shown = 0  # frames in the session the window shows
        self._waiting: tuple[Cursor, int] | None = None  # (snapshot cursor, frames) whose display is timed
        self._pause, self._go = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self._detach = False  # asked before the recorder existed

    def build_menu(self) -> None:
        menu = self.win.menuBar().addMenu("&Live")
        self.win._action(menu, "Pause", self.pause, "Ctrl+Shift+P")
        self.win._action(menu, "Resume", self.resume, "Ctrl+Shift+R")
        self.win._action(menu, "Detach", self.detach)

    # -- the recording thread ----------------------------------------------------------------------------
    def start(self, endpoint: str, elf: str, output: str, *, from_start: bool = False) -> None:
        """Attach to the GDB stub at ``endpoint`` serving the program ``elf``; the capture grows in ``output``."""
        if self.running:
            raise RuntimeError("a live session is already recording: detach first")
        host, port = parse_endpoint(endpoint)
        hooks = find_hooks(elf)
        self.frames, self.session, self.output, self.latencies, self._shown = [], None, output, {}, 0
        self.running, self.paused, self._detach = True, False, False
        self._pause.clear()
        self._go.clear()
        meta = recording_meta(elf, endpoint, from_start)
        args = (host, port, hooks, output, from_start, meta)
        self._thread = threading.Thread(target=self._record, args=args, name="picaemu-record", daemon=True)
        self._thread.start()
        self.win.status.setText(f"attaching to {endpoint} …")

    def _record(self, host: str, port: int, hooks: list, output: str, from_start: bool, meta: dict) -> None:
        try:
            with GdbClient(host, port) as link:
                link.handshake()
                link.stop_reason()
                recorder = Recorder(link, hooks, from_start=from_start, meta=meta)
                live = LiveCapture(output, recorder)
                recorder.on_frame = partial(self._frame_done, live.frame_done)
                self.recorder = recorder
                if self._detach:  # detached while connecting: record nothing, leave the program running
                    recorder.frames_wanted = 0
                recorder.run()
                live.write()
            ended = recorder.ended_by
            if ended is None or isinstance(ended, (KeyboardInterrupt, TargetExited)):
                self.state.emit(f"done: {ended or 'detached'}")
            else:
                self.state.emit(f"error: {ended}")
        except Exception as err:  # every failure reaches the window as one message
            self.state.emit(f"error: {type(err).__name__}: {err}")

    def _frame_done(self, write, done: FrameDone) -> None:
        """On the recording thread, the program halted at a frame end: write the file, tell the window, and wait
        there while paused."""
        write(done)
        self.recorded.emit(done)
        if self._pause.is_set():
            self.state.emit("paused")
            self._go.wait()
            self._go.clear()

    # -- controls (GUI thread) ---------------------------------------------------------------------------
    def pause(self) -> None:
        """Stop the program at the next frame end."""
        if self.running:
            self._go.clear()  # a resume given while running must not let this pause through
            self._pause.set()
            self.win.status.setText("live: pausing at the next frame end …")

    def resume(self) -> None:
        self._pause.clear()
        self.paused = False
        self._go.set()

    def detach(self) -> None:
        """End the recording at the next frame end (at once when paused); the program runs on."""
        recorder = self.recorder
        self._detach = True
        if recorder is not None and self.running:
            recorder.frames_wanted = recorder.frames + (0 if self.paused else 1)
        self.resume()

    def attach_dialog(self) -> None:
        endpoint, ok = QInputDialog.getText(self.win, "Attach", "GDB stub (HOST:PORT):", text="127.0.0.1:24689")
        if not ok or not endpoint:
            return
        elf, _ = QFileDialog.getOpenFileName(self.win, "The running program's ELF", "", "ELF (*.elf);;All files (*)")
        if not elf:
            return
        output, _ = QFileDialog.getSaveFileName(self.win, "Record into", "live.pica", "Captures (*.pica)")
        if output:
            try:
                self.start(endpoint, elf, output)
            except Exception as err:
                self.win.show_error("Attach failed", f"{type(err).__name__}: {err}")

    # -- frames into the session -------------------------------------------------------------------------
    def _frame(self, done: FrameDone) -> None:
        self.frames.append(done)
        if self._shown and self.win.path != self.output:  # another capture was opened meanwhile: leave it be
            return
        # urgent: ahead of the follow-up work the last move asked for (lint, pipeline state, thumbnails)
        self.win.worker.submit("live", partial(self._grow, frames=tuple(self.frames)), urgent=True)

    def _grow(self, current, frames: tuple[FrameDone, ...]) -> tuple[jobs.Opened, int]:
        """Worker job: the live session with every frame of ``frames`` (opened by the first job, extended after)."""
        recorder = self.recorder
        assert recorder is not None
        session = self.session
        if session is None:
            capture = pica.Capture(dict(recorder.meta), recorder.initial_state(), recorder.blobs)
            capture.events = [e for f in frames for e in f.events]
            session = jobs.open_session(capture=capture, label=self.output)
        else:
            have = len(session.timeline.frame_ends)
            session.extend([e for f in frames[have:] for e in f.events], recorder.sites())
        self.session = self.win.worker.session = session
        return jobs.opened(session), len(frames)

    def handle(self, result: JobResult) -> bool:
        """The window's results: ``live`` ones are this controller's; a snapshot it waits for is timed."""
        if result.kind == "snapshot" and self._waiting is not None and result.error is None:
            cursor, count = self._waiting
            if result.value.cursor == cursor:
                self._waiting = None
                QTimer.singleShot(0, partial(self._displayed, count))  # after the window has shown it
            return False
        if result.kind != "live":
            return False
        if result.error is not None:
            self.win.show_error("live session", result.error_text)
            return True
        opened, count = result.value
        if self._shown == 0:
            self.win.opening, self.win._recent_on_open = self.output, False
            self.win._got_open(JobResult(result.id, "open", opened))
        else:  # the statistics figure waits for a pause or the end (gui/panels/stats.py)
            self.win.show_timeline(opened, plot=False)
        self._shown = count
        end = opened.timeline.end  # follow the newest frame (new frames come only while the program runs)
        self._waiting = (end, count)
        self.win.move_to(end)
        return True

    def _displayed(self, count: int) -> None:
        now = time.perf_counter()
        for done in self.frames[:count]:
            self.latencies.setdefault(done.frame, now - done.stopped_at)
        self.win.status.setText(
            f"live: frame {count - 1} of {os.path.basename(self.output)}"
            + (" (paused)" if self.paused else " (running)" if self.running else "")
        )

    def _state(self, text: str) -> None:
        self.win.stats.plot()
        if text == "paused":
            self.paused = True
            self.win.status.setText("live: paused at a frame end; Live › Resume goes on")
            return
        self.running = self.paused = False
        kind, _, why = text.partition(": ")
        if kind == "error":
            self.win.show_error("live session ended", why)
        else:
            self.win.status.setText(f"live: recording ended ({why}); {len(self.frames)} frame(s) in {self.output}")
