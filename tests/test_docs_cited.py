"""Every file the documentation cites exists: README.md, CONTRIBUTING.md and docs/*.md are scanned for relative
links (``[text](path)``, ``![alt](picture)``), ``*.md`` names and repository paths in backticks
(``picaemu/...``, ``tests/test_x.py::test_name``, ...). A name resolves against the citing file's folder or the
repository root; an output folder the repository ignores (``samples/out/``) is not a citation."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_docs import DOCS, REPO

LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")
MARKDOWN_NAME = re.compile(r"(?<![\w./-])(\w[\w./-]*\.md)\b")
BACKTICKED = re.compile(r"`([^`\s]+)`")
PLACEHOLDER = re.compile(r"[<>*{}$…]|\.\.\.|NNNN")


def ignored_outputs() -> list[str]:
    """The output folders the repository ignores (``samples/out/``, ``/out/`` as ``out/``)."""
    lines = (REPO / ".gitignore").read_text().splitlines()
    return [line.lstrip("/") for line in lines if line.endswith("/") and "/" in line[:-1]]


def top_folders() -> tuple[str, ...]:
    """The repository's own top-level folders (a citation starts with one), not the ignored ones a run makes."""
    ignored = set(ignored_outputs())
    return tuple(
        f"{e.name}/"
        for e in REPO.iterdir()
        if e.is_dir() and not e.name.startswith(".") and f"{e.name}/" not in ignored
    )


TOP_FOLDERS = top_folders()


def cited(doc: Path) -> set[str]:
    """The file names ``doc`` cites (without anchors and test ids)."""
    text = doc.read_text()
    names = set(LINK.findall(text)) | set(MARKDOWN_NAME.findall(text))
    names |= {t for t in BACKTICKED.findall(text) if t.startswith(TOP_FOLDERS) and not PLACEHOLDER.search(t)}
    return {re.split(r"#|::", name)[0].rstrip(".,:;") for name in names} - set(ignored_outputs())


def test_every_cited_file_exists() -> None:
    missing = [
        f"{doc.relative_to(REPO)}: {name}"
        for doc in DOCS
        for name in sorted(cited(doc))
        if not (doc.parent / name).exists() and not (REPO / name).exists()
    ]
    assert not missing, missing


def test_cited_tests_exist() -> None:
    """``tests/test_x.py::test_name`` names a test that is there."""
    for doc in DOCS:
        for path, name in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", doc.read_text()):
            assert re.search(rf"^def {name}\(", (REPO / path).read_text(), re.M), f"{doc.name}: {path}::{name}"


def test_the_scan_sees_a_missing_file(tmp_path: Path) -> None:
    """The scan itself: a bare name, a link and a backticked path that do not exist are all cited."""
    doc = tmp_path / "x.md"
    doc.write_text("See `pica-pipeline.md` §2, [this](nowhere/isa.md) and `picaemu/no_such_module.py::f`.\n")
    assert cited(doc) == {"pica-pipeline.md", "nowhere/isa.md", "picaemu/no_such_module.py"}
