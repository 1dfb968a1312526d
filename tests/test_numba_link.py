"""picaemu.numba_link: kernels called by address, and values kept in native form for compiled code to load."""

from __future__ import annotations

import gc
import itertools
import sys
from typing import NamedTuple

import numba
import numpy as np
import pytest
from numba.core import event

from picaemu import numba_link
from picaemu.array_address import data_address
from picaemu.numba_link import LinkError, LinkTypeError

SCALE_ID, NOTHING_ID, FAILS_ID, TYPED_ID = 100, 101, 102, 103


@numba.njit
def _scale(values, out, factor):  # pragma: no cover - compiled
    if factor < 0:
        raise ValueError("negative factor")
    for i in range(values.shape[0]):
        out[i] = values[i] * factor
    return values.shape[0]


@numba.njit
def _nothing(values):  # pragma: no cover - compiled
    values[0] = 7.0


SCALE = numba_link.register(SCALE_ID, _scale, numba.types.int64)
NOTHING = numba_link.register(NOTHING_ID, _nothing, numba.types.none)
WRONG = numba_link.register(FAILS_ID, _scale, numba.types.float64)  # declared other than it returns


@numba.njit
def _caller(entry, values, factor):  # pragma: no cover - compiled
    out = np.zeros(values.shape[0], np.float64)
    n = numba_link.call(SCALE_ID, entry, (values, out, factor))
    return n, out


@numba.njit
def _caller_constant(entry, values):  # pragma: no cover - compiled
    out = np.zeros(values.shape[0], np.float64)
    numba_link.call(SCALE_ID, entry, (values, out, 2))  # a literal 2: passed as the int64 the callee takes
    return out


@numba.njit
def _caller_none(entry, values):  # pragma: no cover - compiled
    numba_link.call(NOTHING_ID, entry, (values,))


@numba.njit
def _load_sum(like, address):  # pragma: no cover - compiled
    kept = numba_link.load(like, address)
    return kept[0].sum() + kept[1][1] + kept[2]


VALUES = np.arange(4, dtype=np.float64)


def _entry(linked: numba_link.Linked, *sample: object) -> np.ndarray:
    return np.array(linked.entry(*sample), np.int64)


def test_call_by_address_passes_arrays_and_returns_the_result() -> None:
    entry = _entry(SCALE, VALUES, np.zeros(4), 3)
    n, out = _caller(entry, VALUES, 3)
    assert n == 4
    assert out.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_a_constant_argument_is_passed_as_its_type() -> None:
    out = _caller_constant(_entry(SCALE, VALUES, np.zeros(4), 3), VALUES)
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_a_kernel_returning_nothing_writes_through_its_arrays() -> None:
    values = np.zeros(2)
    _caller_none(_entry(NOTHING, values), values)
    assert values[0] == 7.0


def test_the_callee_exception_reaches_the_caller() -> None:
    with pytest.raises(ValueError, match="negative factor"):
        _caller(_entry(SCALE, VALUES, np.zeros(4), 3), VALUES, -1)


def test_an_empty_entry_is_a_named_error_not_a_jump() -> None:
    with pytest.raises(LinkError, match="_scale was not linked"):
        _caller(np.zeros(2, np.int64), VALUES, 3)


def test_an_entry_compiled_for_other_types_is_refused() -> None:
    other = _entry(SCALE, VALUES.astype(np.float32), np.zeros(4, np.float32), 3)  # float32 arrays, not float64
    with pytest.raises(LinkTypeError, match="other argument types"):
        _caller(other, VALUES, 3)


def test_a_declared_return_type_is_checked_when_compiled() -> None:
    with pytest.raises(LinkTypeError, match="returns int64, declared float64"):
        WRONG.entry(VALUES, np.zeros(4), 3)


def test_a_link_id_is_registered_once() -> None:
    with pytest.raises(ValueError, match="taken"):
        numba_link.register(SCALE_ID, _nothing, numba.types.none)


def test_fingerprints_name_argument_and_return_types() -> None:
    f64, i64 = numba.typeof(VALUES), numba.types.int64
    assert numba_link.fingerprint((f64, i64), i64) == numba_link.fingerprint((f64, i64), i64)
    assert numba_link.fingerprint((f64, i64), i64) != numba_link.fingerprint((i64, f64), i64)
    assert numba_link.fingerprint((f64,), i64) != numba_link.fingerprint((f64,), numba.types.none)


def test_a_stored_value_stays_loadable_after_its_maker_lets_go() -> None:
    value = (np.arange(5, dtype=np.float64), np.array([0, 40], np.int64), 2)
    like = (np.zeros(1), np.zeros(1, np.int64), 0)
    stored = numba_link.Stored(value)
    del value
    gc.collect()
    assert _load_sum(like, stored.address) == 10.0 + 40 + 2
    assert _load_sum(like, stored.address) == 52.0  # a load takes its own reference: the value stays


