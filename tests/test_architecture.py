"""One-way dependencies: gui -> picaemu -> formats; the core never imports Qt; formats imports no emulation code."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

QT = ("PySide6", "PyQt5", "PyQt6", "OpenGL", "picaemu.gui")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_never_imports_qt() -> None:
    for path in (REPO / "picaemu").rglob("*.py"):
        bad = [m for m in _imports(path) if m.startswith(QT)]
        assert not bad, f"{path} imports {bad}"


def test_formats_import_no_emulation_code() -> None:
    allowed = ("picaemu.errors", "picaemu.formats", "picaemu.numeric")
    for path in (REPO / "formats").rglob("*.py"):
        bad = [m for m in _imports(path) if m.startswith("picaemu") and not m.startswith(allowed)]
        assert not bad, f"{path} imports {bad}"
