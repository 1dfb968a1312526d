"""picaemu.numba_lowering: an element's indexing, a struct slot's zeroing and a range loop with less IR give numpy's
and Python's answers and numba's optimised code (numba's originals, kept by the module, are the reference)."""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator

import numba
import numpy as np
import pytest
from numba import types
from numba.core import base, cgutils, imputils
from numba.core.registry import cpu_target

from picaemu import numba_link, numba_lowering
from tests.llvm_text import COMPUTE, SEGMENT, compiled_text


def _read_elements(c3, f2, a1, i, j, k, u, n32):  # pragma: no cover - compiled
    """Elements read with signed (negative too), unsigned, 32-bit and constant indices, from C and F arrays."""
    return c3[i, j, k], c3[-1, 0, -2], c3[i, -1 - j, 1], f2[j, i], f2[-1, -1], a1[u], a1[n32], a1[-1], a1[3]


def _write_elements(c2, f3, i, j, value):  # pragma: no cover - compiled
    """Elements written with signed (negative too) and constant indices, into a C and an F array."""
    c2[i, j] = value
    c2[-1, 0] = value + 1
    f3[i, j, -1] = value + 2
    f3[0, -i, j] = value + 3


def _views(c2, column, i):  # pragma: no cover - compiled
    """Indexing that is no element of a C or F array (a row, slices, an A-layout column): numba's own."""
    row = c2[i]
    part = c2[:, 1:]
    row[0] = part[i, -1] + column[-1]
    return row[2] + part[0, 0] + column[i]


def _read_one(a, i, j):  # pragma: no cover - compiled
    return a[i, j]


def _ranges(start, stop, step, values):  # pragma: no cover - compiled
    """Loops over ranges of each arity, int32 and uint64 ones, and pairs made by enumerate, zip and an array."""
    total = 0  # each value weighed by its place: a value missed, added or moved changes the total
    for i in range(stop):
        total = (total * 3 + i) % 1000003
    for i in range(start, stop):
        total = (total * 5 + i) % 1000003
    for i in range(start, stop, step):
        total = (total * 7 + i) % 1000003
    for i in range(np.int32(start), np.int32(stop), np.int32(step)):
        total = (total * 11 + i) % 1000003
    for i in range(np.uint64(abs(stop))):
        total = (total * 2 + i) % 1000003
    for i, (x, y) in enumerate(zip(values, values[::-1])):  # noqa: B905 (numba's zip takes no ``strict``)
        total = (total * 13 + i * x - y) % 1000003
    for x in values:
        total = (total * 17 + x) % 1000003
    return total


def _stepped(start, stop, step):  # pragma: no cover - compiled
    return [i for i in range(start, stop, step)]


_C3 = np.arange(60.0).reshape(3, 4, 5)
_F2 = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(4, 3) * 7)
_A1 = np.arange(10, dtype=np.int64) * 11
_RANGES = [(0, 5, 1), (2, 9, 3), (9, 2, -2), (4, 4, 1), (5, 0, 1), (-3, 7, 4), (7, -3, -4), (0, 1, 7)]
_INDICES = [(0, 0, 0), (2, 3, 4), (-1, -4, -5), (1, -2, 3), (-3, 1, -1)]  # (i, j, k): i of 3, j of 4, k of 5


def test_installed_on_numba_link_s_import() -> None:
    assert numba_link is not None
    ours = {impl.__module__ for impl, key, _ in imputils.builtin_registry.functions if key is operator.getitem}
    assert numba_lowering.__name__ in ours
    assert cgutils._StructProxy._make_refs is numba_lowering._make_refs


@pytest.mark.parametrize(("i", "j", "k"), _INDICES)
def test_elements_read_are_numpy_s(i: int, j: int, k: int) -> None:
    args = (_C3, _F2, _A1, i, j, k, np.uint64(k + 5), np.int32(-k - 1))
    assert numba.njit(_read_elements)(*args) == _read_elements(*args)


@pytest.mark.parametrize(("i", "j", "k"), _INDICES)
def test_elements_written_are_numpy_s(i: int, j: int, k: int) -> None:
    expected = (np.zeros((3, 4)), np.zeros((3, 4, 5), order="F"))
    got = (np.zeros((3, 4)), np.zeros((3, 4, 5), order="F"))
    _write_elements(*expected, i, j, float(k))
    numba.njit(_write_elements)(*got, i, j, float(k))
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    assert got[1].flags.f_contiguous


