"""CiTrace (.ctf) reader and writer: real traces in both layouts, hand-built traces, known defects, fuzzing."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import citrace, pica

from picaemu.errors import FormatError
from picaemu.gx import convert


def _traces(captures_dir: Path) -> list[Path]:
    return sorted((captures_dir / "citrace").glob("*.ctf"))


def test_real_traces_round_trip_byte_exact(captures_dir: Path) -> None:
    for path in _traces(captures_dir):
        data = path.read_bytes()
        trace = citrace.parse(data)
        assert trace.layout is (citrace.Layout.LEGACY if ".legacy." in path.name else citrace.Layout.NEW)
        assert citrace.build(trace) == data, path.name


def test_real_trace_contents(captures_dir: Path) -> None:
    trace = citrace.read(captures_dir / "citrace" / "scene1_triangle.legacy.ctf")
    # 64 elements: 3 frame markers; the first write sets the top screen's first framebuffer address
    assert len(trace.elements) == 64
    assert sum(isinstance(e, citrace.FrameMarker) for e in trace.elements) == 3
    assert trace.elements[0] == citrace.RegisterWrite(0x10400468, 0x20100000, 4)
    assert trace.arrays["pica_regs"].shape == (0x300,)
    assert trace.arrays["gs_program"] is None  # Citra never recorded GS state


def test_layouts_convert_to_the_same_capture(captures_dir: Path) -> None:
    for scene in ("scene1_triangle", "scene2_textured_quad"):
        new = convert.from_citrace(citrace.read(captures_dir / "citrace" / f"{scene}.ctf"))
        old = convert.from_citrace(citrace.read(captures_dir / "citrace" / f"{scene}.legacy.ctf"))
        assert new.events == old.events, scene
    # scene 2's legacy size register held bytes (0x520 = 1312); .pica keeps the hardware unit bytes >> 3
    sizes = [e.value for e in old.events if isinstance(e, pica.RegWrite) and e.address == 0x104018E0]
    assert sizes == [0xA4]


def _tiny(layout: citrace.Layout) -> citrace.CiTrace:
    arrays = dict.fromkeys(citrace.ARRAYS)
    arrays["pica_regs"] = np.arange(0x300, dtype=np.uint32)
    elements = [
        citrace.RegisterWrite(0x10400010, 0x03000000),
        citrace.MemoryLoad(0x20000000, b"abcdefgh"),
        citrace.FrameMarker(),
        citrace.MemoryLoad(0x20001000, b"abcdefgh"),
    ]
    if layout is citrace.Layout.LEGACY:
        elements += [
            citrace.RegisterWrite(0x10400C10, 0xAB, 1),
            citrace.RegisterWrite(0x10400C12, 0xBEEF, 2),
            citrace.RegisterWrite(0x10400468, 0x1122334455667788, 8),
        ]
    return citrace.CiTrace(arrays=arrays, elements=elements, layout=layout)


@pytest.mark.parametrize("layout", list(citrace.Layout))
def test_hand_built_trace_round_trip(layout: citrace.Layout) -> None:
    trace = _tiny(layout)
    data = citrace.build(trace)
    back = citrace.parse(data)
    assert back.layout is layout
    assert back.elements == trace.elements
    np.testing.assert_array_equal(back.arrays["pica_regs"], trace.arrays["pica_regs"])
    # header by hand: magic, version 1, header size 100; pica_regs is the third array, 0x300 words
    assert data[:12] == b"CiTr" + struct.pack("<II", 1, 100)
    assert struct.unpack_from("<I", data, 0x0C + 8 * 2 + 4)[0] == 0x300
    stream, count = struct.unpack_from("<II", data, 0x5C)
    assert count == len(trace.elements) and stream + 20 * count == len(data)
    # the two loads share one blob
    loads = [struct.unpack_from("<IIIII", data, stream + 20 * i) for i in (1, 3)]
    assert loads[0][1] == loads[1][1]
    if layout is citrace.Layout.LEGACY:
        assert struct.unpack_from("<IIIQ", data, stream + 20 * 6) == (0xE3, 0x10400468, 0xD4, 0x1122334455667788)


def test_stream_running_past_the_end() -> None:
    data = bytearray(citrace.build(_tiny(citrace.Layout.NEW)))
    struct.pack_into("<I", data, 0x60, 1000)
    with pytest.raises(FormatError, match="runs past the end") as info:
        citrace.parse(bytes(data))
    assert info.value.offset == 0x60
    partial = citrace.parse(bytes(data), strict=False)
    assert len(partial.elements) == 4 and partial.damage is not None


def test_load_past_the_end_names_the_element() -> None:
    data = bytearray(citrace.build(_tiny(citrace.Layout.NEW)))
    stream = struct.unpack_from("<I", data, 0x5C)[0]
    struct.pack_into("<I", data, stream + 20 + 8, 0x7FFFFFFF)  # size of the first load
    with pytest.raises(FormatError, match="runs past the end") as info:
        citrace.parse(bytes(data))
    assert info.value.offset == stream + 20


def test_post_7272_defects_are_reported_not_fatal() -> None:
    trace = _tiny(citrace.Layout.NEW)
    trace.arrays["lcd_regs"] = np.zeros(4 * 0x400, np.uint32)  # written 4x too long with a zero tail
    data = bytearray(citrace.build(trace))
    struct.pack_into("<II", data, 0x0C, 0xDEADBEEF, 0x1000)  # uninitialised GPU-register array offset
    back = citrace.parse(bytes(data))
    assert back.arrays["gpu_regs"] is None and "outside the file" in back.warnings[0]
    assert back.arrays["lcd_regs"].shape == (0x400,)


@pytest.mark.parametrize(
    ("patch", "message"),
    [((0, b"XiTr"), "not a CiTrace"), ((4, b"\x02"), "version 2"), ((0x5C, b"\xff\xff\xff\x7f"), "stream offset")],
)
def test_bad_headers(patch: tuple[int, bytes], message: str) -> None:
    data = bytearray(citrace.build(_tiny(citrace.Layout.NEW)))
    data[patch[0] : patch[0] + len(patch[1])] = patch[1]
    with pytest.raises(FormatError, match=message):
        citrace.parse(bytes(data))


def test_capture_exports_back_to_both_layouts(captures_dir: Path) -> None:
    cap = convert.from_citrace(citrace.read(captures_dir / "citrace" / "scene1_triangle.legacy.ctf"))
    for layout in citrace.Layout:
        trace, lost = convert.to_citrace(cap, layout)
        again = convert.from_citrace(citrace.parse(citrace.build(trace)))
        assert again.events == cap.events and lost == []


_SEED = citrace.build(_tiny(citrace.Layout.LEGACY))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(0, len(_SEED)),
    flips=st.lists(st.tuples(st.integers(0, len(_SEED) - 1), st.integers(1, 255)), max_size=4),
)
def test_fuzz_reader_raises_only_format_errors(cut: int, flips: list[tuple[int, int]]) -> None:
    buf = bytearray(_SEED[:cut])
    for pos, x in flips:
        if pos < len(buf):
            buf[pos] ^= x
    for strict in (True, False):
        try:
            citrace.parse(bytes(buf), strict=strict)
        except FormatError as err:
            assert err.offset is not None
