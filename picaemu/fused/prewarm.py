"""A first run's second compiler: the fragment side compiled in another process while the first run compiles the
rest.

numba compiles on one core (a compile holds Python's lock and numba's), and a first run compiles in the order the
replay needs kernels: the command loop, the vertex side, then the fragment side. On a machine with a second core,
``start`` launches ``python -m picaemu.fused.prewarm CAPTURE`` beside such a run: it finds the GPU state at the
capture's first draw with the plain-Python scan (``picaemu.replay.scan``: no compiled code), builds that draw's
fragment plan (which compiles the kernels it calls by address) and compiles ``fragment_side`` for it, into the same
kernel cache. Each kernel compiles under a lock on its cache file (``picaemu.numba_cache.kernel_lock``), so the
first run, reaching the fragment side, loads what the second compiler made, or waits for the compile under way,
instead of compiling it again. README line 1 (the bundled triangle): ~40 % of its compile moves to the second
core (``bench/RESULTS.md``, "First runs, fifteenth session").

``start`` runs the second compiler only for a first run: a kernel folder without any ``fragment_side`` yet, two or
more cores, ``PICAEMU_PREWARM`` not ``0``. It runs silent and not niced (the first run may wait on its lock), and
is best effort: a capture the scan does not model, a draw the compiled route does not cover or any error ends it
quietly (the first run compiles what it needs itself). ``finish`` ends it with the command (a compile it has not
finished is of no use to this run; the cache's writes are atomic, and the lock goes with the process).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ENABLE = "PICAEMU_PREWARM"  # environment variable: 0 turns the second compiler off


def start(capture: Path) -> subprocess.Popen[bytes] | None:
    """The second compiler for ``capture``'s first run, running; None when this is no first run (module
    docstring)."""
    from picaemu import kernel_cache

    folder = kernel_cache.kernel_dir()
    if os.environ.get(ENABLE, "1") == "0" or (os.cpu_count() or 1) < 2 or folder is None:
        return None
    if any((folder / "fused").glob("fragment_kernel.fragment_side-*.nbi")):
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "picaemu.fused.prewarm", str(capture)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def finish(process: subprocess.Popen[bytes] | None) -> None:
    """End the second compiler (module docstring)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
        return
    process.kill()
    process.wait()


@contextlib.contextmanager
def beside(capture: Path) -> Iterator[None]:
    """``start`` before the block, ``finish`` after it."""
    process = start(capture)
    try:
        yield
    finally:
        finish(process)


def compile_first_draw(path: Path) -> bool:
    """Compile the fragment side of ``path``'s first draw; False when there is none the compiled route covers."""
    from picaemu import draw_state
    from picaemu.fused import loop
    from picaemu.fused.fragments import FragmentPlan
    from picaemu.memory import PhysicalMemory
    from picaemu.replay.capture import load_capture
    from picaemu.replay.scan import scan_draws

    states, _ = scan_draws(load_capture(path))
    if not states:
        return False
    # the plan's kernels depend on the state's types, not on memory's bytes: an empty memory stands in
    plan = FragmentPlan.of(draw_state.build_draw_state(states[0]), PhysicalMemory())
    if isinstance(plan, str):
        return False
    loop.FRAGMENT_SIDE.entry(*loop.TRIANGLES_SAMPLE, *plan.args, loop.COUNTS_SAMPLE)
    return True


def main(argv: list[str]) -> int:
    try:
        compile_first_draw(Path(argv[0]))
    except Exception:  # best effort: the first run compiles what it needs itself
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
