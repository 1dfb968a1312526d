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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[0] == "formats":  # installed as picaemu.formats
        parts = ["picaemu", *parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, module: str) -> set[str]:
    """Modules ``path`` imports when it runs, at its top or inside functions (not under ``if TYPE_CHECKING:``),
    relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def walk(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test):
                continue
            yield child
            yield from walk(child)

    names: set[str] = set()
    for node in walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            # ``from package import module`` imports the module (the package's __init__ runs first, as for every
            # import below it); ``from module import name`` the module
            names.update(f"{base}.{a.name}" for a in node.names)
            names.add(base)
    return names


def _graph() -> dict[str, set[str]]:
    paths = [*(REPO / "picaemu").rglob("*.py"), *(REPO / "formats").rglob("*.py")]
    modules = {_module_name(p): p for p in paths}
    graph = {}
    for name, path in modules.items():
        imported = _runtime_imports(path, name)
        # a package named only as the source of its submodules (``from picaemu import draw_state``) is not an edge
        targets = {
            t for t in imported if t in modules and not any(i.startswith(f"{t}.") and i in modules for i in imported)
        }
        graph[name] = targets - {name}
    return graph


def test_no_import_cycles() -> None:
    """No module of picaemu/ reaches itself through imports that run (type-only imports excepted): the layers are
    a map, not a knot (issue #25 item 3)."""
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            assert state.get(target) != 1, " -> ".join([*path[path.index(target) :], target])
            if target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in graph:
        if name not in state:
            visit(name, [name])


# the layers above the stages: a module of a stage package never imports these (it is imported by them)
UPPER = ("picaemu.draw", "picaemu.pipeline", "picaemu.replay", "picaemu.debug", "picaemu.cli", "picaemu.fused")
STAGES = ("geometry", "shader", "raster", "texture", "color", "fragment")


def test_stages_never_import_the_layers_above() -> None:
    graph = _graph()
    for name, targets in graph.items():
        if name.count(".") and name.split(".")[1] in STAGES:
            up = sorted(t for t in targets if t.startswith(UPPER) and not t.startswith("picaemu.draw_state"))
            assert not up, f"{name} imports {up}"
