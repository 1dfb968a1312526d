"""``picaemu record`` for real, without a console: an ARM program (tests/gx_player.c) plays a bundled sample's CPU
side under ``qemu-arm -g PORT``; the recorder attaches over the GDB remote protocol, and the capture it writes
must replay to the sample's reference pictures. Needs the Debian packages qemu-user and gcc-arm-linux-gnueabihf
(.ci/run installs them); without them the tests skip and say why."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica

from picaemu.cli import main
from picaemu.record.callsites import find_draw_hooks
from picaemu.record.gdb import GdbClient
from picaemu.record.symbols import find_hooks
from picaemu.replay import Replay
from picaemu.replay.trim import trim
from tests import gx_script
from tests.conftest import REPO
from tests.noack_proxy import NoAckProxy

SAMPLES = REPO / "samples"
GAME = REPO / "tests" / "data" / "games" / "minicraft.pica"
WHY = gx_script.tools_missing()
if WHY is not None and os.environ.get("PICAEMU_REQUIRE_QEMU"):
    raise RuntimeError(f"PICAEMU_REQUIRE_QEMU is set (.ci/run installed the tools) but {WHY}")
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")
if WHY is not None:
    print(f"test_record_qemu: skipped: {WHY}")


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gx_script.build(tmp_path_factory.mktemp("gx_player"))


def _record(
    player: Path,
    sample: str,
    tmp: Path,
    *args: str,
    draws: bool = False,
    source: Path | None = None,
    front: list[NoAckProxy] | None = None,
) -> tuple[pica.Capture, str]:
    """Record the CPU side of ``source`` (default: the bundled sample ``sample``) played by gx_player; with
    ``front``, through a ``NoAckProxy`` (appended to it)."""
    script = tmp / f"{sample}.gxs"
    script.write_bytes(gx_script.script(pica.read(source or SAMPLES / "captures" / f"{sample}.pica"), draws=draws))
    port = gx_script.free_port()
    qemu = gx_script.serve(player, script, port)
    try:
        gx_script.wait_listening(port, qemu)
        if front is not None:
            front.append(NoAckProxy(("127.0.0.1", port)))
            front[-1].start()
            port = front[-1].port
        out = tmp / f"{sample}.rec.pica"
        result = CliRunner().invoke(
            main, ["record", "--gdb", f"127.0.0.1:{port}", "--elf", str(player), "-o", str(out), *args]
        )
        assert result.exit_code == 0, result.output
        qemu.wait(timeout=30)
        assert qemu.returncode == 0, qemu.stderr.read()
    finally:
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
    return pica.read(out), result.output


def test_hooks_are_found_where_nm_says(player: Path) -> None:
    nm = subprocess.run(["arm-linux-gnueabihf-nm", str(player)], capture_output=True, text=True, check=True).stdout
    table = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "T":
            table[parts[2]] = int(parts[0], 16)
    hooks = {h.role: h for h in find_hooks(player)}
    assert hooks["submit"].address == table["gspSubmitGxCommand"] and hooks["submit"].kind == 4
    assert hooks["present"].address == table["gspPresentBuffer"]
    assert "frame" not in hooks  # gfxSwapBuffers is not linked


@pytest.mark.parametrize("sample", ["cube", "texture_formats", "lit_sphere", "gs_sprites", "fog"])
def test_recorded_sample_replays_to_its_reference(player: Path, tmp_path: Path, sample: str) -> None:
    capture, output = _record(player, sample, tmp_path, "--from-start", "--frames", "1")
    assert "1 complete frame(s)" in output and "warning" not in output
    assert "initial_state" not in capture.meta
    assert np.array_equal(gx_script.top_screens(capture)[0], gx_script.reference(sample))


def test_recording_every_frame_until_the_program_exits(player: Path, tmp_path: Path) -> None:
    capture, output = _record(player, "animation", tmp_path, "--from-start")
    assert "exited with status 00" in output and "4 complete frame(s)" in output
    for f, shot in enumerate(gx_script.top_screens(capture)):
        assert np.array_equal(shot, gx_script.reference("animation", f)), f"frame {f}"


def test_recording_from_a_frame_boundary(player: Path, tmp_path: Path) -> None:
    capture, output = _record(player, "animation", tmp_path)
    assert "3 complete frame(s)" in output and capture.meta["initial_state"] == "unknown"
    shots = gx_script.top_screens(capture)
    for f, shot in enumerate(shots, start=1):
        assert np.array_equal(shot, gx_script.reference("animation", f)), f"frame {f}"


def _marked_lines() -> dict[str, int]:
    """CALL-SITE mark -> its line in tests/gx_player.c."""
    lines = gx_script.SOURCE.read_text().splitlines()
    return {line.split("CALL-SITE: ")[1].split()[0]: n for n, line in enumerate(lines, 1) if "CALL-SITE: " in line}


@pytest.mark.parametrize("sample", ["animation", "gs_sprites"])
def test_call_sites_name_the_calling_functions_and_lines(player: Path, tmp_path: Path, sample: str) -> None:
    capture, output = _record(
        player, sample, tmp_path, "--from-start", "--call-sites", "--draw-symbol", gx_script.DRAW_FUNCTION, draws=True
    )
    assert "warning" not in output
    marks = _marked_lines()
    replay = Replay(capture, checkpoints=False)
    replay.run()
    assert replay.draws and len(capture.call_sites) == len(replay.draws), output
    assert f"call sites of {len(replay.draws)} draw(s)" in output
    for draw in replay.draws:
        caller = "draw_sprite" if draw.index % 2 else "draw_mesh"
        site = draw.call_site
        assert site is not None and site.offset == draw.offset, draw.index
        inner, outer = site.frames[:2]
        assert (inner.function, inner.line) == (caller, marks[caller]), site.text()
        assert inner.file.endswith("tests/gx_player.c")
        main_mark = "main-sprite" if draw.index % 2 else "main-mesh"
        assert (outer.function, outer.line) == ("main", marks[main_mark]), site.text()
    frames = gx_script.top_screens(capture)  # the call sites change nothing of the replay
    assert np.array_equal(frames[0], gx_script.reference(sample))


def test_call_sites_through_a_no_ack_stub_travel_with_the_registers(player: Path, tmp_path: Path) -> None:
    """Through a no-ack front (tests/noack_proxy.py) a draw stop's reads (the command-buffer globals, the stack
    window at the last draw stop's stack pointer) go out with its register request: two round trips fewer per
    draw from the second on, and the same call sites as over the acknowledged link."""
    args = ("--from-start", "--call-sites", "--draw-symbol", gx_script.DRAW_FUNCTION)
    direct, _ = _record(player, "animation", tmp_path, *args, draws=True)
    fronts: list[NoAckProxy] = []
    relayed, output = _record(player, "animation", tmp_path, *args, draws=True, front=fronts)
    assert "warning" not in output and len(direct.call_sites) == 4
    assert relayed.call_sites == direct.call_sites
    saved = fronts[0].requests - fronts[0].segments
    assert saved >= 2 * len(direct.call_sites) - 1, (fronts[0].requests, fronts[0].segments)


def test_call_sites_every_second_frame(player: Path, tmp_path: Path) -> None:
    """``--call-sites-every 2``: the draws of frames 0 and 2 have their call site, those of frames 1 and 3 none
    (the draw breakpoints are out), and the pictures are the same."""
    capture, output = _record(
        player,
        "animation",
        tmp_path,
        "--from-start",
        "--call-sites",
        "--draw-symbol",
        gx_script.DRAW_FUNCTION,
        "--call-sites-every",
        "2",
        draws=True,
    )
    assert "warning" not in output and capture.meta["record.call_sites_every"] == "2"
    replay = Replay(capture, checkpoints=False)
    replay.run()
    frame_of = {draw.index: draw.frame for draw in replay.draws}
    assert sorted(capture.call_sites) == [i for i, f in frame_of.items() if f % 2 == 0] and len(frame_of) == 4
    for f, shot in enumerate(gx_script.top_screens(capture)):
        assert np.array_equal(shot, gx_script.reference("animation", f)), f"frame {f}"


def test_call_sites_need_a_draw_function(player: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.pica"
    result = CliRunner().invoke(
        main, ["record", "--gdb", "127.0.0.1:1", "--elf", str(player), "-o", str(out), "--call-sites"]
    )
    assert result.exit_code != 0
    assert result.output.count("error:") == 1 and "--draw-symbol" in result.output


def _screens(capture: pica.Capture) -> list[tuple[np.ndarray, np.ndarray]]:
    """(top, bottom) pictures after each frame of ``capture``."""
    replay = Replay(capture, checkpoints=False)
    shots = []
    for f in range(len(replay.frames)):
        replay.run_to_frame(f)
        shots.append((replay.screen("top"), replay.screen("bottom")))
    return shots


def test_a_two_screen_game_records_both_screens(player: Path, tmp_path: Path) -> None:
    """minicraft's first three frames (citro2d: both screens double-buffered, the bottom one presented after each
    frame's end, mip levels copied by RequestDma) recorded from a frame boundary: every frame's top and bottom
    pictures equal the direct capture's (issue #26 saw a recording's bottom screen 1 level off on 16,000 pixels)."""
    source = tmp_path / "minicraft3.pica"
    pica.write(source, trim(pica.read(GAME), 0, 2))
    capture, output = _record(player, "minicraft3", tmp_path, source=source)
    assert "3 complete frame(s)" in output and capture.meta["initial_state"] == "unknown"
    direct, recorded = _screens(pica.read(source)), _screens(capture)
    assert len(recorded) >= 2
    for f, ((top, bottom), (rec_top, rec_bottom)) in enumerate(zip(direct, recorded, strict=False)):
        assert np.array_equal(rec_top, top) and np.array_equal(rec_bottom, bottom), f"frame {f}"


def test_qemu_reports_a_breakpoint_again_when_continued_on_it(player: Path, tmp_path: Path) -> None:
    """Why a draw stop costs two stops under qemu: continuing from a breakpoint with it left in stops there at once,
    without executing (the recorder steps off first, ``Recorder._step_off``); a single step leaves it.
    bench_record.py times that bare stop as the floor of a draw stop."""
    script = tmp_path / "animation.gxs"
    script.write_bytes(gx_script.script(pica.read(SAMPLES / "captures" / "animation.pica"), draws=True))
    port = gx_script.free_port()
    qemu = gx_script.serve(player, script, port)
    try:
        gx_script.wait_listening(port, qemu)
        draw = find_draw_hooks(player, (gx_script.DRAW_FUNCTION,))[0][0]
        with GdbClient("127.0.0.1", port) as link:
            link.handshake()
            link.set_breakpoint(draw.address, draw.kind)
            link.resume(30.0)
            at = link.registers()
            assert at[15] == draw.address
            link.resume(30.0)
            assert link.registers() == at
            link.step()
            assert link.registers()[15] != draw.address
    finally:
        qemu.kill()
        qemu.wait()
