"""Random and mutated command buffers only ever raise picaemu's own errors, and finish in bounded time."""

from __future__ import annotations

import contextlib

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picaemu.command.builder import CommandBuilder
from picaemu.command.packet_list import list_packets
from picaemu.command.processor import CommandProcessor
from picaemu.errors import PicaError


def _valid_buffer() -> bytes:
    b = CommandBuilder()
    b.write_many(0x041, [0x0045E000, 0x38111112, 0x00469000, 0x3747AE14])
    b.upload_float_uniforms("VSH", 0, [(1, 2, 3, 4)] * 4)
    b.upload_code("VSH", list(range(20)))
    b.write_fields("CMDBUF_SIZE0", size=2)
    b.write_fields("CMDBUF_ADDR0", address=0x18000000 // 8)
    b.write("NUMVERTICES", 3)
    b.write("DRAWARRAYS", 1)
    b.finalize()
    return b.tobytes()


def _check(data: bytes) -> None:
    """Any bytes: a named error or a clean run, never another exception (the suite's timeout catches hangs; the
    processor's byte budget bounds the work)."""
    cp = CommandProcessor()
    with contextlib.suppress(PicaError):
        cp.run(data)
    list_packets(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=512))
def test_random_bytes(data: bytes) -> None:
    _check(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 0xFFFFFFFF)), max_size=8), st.integers(0, 420))
def test_mutated_valid_buffers(mutations: list[tuple[int, int]], cut: int) -> None:
    words = np.frombuffer(_valid_buffer(), "<u4").copy()
    for pos, value in mutations:
        words[pos % words.size] = value
    _check(words.tobytes()[: 4 * min(cut, words.size)] if cut < words.size else words.tobytes())
