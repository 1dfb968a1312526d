"""picaemu.record without a console: the protocol client against scripted stubs (tests/fake_stub.py), hostile
stubs, and the pieces (GX command words, the memory map, interval bookkeeping) against hand-computed values."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.errors import LinkClosed, LinkProtocolError, LinkTimeout, RecordError
from picaemu.record import gxcmd, memmap
from picaemu.record.gdb import GdbClient, expand_rle, frame
from picaemu.record.reads import Intervals
from picaemu.record.recorder import Progress, Recorder
from picaemu.replay import Replay
from tests import gx_script
from tests.conftest import REPO
from tests.fake_stub import HOOKS, FakeProgram, FakeStub

SAMPLES = REPO / "samples"


def _connect(stub: FakeStub, timeout: float = 2.0) -> GdbClient:
    stub.start()
    link = GdbClient("127.0.0.1", stub.port, timeout=timeout)
    return link


def _record(stub: FakeStub, **kwargs) -> tuple[Recorder, pica.Capture]:
    link = _connect(stub)
    link.handshake()
    link.stop_reason()
    kwargs.setdefault("from_start", True)
    recorder = Recorder(link, HOOKS, stop_timeout=kwargs.pop("stop_timeout", 5.0), **kwargs)
    capture = recorder.run()
    link.close()
    return recorder, pica.parse(pica.build(capture))  # what a reader of the written file gets


# -- framing, by hand ---------------------------------------------------------------------------------------
def test_frame_checksum_is_the_byte_sum_mod_256() -> None:
    assert frame("OK") == b"$OK#9a"  # 0x4F + 0x4B
    assert frame("g") == b"$g#67"


def test_run_length_encoding_expands() -> None:
    assert expand_rle(b"0* ") == b"0000"  # ' ' = 32 = 29 + 3 more
    assert expand_rle(b'ab*"c') == b"a" + b"b" * 6 + b"c"  # '"' = 34 = 29 + 5 more
    with pytest.raises(LinkProtocolError, match="run-length"):
        expand_rle(b"*!")


# -- the pieces -----------------------------------------------------------------------------------------------
def test_memory_map_by_hand() -> None:
    assert memmap.to_physical(0x30001000) == 0x20001000
    assert memmap.to_physical(0x14000020) == 0x20000020
    assert memmap.to_physical(0x1F000010) == 0x18000010
    assert memmap.to_virtual(0x18000010) == 0x1F000010
    assert memmap.to_virtual(0x20000020, linear_base=0x14000000) == 0x14000020
    with pytest.raises(RecordError, match="0x00100000"):
        memmap.to_physical(0x00100000)
    with pytest.raises(RecordError):
        memmap.to_physical(0x1F5FFFFF, 2)  # runs off the end of VRAM


def _words(*w: int) -> bytes:
    return struct.pack("<8I", *w, *([0] * (8 - len(w))))


def test_gx_command_words_decode() -> None:
    cmd = gxcmd.decode(_words(1, 0x30001000, 0x200, 1, 0, 0, 0, 1))
    assert cmd.event == pica.CommandList(0x20001000, 0x200, gxcmd.UPDATE_GAS | gxcmd.FLUSH)
    fill = gxcmd.decode(_words(2, 0x1F000000, 0x11223344, 0x1F000100, 0, 0, 0, 0x0201))
    assert fill.event == pica.MemoryFill(
        (pica.FillUnit(0x18000000, 0x18000100, 0x11223344, 0x0201), pica.FillUnit(0, 0, 0, 0))
    )
    assert fill.writes == ((0x18000000, 0x100),)
    # 240x400 RGBA8 -> RGB8: input 384000 bytes, output 288000
    dt = gxcmd.decode(_words(3, 0x1F000000, 0x30100000, 400 << 16 | 240, 400 << 16 | 240, 1 << 12))
    assert dt.reads == ((0x18000000, 384000),) and dt.writes == ((0x20100000, 288000),)
    # texture copy of 64 bytes in lines of 32 with a 16-byte gap: 32 + 16 + 32 bytes touched
    tc = gxcmd.decode(_words(4, 0x30000000, 0x30010000, 64, 1 << 16 | 2, 2, 8))
    assert tc.reads == ((0x20000000, 80),) and tc.writes == ((0x20010000, 64),)
    dma = gxcmd.decode(_words(0, 0x30000000, 0x1F000000, 0x40))
    assert dma.event == pica.RequestDma(0x20000000, 0x18000000, 0x40)
    assert dma.reads == ((0x20000000, 0x40),) and dma.writes == ((0x18000000, 0x40),)
    flush = gxcmd.decode(_words(5, 0x30000000, 0x100, 0x1F000000, 0x20, 0, 0))
    assert flush.event == pica.FlushCacheRegions(((0x20000000, 0x100), (0x18000000, 0x20), (0, 0)))
    assert flush.reads == flush.writes == ()
    with pytest.raises(RecordError, match="0x09"):
        gxcmd.decode(_words(9))
    with pytest.raises(RecordError, match="command list"):
        gxcmd.decode(_words(1, 0x00001000, 8))


def test_intervals() -> None:
    s = Intervals()
    s.add(10, 20)
    s.add(30, 40)
    assert s.missing(0, 50) == [(0, 10), (20, 30), (40, 50)]
    s.add(15, 35)
    assert s.missing(0, 50) == [(0, 10), (40, 50)] and len(s) == 1
    assert s.covers(12, 38) and not s.covers(5, 12)


# -- recording through a scripted stub ------------------------------------------------------------------------
def test_records_the_animation_sample_frame_for_frame() -> None:
    sample = pica.read(SAMPLES / "captures" / "animation.pica")
    recorder, capture = _record(FakeStub(FakeProgram.from_capture(sample)))
    assert recorder.frames == 4 and recorder.warnings == []
    assert [type(e) for e in capture.events if not isinstance(e, pica.MemoryWrite)] == [
        type(e) for e in sample.events if not isinstance(e, pica.MemoryWrite)
    ]
    for f, image in enumerate(gx_script.top_screens(capture)):
        assert np.array_equal(image, gx_script.reference("animation", f)), f"frame {f}"


@pytest.mark.parametrize("mode", ["good", "retrap"])
def test_stepping_off_a_breakpoint_with_it_in_or_out(mode: str) -> None:
    """A stub whose single step ignores breakpoints is stepped off with one ``s`` per stop; one whose step stops at
    the breakpoint again (found at the first stop) gets ``z0``, ``s``, ``Z0``. The capture is the same."""
    sample = pica.read(SAMPLES / "captures" / "animation.pica")
    stub = FakeStub(FakeProgram.from_capture(sample), mode)
    recorder, capture = _record(stub)
    assert recorder.frames == 4 and recorder.steps_over is (mode == "good")
    log = [body[:2] for body in stub.requests]
    steps = [i for i, body in enumerate(log) if body == "s"]
    assert len(steps) > 4 and log[steps[0] + 1] == "g"  # the first step is checked: did it leave the breakpoint?
    if mode == "good":
        assert {log[i + 1] for i in steps[1:]} == {"c"} and "z0" not in log
    else:
        assert {(log[i - 1], log[i + 1]) for i in steps[2:]} == {("z0", "Z0")}
    for f, image in enumerate(gx_script.top_screens(capture)):
        assert np.array_equal(image, gx_script.reference("animation", f)), f"frame {f}"


@pytest.mark.parametrize("noack", [True, False])
def test_registers_and_memory_go_together_only_in_no_ack_mode(noack: bool) -> None:
    """In no-ack mode ``g`` and the reads leave in one segment and the replies are taken in order; in
    acknowledgement mode one request at a time. A refused read is None, not an error."""
    stub = FakeStub(FakeProgram(memory={0x1000 + i: i for i in range(8)}))
    link = _connect(stub)
    link.handshake()
    link.ack_mode = not noack  # a stub without no-ack mode: the client never asked for it
    stub.noack = noack
    stub.regs = list(range(100, 116))
    regs, memory = link.registers_and_memory([(0x1000, 4), (0x1004, 4)])
    assert regs == list(range(100, 116)) and memory == [bytes([0, 1, 2, 3]), bytes([4, 5, 6, 7])]
    stub.mode = "error"
    regs, memory = link.registers_and_memory([(0x1000, 4)])
    assert regs[15] == 115 and memory == [None]
    link.close()
    stub.join(2)
    assert stub.batches[2:] == ([3, 2] if noack else [1] * 5), stub.batches


def test_gpu_output_is_never_read_back() -> None:
    """The render target is cleared by a memory fill, the framebuffer written by a display transfer: neither is
    read from the program (its bytes there are garbage the replay must not see)."""
    sample = pica.read(SAMPLES / "captures" / "cube.pica")
    program = FakeProgram.from_capture(sample)
    program.write(0x1F000000, b"\xab" * 4096)  # render target, before the fill
    program.write(0x30100000, b"\xcd" * 4096)  # framebuffer
    _, capture = _record(FakeStub(program))
    for e in capture.events:
        if isinstance(e, pica.MemoryWrite):
            assert not (0x18000000 <= e.address < 0x180BB800), "render target recorded"
            assert not (0x20100000 <= e.address < 0x20100000 + 288000), "framebuffer recorded"
    assert np.array_equal(gx_script.top_screens(capture)[0], gx_script.reference("cube"))


def test_from_a_frame_boundary_the_state_is_marked_unknown() -> None:
    sample = pica.read(SAMPLES / "captures" / "animation.pica")
    recorder, capture = _record(FakeStub(FakeProgram.from_capture(sample)), from_start=False)
    assert recorder.frames == 3
    assert capture.meta["initial_state"] == "unknown"
    assert Replay(capture, checkpoints=False).unknown_state is not None


def test_ctrl_c_keeps_the_complete_frames() -> None:
    sample = pica.read(SAMPLES / "captures" / "animation.pica")

    pressed = []

    def progress(p: Progress) -> None:  # the user presses Ctrl-C once, during frame 3
        if p.frames == 2 and p.events > 14 and not pressed:
            pressed.append(p)
            raise KeyboardInterrupt

    recorder, capture = _record(FakeStub(FakeProgram.from_capture(sample, repeat=True)), progress=progress)
    assert isinstance(recorder.ended_by, KeyboardInterrupt)
    assert sum(isinstance(e, pica.FrameEnd) for e in capture.events) == 2
    assert isinstance(capture.events[-1], pica.FrameEnd)
    images = gx_script.top_screens(capture)
    assert np.array_equal(images[1], gx_script.reference("animation", 1))


def test_a_disconnect_mid_recording_keeps_the_complete_frames() -> None:
    sample = pica.read(SAMPLES / "captures" / "animation.pica")
    probe = FakeStub(FakeProgram.from_capture(sample))
    _record(probe)
    cut = next(
        i for i, r in enumerate(probe.requests) if r == "c" and sum(q == "c" for q in probe.requests[:i]) == 6
    )  # 4 stops a frame: in frame 2
    recorder, capture = _record(FakeStub(FakeProgram.from_capture(sample), "disconnect", after=cut))
    assert isinstance(recorder.ended_by, LinkClosed)
    assert "closed the connection" in str(recorder.ended_by) and "127.0.0.1" in str(recorder.ended_by)
    assert sum(isinstance(e, pica.FrameEnd) for e in capture.events) == 1
    assert np.array_equal(gx_script.top_screens(capture)[0], gx_script.reference("animation", 0))


def test_a_program_that_never_stops_times_out_with_a_named_error() -> None:
    recorder, capture = _record(FakeStub(mode="silent"), stop_timeout=0.5)
    assert isinstance(recorder.ended_by, LinkTimeout) and capture.events == []


# -- hostile stubs --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "error", "text"),
    [
        ("garbage", LinkProtocolError, "outside a packet"),
        ("checksum", LinkProtocolError, "checksum"),
        ("huge", LinkProtocolError, "longer than"),
        ("disconnect", LinkClosed, "closed the connection"),
    ],
)
def test_hostile_stub_handshake(mode: str, error: type, text: str) -> None:
    link = _connect(FakeStub(mode=mode))
    with pytest.raises(error, match=text) as info:
        link.handshake()
    assert "qSupported" in str(info.value) and f":{link.endpoint.split(':')[1]}" in str(info.value)
    link.close()


def test_stub_refusing_memory_reads() -> None:
    sample = pica.read(SAMPLES / "captures" / "triangle.pica")
    recorder, capture = _record(FakeStub(FakeProgram.from_capture(sample), "error"))
    assert isinstance(recorder.ended_by, LinkProtocolError) and "refused" in str(recorder.ended_by)
    assert capture.events == []


def test_nobody_listening() -> None:
    stub = FakeStub()
    port = stub.port
    stub.server.close()
    with pytest.raises(LinkClosed, match="cannot connect"):
        GdbClient("127.0.0.1", port, timeout=1.0)
