"""Machine code only where something jumps (picaemu.numba_lazy): a callee's library keeps its IR for its callers
and gets no machine code of its own; a call from Python or by address generates it; the cache keeps a callee's
IR, and its machine code once a run generated it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np

from picaemu import numba_lazy, numba_link


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
    @numba_link.compiled_only()
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


_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
import picaemu  # installs picaemu.numba_lazy
import lazy_kernels as k
import numba
if sys.argv[2] == "caller":
    value = k.caller(4)
    before = None
else:
    k.triple.compile((numba.types.int64,))  # loaded (or compiled), not called yet
    before = next(iter(k.triple.overloads.values())).library.pending
    value = k.triple(5)
(result,) = k.triple.overloads.values()
stats = k.triple.stats
hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
print(json.dumps([value, before, result.library.pending, hits, misses]))
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


def test_the_cache_keeps_a_callee_pending_until_a_run_generates_it(tmp_path: Path) -> None:
    (tmp_path / "lazy_kernels.py").write_text(_KERNELS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(step: str) -> list:
        out = subprocess.run(
            [sys.executable, "-c", _RUN, str(tmp_path), step],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        )
        return json.loads(out.stdout)

    assert run("caller") == [13, None, True, 0, 1]  # compiled for its caller only: IR, no machine code
    assert run("callee") == [15, True, False, 1, 0]  # loaded pending, generated for Python, saved again
    assert run("callee") == [15, False, False, 1, 0]  # loaded with its machine code
