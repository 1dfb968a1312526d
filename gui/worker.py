"""The one worker thread that owns the replay session; the GUI thread never touches it.

``Worker.submit(kind, fn)`` queues ``fn(session)`` under ``kind`` and returns a request id. Requests of the same
kind coalesce: a newer one replaces one still waiting, and ``JobResult``s of superseded ids are flagged ``stale``
(the GUI drops them), so the newest request wins and scrubbing never builds a backlog. Jobs run one at a time in
submission order on a daemon Python thread, except that ``urgent`` requests (a move) go first and ``LOW`` kinds
(draw thumbnails) wait until nothing else is queued; ``preempted()`` tells a long ``LOW`` job (from the worker
thread) to stop early. ``cancel(kinds)`` drops the waiting requests of those kinds and flags the results of any
running one stale (a jump cancels the previous position's follow-up work). Every result (value or exception,
with the time it took) comes back through the ``done`` Qt signal, delivered queued on the GUI thread.

The worker is a Qt child of its window (``Worker(window)``): deleting the window deletes the worker and drops its
signal connections. A parentless worker would keep them, and the bound methods they hold, from C++ where the Python
collector cannot see them: every closed window would then keep its session (checkpoints, pictures: 50-400 MB) for
the life of the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

LOW = frozenset({"footprints"})  # kinds that run only when nothing else waits (they take 100s of ms a batch)


@dataclass(frozen=True)
class JobResult:
    id: int
    kind: str
    value: Any = None
    error: BaseException | None = None
    seconds: float = 0.0
    stale: bool = False

    @property
    def error_text(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if self.error is not None else ""


class Worker(QObject):
    """See the module docstring."""

    done = Signal(object)  # JobResult
    progress = Signal(str)  # free text from long jobs (indexing), emitted from the worker thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: Any = None
        self._cond = threading.Condition()
        self._pending: dict[str, tuple[int, Callable[[Any], Any]]] = {}
        self._latest: dict[str, int] = {}
        self._next_id = 0
        self._busy = False
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="picaemu-replay", daemon=True)
        self._thread.start()

    def submit(self, kind: str, fn: Callable[[Any], Any], *, urgent: bool = False) -> int:
        with self._cond:
            self._next_id += 1
            self._pending.pop(kind, None)
            job = (self._next_id, fn)
            self._pending = {kind: job, **self._pending} if urgent else {**self._pending, kind: job}
            self._latest[kind] = self._next_id
            self._cond.notify()
            return self._next_id

    def cancel(self, kinds: Iterable[str]) -> None:
        """Drop the waiting requests of ``kinds``; a running one's result comes back stale."""
        with self._cond:
            for kind in kinds:
                self._pending.pop(kind, None)
                if kind in self._latest:
                    self._next_id += 1
                    self._latest[kind] = self._next_id

    def preempted(self) -> bool:
        """Whether a job that is not ``LOW`` waits (asked by a running ``LOW`` job, on the worker thread)."""
        with self._cond:
            return any(kind not in LOW for kind in self._pending)

    def is_latest(self, result: JobResult) -> bool:
        with self._cond:
            return self._latest.get(result.kind) == result.id

    @property
    def idle(self) -> bool:
        with self._cond:
            return not self._pending and not self._busy

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._pending.clear()
            self._cond.notify()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                kind = next((k for k in self._pending if k not in LOW), next(iter(self._pending)))
                job_id, fn = self._pending.pop(kind)
                self._busy = True
            start = time.perf_counter()
            try:
                value, error = fn(self.session), None
            except BaseException as err:  # every failure is reported to the GUI, never kills the thread
                value, error = None, err
            result = JobResult(job_id, kind, value, error, time.perf_counter() - start)
            with self._cond:
                self._busy = False
                if self._stop:  # stopped while the job ran: its window is closing (may be gone): send nothing
                    return
                stale = self._latest.get(kind) != job_id
            if not stale:
                self.done.emit(result)
            else:
                self.done.emit(JobResult(job_id, kind, value, error, result.seconds, stale=True))
