"""The debugger GUI at game scale, driven offscreen (``QT_QPA_PLATFORM=offscreen``): opening a capture, a jump to
a random draw until every panel has refreshed (the worker's jobs and the GUI thread's handlers, per panel), a
switch to each dock (raise + repaint), and an edit-and-replay round trip through the Edit and replay dock.

Run from the repository root: ``python bench/bench_gui_panels.py [--capture samples/captures/game_cubes_1000.pica]``
(a first run compiles the kernels; the figures are of a second, warm process). Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

DEFAULT = ROOT / "samples" / "captures" / "game_cubes_1000.pica"


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def wait(app, condition, timeout: float = 120.0) -> None:
    """Process events until ``condition()`` holds and the worker has nothing left, then a last round."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        app.processEvents()
        if condition():
            break
        time.sleep(0.001)
    else:
        raise TimeoutError("the GUI did not settle")


def measure(path: Path, jumps: int) -> list[str]:
    app = QApplication.instance() or QApplication([])
    from picaemu.gui.main_window import MainWindow

    win = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat))
    win.resize(1500, 950)
    win.show()
    worker_ms: dict[str, list[float]] = defaultdict(list)
    gui_ms: dict[str, list[float]] = defaultdict(list)
    handled = [0]
    original = win._on_result

    def timed(result) -> None:
        start = time.perf_counter()
        original(result)
        if not result.stale:
            gui_ms[result.kind].append(ms(start))
            worker_ms[result.kind].append(result.seconds * 1e3)
        handled[0] += 1

    win.worker.done.disconnect(win._on_result)
    win.worker.done.connect(timed)

    def settled() -> bool:
        before = handled[0]
        app.processEvents()
        return win.worker.idle and handled[0] == before and win.snapshot is not None

    start = time.perf_counter()
    win.open_path(str(path))
    wait(app, settled)
    opened = ms(start)
    rng = np.random.default_rng(11)
    totals = []
    worker_ms.clear()
    gui_ms.clear()
    for draw in rng.integers(0, len(win.timeline.draws), jumps):
        start = time.perf_counter()
        win.run_to_draw(int(draw))
        wait(app, lambda d=int(draw): settled() and win.snapshot.last_draw == d)
        totals.append(ms(start))
    switches = {}
    for title, dock in win.docks.items():
        start = time.perf_counter()
        dock.raise_()
        dock.widget().repaint()
        app.processEvents()
        switches[title] = ms(start)
    panel = win.edit_replay
    panel.add_edit("DEPTH_COLOR_MASK.depth_func=always")
    start = time.perf_counter()
    panel.request()
    wait(app, lambda: panel.result is not None and settled())
    edit = ms(start)
    win.worker.stop()
    kinds = sorted(worker_ms)
    rows = [
        f"open {opened:.0f} ms; jump to a random draw until every panel shows it: median "
        f"{statistics.median(totals):.0f} ms, max {max(totals):.0f} ms ({jumps} jumps); edit and replay at draw "
        f"{panel.result.draw} ({panel.result.draws_replayed} draws) to the three pictures shown: {edit:.0f} ms",
        "",
        "| panel result | worker ms (median) | GUI thread ms (median) |",
        "|---|---|---|",
    ]
    rows += [f"| {k} | {statistics.median(worker_ms[k]):.1f} | {statistics.median(gui_ms[k]):.1f} |" for k in kinds]
    rows += ["", "| dock switch (raise + repaint) | ms |", "|---|---|"]
    rows += [f"| {title} | {t:.1f} |" for title, t in switches.items()]
    return rows


def cli(description: str, run, jumps: int) -> None:
    """Parse ``--capture`` / ``--jumps`` (default ``jumps``) and print ``run(capture, jumps)``'s Markdown lines."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--capture", type=Path, default=DEFAULT)
    parser.add_argument("--jumps", type=int, default=jumps)
    args = parser.parse_args()
    print("\n".join(run(args.capture, args.jumps)))


def main() -> None:
    cli(__doc__.splitlines()[0], measure, 15)


if __name__ == "__main__":
    main()
