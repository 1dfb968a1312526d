"""Every GX command end to end (RequestDma, FlushCacheRegions beside the four engine commands): the c3dcap
importer, the ``.pica`` format, the replay's DMA copy and its named errors, ``record`` through the scripted stub,
the debugger's index; and captures with 10,000+ allocations (merged adjacent ranges, the streaming manifest)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import c3dcap, json_stream, pica

from picaemu.debug.replay import DebugReplay
from picaemu.debug.timeline import BreakKind, Breakpoint, breakpoint_stops
from picaemu.gx import convert
from picaemu.replay import Replay, ReplayError
from picaemu.replay.records import describe
from tests import gx_script
from tests.fake_stub import FakeProgram, FakeStub
from tests.test_record_gdb import SAMPLES, _record

LINEAR, VRAM = 0x20100000, 0x18000000


def _scene(root: Path, events: list[dict], blobs: dict[str, bytes]) -> Path:
    (root / "blobs").mkdir(parents=True)
    for name, data in blobs.items():
        (root / "blobs" / name).write_bytes(data)
    doc = {"format": "c3dcap-1", "scene": "gx", "memory_map": {}, "events": events}
    (root / "manifest.json").write_text(json.dumps(doc))
    return root


def _block(address: int, name: str | None, size: int, tag: str = "") -> dict:
    file = f"blobs/{name}" if name else None
    return {"region": "linear" if name else "vram", "paddr": address, "size": size, "tag": tag, "file": file}


def _dma_scene(tmp_path: Path, dst: int = VRAM + 0x1000) -> Path:
    texels = bytes(range(256)) * 4
    memory = [_block(LINEAR, "tex.bin", len(texels), "tex")]
    events = [
        {"type": "gx", "gx_cmd": "FlushCacheRegions", "regions": [{"paddr": LINEAR, "size": 1024}], "memory": memory},
        {"type": "gx", "gx_cmd": "RequestDma", "src_paddr": LINEAR, "dst_paddr": dst, "size": 1024, "flush": 1,
         "memory": memory},
    ]  # fmt: skip
    return _scene(tmp_path / "scene", events, {"tex.bin": texels})


def test_request_dma_from_c3dcap_is_copied_by_the_replay(tmp_path: Path) -> None:
    cap = convert.from_scene(c3dcap.read(_dma_scene(tmp_path)))
    gx = [e for e in cap.events if not isinstance(e, pica.MemoryWrite)]
    assert gx == [
        pica.FlushCacheRegions(((LINEAR, 1024), (0, 0), (0, 0))),
        pica.RequestDma(LINEAR, VRAM + 0x1000, 1024, 1),
    ]
    again = pica.parse(pica.build(cap))  # the .pica format holds both (minor version 1)
    assert [e for e in again.events if not isinstance(e, pica.MemoryWrite)] == gx
    replay = Replay(again, checkpoints=False)
    replay.run()
    assert replay.memory.read(VRAM + 0x1000, 1024) == bytes(range(256)) * 4
    assert replay.gx.counts["DMA copies"] == 1
    assert describe(gx[1]) == "RequestDma 0x20100000 -> 0x18001000 (1024 bytes)"
    assert describe(gx[0]) == "FlushCacheRegions 0x20100000 (1024 bytes)"


def test_a_dma_outside_memory_is_a_named_error_with_the_event_index(tmp_path: Path) -> None:
    cap = convert.from_scene(c3dcap.read(_dma_scene(tmp_path, dst=VRAM + (6 << 20) - 16)))
    index = next(i for i, e in enumerate(cap.events) if isinstance(e, pica.RequestDma))
    with pytest.raises(ReplayError, match=rf"event #{index} \(RequestDma .*DMA destination") as err:
        Replay(cap, checkpoints=False).run()
    assert err.value.event == index
    cap.events[index] = pica.RequestDma(LINEAR, VRAM, 1 << 30)
    with pytest.raises(ReplayError, match="more than"):
        Replay(cap, checkpoints=False).run()


def test_c3dcap_gx_commands_are_checked(tmp_path: Path) -> None:
    bad = [{"type": "gx", "gx_cmd": "RequestDma", "src_paddr": LINEAR, "dst_paddr": -1, "size": 4, "memory": []}]
    with pytest.raises(pica.FormatError, match=r"event #0: field 'dst_paddr'"):
        c3dcap.read(_scene(tmp_path / "a", bad, {}))
    four = [{"paddr": LINEAR, "size": 4}] * 4
    bad = [{"type": "gx", "gx_cmd": "FlushCacheRegions", "regions": four, "memory": []}]
    with pytest.raises(pica.FormatError, match="at most 3"):
        c3dcap.read(_scene(tmp_path / "b", bad, {}))
    bad = [{"type": "gx", "gx_cmd": "Teleport", "memory": []}]
    with pytest.raises(pica.FormatError, match="unknown gx_cmd 'Teleport'"):
        c3dcap.read(_scene(tmp_path / "c", bad, {}))


def test_the_debugger_lists_every_gx_command(tmp_path: Path) -> None:
    replay = DebugReplay(convert.from_scene(c3dcap.read(_dma_scene(tmp_path))))
    timeline = replay.debugger.timeline
    kinds = [e.kind for e in timeline.events]
    assert "RequestDma" in kinds and "FlushCacheRegions" in kinds
    stops = {c.event for c in breakpoint_stops([Breakpoint(BreakKind.GX_COMMAND)], timeline)}
    assert {i for i, k in enumerate(kinds) if k in ("RequestDma", "FlushCacheRegions")} <= stops


def test_to_citrace_reports_a_dma_it_cannot_hold(tmp_path: Path) -> None:
    _, lost = convert.to_citrace(convert.from_scene(c3dcap.read(_dma_scene(tmp_path))))
    assert any("1 RequestDma" in item for item in lost)


# -- record -----------------------------------------------------------------------------------------------
def test_record_keeps_dma_and_cache_flushes_as_events() -> None:
    """A DMA out of the render target after the draw: the capture holds a RequestDma (not the bytes the program's
    memory held there), so the replay copies what the GPU drew."""
    sample = pica.read(SAMPLES / "captures" / "cube.pica")
    transfer = next(i for i, e in enumerate(sample.events) if isinstance(e, pica.DisplayTransfer))
    src = sample.events[transfer].src
    copy_to = VRAM + (5 << 20)
    sample.events[transfer:transfer] = [
        pica.FlushCacheRegions(((LINEAR, 64), (0, 0), (0, 0))),
        pica.RequestDma(src, copy_to, 4096),
    ]
    program = FakeProgram.from_capture(sample)
    program.write(0x1F000000 + (5 << 20), b"\xee" * 4096)  # what the program's memory holds there: not used
    recorder, capture = _record(FakeStub(program))
    assert recorder.warnings == []
    dmas = [e for e in capture.events if isinstance(e, pica.RequestDma | pica.FlushCacheRegions)]
    assert dmas == sample.events[transfer : transfer + 2]
    replay = Replay(capture, checkpoints=False)
    replay.run_to(next(i for i, e in enumerate(capture.events) if isinstance(e, pica.RequestDma)) + 1)
    assert replay.memory.read(copy_to, 4096) == replay.memory.read(src, 4096)
    assert np.array_equal(gx_script.top_screens(capture)[0], gx_script.reference("cube"))


# -- many allocations -------------------------------------------------------------------------------------
def _many_allocations_scene(tmp_path: Path, count: int = 12_000, commands: int = 3) -> Path:
    """``count`` adjacent 32-byte linear allocations (distinct contents) plus a VRAM target, listed in reverse
    order at each of ``commands`` memory fills; block 7 changes at the last command."""
    blobs = {f"b{i}.bin": i.to_bytes(4, "little") * 8 for i in range(count)}
    blobs["changed.bin"] = b"\xff" * 32
    memory = [_block(LINEAR + 32 * i, f"b{i}.bin", 32, f"sprite{i}") for i in reversed(range(count))]
    memory.append(_block(VRAM, None, 4096, "target"))
    fill = {"start_paddr": VRAM, "end_paddr": VRAM + 4096, "value": 0x11223344, "control": 0x201}
    events = [{"type": "gx", "gx_cmd": "MemoryFill", "fill": [fill], "memory": memory} for _ in range(commands)]
    events[-1]["memory"] = [dict(b, file="blobs/changed.bin") if b["paddr"] == LINEAR + 32 * 7 else b for b in memory]
    return _scene(tmp_path / "many", events, blobs)


def test_ten_thousand_allocations_merge_into_runs(tmp_path: Path) -> None:
    count = 12_000
    scene = c3dcap.read(_many_allocations_scene(tmp_path, count))
    cap = convert.from_scene(scene)
    writes = [e for e in cap.events if isinstance(e, pica.MemoryWrite)]
    # one run per command, the last split around the changed block: 1 + 1 + 3 writes, not 36,000
    assert len(writes) == 5
    assert len(cap.blobs) == 4  # the unchanged run is stored once
    assert [a.tag for a in scene.events[0].memory] == ["target", f"{count} allocations from sprite0"]
    replay = Replay(cap, checkpoints=False)
    replay.run()
    memory = np.frombuffer(replay.memory.read(LINEAR, 32 * count), "<u4").reshape(count, 8)
    expected = np.repeat(np.arange(count, dtype=np.uint32)[:, None], 8, axis=1)
    expected[7] = 0xFFFFFFFF
    assert np.array_equal(memory, expected)


def test_overlapping_allocations_keep_their_order(tmp_path: Path) -> None:
    memory = [_block(LINEAR, "a.bin", 32), _block(LINEAR + 16, "b.bin", 32)]
    events = [{"type": "gx", "gx_cmd": "RequestDma", "src_paddr": LINEAR, "dst_paddr": VRAM, "size": 48,
               "memory": memory}]  # fmt: skip
    cap = convert.from_scene(c3dcap.read(_scene(tmp_path / "s", events, {"a.bin": b"a" * 32, "b.bin": b"b" * 32})))
    replay = Replay(cap, checkpoints=False)
    replay.run()
    assert replay.memory.read(VRAM, 48) == b"a" * 16 + b"b" * 32


def test_the_writer_merges_consecutive_adjacent_writes() -> None:
    cap = pica.Capture()
    for i in range(10_000):
        cap.events.append(pica.MemoryWrite(LINEAR + 16 * i, cap.blobs.add(i.to_bytes(16, "little"))))
    cap.events += [pica.Marker("between"), pica.MemoryWrite(LINEAR, cap.blobs.add(b"x" * 16))]
    cap.events.append(pica.MemoryWrite(LINEAR + 64, cap.blobs.add(b"y" * 16)))  # not adjacent: its own write
    cap.state.memory.append((VRAM, cap.blobs.add(b"z" * 8)))
    back = pica.parse(pica.build(cap))
    assert [type(e).__name__ for e in back.events] == ["MemoryWrite", "Marker", "MemoryWrite", "MemoryWrite"]
    assert len(back.blobs) == 4 and back.blobs[back.state.memory[0][1]] == b"z" * 8
    a, b = Replay(cap, checkpoints=False), Replay(back, checkpoints=False)
    a.run()
    b.run()
    assert a.memory.read(LINEAR, 16 * 10_000) == b.memory.read(LINEAR, 16 * 10_000)
    assert len(pica.parse(pica.build(cap, merge=False)).events) == len(cap.events)


@pytest.mark.parametrize(
    "doc",
    [
        '{"format": "x", "events": [1, {"a": [2, 3]}, "s"], "z": {"k": null}}',
        ' { "events" : [ ] , "format" : "c" } ',
        '{"a": 1}',
        "{}",
    ],
)
def test_json_stream_reads_what_json_loads_reads(doc: str) -> None:
    members, at = json_stream.members(doc, "events")
    whole = json.loads(doc)
    assert members == {k: v for k, v in whole.items() if k != "events"}
    assert (list(json_stream.items(doc, at)) if at is not None else None) == whole.get("events")


@pytest.mark.parametrize("doc", ['{"events": [1, 2', '{"events": [1 2]}', '{"a": 1} x', '{"a" 1}', "{1: 2}"])
def test_json_stream_refuses_what_json_loads_refuses(doc: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        _, at = json_stream.members(doc, "events")
        list(json_stream.items(doc, at))
    with pytest.raises(json.JSONDecodeError):
        json.loads(doc)


def test_a_manifest_that_is_no_object_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("[1]")
    with pytest.raises(pica.FormatError, match=r"not JSON: Expecting .\{."):
        c3dcap.read(tmp_path)
