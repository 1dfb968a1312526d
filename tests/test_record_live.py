"""``picaemu record --live``: the capture grows by one complete frame per frame end (picaemu.record.live).

Without qemu: a ``GrowingFile`` fed frame by frame writes the bytes ``pica.build`` writes for the same capture.
Under ``qemu-arm -g`` (tests/gx_player.c, as tests/test_record_qemu.py): the file holds the finished frames while
the program still runs (it sleeps in the middle of a frame: a WAIT record), one line per frame goes to stdout;
killing the program mid-frame, or Ctrl-C, leaves a capture whose frames replay exactly like the same frames of a
recording that ran to the end."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica
from picaemu.formats.pica_growing import GrowingFile

from picaemu.cli import main
from tests import gx_script
from tests.conftest import REPO
from tests.fake_stub import FakeStub

SAMPLE = REPO / "samples" / "captures" / "animation.pica"
GAME = REPO / "tests" / "data" / "games" / "minicraft.pica"
PICAEMU = [sys.executable, "-c", "from picaemu.cli import main; main()"]
WHY = gx_script.tools_missing()
needs_qemu = pytest.mark.skipif(WHY is not None, reason=WHY or "")
WAIT_MS = 60_000  # the program's sleep in the middle of frame 2: the test ends it before it is over


def _frames(capture: pica.Capture) -> list[list[pica.Event]]:
    out, start = [], 0
    for i, event in enumerate(capture.events):
        if isinstance(event, pica.FrameEnd):
            out.append(capture.events[start : i + 1])
            start = i + 1
    return out


@pytest.mark.parametrize("path", [SAMPLE, GAME], ids=["animation", "minicraft"])
def test_a_growing_file_is_at_every_frame_the_file_pica_writes(path: Path) -> None:
    capture = pica.read(path)
    capture.call_sites = {0: pica.CallSite(8, (pica.CallFrame(0x10510, "draw_mesh", "src/scene.c", 41),))}
    grown = GrowingFile(capture.state, capture.blobs)
    frames = _frames(capture)
    for n, events in enumerate(frames, 1):
        grown.add_frame(events)
        if n in (1, len(frames)):
            prefix = pica.Capture(capture.meta, capture.state, capture.blobs, [e for f in frames[:n] for e in f])
            prefix.call_sites = capture.call_sites
            assert grown.data(capture.meta, capture.call_sites) == pica.build(prefix), n


# ------------------------------------------------------------------------------------------------ under qemu
@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if WHY is not None:
        pytest.skip(WHY)
    return gx_script.build(tmp_path_factory.mktemp("gx_player"))


def _mid_frame_2(capture: pica.Capture) -> int:
    """The event after frame 2's first command list: the program sleeps there, frame 2 half submitted."""
    ends = [i for i, e in enumerate(capture.events) if isinstance(e, pica.FrameEnd)]
    first = next(i for i in range(ends[1] + 1, ends[2]) if isinstance(capture.events[i], pica.CommandList))
    return first + 1


class _Live:
    """``picaemu record --live`` over gx_player playing ``script`` under qemu; stdout lines arrive in ``lines``."""

    def __init__(self, player: Path, script: Path, out: Path) -> None:
        port = gx_script.free_port()
        self.qemu = gx_script.serve(player, script, port)
        gx_script.wait_listening(port, self.qemu)
        args = ["record", "--gdb", f"127.0.0.1:{port}", "--elf", str(player), "--from-start", "--live", "-o", str(out)]
        self.proc = subprocess.Popen([*PICAEMU, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: list[str] = []
        self.pumps = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.errors.append), daemon=True),
        ]
        for pump in self.pumps:
            pump.start()

    @staticmethod
    def _pump(stream, put) -> None:
        for line in stream:
            put(line.rstrip("\n"))

    def wait_for_line(self, prefix: str, timeout: float = 120.0) -> str:
        while True:
            line = self.lines.get(timeout=timeout)
            if line.startswith(prefix):
                return line

    def finish(self) -> tuple[int, str]:
        """Wait for the recorder to end; the program is killed if still running. (exit status, stderr)."""
        try:
            self.proc.wait(timeout=120)
        finally:
            if self.qemu.poll() is None:
                self.qemu.kill()
            self.qemu.wait()
        for pump in self.pumps:
            pump.join(timeout=10)
        return self.proc.returncode, "\n".join(self.errors)