@numba.njit
def _load_mixed(like, address):  # pragma: no cover - compiled
    grid, flag, half, (small, strided), wide = numba_link.load(like, address)
    return grid[1, 2], grid.shape[1], flag, half, small, strided[1], strided.shape[0], wide


def test_a_stored_value_of_mixed_members_reads_back_as_numba_lays_it_out() -> None:
    value = (
        np.arange(6, dtype=np.float32).reshape(2, 3),
        True,
        np.float32(1.5),
        (np.int32(7), np.arange(6, dtype=np.int64)[::2]),  # a strided ('A' layout) array after a 4-byte number
        3.25,
    )
    stored = numba_link.Stored(value)
    assert _load_mixed(value, stored.address) == (5.0, 3, True, 1.5, 7, 2, 3, 3.25)


@numba_link.compiled_only()
def _stored_sum(address, scale, kept_type):  # pragma: no cover - compiled
    kept = numba_link.load(kept_type, address)
    kept[0][0] = 9.0  # the stored array is the numpy one: the write shows in Python
    return (kept[0].sum() + kept[1]) * scale


TYPED = numba_link.register(TYPED_ID, _stored_sum, numba.types.float64, types_only=1)


@numba.njit
def _typed_caller(entry, address):  # pragma: no cover - compiled
    return numba_link.call(TYPED_ID, entry, (address, 2.0))  # compiled without the stored value's type


def test_a_kernel_typed_by_a_type_reference_is_called_without_it() -> None:
    value = (np.arange(3, dtype=np.float64), 4)
    stored = numba_link.Stored(value)
    kept_type = numba.types.TypeRef(numba.typeof(value))
    entry = _entry(TYPED, 0, 1.0, kept_type)
    assert _typed_caller(entry, stored.address) == (9.0 + 1.0 + 2.0 + 4) * 2.0
    assert value[0][0] == 9.0
    other = _entry(TYPED, 0, 1.0, numba.types.TypeRef(numba.typeof((np.zeros(2, np.float32), 1))))
    assert other[1] == entry[1]  # the same fingerprint: the type reference is the filler's to match
    with pytest.raises(LinkTypeError, match="must be numba types"):
        TYPED.entry(0, 1.0, 3)


def test_a_stored_value_holds_no_references_and_its_loads_take_none() -> None:
    array = np.arange(5, dtype=np.float64)
    before = sys.getrefcount(array)
    stored = numba_link.Stored((array, np.zeros(2, np.int64), 0))
    like = (np.zeros(1), np.zeros(1, np.int64), 0)
    for _ in range(3):
        assert _load_sum(like, stored.address) == 10.0
    assert sys.getrefcount(array) == before + 1  # the tuple ``Stored`` keeps, nothing else


@numba.njit
def _allocations(n):  # pragma: no cover - compiled
    return numba_link.empty((n, 3), np.float32), numba_link.zeros(n, np.int32), numba_link.indices(n)


def test_allocations_lowered_in_place_are_numpys() -> None:
    empty, zeros, indices = _allocations(4)
    assert (empty.shape, empty.dtype, empty.flags.c_contiguous) == ((4, 3), np.float32, True)
    assert zeros.dtype == np.int32 and zeros.tolist() == [0, 0, 0, 0]
    assert indices.dtype == np.int64 and indices.tolist() == [0, 1, 2, 3]


@numba.njit
def _sized(rows, columns, ours):  # pragma: no cover - compiled
    if ours:
        return numba_link.empty((rows, columns), np.int64).shape
    return np.empty((rows, columns), np.int64).shape


def test_allocations_fail_as_numpys_in_numba_do() -> None:
    """The same errors as numba's ``np.empty``: an overflowing size, a size malloc refuses; a zero extent beside a
    huge one allocates nothing."""
    for rows, columns, error in (
        (1 << 62, 4, ValueError),
        (1 << 40, 1 << 20, ValueError),
        (1 << 40, 1 << 10, MemoryError),
    ):
        messages = []
        for ours in (True, False):
            with pytest.raises(error) as raised:  # 2**64 items; 2**63 bytes; 2**53 bytes (8 PiB)
                _sized(rows, columns, ours)
            messages.append(str(raised.value))
        assert messages[0] == messages[1]
    assert _sized(1 << 62, 0, True) == _sized(1 << 62, 0, False) == (1 << 62, 0)


@numba_link.compiled_only()
def _inner(values, pair):  # pragma: no cover - compiled
    return values.sum() + pair[1][0]


@numba.njit
def _outer(values):  # pragma: no cover - compiled
    return _inner(values, (values, values)) + 1.0


