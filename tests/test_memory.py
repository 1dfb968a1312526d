"""Emulated physical memory: regions, views, faults."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import MemoryFault
from picaemu.memory import PhysicalMemory


def test_regions_and_views() -> None:
    mem = PhysicalMemory()
    mem.write(0x18000000, b"\x01\x02\x03\x04")
    assert mem.u32(0x18000000) == 0x04030201
    view = mem.view(0x18000000, 1, np.uint32)
    view[0] = 7
    assert mem.read(0x18000000, 1) == b"\x07"  # views are live
    assert mem.view(0x18000001, 1, np.uint16)[0] == 0  # unaligned reads work (copy)
    mem.write(0x205FFFFC, np.array([1], np.uint32))
    assert mem.u32(0x205FFFFC) == 1


@pytest.mark.parametrize("address,size", [(0x10000000, 4), (0x185FFFFE, 4), (0x28000000, 1), (0x17FFFFFF, 2)])
def test_faults_name_address_and_requester(address: int, size: int) -> None:
    mem = PhysicalMemory()
    with pytest.raises(MemoryFault, match=f"vertex loader: access of {size} bytes at 0x{address:08X}"):
        mem.bytes(address, size, "vertex loader")


def test_snapshot_restore() -> None:
    mem = PhysicalMemory()
    mem.write(0x18000010, b"ab")
    snap = mem.snapshot()
    mem.write(0x18000010, b"zz")
    mem.restore(snap)
    assert mem.read(0x18000010, 2) == b"ab"


def test_the_tests_memory_digests_see_every_byte() -> None:
    """``tests.conftest.memory_digests`` (which hashes only the pages holding a non-zero byte) tells contents apart
    as a hash of the whole region does: a byte anywhere, written behind the memory's back or not, changes it."""
    from tests.conftest import memory_digests

    mem, other = PhysicalMemory(), PhysicalMemory()
    assert memory_digests(mem) == memory_digests(other)
    start = memory_digests(mem)
    for region in mem.regions:
        data = mem.region_bytes(region.name)
        for at in (0, 4095, 4096, data.size // 2 + 17, data.size - 1):
            data[at] = 1
            changed = memory_digests(mem)
            assert [a != b for a, b in zip(changed, start, strict=True)] == [r is region for r in mem.regions]
            data[at] = 0
            assert memory_digests(mem) == start
    mem.region_bytes(mem.regions[0].name)[8192] = 5  # the same byte in another page is another content
    other.region_bytes(other.regions[0].name)[12288] = 5
    assert memory_digests(mem) != memory_digests(other)
