"""A closed and deleted debugger window frees its replay session (pytest-qt, offscreen).

Before: the worker (a parentless QObject) kept its signal connections, and through them the window, from C++ where
the Python collector cannot see them, so every window ever opened stayed alive with its session (checkpoints,
pictures): the GUI test files together reached 4.8 GB in one process. Capture B's window of a comparison goes with
capture A's, and a closed B window is replaced by a new one at the next comparison (its worker is stopped for good).
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.formats import pica
from picaemu.gui.main_window import MainWindow
from PySide6.QtCore import QCoreApplication, QEvent, QSettings

from tests.test_capture_diff import scene
from tests.test_gui_window import WAIT_MS, open_scene

pytestmark = pytest.mark.gui


def _window(tmp_path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    win.show()
    return win


def _delete(win: MainWindow) -> None:
    """What the event loop does with a window closed by the user (``close`` then the deferred deletion)."""
    win.close()
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _captures(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.pica", tmp_path / "b.pica"
    pica.write(a, scene())
    pica.write(b, scene(shift_at=6))
    return a, b


def _opened(qtbot, tmp_path: Path) -> list[weakref.ref]:
    """A window with a capture open, deleted: weak references to it, its worker and its session."""
    win = _window(tmp_path)
    open_scene(qtbot, win, _captures(tmp_path)[0])
    assert win.worker.session is not None
    refs = [weakref.ref(win), weakref.ref(win.worker.session), weakref.ref(win.worker)]
    _delete(win)
    return refs


def test_a_deleted_window_frees_its_session(qtbot, tmp_path: Path) -> None:
    refs = _opened(qtbot, tmp_path)
    gc.collect()
    assert [ref() for ref in refs] == [None, None, None]


def _partner(qtbot, win: MainWindow, b: Path) -> MainWindow:
    win.comparisons.compare_with(str(b))
    qtbot.waitUntil(lambda: win.comparisons.partner is not None, timeout=WAIT_MS)
    partner = win.comparisons.partner
    qtbot.waitUntil(lambda: partner.snapshot is not None and partner.path == str(b), timeout=WAIT_MS)
    return partner


def _compared(qtbot, tmp_path: Path) -> list[weakref.ref]:
    """A comparison, B's window closed by the user, a second comparison, then A's window deleted: weak references
    to both B windows and all three sessions."""
    a, b = _captures(tmp_path)
    win = _window(tmp_path)
    try:
        open_scene(qtbot, win, a)
        first = _partner(qtbot, win, b)
        refs = [weakref.ref(first), weakref.ref(first.worker.session)]
        _delete(first)  # the user closes B's window: it is deleted, and forgotten
        assert win.comparisons.partner is None
        second = _partner(qtbot, win, b)  # a new B window, with a running worker
        assert second is not first
        refs += [weakref.ref(second), weakref.ref(second.worker.session), weakref.ref(win.worker.session)]
    finally:
        _delete(win)  # closing A closes B
    return refs


def test_capture_b_window_goes_with_a_and_is_replaced_once_closed(qtbot, tmp_path: Path) -> None:
    refs = _compared(qtbot, tmp_path)
    gc.collect()
    assert [ref() for ref in refs] == [None] * 5