def test_a_compiled_only_kernel_runs_from_compiled_code_and_refuses_python() -> None:
    values = np.array([1.0, 2.0, 3.0])
    assert _outer(values) == 8.0  # 6 + values[0] + 1
    with pytest.raises(numba_link.CompiledOnlyError, match="_inner"):
        _inner(values, (values, values))


@numba.njit
def _fresh(x):  # pragma: no cover - compiled
    return x + 1


def test_the_heap_is_frozen_while_numba_compiles_and_thawed_after() -> None:
    seen: list[int] = []
    thresholds: list[int] = []
    before = gc.get_threshold()

    @numba.njit
    def probe(x):  # pragma: no cover - compiled
        return _fresh(x) * 2

    class Watch(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            seen.append(gc.get_freeze_count())
            thresholds.append(gc.get_threshold()[0])

        def on_end(self, ev: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", Watch()):
        assert probe(np.int64(3)) == 8
    assert len(seen) == 2 and all(count > 0 for count in seen)  # ``probe`` and, inside it, ``_fresh``: frozen
    assert gc.get_freeze_count() == 0
    assert thresholds[1] == max(before[0], numba_link.COMPILE_GC_YOUNG)  # inside the outermost compile
    assert gc.get_threshold() == before


@numba.njit
def _other(x):  # pragma: no cover - compiled
    return x - 1


def test_a_heap_frozen_by_other_code_stays_frozen_after_a_compile() -> None:
    gc.freeze()
    try:
        assert _other(np.int64(3)) == 2
        assert gc.get_freeze_count() > 0  # not thawed by the compile's end (thawing empties the frozen set)
    finally:
        gc.unfreeze()


class _Pair(NamedTuple):
    first: object
    second: object


class _Other(NamedTuple):  # the same fields as ``_Pair``: numba types it as another named tuple
    first: object
    second: object


class _Sub(np.ndarray):
    pass


def _kind_samples() -> list[object]:
    """Values whose numba types differ in every way ``arguments_kind`` must tell apart, and some that agree."""
    base = np.zeros((4, 6), np.float32)
    readonly = np.arange(6, dtype=np.int64)
    readonly.flags.writeable = False
    unaligned = np.zeros(17, np.uint8)[1:].view(np.int32)
    return [
        base,
        np.ones((2, 2), np.float32),  # same type as ``base``
        base.T,  # F order
        base[:, ::2],  # neither
        base[0],
        np.zeros(4, np.float64),
        readonly,
        np.arange(6, dtype=np.int64),
        unaligned,
        np.zeros(4, np.int32),
        (base, 1),
        (base, 1.5),
        (base, (1, True)),
        _Pair(base, 1),
        _Other(base, 1),
        1,
        -(1 << 63),
        1 << 63,  # past int64: numba's uint64
        True,
        2.5,
        1j,
        np.int32(3),
        np.float32(3),
        np.int64(3),
        None,
        numba.types.int64,
        numba.types.float32,
    ]


def test_equal_argument_kinds_are_equal_numba_types() -> None:
    """``arguments_kind`` against numba's own ``typeof`` (the independent truth it stands in for): of two values it
    names, equal kinds have equal types (a kind may be finer: a Python int and an int64 scalar, an unaligned array,
    which this numba types as an aligned one, are other kinds of the same type: another entry lookup, the same
    compiled code)."""
    samples = _kind_samples()
    kinds = [numba_link.arguments_kind(v) for v in samples]
    assert None not in kinds
    typed = [numba.typeof(v) for v in samples]
    assert len(set(typed)) >= len(samples) - 5  # the samples' types differ, but for a few
    for i, j in itertools.combinations(range(len(samples)), 2):
        if kinds[i] == kinds[j]:
            assert typed[i] == typed[j], (samples[i], samples[j])
    scalar = next(k for v, k in zip(samples, kinds, strict=True) if type(v) is np.int64)
    assert kinds[0] == kinds[1] and scalar == numba_link.arguments_kind(np.int64(4))


def test_values_of_other_kinds_are_not_named() -> None:
    structured = np.zeros(3, [("a", np.int32)])
    for value in (structured, np.zeros(3).view(_Sub), (np.zeros(3), structured), object()):
        assert numba_link.arguments_kind(value) is None


def test_a_data_address_is_where_numpy_keeps_the_first_element() -> None:
    whole = np.arange(64, dtype=np.float64)
    readonly = whole[8:]
    readonly.flags.writeable = False
    views = (whole, whole[5:], whole[3::4], whole.reshape(8, 8).T, whole[9:9], readonly, whole.view(np.uint8)[3:])
    for view in views:
        assert data_address(view) == view.ctypes.data
