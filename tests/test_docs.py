"""Every command and snippet of README.md, CONTRIBUTING.md and docs/*.md runs and prints what the text says.

Fenced blocks are read in order. ``python`` blocks run with ``exec``, the blocks of one file sharing a namespace
(as in a doctest); shell blocks (no language, ``sh``, ``bash``) run line by line: ``NAME=value`` sets a variable,
a ``picaemu ...`` line runs in this process (with ``> FILE`` and ``| head -N`` / ``| grep WORD`` handled here),
anything else goes to bash. ``console`` blocks are transcripts: a ``$ COMMAND`` line (continued by a trailing
backslash) runs as above and the lines after it up to the next ``$`` are its stdout, compared line by line (trailing
blanks ignored; ``...`` in a line matches any text, a line of ``...`` alone any number of lines). ``text`` blocks
(usage grammar, listings, assembler syntax) are not commands. A block preceded by
``<!-- docs-test: skip (REASON) -->`` is reported as skipped with its reason.

Each file runs in its own scratch folder that links the repository's top-level entries, so paths are the
repository's; the commands write into ``out/`` (git-ignored): after a file ran, the scratch folder holds nothing
but the links and ``out/``, and no file of the repository was created, changed or removed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from picaemu.cli import main

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- docs-test: skip \((?P<reason>.*?)\) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.S | re.M
)
SHELL = {"", "sh", "bash"}
SLOW_FILES = {"README.md"}  # many commands: seconds of replay
SCRATCH_OUTPUT = "out"  # the one folder the documented commands write into
NOT_SOURCES = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "picaemu.egg-info"}


def blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, language, body, skip reason) of each fenced block."""
    text = path.read_text()
    return [
        (text[: m.start("lang")].count("\n") + 1, m.group("lang"), m.group("body"), m.group("reason"))
        for m in BLOCK.finditer(text)
    ]


def repository_files() -> dict[str, tuple[int, int]]:
    """Every file of the working tree but git's, the venv's and caches: path -> (size, mtime in ns)."""
    found = {}
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [name for name in subfolders if name not in NOT_SOURCES]
        for name in files:
            stat = os.stat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), REPO)] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.fixture
def scratch(tmp_path: Path):
    """A folder linking the repository's top-level entries; afterwards it holds only them and ``out/``, and the
    repository is as it was."""
    links = {entry.name for entry in REPO.iterdir() if not entry.name.startswith(".") and entry.name != "out"}
    for name in links:
        (tmp_path / name).symlink_to(REPO / name)
    before = repository_files()
    yield tmp_path
    left = {entry.name for entry in tmp_path.iterdir()} - links - {SCRATCH_OUTPUT}
    assert not left, f"written outside {SCRATCH_OUTPUT}/: {sorted(left)}"
    after = repository_files()
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    assert not changed, f"the repository changed: {changed[:10]}"


def shell_lines(body: str) -> list[str]:
    """The block's commands: continuation lines joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def run_picaemu(words: list[str], cwd: Path) -> str:
    """One ``picaemu`` line in this process: ``> FILE`` and ``| head -N`` / ``| grep WORD`` applied to stdout;
    returns what reaches the terminal."""
    pipe, redirect = None, None
    if "|" in words:
        k = words.index("|")
        words, pipe = words[:k], words[k + 1 :]
    if ">" in words:
        k = words.index(">")
        words, redirect = words[:k], words[k + 1]
    res = CliRunner().invoke(main, words[1:], catch_exceptions=False)
    assert res.exit_code == 0, f"{shlex.join(words)}: exit {res.exit_code}: {res.stderr[-400:]}"
    out = res.stdout_bytes
    if pipe and pipe[0] == "head":
        out = b"".join(out.splitlines(keepends=True)[: int(pipe[1].lstrip("-n") or 10)])
    elif pipe and pipe[0] == "grep":
        flags = re.I if "-i" in pipe else 0
        out = b"".join(line for line in out.splitlines(keepends=True) if re.search(pipe[-1].encode(), line, flags))
    if redirect:
        (cwd / redirect).write_bytes(out)
        return ""
    return out.decode()


def run_line(line: str, env: dict[str, str], cwd: Path, where: str) -> str:
    """One command line (a ``NAME=value`` assignment updates ``env``); returns its stdout."""
    assignment = re.fullmatch(r"([A-Z_]+)=(\S+)(\s+#.*)?", line)
    if assignment:
        env[assignment.group(1)] = assignment.group(2)
        return ""
    words = shlex.split(_expand(line, env), comments=True)
    if words and words[0] == "picaemu" and set(words) & {"&", "&&", ";"} == set():
        return run_picaemu(words, cwd)
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        ["bash", "-e", "-c", line],
        cwd=cwd,
        env={**env, "PATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{where}: {line}: exit {proc.returncode}: {proc.stderr[-400:]}"
    return proc.stdout


def _expand(line: str, env: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), line)


def run_shell(body: str, cwd: Path, env: dict[str, str], where: str) -> None:
    for line in shell_lines(body):
        run_line(line, env, cwd, where)


def transcript(body: str) -> list[tuple[str, list[str]]]:
    """A console block's (command, expected stdout lines) pairs."""
    steps: list[tuple[str, list[str]]] = []
    lines = iter(body.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1].rstrip() + " " + next(lines).strip()
            steps.append((command, []))
        else:
            assert steps, f"output before the first $ command: {line!r}"
            steps[-1][1].append(line)
    return steps


