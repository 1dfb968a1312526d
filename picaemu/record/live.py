"""``picaemu record --live``: the capture on disk grows by one complete frame at every frame end.

``LiveCapture`` is the recorder's ``on_frame`` listener. At each frame end it appends the frame to a
``GrowingFile`` (picaemu.formats.pica_growing: the earlier frames' work is kept, so a version costs about one
concatenation and one compression of the event section) and replaces the file atomically, so the file is at every
moment a valid capture of the frames complete so far: a lost link, Ctrl-C or a killed recorder leaves exactly
those. It then reports the frame (``FrameLine``: one line per frame; the CLI prints it on stdout) and, when given,
hands it on (``on_line``; the GUI's attach worker).

Latency (``FrameLine.latency``): from the arrival of the stop that ended the frame (the program's top-screen
present, i.e. the moment it finished submitting the frame) to the file being replaced.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from picaemu.formats.pica_growing import GrowingFile
from picaemu.record.recorder import FrameDone, Recorder


@dataclass(frozen=True)
class FrameLine:
    """One recorded frame: index, draws, events (as written: memory writes merged), bytes of memory recorded in
    it, the file's size after it and the seconds from the frame's end on the target to the file written."""

    frame: int
    draws: int
    events: int
    bytes_recorded: int
    file_bytes: int
    latency: float

    def text(self) -> str:
        return (
            f"frame {self.frame}: {self.draws} draws, {self.events} events, {self.bytes_recorded} bytes recorded, "
            f"file {self.file_bytes} bytes, written {self.latency * 1e3:.0f} ms after the frame ended"
        )


def recording_meta(elf: str, endpoint: str, from_start: bool) -> dict[str, str]:
    """The metadata a recording's capture carries: the ELF's file name, the stub, where recording started."""
    return {
        "record.elf": os.path.basename(elf),
        "record.stub": endpoint,
        "record.start": "program start" if from_start else "frame boundary",
    }


class LiveCapture:
    """Keeps ``path`` equal to the capture of ``recorder``'s complete frames (see the module docstring)."""

    def __init__(
        self, path: str | os.PathLike[str], recorder: Recorder, on_line: Callable[[FrameLine], None] | None = None
    ) -> None:
        self.path, self.recorder, self.on_line = path, recorder, on_line
        self.file = GrowingFile(recorder.initial_state(), recorder.blobs)
        self.lines: list[FrameLine] = []
        recorder.on_frame = self.frame_done

    def frame_done(self, done: FrameDone) -> None:
        before = len(self.file.events)
        self.file.add_frame(done.events)
        size = self.write()
        line = FrameLine(
            done.frame,
            done.draws,
            len(self.file.events) - before,
            done.bytes_recorded,
            size,
            time.perf_counter() - done.stopped_at,
        )
        self.lines.append(line)
        if self.on_line is not None:
            self.on_line(line)

    def write(self) -> int:
        """Replace the file with the capture of the complete frames; its size in bytes."""
        return self.file.write(self.path, dict(self.recorder.meta), self.recorder.sites())
