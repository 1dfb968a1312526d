"""A first run's second compiler: the fragment side compiled in another process while the first run compiles the
rest.

numba compiles on one core (a compile holds Python's lock and numba's), and a first run compiles in the order the
replay needs kernels: the command loop, the vertex side, then the fragment side. On a machine with a second core,
``start`` forks the run before it compiles anything: the child finds the GPU state at the capture's first draw with
the plain-Python scan (``picaemu.replay.scan``: no compiled code), builds that draw's fragment plan (which compiles
the kernels it calls by address) and compiles ``fragment_side`` for it, into the same kernel cache, then exits.
Each kernel compiles under a lock on its cache file (``picaemu.numba_cache.kernel_lock``), so the first run,
reaching the fragment side, loads what the second compiler made, or waits for the compile under way, instead of
compiling it again. README line 1 (the bundled triangle): ~40 % of its compile moves to the second core
(``bench/RESULTS.md``, "First runs, fifteenth session").

A fork, not a new interpreter: the child starts with the run's imports (numpy, numba, picaemu's modules: ~1.1 s of
CPU that a ``python -m`` process paid again) already done ("The twenty-first session" in bench/RESULTS.md), and
with numba's typing and lowering registries loaded: the run loads them before it forks (a compile's first step,
~0.15 s and ~80 modules, which both processes paid after the fork).
Nothing has compiled yet when it forks and the command runs on one Python thread, so the child holds no lock and no
half-made kernel of its parent's. (numpy's OpenBLAS keeps a pool of native threads from its import on; the child
never calls BLAS, and OpenBLAS resets its pool in a forked child. Python 3.12 warns, as a DeprecationWarning, of any
fork of a process with several native threads.) SIGINT and SIGTERM are blocked across the fork: the child turns
both back to their default, so an interrupt ends it where it stands instead of unwinding through its parent's
code.

``start`` runs the second compiler only for a first run: a kernel folder without any ``fragment_side`` yet, two or
more cores, a platform with ``fork``, a process of one Python thread, ``PICAEMU_PREWARM`` not ``0``. The child runs
silent (its standard streams go to the null device) and is best effort: a capture the scan does not model, a draw
the compiled route does not cover or any error ends it quietly (the first run compiles what it needs itself). It
leaves by ``os._exit``, so none of its parent's exit handlers runs in it and none of its parent's buffered output is
written twice. ``finish`` ends it with the command (a compile it has not finished is of no use to this run; the
cache's writes are atomic, and the lock goes with the process) and reaps it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from numba.core.registry import cpu_target

from picaemu import draw_state, kernel_cache
from picaemu.fused import loop
from picaemu.fused.fragments import FragmentPlan
from picaemu.memory import PhysicalMemory
from picaemu.replay.capture import load_capture
from picaemu.replay.scan import scan_draws

ENABLE = "PICAEMU_PREWARM"  # environment variable: 0 turns the second compiler off
FINISH_WAIT_S = 10.0  # how long ``finish`` lets the child end on SIGTERM before SIGKILL
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}  # blocked across the fork (module docstring)


def start(capture: Path) -> int | None:
    """The second compiler for ``capture``'s first run, running (its process id); None when this is no first run
    or it cannot fork (module docstring)."""
    folder = kernel_cache.kernel_dir()
    if os.environ.get(ENABLE, "1") == "0" or (os.cpu_count() or 1) < 2 or folder is None:
        return None
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    if any((folder / "fused").glob("fragment_kernel.fragment_side-*.nbi")):
        return None
    _load_numba_registries()
    signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        pid = os.fork()
    except OSError:
        pid = None
    if pid == 0:  # the child
        for held in _HELD_SIGNALS:
            signal.signal(held, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_SIGNALS)
        _compile_and_exit(capture)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_SIGNALS)
    return pid


def _load_numba_registries() -> None:
    """numba's typing and lowering registries loaded, and the modules they come from imported, in the run before it
    forks (module docstring)."""
    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()


def _compile_and_exit(capture: Path) -> NoReturn:
    """The child's whole life: silent, best effort, out by ``os._exit`` (module docstring)."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        code = 0 if compile_first_draw(capture) else 1
    except BaseException:  # best effort: the first run compiles what it needs itself
        pass
    finally:
        os._exit(code)


def finish(pid: int | None) -> None:
    """End the second compiler and reap it (module docstring)."""
    if pid is None or _reaped(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + FINISH_WAIT_S
    while time.monotonic() < deadline:
        if _reaped(pid):
            return
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _reaped(pid: int) -> bool:
    """Whether the child ``pid`` has ended (reaping it if so)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already
        return True
    return done != 0


@contextlib.contextmanager
def beside(capture: Path) -> Iterator[None]:
    """``start`` before the block, ``finish`` after it."""
    pid = start(capture)
    try:
        yield
    finally:
        finish(pid)


def compile_first_draw(path: Path) -> bool:
    """Compile the fragment side of ``path``'s first draw; False when there is none the compiled route covers."""
    states, _ = scan_draws(load_capture(path))
    if not states:
        return False
    # the plan's kernels depend on the state's types, not on memory's bytes: an empty memory stands in
    plan = FragmentPlan.of(draw_state.build_draw_state(states[0]), PhysicalMemory())
    if isinstance(plan, str):
        return False
    loop.FRAGMENT_SIDE.entry(*loop.TRIANGLES_SAMPLE, *plan.args, loop.COUNTS_SAMPLE)
    return True
