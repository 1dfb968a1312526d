"""``UniformUploads.rows`` (the linter's packet scan: float-uniform uploads over arrays of writes) against
``UniformUploads.vectors`` (one packet at a time, the listing's reading): the same vectors complete at the same
writes and rows, and both leave the same upload state behind, over random packet streams cut into buffers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from picaemu import regs as regtable
from picaemu.command.listing import UniformUploads, packet_targets
from picaemu.observer import PacketEvent

PORTS = [r.id for r in regtable.all_registers() if "_FLOATUNIFORM_" in r.name]
INDEX_BITS = 0x80000000  # the mode bit (float32 words); the rest of an index write is the row

word = st.one_of(
    st.integers(0, 0xFFFFFFFF),
    st.builds(lambda f32, row: (INDEX_BITS if f32 else 0) | row, st.booleans(), st.integers(80, 100)),
)
packet = st.builds(
    lambda port, back, consecutive, params: PacketEvent(0, 0, port - back * consecutive, 0xF, consecutive, params),
    st.sampled_from(PORTS),
    st.integers(0, 2),
    st.booleans(),
    st.lists(word, min_size=1, max_size=9).map(tuple),
)


def _writes(packets: list[PacketEvent]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(targets, values, packet number) of every write of ``packets``, in order."""
    targets = [t for p in packets for t in (packet_targets(p) if p.consecutive else [p.id] * len(p.params))]
    values = [v for p in packets for v in p.params]
    numbers = [k for k, p in enumerate(packets) for _ in p.params]
    return np.array(targets, np.int64), np.array(values, np.uint32), np.array(numbers, np.int64)


def _state(uploads: UniformUploads) -> list[tuple[int, bool, list[int]]]:
    return [(u.at, u.f32, u.words) for u in uploads._units.values()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(packet, min_size=1, max_size=6), min_size=1, max_size=4))
def test_rows_follow_the_uploads_as_vectors_do(buffers: list[list[PacketEvent]]) -> None:
    one, arrays = UniformUploads(), UniformUploads()
    for packets in buffers:
        expected = [(k, unit, row) for k, p in enumerate(packets) for unit, row, _words, _f32 in one.vectors(p)]
        targets, values, numbers = _writes(packets)
        found = sorted(
            (w, unit, row)
            for done, unit, rows in arrays.rows(targets, values)
            for w, row in zip(done.tolist(), rows.tolist(), strict=True)
        )
        assert [(int(numbers[w]), unit, row) for w, unit, row in found] == expected
        assert _state(arrays) == _state(one)


def test_rows_of_an_overflowing_upload() -> None:
    """c94 onwards in float24 mode, 9 words: c94, c95, then c96 (past the file) completes at the last word."""
    vsh_index = regtable.id_of("VSH_FLOATUNIFORM_INDEX")
    data = regtable.id_of("VSH_FLOATUNIFORM_DATA0")
    targets = np.array([vsh_index] + [data] * 9, np.int64)
    values = np.array([94, *range(9)], np.uint32)
    [(done, unit, rows)] = UniformUploads().rows(targets, values)
    assert unit == "VSH" and done.tolist() == [3, 6, 9] and rows.tolist() == [94, 95, 96]
