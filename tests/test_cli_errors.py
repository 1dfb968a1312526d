"""The CLI's error policy, end to end: every error is one ``error: ...`` line on stderr with exit status 2 (bugs:
status 3), outputs are refused when they are an input, every write is atomic (a full disk leaves the old file and
no temporary file), unknown picture suffixes fail before any work, and batch survives captures that crash."""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from picaemu.cli import EXIT_INTERNAL, main
from picaemu.command.packets import header_word


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_one_error_line(res: Result, *parts: str, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def scene(captures_dir: Path) -> Path:
    return captures_dir / "scene2_textured_quad"


@pytest.fixture
def small_pica(tmp_path: Path) -> Path:
    path = tmp_path / "cube.pica"
    path.write_bytes((Path(__file__).resolve().parent.parent / "samples" / "captures" / "cube.pica").read_bytes())
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["render", "{input}", "-o", "{out}"],
        ["stats", "{input}", "--plot", "{out}"],
        ["render", "{input}", "-o", "ok.png", "--depth", "{out}"],
    ],
)
def test_unknown_picture_suffix_fails_before_the_replay(command, small_pica: Path, tmp_path: Path) -> None:
    out = tmp_path / "picture.xyz"
    args = [a.format(input=small_pica, out=out).replace("ok.png", str(tmp_path / "ok.png")) for a in command]
    assert_one_error_line(run(*args), "suffix '.xyz'", str(out))
    assert not out.exists() and not (tmp_path / "ok.png").exists()


def test_texture_decode_unknown_suffix(tmp_path: Path) -> None:
    data = tmp_path / "tex.bin"
    data.write_bytes(bytes(8 * 8 * 4))
    out = tmp_path / "tex.nope"
    assert_one_error_line(
        run("texture", "decode", str(data), "--format", "RGBA8", "--width", "8", "--height", "8", "-o", str(out)),
        "suffix '.nope'",
    )


def test_output_that_is_the_input_is_refused(small_pica: Path, tmp_path: Path) -> None:
    before = small_pica.read_bytes()
    link = tmp_path / "link.pica"
    link.symlink_to(small_pica)
    hard = tmp_path / "hard.pica"
    os.link(small_pica, hard)
    for out in (small_pica, link, hard):
        assert_one_error_line(run("convert", str(small_pica), "-o", str(out)), "refusing to overwrite the input")
    assert small_pica.read_bytes() == before
    odd = tmp_path / "list.png"  # a command list whose name ends in .png, rendered onto itself
    odd.write_bytes(np.array([0, header_word(0x040, 1)], "<u4").tobytes())
    assert_one_error_line(run("render", str(odd), "-o", str(odd)), "refusing to overwrite the input")
    src = tmp_path / "a.png"
    from picaemu.formats.files import save_image

    save_image(src, np.zeros((8, 8, 4), np.uint8))
    assert_one_error_line(
        run("texture", "encode", str(src), "--format", "RGBA8", "-o", str(src)), "refusing to overwrite the input"
    )


def test_full_disk_keeps_the_old_file_and_names_the_output(small_pica: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "out.pica"
    out.write_bytes(b"old contents")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as the kernel reports it: no file name

    monkeypatch.setattr(os, "fsync", no_space)
    assert_one_error_line(run("convert", str(small_pica), "-o", str(out)), f"{out}: No space left on device")
    assert out.read_bytes() == b"old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cube.pica", "out.pica"]  # no temporary file left


def test_multi_line_format_error_is_one_line(captures_dir: Path, tmp_path: Path) -> None:
    data = (captures_dir / "shaders" / "vs_color.shbin").read_bytes()
    dvle = struct.unpack_from("<I", data, 8)[0]
    bad = tmp_path / "bad.shbin"
    bad.write_bytes(data[:dvle] + b"XXXX" + data[dvle + 4 :])
    assert_one_error_line(run("shader", "disasm", str(bad)), "bad DVLE header", "parsed b'XXXX'", "0x94")


