"""c3dcap-1 scene directories: reading the shared scenes, conversion to .pica, and damaged directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from picaemu.formats import c3dcap, pica

from picaemu.errors import FormatError
from picaemu.gx import convert


def test_scene1_reads_as_the_manifest_says(captures_dir: Path) -> None:
    scene = c3dcap.read(captures_dir / "scene1_triangle")
    kinds = [e.kind if isinstance(e, c3dcap.GxCommand) else "present" for e in scene.events]
    assert kinds == [
        "present",
        "present",
        "MemoryFill",
        "ProcessCommandList",
        "DisplayTransfer",
        "present",
        "MemoryFill",
        "ProcessCommandList",
        "DisplayTransfer",
        "present",
    ]
    lists = [e for e in scene.events if isinstance(e, c3dcap.GxCommand) and e.kind == "ProcessCommandList"]
    assert [len(e.args["data"]) for e in lists] == [1232, 400]
    assert lists[0].args["address"] == 0x20289C00
    fill = scene.events[2].args["fills"][0]
    assert (fill.start, fill.end, fill.value) == (0x18000000, 0x1805DC00, 0x303030FF)


def test_scene_converts_to_a_capture(captures_dir: Path) -> None:
    cap = convert.from_scene(c3dcap.read(captures_dir / "scene1_triangle"))
    assert sum(isinstance(e, pica.FrameEnd) for e in cap.events) == 2
    lists = [e for e in cap.events if isinstance(e, pica.CommandList)]
    assert [(e.address, e.size) for e in lists] == [(0x20289C00, 1232), (0x20289C00, 400)]
    transfers = [e for e in cap.events if isinstance(e, pica.DisplayTransfer)]
    assert transfers[0].in_dim == 240 | 400 << 16 and transfers[0].flags == 0x1000
    assert len(cap.blobs) < sum(isinstance(e, pica.MemoryWrite) for e in cap.events)  # deduplicated


@pytest.fixture
def scene_copy(tmp_path: Path, captures_dir: Path) -> Path:
    dst = tmp_path / "scene"
    shutil.copytree(captures_dir / "scene2_textured_quad", dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    dst.chmod(0o755)
    return dst


def _edit(scene: Path, change) -> None:
    doc = json.loads((scene / "manifest.json").read_text())
    change(doc)
    (scene / "manifest.json").write_text(json.dumps(doc))


def _gx(doc: dict, kind: str) -> dict:
    return next(e for e in doc["events"] if e.get("gx_cmd") == kind)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="c3dcap-9"), "expected 'c3dcap-1'"),
        (lambda d: _gx(d, "ProcessCommandList").update(cmdlist_file="../../etc/passwd"), "outside the scene"),
        (lambda d: _gx(d, "ProcessCommandList").update(cmdlist_size_bytes=999), "expected 999"),
        (lambda d: _gx(d, "DisplayTransfer").update(in_width="wide"), "in_width"),
        (lambda d: _gx(d, "MemoryFill").update(gx_cmd="Teleport"), "unknown gx_cmd"),
        (lambda d: d["events"][0].update(screen="left"), "screen"),
    ],
)
def test_damaged_manifest_names_the_fault(scene_copy: Path, change, message: str) -> None:
    _edit(scene_copy, change)
    with pytest.raises(FormatError, match=message):
        c3dcap.read(scene_copy)


def test_missing_blob_and_missing_manifest(scene_copy: Path) -> None:
    next((scene_copy / "blobs").glob("*_4000.bin")).unlink()
    with pytest.raises(FormatError, match="is missing"):
        c3dcap.read(scene_copy)
    (scene_copy / "manifest.json").unlink()
    with pytest.raises(FormatError, match=r"no manifest\.json"):
        c3dcap.read(scene_copy)


def test_manifest_that_is_not_json(scene_copy: Path) -> None:
    (scene_copy / "manifest.json").write_text("{not json")
    with pytest.raises(FormatError, match="not JSON"):
        c3dcap.read(scene_copy)


def _null_file_scene(root: Path, reload_with_file: bool) -> Path:
    """A scene of two fill + display-transfer pairs into the two halves of one linear block; every event lists
    that block — with no file (``file: null``: never written by the CPU) unless ``reload_with_file``."""
    scene = root / ("with_file" if reload_with_file else "null_file")
    (scene / "blobs").mkdir(parents=True)
    half = 8 * 8 * 3  # an 8x8 RGB8 picture
    (scene / "blobs" / "zero.bin").write_bytes(bytes(2 * half))
    vram = {"region": "vram", "paddr": 0x18000000, "size": 256, "tag": "color", "file": None}
    lcd = {
        "region": "linear",
        "paddr": 0x20000000,
        "size": 2 * half,
        "tag": "lcd",
        "file": "blobs/zero.bin" if reload_with_file else None,
    }
    events = []
    for k, value in enumerate((0x112233FF, 0x445566FF)):
        fill = {"start_paddr": 0x18000000, "end_paddr": 0x18000100, "value": value, "control": 0x201}
        events.append({"type": "gx", "gx_cmd": "MemoryFill", "fill": [fill], "memory": [vram, lcd]})
        events.append(
            {
                "type": "gx",
                "gx_cmd": "DisplayTransfer",
                "in_paddr": 0x18000000,
                "out_paddr": 0x20000000 + k * half,
                "in_width": 8,
                "in_height": 8,
                "out_width": 8,
                "out_height": 8,
                "flags": 0x1000,
                "memory": [vram, lcd],
            }
        )
    doc = {"format": "c3dcap-1", "scene": "null files", "memory_map": {}, "events": events}
    for i, e in enumerate(doc["events"]):
        e["seq"] = i
    (scene / "manifest.json").write_text(json.dumps(doc))
    return scene


@pytest.mark.parametrize("reload_with_file", [False, True])
def test_blocks_without_a_file_keep_their_contents(tmp_path: Path, reload_with_file: bool) -> None:
    """A block with ``file: null`` is left as the transfers wrote it: both halves survive (bytes B, G, R of
    0x112233 then 0x445566). A block with a file is reloaded before each command (the README's rule), so the
    first transfer's half is zero again by the end."""
    from picaemu.replay import Replay

    replay = Replay(convert.from_scene(c3dcap.read(_null_file_scene(tmp_path, reload_with_file))))
    replay.run()
    first, second = replay.memory.read(0x20000000, 192), replay.memory.read(0x20000000 + 192, 192)
    assert second == bytes([0x66, 0x55, 0x44]) * 64
    assert first == (bytes(192) if reload_with_file else bytes([0x33, 0x22, 0x11]) * 64)