def output_pattern(expected: list[str]) -> re.Pattern[str]:
    """``expected`` as a regular expression over whole lines: ``...`` matches any text, a line of it any lines."""
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    parts = [
        r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()).replace(r"\.\.\.", ".*?") + r"\n"
        for line in expected
    ]
    return re.compile("".join(parts))


def run_transcript(body: str, cwd: Path, env: dict[str, str], where: str) -> None:
    for command, expected in transcript(body):
        out = "".join(line.rstrip() + "\n" for line in run_line(command, env, cwd, where).splitlines())
        assert output_pattern(expected).fullmatch(out), f"{where}: {command}\nprinted:\n{out}"


def cases() -> list:
    found = []
    for path in DOCS:
        rel = path.relative_to(REPO).as_posix()
        marks = [pytest.mark.slow] if path.name in SLOW_FILES else []
        found.append(pytest.param(path, id=rel, marks=marks))
    return found


@pytest.mark.parametrize("path", cases())
def test_every_block_runs(path: Path, scratch: Path, monkeypatch) -> None:
    monkeypatch.chdir(scratch)
    monkeypatch.syspath_prepend(str(REPO))
    namespace: dict = {"__name__": "__docs__"}
    env = dict(os.environ)
    skipped = []
    for line, lang, body, reason in blocks(path):
        where = f"{path.name}:{line}"
        if reason is not None:
            skipped.append(f"{where}: {reason}")
        elif lang == "python":
            exec(compile(body, where, "exec"), namespace)  # our own documentation, never a file from outside
        elif lang in SHELL:
            run_shell(body, scratch, env, where)
        elif lang == "console":
            run_transcript(body, scratch, env, where)
    for note in skipped:  # reported, not silent: pytest -rA shows them
        print(f"not run: {note}")


def test_transcripts_are_compared() -> None:
    """The comparison itself: exact lines, ``...`` within a line and as lines, a wrong value fails."""
    steps = transcript("$ picaemu x \\\n   --y\na = (1, 2)\n...\nend ...\n")
    assert steps == [("picaemu x --y", ["a = (1, 2)", "...", "end ..."])]
    pattern = output_pattern(steps[0][1])
    assert pattern.fullmatch("a = (1, 2)\nend here\n") and pattern.fullmatch("a = (1, 2)\nb\nc\nend x\n")
    assert not pattern.fullmatch("a = (1, 3)\nend x\n") and not pattern.fullmatch("a = (1, 2)\n")


def test_skips_say_why_and_commands_use_repository_paths() -> None:
    """No block is skipped without a reason, and no command names a path outside the repository."""
    for path in DOCS:
        text = path.read_text()
        assert "<!-- docs-test" not in re.sub(r"<!-- docs-test: skip \(.+?\) -->", "", text), path
        for line, lang, body, reason in blocks(path):
            if reason is None and lang in SHELL | {"python", "console"}:
                assert "../shared" not in body and "/work/" not in body, f"{path.name}:{line}"
