"""Opening captures in the debugger's main window (``Opening``, which ``MainWindow`` mixes in): a file, a c3dcap
folder or a raw command list with memory dumps, from the File menu, the recent-files list or drag and drop. The
session is opened and indexed on the window's worker thread (``picaemu.debug.jobs.open_session``), with progress in
the status bar; the window changes only once it has opened (``MainWindow._got_open``)."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog

from picaemu.debug import jobs
from picaemu.debug.session import address_from_name, raw_capture

MAX_RECENT = 8
FILE_FILTER = "Captures (*.pica *.ctf manifest.json);;All files (*)"


class Opening:
    """The main window's opening actions (it provides ``worker``, ``status``, ``settings``, ``recent_menu``,
    ``comparisons`` and ``show_error``)."""

    def open_path(self, path: str) -> int:
        """Open a capture; the window (title, breakpoints, recent files) changes only once it has opened."""
        self.opening, self._recent_on_open = str(path), True
        self.status.setText(f"opening {path} …")
        worker = self.worker

        def job(_):
            session = jobs.open_session(path, progress=self._progress_callback())
            worker.session = session
            return jobs.opened(session)

        return worker.submit("open", job)

    def open_raw(self, command_list: str, address: int, dumps: list[str]) -> int:
        capture = raw_capture(command_list, address, [(address_from_name(p), p) for p in dumps])
        self.opening, self._recent_on_open = str(command_list), False
        worker = self.worker

        def job(_):
            session = jobs.open_session(capture=capture, label=command_list, progress=self._progress_callback())
            worker.session = session
            return jobs.opened(session)

        return worker.submit("open", job)

    def _progress_callback(self):
        """A callback for the worker thread: reports indexing progress in whole percents (queued signal)."""
        last = [-1]

        def report(done: int, total: int) -> None:
            percent = 100 * done // max(total, 1)
            if percent != last[0]:
                last[0] = percent
                self.worker.progress.emit(f"indexing {os.path.basename(self.opening)}: {percent}%")

        return report

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open capture", "", FILE_FILTER)
        if path:
            self.open_path(str(Path(path).parent) if Path(path).name == "manifest.json" else path)

    def _open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open c3dcap scene folder")
        if path:
            self.open_path(path)

    def _open_raw_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Raw command list (u32 words)", "", "Binary (*.bin);;All (*)")
        if not path:
            return
        text, ok = QInputDialog.getText(self, "Load address", "physical address of the list", text="0x20100000")
        if not ok:
            return
        dumps, _ = QFileDialog.getOpenFileNames(
            self, "Memory dumps named by hex address (optional)", "", "Binary (*.bin);;All (*)"
        )
        try:
            self.open_raw(path, int(text, 0), dumps)
        except Exception as err:
            self.show_error("Open raw command list", f"{type(err).__name__}: {err}")

    def _compare_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with capture", "", FILE_FILTER)
        if path:
            self.comparisons.compare_with(str(Path(path).parent) if Path(path).name == "manifest.json" else path)

    def _remember(self, path: str) -> None:
        recent = [p for p in self._recent() if p != path]
        self.settings.setValue("recent", json.dumps([path, *recent][:MAX_RECENT]))
        self._fill_recent()

    def _recent(self) -> list[str]:
        try:
            return list(json.loads(self.settings.value("recent", "[]")))
        except (TypeError, ValueError):
            return []

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self._recent():
            self.recent_menu.addAction(path, partial(self.open_path, path))

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            p = Path(urls[0])
            self.open_path(str(p.parent) if p.name == "manifest.json" else str(p))
