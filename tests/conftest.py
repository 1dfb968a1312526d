"""Shared test fixtures and settings."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
# the real citro3d captures (c3dcap scenes, CiTrace files, SHBINs) the tests need, with their README: a copy of the
# project's shared reference captures, kept in the repository so that a fresh clone tests everything
CAPTURES = REPO / "tests" / "data" / "captures"


def memory_digests(memory) -> list[str]:
    """A SHA-256 of each region of a ``PhysicalMemory`` (equal for equal bytes): its size, then the number and
    bytes of each 4 KiB page that holds a non-zero byte (every page is scanned; hashing the whole of FCRAM's 128 MiB
    took ~0.3 s a replay, most of some tests' time)."""
    out = []
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        whole = data.size // 4096 * 4096
        pages = data[:whole].reshape(-1, 4096)
        used = np.flatnonzero(pages.view(np.uint64).any(axis=1))
        digest = hashlib.sha256(np.int64(data.size).tobytes() + used.astype("<i8").tobytes())
        digest.update(pages[used].tobytes())
        digest.update(data[whole:].tobytes())
        out.append(digest.hexdigest())
    return out


@pytest.fixture(scope="session", autouse=True)
def _clipper_linked() -> None:
    """The clipper linked before any test, as in a process that has clipped a draw: tests count the draws the
    compiled loop ran, and the first draw to clip in a process goes through Python once (``front_end.link_clipper``;
    ``tests.test_fused_vertices.clipper_unlinked`` unlinks it for the tests of that first draw)."""
    from picaemu.geometry import front_end

    front_end.link_clipper(always=True)


@pytest.fixture(scope="session")
def captures_dir() -> Path:
    assert CAPTURES.is_dir(), f"{CAPTURES} is missing: the repository is incomplete"
    return CAPTURES


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item):
    """After a GUI test's teardown (pytest-qt closes its widgets and calls ``deleteLater``), delete them for real.
    Deferred deletions run only when control returns to an event loop, which tests never enter: without this every
    window of the run stayed alive with its replay session (50-400 MB each; the GUI files together reached 4.8 GB
    in one process; one CI run of the whole suite once reached 8 GB)."""
    result = yield
    if item.get_closest_marker("gui") is not None and "PySide6.QtCore" in sys.modules:
        from PySide6.QtCore import QCoreApplication, QEvent

        if QCoreApplication.instance() is not None:
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
            _GUI_TEARDOWNS.add(item.nodeid)
    return result


_GUI_TEARDOWNS: set[str] = set()  # GUI tests whose deleted windows are left for ``pytest_runtest_logfinish``


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Once pytest has dropped a GUI test's fixtures: collect the deleted windows' Python side (reference cycles
    between a window, its panels and their callbacks) now, not at some later collection."""
    if nodeid in _GUI_TEARDOWNS:
        _GUI_TEARDOWNS.discard(nodeid)
        gc.collect()
        if _LIBC is not None:
            # glibc keeps freed heap (the worker threads' arenas too) for reuse: the GUI files in one process sat at
            # 1.5 GB resident after their windows were freed, ~0.6 GB with the heap handed back after each test
            _LIBC.malloc_trim(0)


def _libc() -> ctypes.CDLL | None:
    """glibc, for ``malloc_trim``; None elsewhere (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()
