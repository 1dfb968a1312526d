"""A first run's second compiler (picaemu.fused.prewarm) and the lock that lets two processes share a compile
(picaemu.numba_cache.kernel_lock)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from picaemu import kernel_cache, numba_cache
from picaemu.fused import prewarm

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"

_HOLD = """
import sys, time
from pathlib import Path
from picaemu import numba_cache
with numba_cache.kernel_lock(Path(sys.argv[1])):
    print(time.time())
"""


def test_a_second_process_waits_for_the_lock_a_compile_holds(tmp_path: Path) -> None:
    lock = tmp_path / "kernel.lock"
    with numba_cache.kernel_lock(lock):
        with numba_cache.kernel_lock(lock):  # nested in one process: the outer hold stands
            assert numba_cache._HELD[str(lock)] == 2
        other = subprocess.Popen([sys.executable, "-c", _HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
        time.sleep(2.0)
        assert other.poll() is None  # still waiting
        released = time.time()
    out, _ = other.communicate(timeout=60)
    assert float(out) >= released and str(lock) not in numba_cache._HELD


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
        process = prewarm.start(SAMPLES / "triangle.pica")
        assert process is not None and process.poll() is None
        prewarm.finish(process)
        assert process.returncode is not None  # ended with the command, not left behind
