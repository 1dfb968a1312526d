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


def test_an_own_kernel_gets_no_c_entry_and_another_gets_numba_s(monkeypatch: object) -> None:
    @numba.njit
    def plus_one(x):
        return x + 1

    plus_one.compile((numba.types.int64,))
    (result,) = plus_one.overloads.values()
    assert result.library.get_pointer_to_function(result.fndesc.llvm_cfunc_wrapper_name) != 0  # numba's C entry
    monkeypatch.setattr(numba_lazy, "OWN_PACKAGES", (__name__.split(".")[0],))  # type: ignore[attr-defined]

    @numba.njit
    def plus_two(x):
        return x + 2

    assert plus_two(1) == 3
    (result,) = plus_two.overloads.values()
    assert result.library.get_pointer_to_function(result.fndesc.llvm_cfunc_wrapper_name) == 0  # none built


def test_an_own_kernel_s_python_entry_is_built_on_its_first_call_from_python(monkeypatch: object) -> None:
    monkeypatch.setattr(numba_lazy, "OWN_PACKAGES", (__name__.split(".")[0],))  # type: ignore[attr-defined]

    @numba.njit(nogil=True)
    def plus_three(x):
        return x + 3

    plus_three.compile((numba.types.int64,))
    (result,) = plus_three.overloads.values()
    library, entry = result.library, result.fndesc.llvm_cpython_wrapper_name
    assert library.pending and not numba_lazy._defines(library._final_module, entry)  # no entry compiled
    assert plus_three(4) == 7
    assert numba_lazy._defines(library._final_module, entry) and not library._python_entries  # built into it
    assert "PyEval_SaveThread" in str(library._final_module)  # nogil: the entry lets go of the GIL


def test_a_kernel_called_by_address_first_gets_its_python_entry_in_a_library_of_its_own(monkeypatch: object) -> None:
    monkeypatch.setattr(numba_lazy, "OWN_PACKAGES", (__name__.split(".")[0],))  # type: ignore[attr-defined]

    @numba.njit
    def scaled(values, k):
        return values * k, k - 1  # a returned array and tuple: the entry boxes them through the environment

    scaled.compile((numba.types.float64[::1], numba.types.int64))
    (result,) = scaled.overloads.values()
    library = result.library
    assert library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0  # by address: machine code
    assert library.get_pointer_to_function(result.fndesc.llvm_cpython_wrapper_name) == 0  # and no Python entry
    doubled, less = scaled(np.arange(3.0), 2)
    assert doubled.tolist() == [0.0, 2.0, 4.0] and less == 1
    (entry,) = library._python_entries  # the entry calls the function's machine code and reads its environment
    assert entry.get_pointer_to_function(result.fndesc.llvm_cpython_wrapper_name) != 0
    assert scaled(np.ones(2), 5)[0].tolist() == [5.0, 5.0] and len(library._python_entries) == 1


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
if sys.argv[2] == "caller":
    value, before = k.caller(4), None
else:
    k.triple.compile((numba.types.int64,))  # loaded (or compiled), not called yet
    before = getattr(next(iter(k.triple.overloads.values())).library, "pending", None)
    value = k.triple(5)
(result,) = k.triple.overloads.values()
stats = k.triple.stats
hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
entries = getattr(result.library, "_python_entries", None)  # Python entries built in libraries of their own
state = [getattr(result.library, "pending", None), None if entries is None else len(entries)]
print(json.dumps([value, before, *state, hits, misses]))
"""

_KERNELS = """
import numba

@numba.njit(cache=True)
def triple(x):
    return x * 3

@numba.njit(cache=True)
def caller(x):
    return triple(x) + 1
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


def test_picaemu_s_cache_keeps_a_callee_pending_until_a_run_generates_it(tmp_path: Path) -> None:
    """In picaemu's own cache folder (``numba_cache.SourceTreeLocator``): a copy of the package with a probe module."""
    package = Path(numba_lazy.__file__).resolve().parent
    shutil.copytree(package, tmp_path / "picaemu", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "picaemu" / "lazy_probe.py").write_text(_KERNELS)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    run = _runner(tmp_path, env)
    assert run("caller", "own") == [13, None, True, 0, 0, 1]  # compiled for its caller only: IR, no machine code
    # loaded pending, its Python entry built into it, generated for Python, saved again
    assert run("callee", "own") == [15, True, False, 0, 1, 0]
    assert run("callee", "own") == [15, False, False, 0, 1, 0]  # loaded with its machine code and Python entry


def test_another_package_s_cache_keeps_numba_s_own_entries(tmp_path: Path) -> None:
    """numba code outside picaemu, compiled in a process that imported picaemu, is cached with its machine code:
    a later run that does not import picaemu loads it."""
    (tmp_path / "lazy_probe.py").write_text(_KERNELS)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_LOCATOR_CLASSES"}  # (it would import picaemu)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    run = _runner(tmp_path, env)
    assert run("caller", "beside picaemu") == [13, None, False, 0, 0, 1]  # given its machine code to be saved
    assert run("callee", "plain numba") == [15, None, None, None, 1, 0]  # plain numba loads it