def _script(player_dir: Path, waits: dict[int, int] | None) -> Path:
    path = player_dir / f"animation{'-wait' if waits else ''}.gxs"
    path.write_bytes(gx_script.script(pica.read(SAMPLE), waits=waits))
    return path


def _same_frames(partial: pica.Capture, full: pica.Capture, frames: int) -> None:
    """``partial`` holds exactly ``frames`` frames, equal (events, memory, pictures) to ``full``'s first ones."""
    assert len(_frames(partial)) == frames
    assert partial.events == full.events[: len(partial.events)]
    for a, b in zip(partial.events, full.events, strict=False):
        if isinstance(a, pica.MemoryWrite):
            assert partial.blobs[a.blob] == full.blobs[b.blob]
    for f, (shot, ref) in enumerate(zip(gx_script.top_screens(partial), gx_script.top_screens(full), strict=False)):
        assert np.array_equal(shot, ref), f"frame {f}"


@needs_qemu
def test_frames_appear_while_the_program_runs_and_a_lost_link_keeps_them(player: Path, tmp_path: Path) -> None:
    full_out = tmp_path / "full.pica"
    run = _Live(player, _script(tmp_path, None), full_out)
    status, err = run.finish()
    assert status == 0, err
    lines = [run.lines.get_nowait() for _ in range(run.lines.qsize())]
    assert [line.split(":")[0] for line in lines] == [f"frame {f}" for f in range(4)]
    assert lines[0].startswith("frame 0: 1 draws, ") and "bytes recorded, file " in lines[0]
    full = pica.read(full_out)

    out = tmp_path / "live.pica"
    run = _Live(player, _script(tmp_path, {_mid_frame_2(pica.read(SAMPLE)): WAIT_MS}), out)
    run.wait_for_line("frame 1:")
    assert run.qemu.poll() is None  # the program runs on (asleep in frame 2) ...
    _same_frames(pica.read(out), full, 2)  # ... and the file already holds frames 0 and 1
    run.qemu.kill()  # the link drops in the middle of frame 2
    status, err = run.finish()
    assert status == 2 and err.count("error:") == 1, err
    _same_frames(pica.read(out), full, 2)


@needs_qemu
def test_ctrl_c_leaves_a_complete_file(player: Path, tmp_path: Path) -> None:
    out = tmp_path / "live.pica"
    run = _Live(player, _script(tmp_path, {_mid_frame_2(pica.read(SAMPLE)): WAIT_MS}), out)
    run.wait_for_line("frame 1:")
    os.kill(run.proc.pid, signal.SIGINT)
    status, err = run.finish()
    assert status == 0 and "stopped by Ctrl-C" in err and "error" not in err, err
    capture = pica.read(out)
    assert len(_frames(capture)) == 2 and capture.damage is None
    for f, shot in enumerate(gx_script.top_screens(capture)):
        assert np.array_equal(shot, gx_script.reference("animation", f)), f"frame {f}"


@needs_qemu
@pytest.mark.parametrize("mode", ["garbage", "checksum", "huge", "disconnect", "silent"])
def test_hostile_stubs_end_a_live_recording_with_one_error_line(player: Path, tmp_path: Path, mode: str) -> None:
    """``record --live`` against the scripted stubs of tests/fake_stub.py: one ``error:`` line, exit status 2, and
    no file but a valid capture (none is written before the first frame)."""
    stub = FakeStub(mode=mode)
    stub.start()
    out = tmp_path / "live.pica"
    args = ["record", "--gdb", f"127.0.0.1:{stub.port}", "--elf", str(player), "--live", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--timeout", "1", "--stop-timeout", "1"])
    assert result.exit_code == 2 and result.output.count("error:") == 1, result.output
    assert not out.exists() or pica.read(out).events == []
