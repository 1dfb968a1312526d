"""Every command and snippet of README.md and docs/*.md runs.

Fenced blocks are read in order. ``python`` blocks run with ``exec``, the blocks of one file sharing a namespace
(as in a doctest); shell blocks (no language, ``sh``, ``bash``, ``console``) run line by line: ``NAME=value``
sets a variable, a ``picaemu ...`` line runs in this process (with ``> FILE`` and ``| head -N`` handled here),
anything else goes to bash. Both run in a scratch folder that links the repository's top-level entries, so paths
are the repository's and outputs land in the scratch folder. ``text`` blocks (usage grammar, listings, assembler
syntax) are not commands. A block preceded by ``<!-- docs-test: skip (REASON) -->`` is reported as skipped with
its reason.
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
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- docs-test: skip \((?P<reason>.*?)\) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.S | re.M
)
SHELL = {"", "sh", "bash", "console"}
SLOW_FILES = {"README.md"}  # many commands: seconds of replay


def blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, language, body, skip reason) of each fenced block."""
    text = path.read_text()
    return [
        (text[: m.start("lang")].count("\n") + 1, m.group("lang"), m.group("body"), m.group("reason"))
        for m in BLOCK.finditer(text)
    ]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for entry in REPO.iterdir():
        if not entry.name.startswith("."):
            (folder / entry.name).symlink_to(entry)
    return folder


def shell_lines(body: str) -> list[str]:
    """The block's commands: continuation lines joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def run_picaemu(words: list[str], cwd: Path) -> None:
    """One ``picaemu`` line in this process: ``> FILE`` and ``| head -N`` / ``| grep WORD`` applied to stdout."""
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


def run_shell(body: str, cwd: Path, where: str) -> None:
    env = dict(os.environ)
    for line in shell_lines(body):
        assignment = re.fullmatch(r"([A-Z_]+)=(\S+)(\s+#.*)?", line)
        if assignment:
            env[assignment.group(1)] = assignment.group(2)
            continue
        words = shlex.split(_expand(line, env), comments=True)
        if words and words[0] == "picaemu" and set(words) & {"&", "&&", ";"} == set():
            run_picaemu(words, cwd)
            continue
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


def _expand(line: str, env: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), line)


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
    skipped = []
    for line, lang, body, reason in blocks(path):
        where = f"{path.name}:{line}"
        if reason is not None:
            skipped.append(f"{where}: {reason}")
        elif lang == "python":
            exec(compile(body, where, "exec"), namespace)  # our own documentation, never a file from outside
        elif lang in SHELL:
            run_shell(body, scratch, where)
    for note in skipped:  # reported, not silent: pytest -rA shows them
        print(f"not run: {note}")


def test_skips_say_why_and_commands_use_repository_paths() -> None:
    """No block is skipped without a reason, and no command names a path outside the repository."""
    for path in DOCS:
        text = path.read_text()
        assert "<!-- docs-test" not in re.sub(r"<!-- docs-test: skip \(.+?\) -->", "", text), path
        for line, lang, body, reason in blocks(path):
            if reason is None and lang in SHELL | {"python"}:
                assert "../shared" not in body and "/work/" not in body, f"{path.name}:{line}"
