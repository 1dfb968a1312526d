"""``run(path=None, compare=None) -> exit code``: create the QApplication, show the debugger's main window,
optionally open a capture (and compare it with a second one, side by side: ``gui.comparison``), run the event
loop."""

from __future__ import annotations

import sys

from picaemu.gui.main_window import MainWindow
from PySide6.QtWidgets import QApplication


def run(path: str | None = None, compare: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("picaemu debugger")
    app.setOrganizationName("picaemu")
    window = MainWindow()
    window.show()
    if path:
        window.open_path(path)
    if path and compare:  # runs on the worker after the open
        window.comparisons.compare_with(compare, path_a=path)
    return app.exec()
