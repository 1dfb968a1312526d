"""The .pica capture format: exact round trips, hand-checked layout bytes, hostile input (named errors with offsets)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu.errors import FormatError


def _sample() -> pica.Capture:
    cap = pica.Capture(meta={"scene": "unit test", "tool": "pytest"})
    cap.state.regs[0x41] = 0x0045E000
    cap.state.vs_uniforms[3] = (1.0, -2.5, 0.25, 8.0)
    cap.state.gpu_regs[0x117] = 0x019000F0
    cap.state.lighting_luts[2, 7] = 0xABCDE
    block = cap.blobs.add(b"\x11" * 64)
    cap.state.memory.append((0x18000000, block))
    again = cap.blobs.add(bytes(range(256)) * 4)
    cap.events += [
        pica.MemoryWrite(0x20100000, again),
        pica.MemoryWrite(0x20200000, cap.blobs.add(bytes(range(256)) * 4)),  # deduplicated
        pica.RegWrite(0x10400010, 0x03000000),
        pica.RegWrite(0x10400468, 0x1122334455667788, 8),
        pica.CommandList(0x20289C00, 0x4D0, 1),
        pica.MemoryFill((pica.FillUnit(0x18000000, 0x1805DC00, 0x303030FF, 0x201), pica.FillUnit(0, 0, 0, 0))),
        pica.DisplayTransfer(0x18000000, 0x20100000, 0x019000F0, 0x019000F0, 0x1000),
        pica.TextureCopy(0x20000000, 0x18100000, 0x800, 0x00040008, 0x8, 0x8),
        pica.Present(0, 0x20100000, 0x20100000, 0x141, 720, 1),
        pica.Marker("frame 0 — début"),
        pica.FrameEnd(),
    ]
    return cap


def _same(a: pica.Capture, b: pica.Capture) -> None:
    assert a.meta == b.meta
    assert a.events == b.events
    assert len(a.blobs) == len(b.blobs)
    assert all(a.blobs[i] == b.blobs[i] for i in range(len(a.blobs)))
    for name in pica.STATE_ARRAYS:
        np.testing.assert_array_equal(getattr(a.state, name), getattr(b.state, name), err_msg=name)
    assert a.state.memory == b.state.memory


@pytest.mark.parametrize("codec", list(pica.Codec))
def test_round_trip_every_codec(codec: pica.Codec) -> None:
    cap = _sample()
    back = pica.parse(pica.build(cap, codec=codec))
    _same(cap, back)
    assert back.damage is None


def test_blobs_are_deduplicated() -> None:
    cap = _sample()
    assert len(cap.blobs) == 2  # three adds, two distinct contents
    assert cap.events[0].blob == cap.events[1].blob


def test_header_bytes_by_hand() -> None:
    data = pica.build(_sample())
    assert data[:8] == b"PICAcap\x1a"
    assert struct.unpack_from("<HHI", data, 8) == (1, 0, 4)  # no 1.1 event: a 1.0 file
    assert data[16:20] == b"META"  # first section tag right after the 16-byte header
    codec, raw, stored, crc = data[20], *struct.unpack_from("<QQI", data, 24)
    assert codec == 0 and raw == stored
    assert crc == zlib.crc32(data[44 : 44 + stored])


def test_a_file_with_a_dma_event_is_version_1_1() -> None:
    capture = _sample()
    capture.events.append(pica.RequestDma(0x18000000, 0x18100000, 16))
    assert struct.unpack_from("<HH", pica.build(capture), 8) == (1, pica.VERSION_MINOR)


def test_write_is_atomic(tmp_path: Path) -> None:
    out = tmp_path / "cap.pica"
    pica.write(out, _sample())
    _same(_sample(), pica.read(out))
    assert [p.name for p in tmp_path.iterdir()] == ["cap.pica"]  # no temporary file left


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: b"NOTPICA!" + d[8:], "not a .pica capture"),
        (lambda d: d[:8] + struct.pack("<H", 9) + d[10:], "version 9"),
        (lambda d: d[:10], "file header"),
        (lambda d: d[:-5], "needs"),
        (lambda d: d[:60] + bytes([d[60] ^ 0xFF]) + d[61:], "CRC-32"),
    ],
)
def test_corrupt_files_name_the_fault(mutate, message: str) -> None:
    with pytest.raises(FormatError, match=message) as info:
        pica.parse(mutate(pica.build(_sample(), codec=pica.Codec.RAW)))
    assert info.value.offset is not None


def _raw_capture_with_events(payload: bytes) -> bytes:
    """A valid capture whose EVNT section is ``payload`` (stored raw, with a correct CRC)."""
    good = pica.build(pica.Capture(), codec=pica.Codec.RAW)
    at = good.index(b"EVNT")
    head = b"EVNT" + bytes(4) + struct.pack("<QQI", len(payload), len(payload), zlib.crc32(payload))
    return good[:at] + head + payload


def test_errors_inside_compressed_sections_name_the_section() -> None:
    import zstandard

    body = struct.pack("<I", 2) + bytes([pica.EventType.FRAME_END, 0x55])
    stored = zstandard.ZstdCompressor().compress(body)
    good = pica.build(pica.Capture(), codec=pica.Codec.RAW)
    at = good.index(b"EVNT")
    head = b"EVNT" + bytes([pica.Codec.ZSTD, 0, 0, 0]) + struct.pack("<QQI", len(body), len(stored), zlib.crc32(stored))
    message = r"unknown event type 85 \[byte 0x5 of the decompressed EVNT section\]"
    with pytest.raises(FormatError, match=message) as info:
        pica.parse(good[:at] + head + stored)
    assert info.value.offset == at  # the section header, a real file offset
    cap = pica.parse(good[:at] + head + stored, strict=False)
    assert cap.events == [pica.FrameEnd()] and cap.damage.offset == at


def test_huge_event_count_is_refused_before_allocating() -> None:
    with pytest.raises(FormatError, match="cannot fit"):
        pica.parse(_raw_capture_with_events(struct.pack("<I", 0xFFFFFFFF)))


def test_event_naming_a_missing_blob() -> None:
    body = struct.pack("<I", 1) + bytes([pica.EventType.MEMORY_WRITE]) + struct.pack("<II", 0x20000000, 5)
    with pytest.raises(FormatError, match="missing blob 5") as info:
        pica.parse(_raw_capture_with_events(body))
    assert info.value.offset is not None


def test_non_strict_read_keeps_events_before_the_fault() -> None:
    good = bytes([pica.EventType.FRAME_END]) + bytes([pica.EventType.MARKER]) + struct.pack("<H", 2) + b"hi"
    body = struct.pack("<I", 3) + good + bytes([0x77])
    cap = pica.parse(_raw_capture_with_events(body), strict=False)
    assert cap.events == [pica.FrameEnd(), pica.Marker("hi")]
    assert isinstance(cap.damage, FormatError) and "unknown event type 119" in str(cap.damage)
    with pytest.raises(FormatError, match="unknown event type"):
        pica.parse(_raw_capture_with_events(body))


def test_blob_declaring_a_huge_size() -> None:
    cap = pica.Capture()
    cap.blobs.add(b"abc")  # no event uses it: kept only without merging (``merged`` drops unused blobs)
    data = bytearray(pica.build(cap, codec=pica.Codec.RAW, merge=False))
    at = data.index(b"BLOB") + 28 + 4  # section header, blob count
    struct.pack_into("<Q", data, at + 1, 1 << 40)  # raw_size of blob 0
    sec = data.index(b"BLOB")
    size = struct.unpack_from("<Q", data, sec + 16)[0]
    struct.pack_into("<I", data, sec + 24, zlib.crc32(bytes(data[sec + 28 : sec + 28 + size])))
    with pytest.raises(FormatError, match="implausibly large"):
        pica.parse(bytes(data))


_VALID = pica.build(_sample(), codec=pica.Codec.RAW)
_VALID_ZSTD = pica.build(_sample())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.sampled_from([_VALID, _VALID_ZSTD]),
    cut=st.integers(0, len(_VALID)),
    flips=st.lists(st.tuples(st.integers(0, len(_VALID) - 1), st.integers(1, 255)), max_size=4),
)
def test_fuzz_reader_raises_only_format_errors(data: bytes, cut: int, flips: list[tuple[int, int]]) -> None:
    buf = bytearray(data[: min(cut, len(data))])
    for pos, x in flips:
        if pos < len(buf):
            buf[pos] ^= x
    for strict in (True, False):
        try:
            cap = pica.parse(bytes(buf), strict=strict)
            for i in range(len(cap.blobs)):
                cap.blobs[i]
        except FormatError as err:
            assert err.offset is not None or "lacks section" in str(err)
