"""Machine code only where something jumps (picaemu.numba_lazy): a callee's library keeps its IR for its callers
and gets no machine code of its own; a call from Python or by address generates it; the cache keeps a callee's
IR, and its machine code once a run generated it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
import pytest

from picaemu import numba_lazy


def _library(dispatcher: object) -> numba_lazy.LazyLibrary:
    (result,) = dispatcher.overloads.values()  # type: ignore[attr-defined]
    return result.library


def test_a_callee_gets_machine_code_only_when_python_calls_it() -> None:
    @numba.njit
    def triple(x):
        return x * 3

    @numba.njit
    def caller(x):
        return triple(x) + 1

    assert caller(4) == 13
    callee = _library(triple)
    assert isinstance(callee, numba_lazy.LazyLibrary) and callee.pending  # linked into caller only
    assert not _library(caller).pending  # Python called it
    assert triple(5) == 15 and not callee.pending
    assert triple(6) == 18  # the installed entry, as numba's own


def test_a_call_by_address_generates_the_callee() -> None:
    @numba.njit  # (not cached: a cache outside picaemu's folder gets machine code at once)
    def halve(x):
        return x // 2

    @numba.njit
    def caller(x):
        return halve(x)

    assert caller(np.int64(9)) == 4
    library = _library(halve)
    assert library.pending
    result = next(iter(halve.overloads.values()))
    assert library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0
    assert not library.pending


def test_an_own_kernel_gets_its_python_entry_when_python_first_calls_it(monkeypatch: object) -> None:
    monkeypatch.setattr(numba_lazy, "OWN_PACKAGES", (__name__.split(".")[0],))  # type: ignore[attr-defined]

    @numba.njit(nogil=True)
    def scaled(values, by):
        return values * by

    signature = (numba.types.float64[::1], numba.types.float64)
    scaled.compile(signature)
    library, fndesc = _library(scaled), scaled.overloads[signature].fndesc
    assert library.entries_wanted == {fndesc.llvm_cpython_wrapper_name: (True, True)}  # not built; nogil, NRT
    assert list(scaled(np.arange(3.0), 2.0)) == [0.0, 2.0, 4.0]
    assert library.entries_wanted == {} and not library.pending  # built into its module, then code-generated
    assert list(scaled(np.ones(2), 0.5)) == [0.5, 0.5]  # the installed entry


def test_an_own_kernel_code_generated_for_a_call_by_address_gets_its_python_entry_with_its_code(
    monkeypatch: object,
) -> None:
    monkeypatch.setattr(numba_lazy, "OWN_PACKAGES", (__name__.split(".")[0],))  # type: ignore[attr-defined]

    @numba.njit
    def counted(n):
        if n < 0:
            raise ValueError("negative count")
        return np.arange(n) * 3

    signature = (numba.types.int64,)
    counted.compile(signature)
    library, fndesc = _library(counted), counted.overloads[signature].fndesc
    assert fndesc.llvm_cpython_wrapper_name in library.entries_wanted
    assert library.get_pointer_to_function(fndesc.llvm_func_name) != 0 and not library.pending
    assert library.entries_wanted == {}  # built into the module before its machine code
    assert list(counted(4)) == [0, 3, 6, 9]  # its environment (the array's boxing) set
    with pytest.raises(ValueError, match="negative count"):
        counted(-1)


def test_a_kernel_outside_own_packages_gets_numba_s_entries_at_once() -> None:
    @numba.njit
    def plus_one(x):
        return x + 1

    plus_one.compile((numba.types.int64,))
    library = _library(plus_one)
    assert library.entries_wanted == {}
    (result,) = plus_one.overloads.values()
    assert library.get_pointer_to_function(result.fndesc.llvm_cfunc_wrapper_name) != 0  # numba's C entry too


_RUN = """
import json, sys
where = sys.argv[3]
if where == "own":  # the copy of the package on sys.path is the one imported
    sys.meta_path = [f for f in sys.meta_path if "editable" not in str(getattr(f, "__module__", ""))]
sys.path.insert(0, sys.argv[1])
import numba
if where == "own":
    from picaemu import lazy_probe as k
else:
    if where == "beside picaemu":
        import picaemu  # installs picaemu.numba_lazy
    import lazy_probe as k
if sys.argv[2].startswith("doubled"):  # arrays in and out: the entry boxes them with the NRT
    import numpy as np
    if sys.argv[2] == "doubled caller":
        print(json.dumps(k.doubled_sum(np.arange(3.0))))
        sys.exit()
    k.doubled.compile((numba.types.float64[::1],))
    (result,) = k.doubled.overloads.values()
    if sys.argv[2] == "doubled":
        print(json.dumps(k.doubled(np.arange(3.0)).tolist()))
    else:
        print(json.dumps(result.library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0))
    sys.exit()
if sys.argv[2] == "caller":
    value, before = k.caller(4), None
