"""numba's on-disk cache of picaemu's kernels (picaemu.kernel_cache, picaemu.numba_cache): a digest of the kernel
sources names its folder, so an edit to any kernel file (one another kernel calls included) starts an empty cache
instead of reusing stale machine code; a user's NUMBA_CACHE_DIR chooses where that folder goes; two checkouts of
the same sources share one compile; a long compile says so; a saved kernel holds a note for its type annotation."""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core import caching

from picaemu import kernel_cache, numba_cache
from picaemu.shader import kernel as shader_kernel


def test_the_digest_covers_the_kernel_files_only(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    kernel = tmp_path / "pkg" / "k.py"
    kernel.write_text("import numba\n@numba.njit\ndef f(x):\n    return x\n")
    plain = tmp_path / "pkg" / "plain.py"
    plain.write_text("X = 1\n")
    first = kernel_cache.source_digest(tmp_path)
    plain.write_text("X = 2\n")
    assert kernel_cache.source_digest(tmp_path) == first  # no kernel in it
    kernel.write_text("import numba\n@numba.njit\ndef f(x):\n    return x + 1\n")
    assert kernel_cache.source_digest(tmp_path) != first


def _cache_dir(env: dict[str, str]) -> str:
    """picaemu's kernel folder in a fresh interpreter (numba's config agrees with the environment)."""
    code = (
        "import picaemu, os, numba; from picaemu import kernel_cache as k; print(k.kernel_dir()); "
        "print(os.environ['NUMBA_CACHE_DIR'] == numba.config.CACHE_DIR); "
        "print(numba.config.CACHE_LOCATOR_CLASSES.split(',')[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=True
    ).stdout.split()
    assert out[1:] == ["True", kernel_cache.LOCATOR]
    return out[0]


def test_import_points_numba_at_the_digest_directory_unless_the_user_chose(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    root = Path(kernel_cache.__file__).resolve().parent
    expected = tmp_path / "home" / "picaemu" / "numba" / kernel_cache.source_digest(root)
    assert _cache_dir(env) == str(expected) and expected.is_dir()
    stale = tmp_path / "home" / "picaemu" / "numba" / "0123456789abcdef"
    stale.mkdir()
    os.utime(stale, (0, 0))  # unused for decades: removed at the next import
    _cache_dir(env)
    assert not stale.exists()
    digest = kernel_cache.source_digest(root)
    assert _cache_dir({**env, "NUMBA_CACHE_DIR": str(tmp_path / "mine")}) == str(
        tmp_path / "mine" / f"picaemu-{digest}"
    )


def test_a_process_picaemu_starts_keeps_its_kernel_folder() -> None:
    """A child inherits the NUMBA_CACHE_DIR this process set (``PICAEMU_KERNEL_DIR`` names it as picaemu's own): it
    is no choice of the user's, so the child finds the same kernels (it once compiled them all again into
    ``<folder>/picaemu-<digest>``)."""
    assert (
        os.environ["NUMBA_CACHE_DIR"] == os.environ[kernel_cache.KERNEL_DIR_VARIABLE] == str(kernel_cache.kernel_dir())
    )
    assert _cache_dir(dict(os.environ)) == str(kernel_cache.kernel_dir())


_LOAD_ETC1 = """
import json, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in str(getattr(f, "__module__", ""))]
import numpy as np
import picaemu
from picaemu.texture import etc1
out = np.zeros((8, 8, 4), np.uint8)
etc1.decode_blocks(np.zeros(4, np.uint64), False, 8, 8, out)
stats = etc1.decode_blocks.stats
registries = "numba.np.linalg" in sys.modules  # a lowering registry: imported by a compile, not by a load
import numba
norm = numba.njit(lambda v: np.cumsum(v)[-1])(np.array([2.0, 3.0]))  # a compile after a load sees them all
print(json.dumps([etc1.__file__, str(picaemu.kernel_cache.kernel_dir()), sum(stats.cache_hits.values()),
                  sum(stats.cache_misses.values()), registries, norm]))
"""


def _run_copy(package_parent: Path, home: Path) -> tuple[str, str, int, int, bool, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env.update(XDG_CACHE_HOME=str(home), PYTHONPATH=str(package_parent))
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_ETC1],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
        cwd=home.parent,  # not the repository: the copy on PYTHONPATH is the one imported (editable finder gone)
    )
    return tuple(json.loads(out.stdout))  # type: ignore[return-value]


def test_two_checkouts_of_the_same_sources_share_the_compiled_kernels(tmp_path: Path) -> None:
    """A second checkout (another folder, fresh file times) loads the first one's machine code: numba's own
    locator would file it under the absolute source folder and compile again. The load imports none of numba's
    lowering registries (``numba_cache``: ~0.1 s of a warm start), and a compile after it still finds them."""
    package = Path(kernel_cache.__file__).resolve().parent
    for name in ("a", "b"):
        shutil.copytree(package, tmp_path / name / "picaemu", ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    first = _run_copy(tmp_path / "a", home)
    second = _run_copy(tmp_path / "b", home)
    assert first[0].startswith(str(tmp_path / "a")) and second[0].startswith(str(tmp_path / "b"))
    assert first[1] == second[1] and Path(first[1]).is_relative_to(home)
    assert first[2:] == (0, 1, True, 5.0)  # compiled in the first checkout
    assert second[2:] == (1, 0, False, 5.0)  # loaded in the second, without refreshing numba's registries
    assert any((Path(first[1]) / "texture").glob("etc1.decode_blocks-*.nbi"))  # filed by its path inside the package


def test_a_long_compile_says_so_and_a_short_one_does_not() -> None:
    """SlowCompileNote: a compile running past its mark prints a line as it passes it and one at its end; a
    compile under the mark prints nothing; a load from the cache is no compile."""
    import numba

    from picaemu.numba_cache import SlowCompileNote

    def body(x):  # a fresh function: never compiled, never cached
        total = 0.0
        for i in range(x.size):
            total += np.sin(x[i]) * np.cos(x[i])
        return total

    lines: list[str] = []
    with SlowCompileNote(lines.append, after_s=0.0) as note:
        numba.njit(body)(np.ones(3))
    assert len(lines) == 2 and "compiling" in lines[0] and "body" in lines[0], lines
    assert lines[1].startswith("picaemu: compiled ") and note.slow_compiles[0][0].endswith("body")
    quiet: list[str] = []
    with SlowCompileNote(quiet.append, after_s=600.0):
        numba.njit(body)(np.ones(3))
    assert quiet == []


def _bytecode_settings(env: dict[str, str], modules: Path) -> list[str]:
    """What the ``picaemu`` command's process has of Python's bytecode settings once its package is imported:
    ``sys.pycache_prefix``, ``sys.dont_write_bytecode``, the children's ``PYTHONPYCACHEPREFIX``, whether a module
    imported after it (``fresh.py`` in ``modules``, made here, without bytecode) left its bytecode under the prefix,
    and whether a standard-library module whose bytecode ships beside its source did."""
    (modules / "fresh.py").write_text("VALUE = 1\n")
    code = (
        f"import os, sys, pathlib, picaemu.cli; sys.path.insert(0, {str(modules)!r}); import fresh, difflib; "
        "p = sys.pycache_prefix; print(p); print(sys.dont_write_bytecode); "
        "print(os.environ.get('PYTHONPYCACHEPREFIX')); "
        "print(bool(p) and any(pathlib.Path(p).rglob('fresh*.pyc'))); "
        "print(bool(p) and any(pathlib.Path(p).rglob('difflib*.pyc')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
    return out.stdout.split()


def test_the_command_keeps_bytecode_in_its_cache_where_the_environment_forbids_it_beside_the_sources(
    tmp_path: Path,
) -> None:
    """``keep_bytecode``: under ``PYTHONDONTWRITEBYTECODE`` the command writes the bytecode of what it imports
    under ``<cache home>/picaemu/pycache`` (and tells its children), so the next process reads it; bytecode already
    beside a source (the standard library's) is read there, not compiled again. With ``PICAEMU_PYCACHE=0``, or where
    writing beside the sources is allowed, Python's settings stay."""
    beside = (
        Path(difflib.__file__).parent / "__pycache__" / Path(importlib.util.cache_from_source(difflib.__file__)).name
    )
    assert beside.is_file()  # (this Python ships it; the name holds whatever prefix this process has)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    folder = str(tmp_path / "picaemu" / "pycache")
    modules = tmp_path / "modules"
    modules.mkdir()
    assert _bytecode_settings(env, modules) == [folder, "False", folder, "True", "False"]
    off = {**env, kernel_cache.PYCACHE_VARIABLE: "0"}
    assert _bytecode_settings(off, modules) == ["None", "True", "None", "False", "False"]
    allowed = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    assert _bytecode_settings(allowed, modules) == ["None", "False", "None", "False", "False"]


def test_bytecode_under_the_prefix_is_checked_against_its_source(tmp_path: Path) -> None:
    """A module edited after its bytecode was kept is compiled again (the read beside the source changes nothing of
    Python's check): the second process sees the edit."""
    (tmp_path / "edited.py").write_text("VALUE = 1\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    code = f"import sys, picaemu.cli; sys.path.insert(0, {str(tmp_path)!r}); import edited; print(edited.VALUE)"

    def value() -> str:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        return run.stdout.strip()

    assert value() == "1"
    assert any((tmp_path / "cache" / "picaemu" / "pycache").rglob("edited*.pyc"))
    (tmp_path / "edited.py").write_text("VALUE = 22\n")  # another size: stale whatever the clock says
    assert value() == "22"


def test_a_saved_kernel_keeps_a_note_for_its_type_annotation(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the cache saves of a compile: a picaemu kernel's holds the note, built without numba's annotation text;
    the compile itself keeps its annotation, and a kernel of another package saves numba's text."""
    fresh = numba.njit(lambda x: x + 1)
    assert fresh(1) == 2
    cres = next(iter(fresh.overloads.values()))
    annotation = str(cres.type_annotation)
    ours = getattr(shader_kernel.run_segment, "dispatcher", shader_kernel.run_segment)._cache._impl
    theirs = caching.CompileResultCacheImpl(fresh.py_func)
    assert isinstance(ours.locator, numba_cache.SourceTreeLocator)
    assert not isinstance(theirs.locator, numba_cache.SourceTreeLocator)
    assert theirs.reduce(cres)[6] == annotation  # (libdata, fndesc, environment, signature, ..., annotation, ...)
    with monkeypatch.context() as patch:
        patch.setattr(type(cres.type_annotation), "__str__", _not_built)
        assert ours.reduce(cres)[6] == numba_cache.ANNOTATION_NOTE
    assert str(cres.type_annotation) == annotation


def _not_built(self: object) -> str:
    raise AssertionError("the type annotation's text was built")
