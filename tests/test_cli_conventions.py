"""CLI conventions (apitrace-style): results on stdout never cut off a terminal, ``-o -`` writes to stdout, a
broken pipe ends quietly, informational lines on stderr and silenced by ``--quiet``, contradictory options
rejected, examples in every ``--help``, the first-run note on stderr whether or not it is a terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.cli import EXIT_BROKEN_PIPE, main
from samples.generate import CAPTURES, REFERENCE

REPO = Path(__file__).resolve().parent.parent
PICAEMU = [sys.executable, "-c", "from picaemu.cli import main; main()"]


def invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_broken_pipe_ends_quietly() -> None:
    """The reader closes stdout before picaemu writes: no message, status 141 (as if killed by SIGPIPE)."""
    proc = subprocess.Popen([*PICAEMU, "regs"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE and stderr == b""


def test_dash_output_is_stdout() -> None:
    proc = subprocess.run(
        [*PICAEMU, "render", "samples/captures/triangle.pica", "-o", "-"],
        capture_output=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    picture = np.asarray(Image.open(io.BytesIO(proc.stdout)))
    assert np.array_equal(picture, np.asarray(Image.open(REFERENCE / "triangle" / "0000.png")))


def test_binary_is_refused_on_a_terminal(monkeypatch) -> None:
    from picaemu.formats.files import write_atomic

    from picaemu.errors import FormatError

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with pytest.raises(FormatError, match="refusing to write binary data to a terminal"):
        write_atomic("-", b"\x89PNG")


def test_tables_are_tab_separated_and_whole_off_a_terminal() -> None:
    code, out, _ = invoke("stats", str(CAPTURES / "animation.pica"))
    lines = out.splitlines()
    header = lines[0].split("\t")
    assert code == 0 and header[:4] == ["frame", "draw", "event", "kind"] and header[-2:] == ["time_ms", "kernels_ms"]
    assert len(lines) == 5 and all(len(line.split("\t")) == len(header) for line in lines) and "…" not in out


def test_quiet_silences_informational_lines(tmp_path: Path) -> None:
    cube = str(CAPTURES / "cube.pica")
    _, _, loud = invoke("batch", cube, "-o", str(tmp_path / "a"))
    assert "[1/1] cube: ok (1 frame" in loud
    for args in (
        ["-q", "batch", cube, "-o", str(tmp_path / "b")],
        ["batch", cube, "-o", str(tmp_path / "c"), "--quiet"],
    ):
        code, out, err = invoke(*args)
        assert code == 0 and err == "" and out.startswith("capture\tstatus")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stats", "CAP", "--csv", "--json"], "--csv and --json cannot be used together"),
        (["render", "CAP", "-o", "x.png", "--frame", "1", "--draw", "0"], "--frame and --draw cannot be used together"),
        (["render", "CAP", "-o", "x.png", "--all-frames", "--frame", "1"], "--frame and --all-frames cannot be used"),
        (["render", "CAP", "-o", "-", "--all-frames"], "-o - writes one picture to stdout"),
        (["stats", "CAP", "--plot", "-", "--csv"], "--plot - and the --csv/--json text cannot both go to stdout"),
    ],
)
def test_contradictory_options_are_one_error_line(args: list[str], message: str) -> None:
    code, _, err = invoke(*[str(CAPTURES / "animation.pica") if a == "CAP" else a for a in args])
    assert code == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_bottom_screen_never_set_up_is_one_line(tmp_path: Path) -> None:
    code, _, err = invoke(
        "render", str(CAPTURES / "triangle.pica"), "-o", str(tmp_path / "b.png"), "--screen", "bottom"
    )
    assert code == 2 and err == (
        "error: the capture never set up the bottom screen (no present names a framebuffer for it): nothing to show\n"
    )


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("path", [p for p, _ in _commands(main)])
def test_every_help_has_examples(path: tuple[str, ...]) -> None:
    """Each command's --help shows examples (a subcommand's are in its group's help)."""
    code, out, _ = invoke(*path, "--help")
    group_help = invoke(path[0], "--help")[1] if len(path) > 1 else ""
    assert code == 0 and ("Examples:" in out or "Examples:" in group_help), path


def test_first_run_note_once_on_any_stderr(monkeypatch, tmp_path: Path) -> None:
    """With the kernel cache empty the note is printed once per run, to a pipe as well as a terminal, and --quiet
    silences it; with the cache in place nothing is said."""
    from picaemu.cli import common

    monkeypatch.setattr(common, "kernel_cache_index", lambda: str(tmp_path / "missing.nbi"))
    monkeypatch.setattr(common, "_noted_first_run", False)
    code, _, err = invoke("stats", str(CAPTURES / "cube.pica"), "--json")
    assert code == 0 and err.count(common.FIRST_RUN_NOTE) == 1 and str(tmp_path) in err
    common.note_first_compile()  # the same run: said once
    monkeypatch.setattr(common, "_noted_first_run", False)
    assert invoke("-q", "stats", str(CAPTURES / "cube.pica"), "--json")[2] == ""
    (tmp_path / "present.nbi").write_bytes(b"")
    monkeypatch.setattr(common, "kernel_cache_index", lambda: str(tmp_path / "present.nbi"))
    monkeypatch.setattr(common, "_noted_first_run", False)
    err = invoke("stats", str(CAPTURES / "cube.pica"), "--json")[2]
    assert common.FIRST_RUN_NOTE not in err and err.startswith("route: ")  # only the routes' summary line


def test_the_kernel_cache_follows_numba_cache_dir(tmp_path: Path) -> None:
    """NUMBA_CACHE_DIR (documented in the README) moves the cache the note looks at."""
    proc = subprocess.run(
        [sys.executable, "-c", "from picaemu.cli.common import kernel_cache_index as k; print(k())"],
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        timeout=300,
        check=True,
    )
    assert Path(proc.stdout.strip()).is_relative_to(tmp_path)
