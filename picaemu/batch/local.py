"""Local worker processes for ``picaemu batch`` (the default; ``--scheduler`` uses a Dask cluster instead).

``run_local(tasks, jobs, timeout)`` starts up to ``jobs`` worker processes (the "spawn" start method: a fresh
interpreter, no state inherited from the caller) and yields each task's result bytes (``picaemu.batch.task``) as
it completes. Tasks and results cross the pipe as bytes (the task as JSON, the result as ``encode_result``'s
bytes); nothing is pickled. Each worker runs one task at a time, so the parent knows which capture a worker holds
and since when: a worker that dies (crash, out of memory, killed) fails only that capture, and one still busy
``HARD_KILL_GRACE`` seconds past the task's timeout (stuck inside one draw, where the cooperative check cannot
reach) is killed and its capture reported as timed out. Either way a fresh worker takes its place.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from picaemu.batch.task import FAILED, HARD_KILL_GRACE, TIMEOUT, WORKER_DIED, failed_result, render_task

STOP = b""


def worker_main(conn: Connection) -> None:
    """A worker's loop: a task (JSON bytes) in, its result bytes out, until ``STOP`` or the pipe closes."""
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if message == STOP:
            return
        conn.send_bytes(render_task(json.loads(message)))


@dataclass
class Worker:
    process: Any
    conn: Connection
    task: dict[str, Any] | None = None
    started: float = field(default=0.0)

    def give(self, task: dict[str, Any]) -> None:
        self.task, self.started = task, time.monotonic()
        self.conn.send_bytes(json.dumps(task).encode("utf-8"))

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send_bytes(STOP)
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _start() -> Worker:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=worker_main, args=(child,), daemon=True, name="picaemu-batch-worker")
    process.start()
    child.close()
    return Worker(process, parent)


def kill_time(worker: Worker) -> float | None:
    """When a busy worker is killed: its task's timeout plus the grace (``HARD_KILL_GRACE`` unless the task says)."""
    task = worker.task
    if task is None or task.get("timeout") is None:
        return None
    return worker.started + task["timeout"] + task.get("grace", HARD_KILL_GRACE)


def _collect(worker: Worker) -> tuple[bytes, bool]:
    """(the busy worker's result, whether the worker died): a dead worker fails its capture."""
    task = worker.task
    assert task is not None
    worker.task = None
    try:
        return worker.conn.recv_bytes(), False
    except (EOFError, OSError):
        return failed_result(task, FAILED, WORKER_DIED, time.monotonic() - worker.started), True


def run_local(tasks: list[dict[str, Any]], jobs: int) -> Iterator[bytes]:
    """Result bytes of every task, in completion order (see the module docstring)."""
    pending = deque(tasks)
    workers: list[Worker] = []
    try:
        while pending or any(w.task for w in workers):
            for w in workers:
                if w.task is None and pending:
                    w.give(pending.popleft())
            while pending and len(workers) < jobs:
                workers.append(_start())
                workers[-1].give(pending.popleft())
            busy = [w for w in workers if w.task is not None]
            limits = [t for t in map(kill_time, busy) if t is not None]
            ready = set(
                wait([w.conn for w in busy], timeout=max(min(limits) - time.monotonic(), 0.05) if limits else None)
            )
            now = time.monotonic()
            gone = []
            for w in busy:
                if w.conn in ready:
                    result, died = _collect(w)
                    if died:
                        gone.append(w)
                    yield result
                elif (task := w.task) is not None and (t := kill_time(w)) is not None and now > t:
                    seconds = now - w.started
                    w.process.kill()
                    w.task = None
                    gone.append(w)
                    yield failed_result(
                        task,
                        TIMEOUT,
                        f"timed out: the worker was still busy after {seconds:.0f} s "
                        f"(timeout {task['timeout']:g} s) and was killed",
                        seconds,
                    )
            for w in gone:  # fresh workers take their places at the top of the loop
                w.stop()
                workers.remove(w)
    finally:
        for w in workers:
            w.stop()
