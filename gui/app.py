"""``run(path=None) -> exit code``: create the QApplication, show the debugger's main window, optionally open a
capture, run the event loop."""

from __future__ import annotations

import sys

from picaemu.gui.main_window import MainWindow
from PySide6.QtWidgets import QApplication


def run(path: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("picaemu debugger")
    app.setOrganizationName("picaemu")
    window = MainWindow()
    window.show()
    if path:
        window.open_path(path)
    return app.exec()
