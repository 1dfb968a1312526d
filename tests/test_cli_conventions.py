"""CLI conventions (apitrace-style): results on stdout never cut off a terminal, ``-o -`` writes to stdout, a
broken pipe ends quietly, informational lines on stderr and silenced by ``--quiet``, contradictory options
rejected, examples in every ``--help``, the first-run note on stderr whether or not it is a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.cli import COMMANDS, EXIT_BROKEN_PIPE, main
from samples.generate import CAPTURES, REFERENCE
from tests.test_docs_cited import top_folders

REPO = Path(__file__).resolve().parent.parent
PICAEMU = [sys.executable, "-c", "from picaemu.cli import run; run()"]  # the console script's entry


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


def test_the_command_runs_exit_handlers_and_flushes_before_it_leaves() -> None:
    """``run`` ends the process by ``os._exit``: every exit handler has run and every byte is out, the status kept."""
    code = "import atexit; atexit.register(print, 'handler ran'); from picaemu.cli import run; run()"
    full = subprocess.run([sys.executable, "-c", code, "regs"], capture_output=True, text=True, timeout=120)
    assert full.returncode == 0, full.stderr
    assert full.stdout == invoke("regs")[1] + "handler ran\n"
    bad = subprocess.run([sys.executable, "-c", code, "render", "no-such.pica"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stdout == "handler ran\n"


def test_the_command_with_stderr_closed_succeeds() -> None:
    """A command started with its stderr closed (``2>&-``: Python's ``sys.stderr`` is None) ends with status 0."""
    command = f'"{sys.executable}" -c "from picaemu.cli import run; run()" regs 2>&-'
    proc = subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.decode() == invoke("regs")[1]


def test_the_command_waits_for_a_running_thread() -> None:
    """With another Python thread running, ``run`` leaves by the interpreter's exit, which waits for the thread."""
    code = (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), print('thread done'))).start()\n"
        "from picaemu.cli import run\n"
        "run()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.endswith("thread done\n") and "version" in proc.stdout


@pytest.mark.parametrize("qt", [False, True])
def test_the_teardown_is_skipped_except_for_the_debugger(qt: bool) -> None:
    """The interpreter's teardown (here: an object's finaliser) is skipped, unless Qt was imported."""
    code = (
        f"{'import PySide6.QtCore' if qt else ''}\n"
        "class Last:\n"
        "    def __del__(self):\n"
        "        print('torn down')\n"
        "keep = Last()\n"
        "from picaemu.cli import run\n"
        "run()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "version" in proc.stdout
    assert proc.stdout.endswith("torn down\n") == qt


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
    notes = [line for line in err.splitlines() if line.startswith("picaemu: compil")]  # a cold kernel cache's
    assert code == 2 and err.splitlines() == [
        *notes,
        "error: the capture never set up the bottom screen (no present names a framebuffer for it): nothing to show",
    ]


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` (the lazy table of ``picaemu.cli.COMMANDS`` included), groups and their
    subcommands alike."""
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


EVERY_COMMAND = [path for path, _ in _commands(main)]


def test_the_walk_sees_every_command() -> None:
    """Each entry of ``COMMANDS`` and the subcommands of the groups among them."""
    top = {path[0] for path in EVERY_COMMAND}
    assert top == set(COMMANDS) and ("shader", "run") in EVERY_COMMAND and ("texture", "encode") in EVERY_COMMAND


@pytest.mark.parametrize("path", [(), *EVERY_COMMAND], ids=lambda p: " ".join(p) or "picaemu")
def test_every_help_has_examples(path: tuple[str, ...]) -> None:
    """Each --help screen (``picaemu``, every command, every subcommand) ends with its own examples: command
    lines of that command, naming only repository files that exist."""
    code, out, _ = invoke(*path, "--help")
    assert code == 0 and "Examples:" in out, path
    lines = [line.strip() for line in out.split("Examples:", 1)[1].splitlines() if line.strip()]
    assert any(line.startswith(" ".join(("picaemu", *path))) for line in lines), lines
    top = top_folders()  # not out/: the folder examples write into
    for line in lines:
        for word in line.split():
            if word.startswith(top):
                assert (REPO / word.split("=")[-1]).exists(), f"{' '.join(path)} --help names {word}"


def test_commands_that_replay_say_when_they_compile_long(monkeypatch) -> None:
    """A command that may compile kernels installs the slow-compile note for its run (said on stderr whether or not
    it is a terminal); --quiet leaves it out."""
    from picaemu import numba_cache

    installed: list[bool] = []

    class Recorder(numba_cache.SlowCompileNote):
        def __enter__(self) -> numba_cache.SlowCompileNote:
            installed.append(True)
            self.emit("picaemu: compiling a kernel")
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(numba_cache, "SlowCompileNote", Recorder)
    code, _, err = invoke("stats", str(CAPTURES / "cube.pica"), "--json")
    assert code == 0 and installed == [True] and "picaemu: compiling a kernel" in err and "route: " in err
    assert invoke("-q", "stats", str(CAPTURES / "cube.pica"), "--json")[2] == "" and installed == [True]


def test_the_command_table_matches_the_commands() -> None:
    """``picaemu --help`` lists the commands from ``COMMANDS`` without importing them: each entry's text is the
    start of its command's help, and every command of the table runs its own --help."""
    from picaemu.cli import COMMANDS

    ctx = click.Context(main)
    for name, (_module, _attribute, text) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
        assert " ".join((command.help or "").split()).startswith(text.removesuffix("...")), name
    listing = invoke("--help")[1]
    assert all(f"  {name} " in listing for name in COMMANDS)


def test_help_imports_no_emulator() -> None:
    """``picaemu --help`` stays fast: neither numpy nor numba nor any emulator stage is imported for it."""
    code = (
        "import sys\nfrom picaemu.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'numba') or "
        "m.startswith(('picaemu.replay', 'picaemu.pipeline', 'picaemu.command'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
