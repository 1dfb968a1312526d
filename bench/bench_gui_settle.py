"""After a jump, how long until every panel on screen shows the new position (issue 26 item 6: median <= 100 ms on
a 1000-draw frame). The window opens with the default layout at 1366x768 (offscreen); for each arrangement of
docks (the default one, then each inspector dock raised in its turn, then "Update hidden panels", which computes
every panel as the debugger did before), it jumps to random draws and times from the request to the moment the
worker is idle and every result has been handled (``bench_gui_panels.wait``).

Run from the repository root: ``python bench/bench_gui_settle.py [--capture samples/captures/game_cubes_1000.pica]``
(a first run compiles the kernels; the figures are of a second, warm process). Prints Markdown.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from bench.bench_gui_panels import cli, ms, wait  # noqa: E402

RAISED = ("Registers", "Pipeline state", "Pixel history", "Textures", "Surface", "Shader", "Mesh", "Draws")


def measure(path: Path, jumps: int) -> list[str]:
    app = QApplication.instance() or QApplication([])
    from picaemu.gui.main_window import MainWindow

    win = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat))
    win.resize(1366, 768)
    win.show()
    handled = [0]
    win.worker.done.connect(lambda _: handled.__setitem__(0, handled[0] + 1))

    def settled() -> bool:
        """The worker idle, nothing delivered meanwhile, and no thumbnail batch out or about to be asked (the rows a
        jump scrolled into view ask from their paint: without this a jump's thumbnails were timed with the next)."""
        before = handled[0]
        app.processEvents()
        return win.worker.idle and handled[0] == before and win.snapshot is not None and not win.draws.model.waiting

    win.open_path(str(path))
    wait(app, settled)
    win.pick_pixel(120, 200)  # the pixel history has a pixel to follow
    wait(app, settled)
    rng = np.random.default_rng(7)
    draws = len(win.timeline.draws)
    rows = [
        f"{path.name}: {draws} draws; {jumps} jumps to random draws per arrangement (1366x768, default layout)",
        "",
        "| docks on screen besides the picture | settled after a jump: median ms | max ms |",
        "|---|---|---|",
    ]
    arrangements = [(f"Command stream + {title}", title, False) for title in RAISED]
    arrangements.append(("every panel (View › Update hidden panels)", "Registers", True))
    for label, title, hidden in arrangements:
        win.docks[title].raise_()
        win.actions_by_text["Update hidden panels"].setChecked(hidden)
        win.follow_ups.update_hidden = hidden
        wait(app, settled)
        times = []
        for draw in rng.integers(0, draws, jumps):
            start = time.perf_counter()
            win.run_to_draw(int(draw))
            wait(app, lambda d=int(draw): settled() and win.snapshot.last_draw == d)
            times.append(ms(start))
        rows.append(f"| {label} | {statistics.median(times):.0f} | {max(times):.0f} |")
    win.worker.stop()
    return rows


def main() -> None:
    cli(__doc__.splitlines()[0], measure, 10)


if __name__ == "__main__":
    main()
