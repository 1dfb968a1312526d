"""A first run's second compiler (picaemu.fused.prewarm) and the lock that lets two processes share a compile
(picaemu.numba_cache.kernel_lock)."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from picaemu import kernel_cache, numba_cache
from picaemu.fused import prewarm

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"

_HOLD = """
import sys, time
from pathlib import Path
import numba
from numba.core import event
from picaemu import numba_cache
waits = []
class Waits(event.Listener):
    def on_start(self, ev):
        waits.append(ev.data["dispatcher"].py_func.__name__)
        print("waiting", flush=True)
    def on_end(self, ev):
        pass
event.register("numba:compile", Waits())
def probe(x):
    return x
with numba_cache.kernel_lock(Path(sys.argv[1]), numba.njit(probe)):
    print(time.time(), waits)
"""


def test_a_second_process_waits_for_the_lock_a_compile_holds(tmp_path: Path) -> None:
    """The second process waits until the first lets go, and its wait shows as a compile of the kernel."""
    lock = tmp_path / "kernel.lock"
    with numba_cache.kernel_lock(lock):
        with numba_cache.kernel_lock(lock):  # nested in one process: the outer hold stands
            assert numba_cache._HELD[str(lock)] == 2
        other = subprocess.Popen([sys.executable, "-c", _HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
        assert other.stdout is not None
        # its wait begins (however long its imports took on a busy machine), and it goes on waiting
        assert other.stdout.readline().strip() == "waiting"
        time.sleep(0.2)
        assert other.poll() is None
        released = time.time()
    out, _ = other.communicate(timeout=60)
    acquired, waits = out.split(maxsplit=1)
    assert float(acquired) >= released and str(lock) not in numba_cache._HELD
    assert waits.strip() == "['probe']"  # the wait was a compile to its listeners (SlowCompileNote's notes)


def test_the_second_compiler_builds_the_first_draw_s_fragment_side() -> None:
    """The kernels come from this session's cache: what is checked is the way from a capture to them."""
    assert prewarm.compile_first_draw(SAMPLES / "triangle.pica")


def test_the_second_compiler_runs_for_a_first_run_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_cache, "kernel_dir", lambda: tmp_path)
    monkeypatch.setenv(prewarm.ENABLE, "0")
    assert prewarm.start(SAMPLES / "triangle.pica") is None
    monkeypatch.delenv(prewarm.ENABLE)
    (tmp_path / "fused").mkdir()
    (tmp_path / "fused" / "fragment_kernel.fragment_side-301.py311.nbi").touch()
    assert prewarm.start(SAMPLES / "triangle.pica") is None  # not a first run
    (tmp_path / "fused" / "fragment_kernel.fragment_side-301.py311.nbi").unlink()
    with prewarm.beside(SAMPLES / "triangle.pica"):
        pid = prewarm.start(SAMPLES / "triangle.pica")
        assert pid is not None and not prewarm._reaped(pid)
        prewarm.finish(pid)
        with pytest.raises(ChildProcessError):  # ended with the command and reaped, not left behind
            os.waitpid(pid, os.WNOHANG)


def test_the_forked_compiler_compiles_then_leaves_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The child builds the first draw's fragment side (exit status 0) and leaves by ``os._exit``: it never
    returns into its parent's code (which records who ran it), runs none of its parent's exit handlers and writes
    nothing to its parent's streams."""
    monkeypatch.setattr(kernel_cache, "kernel_dir", lambda: tmp_path)
    handled, returned = tmp_path / "exit handlers", tmp_path / "returned"

    def handler() -> None:
        with handled.open("a") as log:
            log.write(f"{os.getpid()}\n")

    atexit.register(handler)
    try:
        pid = prewarm.start(SAMPLES / "triangle.pica")
        with returned.open("a") as log:
            log.write(f"{os.getpid()}\n")
        assert pid is not None
        _, status = os.waitpid(pid, 0)
    finally:
        atexit.unregister(handler)
    assert os.waitstatus_to_exitcode(status) == 0
    assert returned.read_text().split() == [str(os.getpid())] and not handled.exists()
    assert capfd.readouterr() == ("", "")


def test_numba_s_registries_are_loaded_before_the_fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child inherits numba's loaded registries: the run loads them, then forks (here a fork that fails, which
    leaves the run without a second compiler)."""
    monkeypatch.setattr(kernel_cache, "kernel_dir", lambda: tmp_path)
    steps: list[str] = []
    monkeypatch.setattr(prewarm, "_load_numba_registries", lambda: steps.append("registries"))

    def fork() -> int:
        steps.append("fork")
        raise OSError("no fork here")

    monkeypatch.setattr(os, "fork", fork)
    assert prewarm.start(SAMPLES / "triangle.pica") is None
    assert steps == ["registries", "fork"]


def test_finish_kills_a_child_that_does_not_end_on_sigterm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prewarm, "FINISH_WAIT_S", 0.2)
    sent: list[int] = []
    kill = os.kill
    monkeypatch.setattr(os, "kill", lambda pid, number: (sent.append(number), kill(pid, number)))
    ready, tell = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child that ignores SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.write(tell, b"!")
        time.sleep(60)
        os._exit(0)
    assert os.read(ready, 1) == b"!"  # its handler is set
    os.close(ready), os.close(tell)
    prewarm.finish(pid)
    assert sent == [signal.SIGTERM, signal.SIGKILL]
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(pid, os.WNOHANG)


def test_no_second_compiler_beside_another_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process of several threads is not forked (a lock another thread held would stay held in the child)."""
    monkeypatch.setattr(kernel_cache, "kernel_dir", lambda: tmp_path)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert prewarm.start(SAMPLES / "triangle.pica") is None
    finally:
        release.set()
        other.join()
