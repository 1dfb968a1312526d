"""Soak test of the debugger: the real main window, a capture opened, then 1,500 steps in the event loop (step
draw by draw forward and back, step packets, switch panels, pick pixels), checking that the Qt binding does not
leak or drop references to None / True / False.

PySide6 6.12.0 drops a reference to None on calls such as QLabel.setText: on Python 3.11 the debugger aborted with
"Fatal Python error: deallocating None" after a few minutes of stepping (pyproject.toml pins a working binding).
Ballast references keep the counts far from zero during the test, so a leaking binding fails the drift check
instead of aborting the interpreter. From Python 3.12 these objects are immortal (their counts never move), so
the drift check is vacuous there; the soak still runs."""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.gui.main_window import MainWindow
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from picaemu.debug.timeline import Unit
from tests.conftest import REPO
from tests.test_gui_window import open_scene, settle

pytestmark = pytest.mark.gui
STEPS = 1500
# the real game's soak in the default suite: 300 steps (3 frame jumps), ~20 s; PICAEMU_SOAK_STEPS=1500 runs the
# issue's full length: 76-112 s of steps on the busy 2-core VM, 650 MB resident and flat (bench/RESULTS.md; the
# "over 10 minutes" once measured was a process holding every earlier test's window: tests/test_gui_lifetime.py)
GAME_STEPS = int(os.environ.get("PICAEMU_SOAK_STEPS", "300"))
WARMUP = 160  # steps before the baseline: every draw visited once, first-time caches and widgets filled
CHECK_EVERY = 50
MAX_DROP = 100  # a binding that drops references (6.12.0: ~40 a step) passes this within a few steps
MAX_GROWTH = 5000  # the debugger grows ~0.7 references to None a step (caches; not a binding fault): a leak fails
CAPTURE = REPO / "samples" / "captures" / "texture_formats.pica"  # 22 draws in one frame
GAME = REPO / "tests" / "data" / "games" / "minicraft.pica"  # a real game: 40 frames, 507 draws, 9,569 events
MAX_OBJECT_GROWTH = 20_000  # gc-tracked objects after the warm-up (the session's caches level off well below)
PANELS = ("Registers", "Textures", "Draws", "Pixel history", "Shader", "Mesh", "Statistics")


def _counts() -> tuple[int, int, int]:
    """The three reference counts, after a full collection: cyclic garbage (from earlier tests in the same process,
    or the debugger's own) freed by a collection that happens to run between two checks would read as a drop."""
    gc.collect()
    return sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)


def _check_drift(baseline: tuple[int, int, int] | None, when: str) -> None:
    assert baseline is not None
    drift = [now - then for now, then in zip(_counts(), baseline, strict=True)]
    assert min(drift) > -MAX_DROP, f"{when}: the binding dropped references to None/True/False: {drift}"
    assert max(drift) < MAX_GROWTH, f"{when}: references to None/True/False keep growing: {drift}"


def _step(win: MainWindow, i: int) -> None:
    """Step i of the soak: mostly draw steps forward then back, some packet steps, panels, pixel picks; every 97th
    step jumps a frame (so a long soak covers a multi-frame capture)."""
    phase = i % 60
    if i % 97 == 0:
        win.step(Unit.FRAME, forward=(i // 97) % 3 != 2)
    elif phase < 25:
        win.step(Unit.DRAW, forward=True)
    elif phase < 50:
        win.step(Unit.DRAW, forward=False)
    elif phase < 55:
        win.step(Unit.PACKET, forward=phase % 2 == 0)
    else:
        win.docks[PANELS[i % len(PANELS)]].raise_()
    if i % 15 == 0:
        win.pick_pixel((17 * i) % 400, (29 * i) % 240)


def _run_until_idle(win: MainWindow) -> None:
    """Spin the event loop until the worker is idle and its queued results were delivered (the panels update:
    setText, models, pictures). Plain processEvents: pytest-qt's wait helpers add references of their own."""
    app = QApplication.instance()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        app.processEvents()
        if win.worker.idle:
            app.processEvents()
            if win.worker.idle:
                return
        time.sleep(0.0005)
    raise AssertionError("the replay worker stayed busy for 60 s")


def _soak(qtbot, tmp_path: Path, capture: Path, steps: int = STEPS) -> None:
    """``steps`` steps over ``capture``: no error, no drift of the None / True / False counts, no growth of the objects
    the collector tracks beyond ``MAX_OBJECT_GROWTH`` after the warm-up."""
    ballast = [None, True, False] * 200_000  # keeps the counts far from zero if the binding drops references
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    try:
        open_scene(qtbot, win, capture)
        baseline, objects = None, 0
        for i in range(steps):
            _step(win, i)
            _run_until_idle(win)
            if i == WARMUP:
                settle(qtbot, win)
                baseline, objects = _counts(), len(gc.get_objects())
            elif baseline is not None and i % CHECK_EVERY == 0:
                _check_drift(baseline, f"step {i}")
        settle(qtbot, win)
        assert win.last_error == "" and win.snapshot is not None
        _check_drift(baseline, f"after {steps} steps")
        growth = len(gc.get_objects()) - objects
        assert growth < MAX_OBJECT_GROWTH, f"{growth} more objects after {steps} steps than after the warm-up"
    finally:
        win.worker.stop()
        del ballast


# pytest-qt would keep a record of every Qt message (the offscreen platform warns on each layout), each holding a
# reference to False and some to None: over 1,500 steps on minicraft, +294 references to False and +958 to None that
# are the test harness's, not the debugger's (without the records: +2 and +393)
@pytest.mark.no_qt_log
def test_debugger_soak_keeps_none_true_false_counts(qtbot, tmp_path: Path) -> None:
    _soak(qtbot, tmp_path, CAPTURE)


@pytest.mark.slow
@pytest.mark.no_qt_log
@pytest.mark.timeout(3600)  # PICAEMU_SOAK_STEPS=1500 runs past the suite's 600 s on a busy 2-core machine
def test_debugger_soak_on_a_real_game(qtbot, tmp_path: Path) -> None:
    """``GAME_STEPS`` steps over minicraft (issue 26: a GUI soak over a real game's 40 frames)."""
    _soak(qtbot, tmp_path, GAME, GAME_STEPS)
