"""The draw arena (``picaemu.numba_arena``): the compiled loop's allocations from one buffer, for its thread only."""

from __future__ import annotations

import threading

import numba
import numpy as np
import pytest

from picaemu import numba_arena, numba_link


@numba.njit
def _allocate(n):  # pragma: no cover - compiled
    """(the data addresses of an ``empty`` and a ``zeros`` of ``n`` uint8 and an ``indices`` of ``n``, the sum of the
    zeros and the indices)."""
    a, z, i = numba_link.empty(n, np.uint8), numba_link.zeros(n, np.uint8), numba_link.indices(n)
    a[:] = 7
    return a.ctypes.data, z.ctypes.data, i.ctypes.data, z.sum() + i.sum()


@numba.njit
def _restart():  # pragma: no cover - compiled
    numba_link.arena_restart()


def _inside(address: int, buffer: np.ndarray) -> bool:
    return buffer.ctypes.data <= address < buffer.ctypes.data + buffer.nbytes


def test_allocations_take_aligned_pieces_of_the_open_arena_and_start_over_on_restart() -> None:
    buffer = np.full(4096, 0xAB, np.uint8)  # garbage: zeros must still be zeros
    with numba_arena.opened(buffer):
        first = _allocate(100)
        assert all(_inside(address, buffer) for address in first[:3])
        assert [address % numba_arena.ALIGN for address in first[:3]] == [0, 0, 0]
        assert first[3] == sum(range(100))  # zeros zeroed, indices 0..99
        assert numba_arena.used() == 128 + 128 + 832  # 100 B, 100 B, 800 B, each rounded up to 64
        second = _allocate(100)
        assert second[0] == first[0] + numba_arena.used() // 2  # after the first call's pieces
        _restart()
        assert numba_arena.used() == 0
        assert _allocate(100)[:3] == first[:3]  # the same pieces again
    outside = _allocate(100)
    assert not any(_inside(address, buffer) for address in outside[:3])  # closed: numba's own allocations
    assert outside[3] == sum(range(100))


def test_an_allocation_without_room_comes_from_the_heap() -> None:
    buffer = np.zeros(256, np.uint8)
    with numba_arena.opened(buffer):
        a, z, i, total = _allocate(1000)
        assert not any(_inside(address, buffer) for address in (a, z, i)) and total == sum(range(1000))
        assert numba_arena.used() == 0


def test_another_threads_allocations_come_from_the_heap_while_the_arena_is_open() -> None:
    buffer = np.zeros(1 << 16, np.uint8)
    seen: list[tuple] = []
    with numba_arena.opened(buffer):
        worker = threading.Thread(target=lambda: seen.append(_allocate(10)))
        worker.start()
        worker.join()
        assert not any(_inside(address, buffer) for address in seen[0][:3])
        assert numba_arena.used() == 0
        _restart()  # not the other thread's business either


def test_an_error_closes_the_arena_and_an_arena_does_not_nest() -> None:
    buffer = np.zeros(1 << 12, np.uint8)
    with pytest.raises(ZeroDivisionError), numba_arena.opened(buffer):
        1 // 0  # noqa: B018 - the error inside the block
    assert not _inside(_allocate(8)[0], buffer)
    with numba_arena.opened(buffer), pytest.raises(numba_arena.ArenaInUseError), numba_arena.opened(buffer):
        pass
