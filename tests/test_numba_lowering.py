"""picaemu.numba_lowering: an element's indexing and a struct slot's zeroing with less IR give numpy's answers and
numba's optimised code (numba's originals, kept by the module, are the reference)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import types
from numba.core import cgutils
from numba.np import arrayobj

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


def _read_one(a, i, j):  # pragma: no cover - compiled
    return a[i, j]


_C3 = np.arange(60.0).reshape(3, 4, 5)
_F2 = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(4, 3) * 7)
_A1 = np.arange(10, dtype=np.int64) * 11
_INDICES = [(0, 0, 0), (2, 3, 4), (-1, -4, -5), (1, -2, 3), (-3, 1, -1)]  # (i, j, k): i of 3, j of 4, k of 5


def test_installed_on_numba_link_s_import() -> None:
    assert numba_link is not None
    assert arrayobj.basic_indexing is numba_lowering._basic_indexing
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


def test_a_bounds_check_raises_numba_s_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """With numba's bounds check on, an index past either end raises numba's IndexError; one in range reads."""
    a = np.arange(12.0).reshape(3, 4)
    checked = numba.njit(boundscheck=True)(_read_one)
    assert checked(a, -1, 3) == 11.0
    messages = []
    for args in ((a, 3, 0), (a, 0, -5)):
        with pytest.raises(IndexError) as ours:
            checked(*args)
        messages.append(str(ours.value))
    monkeypatch.setattr(arrayobj, "basic_indexing", numba_lowering._NUMBA_BASIC_INDEXING)
    numba_s = numba.njit(boundscheck=True)(_read_one)
    for args, message in zip(((a, 3, 0), (a, 0, -5)), messages, strict=True):
        with pytest.raises(IndexError) as theirs:
            numba_s(*args)
        assert str(theirs.value) == message


def test_less_ir_for_the_same_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_segment``, ``_compute`` and the element kernels here: fewer lines of IR, fewer zeroings, the same
    optimised code as numba's own lowering."""
    c3, f2, a1 = (numba.typeof(array) for array in (_C3, _F2, _A1))
    kernels = (
        SEGMENT,
        COMPUTE,
        (_read_elements, (c3, f2, a1, *(types.int64,) * 3, types.uint64, types.int32), {}),
        (
            _write_elements,
            (numba.typeof(np.zeros((3, 4))), types.Array(types.float64, 3, "F"), *(types.int64,) * 2, types.float64),
            {},
        ),
    )
    ours = [compiled_text(kernel, signature, **options)[1:] for kernel, signature, options in kernels]
    monkeypatch.setattr(arrayobj, "basic_indexing", numba_lowering._NUMBA_BASIC_INDEXING)
    monkeypatch.setattr(cgutils._StructProxy, "__init__", numba_lowering._NUMBA_PROXY_INIT)
    monkeypatch.setattr(cgutils._StructProxy, "_make_refs", numba_lowering._NUMBA_MAKE_REFS)
    numba_s = [compiled_text(kernel, signature, **options)[1:] for kernel, signature, options in kernels]
    for (made, optimised), (their_made, their_optimised) in zip(ours, numba_s, strict=True):
        assert made.count("\n") < their_made.count("\n")
        assert made.count("zeroinitializer") < their_made.count("zeroinitializer")
        assert optimised == their_optimised