_BY_ADDRESS_THEN_PYTHON = """
import json, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in str(getattr(f, "__module__", ""))]
sys.path.insert(0, sys.argv[1])
import numba, numpy as np
from picaemu import lazy_probe as k, numba_lazy
built = []
build = numba_lazy._NUMBA_BUILD_PYTHON_ENTRY
numba_lazy._NUMBA_BUILD_PYTHON_ENTRY = lambda *a: built.append(build(*a))
signature = (numba.types.float64[::1], numba.types.int64)
k.scaled.compile(signature)
result = k.scaled.overloads[signature]
if sys.argv[2] == "address":
    print(json.dumps(result.library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0))
else:
    ok, out, less = k.scaled(np.arange(3.0), 2)
    print(json.dumps([ok, out.tolist(), less, len(result.library._python_entries), len(built)]))
"""

_SCALED = """
import numpy as np
from picaemu import numba_link

@numba_link.kernel()
def scaled(values, k):
    out = np.empty_like(values)  # an array numba's runtime owns: its Python entry boxes it with the NRT
    for i in range(values.shape[0]):
        out[i] = values[i] * k
    return True, out, k - 1
"""


def test_a_kernel_cached_with_machine_code_but_no_python_entry_gets_one_built_as_it_was_compiled(
    tmp_path: Path,
) -> None:
    """Called by address in one run (its cache entry: machine code, no Python entry), from Python in the next: the
    entry, built in a library of its own, unboxes and boxes with numba's runtime as the kernel was compiled (the
    context a cache load passes is the target's own, without it), and is cached with the kernel."""
    package = Path(numba_lazy.__file__).resolve().parent
    shutil.copytree(package, tmp_path / "picaemu", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "picaemu" / "lazy_probe.py").write_text(_SCALED)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")

    def run(step: str) -> object:
        command = [sys.executable, "-c", _BY_ADDRESS_THEN_PYTHON, str(tmp_path), step]
        out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=True, cwd=tmp_path)
        return json.loads(out.stdout)

    assert run("address") is True
    assert run("python") == [True, [0.0, 2.0, 4.0], 1, 1, 1]  # built, in a library of its own, and cached
    assert run("python") == [True, [0.0, 2.0, 4.0], 1, 1, 0]  # loaded with the kernel


_CALLER_FIRST = """
import json, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in str(getattr(f, "__module__", ""))]
sys.path.insert(0, sys.argv[1])
import numpy as np
from picaemu import lazy_probe as k
values = np.arange(3.0)
out = []
for step in sys.argv[2:]:
    out.append((k.caller if step == "caller" else k.doubled)(values).tolist())
print(json.dumps(out))
"""

_DOUBLED = """
import numpy as np
from picaemu import numba_link

@numba_link.kernel()
def doubled(values):
    return values * 2.0  # a new array: Python's entry boxes it with its dtype, a constant of its environment

@numba_link.kernel()
def caller(values):
    return doubled(values) + 1.0
"""


def test_an_entry_built_after_its_callers_were_cached_finds_its_constants(tmp_path: Path) -> None:
    """A callee's Python entry, built in a run after its caller's was cached, added its dtype to the callee's
    environment; a later run that loads the caller first (and with it the environment as the caller's cache entry
    holds it, without the dtype) then calls the callee from Python finds the constant."""
    package = Path(numba_lazy.__file__).resolve().parent
    shutil.copytree(package, tmp_path / "picaemu", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "picaemu" / "lazy_probe.py").write_text(_DOUBLED)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")

    def run(*steps: str) -> object:
        command = [sys.executable, "-c", _CALLER_FIRST, str(tmp_path), *steps]
        out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=True, cwd=tmp_path)
        return json.loads(out.stdout)

    assert run("caller") == [[1.0, 3.0, 5.0]]  # the callee compiled pending, its environment cached with the caller
    assert run("callee") == [[0.0, 2.0, 4.0]]  # its entry built into it, cached again with its new constant
    assert run("caller", "callee") == [[1.0, 3.0, 5.0], [0.0, 2.0, 4.0]]


def test_a_kernel_called_from_python_before_any_kernel_ran_finds_numba_s_runtime(tmp_path: Path) -> None:
    """A process's first call of a kernel from Python, before any kernel had machine code, with an empty cache and
    again from it: the entry's calls of numba's runtime (``NRT_decref``) resolve (its lazy library generated first);
    they were address 0 and the call segfaulted (the packets fuzz target, ``list_packets``, twentieth session)."""
    unset = ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES", "PICAEMU_KERNEL_DIR")  # this process's cache folder
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    probe = "from picaemu.command.packet_list import list_packets; print(len(list_packets(bytes(16))[0]))"
    for _ in range(2):  # compiled, then loaded from the cache
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0 and out.stdout.strip() == "2", (out.returncode, out.stderr[-2000:])
