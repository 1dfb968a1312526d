"""The debugger's live session (File › Attach…, gui/attach.py) over a program under ``qemu-arm -g``
(tests/gx_player.c playing the animation sample, asleep for a while in the middle of frame 2): the window shows
frame 1 while the program still runs, Pause stops it at the next frame end with every frame so far debuggable,
Resume records the rest; the capture file holds the same frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from picaemu.formats import pica

from tests import gx_script
from tests.conftest import REPO
from tests.test_gui_window import WAIT_MS, settle, window  # noqa: F401 (window: the fixture)
from tests.test_record_live import _mid_frame_2

SAMPLE = REPO / "samples" / "captures" / "animation.pica"
WHY = gx_script.tools_missing()
pytestmark = [pytest.mark.gui, pytest.mark.skipif(WHY is not None, reason=WHY or "")]
SLEEP_MS = 5000  # the program's sleep in frame 2: the window must show frame 1 meanwhile


def _frames(win) -> int:
    return 0 if win.timeline is None else len(win.timeline.frame_ends)


def _showing_end(win, frames: int) -> bool:
    """The window holds ``frames`` frames and shows the end of the last one."""
    snap = win.snapshot
    return _frames(win) == frames and snap is not None and snap.cursor == win.timeline.end


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gx_script.build(tmp_path_factory.mktemp("gx_player"))


def _serve(player: Path, tmp_path: Path, sleep_ms: int):
    """qemu serving gx_player playing the animation sample, asleep ``sleep_ms`` in the middle of frame 2."""
    script = tmp_path / "animation.gxs"
    script.write_bytes(gx_script.script(pica.read(SAMPLE), waits={_mid_frame_2(pica.read(SAMPLE)): sleep_ms}))
    port = gx_script.free_port()
    qemu = gx_script.serve(player, script, port)
    gx_script.wait_listening(port, qemu)
    return qemu, f"127.0.0.1:{port}"


def test_a_live_session_follows_pauses_and_resumes(qtbot, window, player: Path, tmp_path: Path) -> None:  # noqa: F811
    qemu, endpoint = _serve(player, tmp_path, SLEEP_MS)
    out = tmp_path / "live.pica"
    try:
        live = window.live
        live.start(endpoint, str(player), str(out), from_start=True)
        qtbot.waitUntil(lambda: _showing_end(window, 2), timeout=WAIT_MS)
        assert qemu.poll() is None and live.running  # frame 1 on screen, the program asleep in frame 2
        assert np.array_equal(window.snapshot.images["top"], gx_script.reference("animation", 1))

        live.pause()  # takes effect at frame 2's end
        qtbot.waitUntil(lambda: live.paused and _showing_end(window, 3), timeout=WAIT_MS)
        settle(qtbot, window)
        qtbot.wait(300)
        assert _frames(window) == 3 and qemu.poll() is None  # halted, nothing more recorded
        assert len([e for e in pica.read(out).events if isinstance(e, pica.FrameEnd)]) == 3
        window.move_to(window.timeline.after_draw(0))  # every panel works on the frames so far
        qtbot.waitUntil(lambda: window.snapshot.last_draw == 0, timeout=WAIT_MS)
        assert window.snapshot.frame == 0 and window.last_error == ""

        live.resume()
        qtbot.waitUntil(lambda: not live.running and _showing_end(window, 4), timeout=WAIT_MS)
        assert window.last_error == ""  # the program's exit ends the recording by design
        assert np.array_equal(window.snapshot.images["top"], gx_script.reference("animation", 3))
        assert len([e for e in pica.read(out).events if isinstance(e, pica.FrameEnd)]) == 4
        qtbot.waitUntil(lambda: 3 in live.latencies, timeout=WAIT_MS)  # timed once the window has shown it
        assert sorted(live.latencies) == [0, 1, 2, 3]
        print("live latencies (s):", {f: round(t, 3) for f, t in live.latencies.items()})
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()


def test_detach_lets_the_program_run_on(qtbot, window, player: Path, tmp_path: Path) -> None:  # noqa: F811
    """Detach while the program runs: the recording ends at the next frame end (frame 2's), the program goes on
    without breakpoints to its normal exit, and the file holds the three complete frames."""
    qemu, endpoint = _serve(player, tmp_path, 1500)
    out = tmp_path / "live.pica"
    try:
        live = window.live
        live.start(endpoint, str(player), str(out), from_start=True)
        qtbot.waitUntil(lambda: _frames(window) == 2, timeout=WAIT_MS)
        live.detach()
        qtbot.waitUntil(lambda: not live.running, timeout=WAIT_MS)
        assert qemu.wait(timeout=60) == 0 and window.last_error == ""
        assert len(live.frames) == 3
        assert len([e for e in pica.read(out).events if isinstance(e, pica.FrameEnd)]) == 3
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