@pytest.mark.parametrize("i", [0, 2, -1])
def test_views_and_a_layouts_are_numpy_s(i: int) -> None:
    expected, got = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    assert numba.typeof(got[:, 1]).layout == "A"
    assert numba.njit(_views)(got, got[:, 1], i) == _views(expected, expected[:, 1], i)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize(("start", "stop", "step"), _RANGES)
def test_range_loops_are_python_s(start: int, stop: int, step: int) -> None:
    values = np.array([3, -1, 4, 1, -5], dtype=np.int64)
    assert numba.njit(_ranges)(start, stop, step, values) == _ranges(start, stop, step, values)
    assert numba.njit(_stepped)(start, stop, step) == list(range(start, stop, step))


def test_a_range_of_step_0_raises_python_s_error() -> None:
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
        numba.njit(_stepped)(0, 5, 0)


def test_a_bounds_check_raises_numba_s_error() -> None:
    """With numba's bounds check on, an index past either end raises numba's IndexError; one in range reads."""
    a = np.arange(12.0).reshape(3, 4)
    checked = numba.njit(boundscheck=True)(_read_one)
    assert checked(a, -1, 3) == 11.0
    messages = []
    for args in ((a, 3, 0), (a, 0, -5)):
        with pytest.raises(IndexError) as ours:
            checked(*args)
        messages.append(str(ours.value))
    with _numba_s_lowering():
        numba_s = numba.njit(boundscheck=True)(_read_one)
        numba_s.compile((numba.typeof(a), types.int64, types.int64))
    for args, message in zip(((a, 3, 0), (a, 0, -5)), messages, strict=True):
        with pytest.raises(IndexError) as theirs:
            numba_s(*args)
        assert str(theirs.value) == message


@contextlib.contextmanager
def _numba_s_lowering() -> Iterator[None]:
    """numba's own lowering for the compiles inside: its struct slots and pair members, its elements' and its
    range's (picaemu's registrations taken out of the target context's choices, and put back after)."""
    selectors = [
        cpu_target.target_context._defns[key] for key in (range, "iternext", operator.getitem, operator.setitem)
    ]
    versions = [selector.versions for selector in selectors]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cgutils._StructProxy, "__init__", numba_lowering._NUMBA_PROXY_INIT)
        patch.setattr(cgutils._StructProxy, "_make_refs", numba_lowering._NUMBA_MAKE_REFS)
        patch.setattr(base.BaseContext, "pair_first", numba_lowering._NUMBA_PAIR_FIRST)
        patch.setattr(base.BaseContext, "pair_second", numba_lowering._NUMBA_PAIR_SECOND)
        for selector, kept in zip(selectors, versions, strict=True):
            selector.versions = [version for version in kept if version[1].__module__ != numba_lowering.__name__]
            selector._cache.clear()
        try:
            yield
        finally:
            for selector, kept in zip(selectors, versions, strict=True):
                selector.versions = kept
                selector._cache.clear()


def test_less_ir_for_the_same_code() -> None:
    """``run_segment``, ``_compute`` and the element and range kernels here: fewer lines of IR, fewer zeroings, the
    same optimised code as numba's own lowering."""
    c3, f2, a1 = (numba.typeof(array) for array in (_C3, _F2, _A1))
    c2, f3 = numba.typeof(np.zeros((3, 4))), types.Array(types.float64, 3, "F")
    kernels = (
        SEGMENT,
        COMPUTE,
        (_read_elements, (c3, f2, a1, *(types.int64,) * 3, types.uint64, types.int32), {}),
        (_write_elements, (c2, f3, *(types.int64,) * 2, types.float64), {}),
        (_ranges, (*(types.int64,) * 3, a1), {}),
        (_views, (c2, types.Array(types.float64, 1, "A"), types.int64), {}),
    )
    numba.njit(_ranges)(0, 5, 1, _A1)  # (the context holds every registration before the two compiles)
    ours = [compiled_text(kernel, signature, **options)[1:] for kernel, signature, options in kernels]
    with _numba_s_lowering():
        numba_s = [compiled_text(kernel, signature, **options)[1:] for kernel, signature, options in kernels]
    for (made, optimised), (their_made, their_optimised) in zip(ours, numba_s, strict=True):
        assert made.count("\n") < their_made.count("\n")
        assert made.count("zeroinitializer") < their_made.count("zeroinitializer")
        assert optimised == their_optimised
