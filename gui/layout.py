"""The debugger's default layout (issue 26 item 6): the picture gets at least half of the window, and the window
fits a 1366x768 screen. One column of docks on the left holds two groups of tabs, navigation above
(``GROUPS[0]``) and inspectors below (``GROUPS[1]``); the framebuffer view takes the rest. Every dock keeps its
least width under the column's (the panels split their controls into rows, ``gui.rows``), so no dock widens the
window. A saved layout (QSettings) replaces this one; View › Default layout brings it back.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

GROUPS = (
    ("Command stream", "Draws", "Find", "Breakpoints", "Lint"),
    (
        "Registers",
        "Pipeline state",
        "Pixel history",
        "Fragment",
        "Why?",
        "Textures",
        "Surface",
        "Shader",
        "Mesh",
        "Statistics",
        "Python",
        "Edit and replay",
    ),
)
COLUMN_SHARE, COLUMN_MIN = 0.32, 360  # the dock column's share of the window width, and its least width in px
NAVIGATION_SHARE = 0.4  # of the column's height
DEFAULT_SIZE = (1400, 900)  # a first start's window, shrunk to the screen's available area


def default_size(available: tuple[int, int]) -> tuple[int, int]:
    """A first start's window size: ``DEFAULT_SIZE``, no larger than the screen's ``available`` (width, height)."""
    return min(DEFAULT_SIZE[0], available[0]), min(DEFAULT_SIZE[1], available[1])


def arrange(win: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """Put ``docks`` (by title; every title of ``GROUPS``) in the left column as ``GROUPS``' tabs, the first tab of
    each group raised."""
    left = Qt.DockWidgetArea.LeftDockWidgetArea
    for group in GROUPS:
        first = docks[group[0]]
        for title in group:  # each dock joins its group's tabs at once: never a column of 15 stacked docks, whose
            dock = docks[title]  # summed least heights would grow the window
            dock.setFloating(False)
            win.addDockWidget(left, dock, Qt.Orientation.Vertical)
            if dock is not first:
                win.tabifyDockWidget(first, dock)
        first.raise_()


def size(win: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """The column's width (``COLUMN_SHARE`` of the window, at least ``COLUMN_MIN``) and its groups' heights (once the
    window is shown: Qt sizes docks only then)."""
    firsts = [docks[group[0]] for group in GROUPS]
    width = max(int(win.width() * COLUMN_SHARE), COLUMN_MIN)
    win.resizeDocks(firsts[:1], [width], Qt.Orientation.Horizontal)
    top = int(win.height() * NAVIGATION_SHARE)
    win.resizeDocks(firsts, [top, win.height() - top], Qt.Orientation.Vertical)
    for bar in win.findChildren(QTabBar):  # whole tab names, scrolled, rather than 11 names cut to "R…"
        bar.setElideMode(Qt.TextElideMode.ElideNone)
        bar.setUsesScrollButtons(True)