elif sys.argv[2] == "both":  # linked into its caller first, then called from Python
    value, before = k.caller(4) + 100 * k.triple(5), None
elif sys.argv[2] == "address":  # machine code for a call by address, no Python entry
    k.triple.compile((numba.types.int64,))
    (result,) = k.triple.overloads.values()
    before = sorted(result.library.entries_wanted.values())
    value = result.library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0
else:
    k.triple.compile((numba.types.int64,))  # loaded (or compiled), not called yet
    before = getattr(next(iter(k.triple.overloads.values())).library, "pending", None)
    value = k.triple(5)
(result,) = k.triple.overloads.values()
stats = k.triple.stats
hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
print(json.dumps([value, before, getattr(result.library, "pending", None), hits, misses]))
"""

_KERNELS = """
import numba

@numba.njit(cache=True)
def triple(x):
    return x * 3

@numba.njit(cache=True)
def caller(x):
    return triple(x) + 1

@numba.njit(cache=True)
def doubled(values):
    return values * 2

@numba.njit(cache=True)
def doubled_sum(values):
    return doubled(values).sum()
"""


def _runner(path: Path, env: dict[str, str]) -> Callable[[str, str], list]:
    def run(step: str, importing: str) -> list:
        out = subprocess.run(
            [sys.executable, "-c", _RUN, str(path), step, importing],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
            cwd=path,
        )
        return json.loads(out.stdout)

    return run


def _own_copy(tmp_path: Path) -> Callable[[str, str], list]:
    """A runner of a copy of the package with the probe module, caching in picaemu's own folder under tmp_path."""
    package = Path(numba_lazy.__file__).resolve().parent
    shutil.copytree(package, tmp_path / "picaemu", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "picaemu" / "lazy_probe.py").write_text(_KERNELS)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    return _runner(tmp_path, env)


def test_picaemu_s_cache_keeps_a_callee_pending_until_a_run_generates_it(tmp_path: Path) -> None:
    """In picaemu's own cache folder (``numba_cache.SourceTreeLocator``): a copy of the package with a probe module."""
    run = _own_copy(tmp_path)
    assert run("caller", "own") == [13, None, True, 0, 1]  # compiled for its caller only: IR, no machine code
    assert run("callee", "own") == [15, True, False, 1, 0]  # loaded pending, generated for Python, saved again
    assert run("callee", "own") == [15, False, False, 1, 0]  # loaded with its machine code


def test_picaemu_s_cache_keeps_the_python_entries_a_pending_library_still_wants(tmp_path: Path) -> None:
    """A kernel code-generated for a call by address is saved with the Python entry built with its code."""
    run = _own_copy(tmp_path)
    assert run("address", "own") == [True, [[False, True]], False, 0, 1]  # compiled, its entry wanted (GIL, NRT)
    assert run("address", "own") == [True, [], False, 1, 0]  # loaded with machine code and its entry
    assert run("callee", "own") == [15, False, False, 1, 0]


def test_a_python_entry_built_for_a_kernel_loaded_from_the_cache_boxes_arrays_as_the_kernel_does(
    tmp_path: Path,
) -> None:
    """A load from the cache passes the target's own context (no NRT): the entry of a kernel loaded pending is
    built with the kernel's NRT setting all the same."""
    run = _own_copy(tmp_path)
    assert run("doubled caller", "own") == 6.0  # compiled for its caller only: cached pending, its entry wanted
    assert run("doubled", "own") == [0.0, 2.0, 4.0]  # loaded pending: its entry built with its code
    assert run("doubled", "own") == [0.0, 2.0, 4.0]  # loaded with machine code and its entry
    other = _own_copy(tmp_path / "other")
    assert other("doubled by address", "own") is True  # code generated for the address, its entry with it
    assert other("doubled", "own") == [0.0, 2.0, 4.0]


def test_a_python_entry_built_after_a_caller_linked_the_kernel_is_cached_with_its_environment(tmp_path: Path) -> None:
    """The entry reads the kernel's environment (a global the run that loads the library sets by name, if the
    module callers link names it): built after the caller linked the kernel, it must be in that module too."""
    run = _own_copy(tmp_path)
    assert run("both", "own") == [1513, None, False, 0, 1]
    assert run("callee", "own") == [15, False, False, 1, 0]  # the loaded entry finds its environment


def test_another_package_s_cache_keeps_numba_s_own_entries(tmp_path: Path) -> None:
    """numba code outside picaemu, compiled in a process that imported picaemu, is cached with its machine code:
    a later run that does not import picaemu loads it."""
    (tmp_path / "lazy_probe.py").write_text(_KERNELS)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_LOCATOR_CLASSES"}  # (it would import picaemu)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    run = _runner(tmp_path, env)
    assert run("caller", "beside picaemu") == [13, None, False, 0, 1]  # given its machine code to be saved
    assert run("callee", "plain numba") == [15, None, None, 1, 0]  # plain numba loads it
