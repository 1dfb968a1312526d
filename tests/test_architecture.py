"""One-way dependencies: gui -> picaemu -> formats; the core never imports Qt; OpenGL only in the GL backend
package (picaemu/gl); formats imports no emulation code."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

QT = ("PySide6", "PyQt5", "PyQt6", "picaemu.gui")
OPENGL = "OpenGL"
GL_BACKEND = REPO / "picaemu" / "gl"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


# The `picaemu gui` subcommand is the one bridge: it imports picaemu.gui lazily, inside the command.
GUI_LAUNCHER = REPO / "picaemu" / "cli" / "gui.py"


def test_core_never_imports_qt() -> None:
    for path in (REPO / "picaemu").rglob("*.py"):
        if path == GUI_LAUNCHER:
            continue
        bad = [m for m in _imports(path) if m.startswith(QT)]
        assert not bad, f"{path} imports {bad}"


def test_opengl_only_in_the_gl_backend() -> None:
    """PyOpenGL is the GL backend's (picaemu/gl); everything else reaches it through ``picaemu.gl`` lazily."""
    for path in (REPO / "picaemu").rglob("*.py"):
        if GL_BACKEND in path.parents:
            continue
        bad = [m for m in _imports(path) if m.startswith(OPENGL)]
        assert not bad, f"{path} imports {bad}"


def test_formats_import_no_emulation_code() -> None:
    allowed = ("picaemu.errors", "picaemu.formats", "picaemu.numeric")
    for path in (REPO / "formats").rglob("*.py"):
        bad = [m for m in _imports(path) if m.startswith("picaemu") and not m.startswith(allowed)]
        assert not bad, f"{path} imports {bad}"


def test_gui_launcher_imports_qt_only_inside_the_command() -> None:
    if not GUI_LAUNCHER.exists():
        return
    tree = ast.parse(GUI_LAUNCHER.read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
    assert not [m for m in names if m.startswith(QT)]


def test_dir_lists_the_lazy_open() -> None:
    import picaemu

    assert "open" in dir(picaemu) and callable(picaemu.open)
