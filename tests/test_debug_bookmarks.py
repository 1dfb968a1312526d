"""Capture markers as groups and user bookmarks (``picaemu.debug.bookmarks``, ``Debugger.markers`` /
``*_bookmark``, ``picaemu bookmarks``): a builder scene whose markers sit between its draws, by construction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica

import picaemu
from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.cli import main
from picaemu.debug import bookmarks as bm
from picaemu.debug.replay import DebugReplay
from picaemu.debug.timeline import Cursor
from picaemu.errors import FormatError, PicaError
from samples._common import VS_COLOR

# two frames: frame 0 = "background" (2 draws), "props" (3 draws); frame 1 = 1 draw before any marker, "hud" (1)
PLAN = ((("", 0), ("background", 2), ("props", 3)), (("", 1), ("hud", 1)))


def marked_capture(path: Path, markers: bool = True) -> Path:
    """``PLAN`` built into ``path`` (without the markers, and so in one command list per frame, when not
    ``markers``)."""
    b = CaptureBuilder(name="marked")
    pos = np.array([[200, 210, 0.5, 1], [80, 30, 0.5, 1], [320, 30, 0.5, 1]], np.float32)
    col = np.eye(3, 4, dtype=np.float32) + np.array([0, 0, 0, 1], np.float32)
    for frame in PLAN:
        b.begin_frame(clear=(0x30, 0x30, 0x30, 0xFF))
        b.shader(VS_COLOR)
        b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
        b.vertices([pos, col])
        b.tev(0, rgb=("primary color",), combine="replace")
        b.passthrough_tev()
        for text, draws in frame:
            if text and markers:
                b.marker(text)
            for _ in range(draws):
                b.draw(3)
        b.end_frame()
    b.save(path)
    return path


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return marked_capture(tmp_path / "marked.pica")


def test_markers_group_the_draws_after_them_until_the_next_marker_or_the_frame_end(capture: Path) -> None:
    replay = picaemu.open(capture)
    groups = replay.debugger.markers()
    assert [(g.text, g.frame, list(g.draws)) for g in groups] == [
        ("background", 0, [0, 1]),
        ("props", 0, [2, 3, 4]),
        ("hud", 1, [6]),
    ]  # draw 5 precedes frame 1's marker
    tl = replay.debugger.timeline
    for g in groups:
        assert tl.events[g.event].kind == "Marker"
        assert all(tl.events[e].frame == g.frame and tl.events[e].kind != "Marker" for e in g.events)
    assert tl.events[groups[1].events[-1]].kind == "FrameEnd"  # the last group of a frame runs to its end
    assert len(tl.draws) == 7  # the split lists still draw everything


def test_a_marker_between_draws_splits_the_command_list_and_keeps_the_picture(tmp_path: Path) -> None:
    cap = pica.read(marked_capture(tmp_path / "m.pica"))
    kinds = [type(e).__name__ for e in cap.events]
    first = kinds.index("Marker")
    assert kinds[first - 1] == "CommandList"  # the list so far is submitted before the marker
    assert kinds[first + 1 : first + 3] == ["MemoryWrite", "CommandList"]  # the next list: uploaded, then run
    plain = marked_capture(tmp_path / "plain.pica", markers=False)  # one list per frame: the same picture
    assert sum(isinstance(e, pica.CommandList) for e in pica.read(plain).events) == len(PLAN)
    a, b = picaemu.open(tmp_path / "m.pica"), picaemu.open(plain)
    assert len(a.debugger.timeline.draws) == len(b.debugger.timeline.draws) == 7
    a.run_to(len(a.events))
    b.run_to(len(b.events))
    assert np.array_equal(a.color_buffer(), b.color_buffer())


def test_bookmarks_are_saved_beside_the_capture_atomically(capture: Path) -> None:
    replay = picaemu.open(capture)
    dbg = replay.debugger
    assert dbg.bookmarks() == []
    marks = dbg.add_bookmark("third", 3)
    marks = dbg.add_bookmark("first", 0)
    assert [b.name for b in marks] == ["first", "third"]  # sorted by position
    assert marks[1].cursor == dbg.timeline.after_draw(3)
    path = bm.bookmarks_path(capture)
    assert path == capture.with_name("marked.pica.bookmarks.json")
    data = json.loads(path.read_text())
    assert data["format"] == "picaemu-bookmarks" and data["version"] == 1
    assert [b["name"] for b in data["bookmarks"]] == ["first", "third"]
    assert [b.name for b in dbg.rename_bookmark("third", "props start")] == ["first", "props start"]
    assert [b.name for b in dbg.remove_bookmark("first")] == ["props start"]
    assert bm.load(capture) == [bm.Bookmark(marks[1].event, marks[1].packet, "props start")]
    assert not list(capture.parent.glob(".*.tmp"))  # no temporary file left behind
    for call, words in (
        (lambda: dbg.add_bookmark("props start", 1), "already a bookmark"),
        (lambda: dbg.add_bookmark("  ", 1), "needs a name"),
        (lambda: dbg.remove_bookmark("nope"), "no bookmark named 'nope'"),
        (lambda: dbg.add_bookmark("x", 99), "draw 99 outside"),
    ):
        with pytest.raises(PicaError, match=words):
            call()


def test_malformed_bookmark_files_and_in_memory_replays_are_named(capture: Path) -> None:
    path = bm.bookmarks_path(capture)
    for text in (
        "{",
        '{"format": "other", "version": 1, "bookmarks": []}',
        '{"format": "picaemu-bookmarks", "version": 1, "bookmarks": [{"name": "a"}]}',
        "[]",
        '{"format": "picaemu-bookmarks", "version": 1, "bookmarks": [{"name": "a", "event": -1, "packet": 0}]}',
    ):
        path.write_text(text)
        with pytest.raises(FormatError, match="bookmark file"):
            bm.load(capture)
    in_memory = DebugReplay(pica.read(capture))
    with pytest.raises(PicaError, match="nowhere to keep bookmarks"):
        in_memory.debugger.bookmarks()
    assert bm.add(capture.with_name("other.pica"), "a", Cursor(1, 2)) == [bm.Bookmark(1, 2, "a")]
    assert bm.bookmarks_path(capture.parent / "scene_folder") == capture.parent / "scene_folder.bookmarks.json"


def test_cli_bookmarks_lists_markers_and_changes_bookmarks(capture: Path) -> None:
    run = CliRunner().invoke
    out = run(main, ["bookmarks", str(capture), "--add", "two", "--draw", "2"])
    assert out.exit_code == 0, out.output
    assert "marker  #" in out.output and "'props': draws 2..4" in out.output and out.output.rstrip().endswith("two")
    out = run(main, ["bookmarks", str(capture), "--rename", "two", "2", "--json"])
    data = json.loads(out.output)
    assert [g["text"] for g in data["markers"]] == ["background", "props", "hud"]
    assert data["markers"][2]["draws"] == [6, 7] and [b["name"] for b in data["bookmarks"]] == ["2"]
    bad = run(main, ["bookmarks", str(capture), "--add", "x"])
    assert bad.exit_code == 2 and "--add needs --draw" in bad.output