def test_warnings_never_print_before_an_error(tmp_path: Path) -> None:
    """256 words into the 128-entry fog LUT from index 0 (128 dropped: a logged warning), then a truncated packet."""
    words = [0, header_word(0x0E6, 1)] + [0, header_word(0x0E8, 256, consecutive=False)] + [0] * 255
    words += [0, 7, header_word(0x040, 3)]  # padding word, then a packet promising more than the buffer holds
    path = tmp_path / "list.bin"
    path.write_bytes(np.array(words, "<u4").tobytes())
    res = run("decode", str(path))
    assert_one_error_line(res, "packet promises 2 extra parameters")
    ok = tmp_path / "ok.bin"
    ok.write_bytes(np.array(words[:-2], "<u4").tobytes())
    res = run("decode", str(ok))
    assert res.exit_code == 0
    assert res.stderr.splitlines() == ["warning: 128 data-port words fell outside their memory and were dropped"]


def test_usage_errors_are_one_line() -> None:
    assert_one_error_line(run("render"), "Missing argument", "render --help")  # (CliRunner names the program "main")
    assert_one_error_line(run("decode", "/nonexistent/file.bin"), "does not exist")


def test_a_bug_is_one_line_with_status_3(small_pica: Path, tmp_path: Path, monkeypatch) -> None:
    import picaemu.replay

    def broken(*args, **kwargs):
        raise KeyError("add")

    monkeypatch.setattr(picaemu.replay, "open", broken)
    assert_one_error_line(
        run("render", str(small_pica), "-o", str(tmp_path / "x.png")),
        "internal error KeyError: 'add'",
        "PICAEMU_TRACEBACK=1",
        code=EXIT_INTERNAL,
    )


def test_batch_survives_a_crashing_capture(small_pica: Path, monkeypatch) -> None:
    """A bug of picaemu's while replaying one capture (an unexpected exception in the worker) is that capture's
    failed result naming it, not the end of the batch."""
    from picaemu.batch import task as batch_task

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(batch_task, "replay_frames", boom)
    outcome, pictures = batch_task.decode_result(
        batch_task.render_task(batch_task.make_task("x", str(small_pica), None))
    )
    assert outcome["status"] == "failed" and outcome["error"] == "internal error RuntimeError: boom" and not pictures


def test_batch_survives_a_worker_that_dies(small_pica: Path, tmp_path: Path) -> None:
    """A worker process killed while it holds a capture (segfault, out-of-memory kill) fails only that capture;
    a fresh worker renders the next one."""
    import multiprocessing
    import signal
    import threading
    import time

    from picaemu.batch.local import run_local
    from picaemu.batch.task import decode_result, make_task

    fifo = tmp_path / "never.pica"
    os.mkfifo(fifo)  # the worker blocks opening it until it is killed

    def kill_the_worker() -> None:
        for _ in range(1200):  # the worker starts (spawn) and takes the first task
            workers = [p for p in multiprocessing.active_children() if p.name == "picaemu-batch-worker"]
            if workers:
                time.sleep(0.5)  # it is blocked opening the FIFO now
                os.kill(workers[0].pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    results = run_local([make_task("never", str(fifo), None), make_task("cube", str(small_pica), None)], jobs=1)
    outcomes = {o["name"]: (o, pictures) for o, pictures in map(decode_result, results)}
    killer.join()
    assert outcomes["never"][0]["status"] == "failed" and "worker process died" in outcomes["never"][0]["error"]
    assert outcomes["cube"][0]["status"] == "ok" and len(outcomes["cube"][1]) == 1


def test_gui_without_a_display_is_one_line() -> None:
    """Qt would abort the process (status 134); the command prints one line and exits 2 (a real subprocess)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    command = [sys.executable, "-c", "from picaemu.cli import run; run()", "gui"]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and proc.stderr.startswith("error: no display")
