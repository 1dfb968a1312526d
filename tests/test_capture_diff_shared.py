"""``picaemu diff`` over a shared prefix (``picaemu.debug.shared_prefix``): side B follows side A over the events
whose inputs are equal and starts from A's state at the first that differs. The result is the one the plain way
gives (both sides replay everything), byte for byte: captures that differ only late, only in a memory upload
after earlier lists of the same frame, in their first event, or not at all."""

from __future__ import annotations

import dataclasses

import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.debug import capture_diff
from picaemu.debug.capture_diff import compare_sides, diff_captures, open_side
from picaemu.debug.output_watch import Mark
from picaemu.debug.shared_prefix import shared_events
from samples._common import VS_COLOR, rect, solid
from tests.test_capture_diff import scene

DRAWS, SPLIT = 100, 70  # one frame: draws 0-69 in one command list, 70-99 in the next (a marker between)


def two_lists(moved: int | None = None, clear: int = 0x20) -> pica.Capture:
    """One frame of ``DRAWS`` small rectangles in two command lists; every draw's vertices are their own CPU
    upload, so ``moved`` (its rectangle 2 pixels to the right) differs from the plain frame in that upload only."""
    b = CaptureBuilder(name="two lists")
    b.begin_frame(clear=(clear, 0x20, 0x20, 0xFF))
    b.shader(VS_COLOR)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    for d in range(DRAWS):
        if d == SPLIT:
            b.marker("second list")
        x0, y0 = 10 * (d % 40) + (2 if d == moved else 0), 10 * (d // 40)
        b.vertices([rect(x0 + 1, y0 + 1, x0 + 9, y0 + 9), solid(6, ((d % 7) / 7, 0.5, 1 - (d % 5) / 5, 1.0))])
        b.draw(6)
    b.end_frame()
    return b.capture()


def _plain(a: pica.Capture, b: pica.Capture, every: int = capture_diff.EVERY) -> dict:
    """The result when side B replays everything itself."""
    return diff_captures(a, b, every=every, share=False).as_dict()


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record which way side B took each frame (``follow`` / ``adopt``, with whether it resumed inside it)."""
    calls: list[str] = []
    follow, adopt = capture_diff.Side.follow, capture_diff.Side.adopt

    def spy_follow(self, lead, draws):
        calls.append("follow")
        return follow(self, lead, draws)

    def spy_adopt(self, lead, frame):
        adopt(self, lead, frame)
        calls.append(f"adopt {frame}" + (" inside" if self.resumed else ""))

    monkeypatch.setattr(capture_diff.Side, "follow", spy_follow)
    monkeypatch.setattr(capture_diff.Side, "adopt", spy_adopt)
    return calls


def test_shared_events_counts_equal_inputs() -> None:
    a, b = two_lists(), two_lists(moved=50)
    assert shared_events(a, a) == shared_events(a, two_lists()) == len(a.events)
    first = shared_events(a, b)
    ea, eb = a.events[first], b.events[first]
    assert isinstance(ea, pica.MemoryWrite) and isinstance(eb, pica.MemoryWrite) and ea.address == eb.address
    assert a.blobs[ea.blob] != b.blobs[eb.blob]  # draw 50's vertices (blob indices are per capture)
    assert 0 < first < len(a.events) and a.events[:first] == b.events[:first]
    assert shared_events(a, two_lists(clear=0x40)) == 0  # the frame's clear is its first event
    changed = dataclasses.replace(b, state=dataclasses.replace(b.state, regs=b.state.regs.copy()))
    changed.state.regs[0x100] ^= 1
    assert shared_events(a, changed) == 0  # another initial state: nothing is shared


@pytest.mark.parametrize("moved", [3, SPLIT, SPLIT + 1, SPLIT + 24, DRAWS - 1])
@pytest.mark.parametrize("every", [1, 32])
def test_a_difference_in_one_upload_is_found_from_side_a_state(
    monkeypatch: pytest.MonkeyPatch, moved: int, every: int
) -> None:
    """Past the marker side B starts inside the frame from A's state; before it the shared events run no list,
    and B replays them."""
    a, b = two_lists(), two_lists(moved=moved)
    calls = _calls(monkeypatch)
    result = diff_captures(a, b, every=every)
    assert (result.first_draw, result.first_draw_b, result.frame) == (moved, moved, 0)
    assert result.pixels["color"]["count"] > 0 and result.state == {}  # only the vertices differ
    assert calls == (["adopt 0 inside"] if moved >= SPLIT else [])
    assert result.as_dict() == _plain(a, b, every)


def test_pass_2_starts_from_a_restart_position_side_a_kept() -> None:
    """Draw 70 (the second list's first) differs: pass 2 starts on both sides from A's mark after draw 63 (the
    first list's last point inside it; its first kept a checkpoint), which B took over with A's state."""
    sa, sb = open_side(two_lists()), open_side(two_lists(moved=SPLIT))
    result = compare_sides(sa, sb)
    mark = sb.watch.restart(SPLIT)
    assert isinstance(mark, Mark) and mark.draw == 63 and mark in sa.watch.marks
    assert result.first_draw == SPLIT and result.b["draws"] == DRAWS
    # B took A's record of where the draws before the handover sit, and placed its own after it as A did
    places = [(sa.watch.position_of(d), sb.watch.position_of(d)) for d in range(DRAWS)]
    assert all(a == b for a, b in places) and len({a for a, _ in places}) == DRAWS


def test_captures_that_differ_only_late_follow_the_earlier_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = scene(), scene(shift_at=6)  # frame 1's projection differs: frame 0 is followed
    calls = _calls(monkeypatch)
    result = diff_captures(a, b)
    assert (result.first_draw, result.frame) == (6, 1) and calls == ["follow", "adopt 1 inside"]
    assert result.as_dict() == _plain(a, b)


def test_captures_that_differ_in_their_first_event_share_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two_lists(), two_lists(clear=0x40)  # another clear color: every draw's render target differs
    assert shared_events(a, b) == 0
    calls = _calls(monkeypatch)
    result = diff_captures(a, b)
    assert result.first_draw == 0 and calls == []
    assert result.as_dict() == _plain(a, b)


def test_equal_captures_replay_side_b_not_at_all() -> None:
    sa, sb = open_side(scene()), open_side(scene())
    result = compare_sides(sa, sb)
    assert result.equal and sb.replay.position == 0 and sb.replay.draw_count == 0
    assert result.b["draws"] == result.a["draws"] == 9 and [f["screens_equal"] for f in result.frames] == [True] * 2
    assert result.as_dict() == _plain(scene(), scene())
    replayed = open_side(scene())
    assert compare_sides(open_side(scene()), replayed, share=False).equal
    assert replayed.replay.position == len(replayed.replay.events) and replayed.replay.draw_count == 9


def test_sides_that_render_differently_share_nothing() -> None:
    """Another backend (or other points) on side B: B replays everything (the comparison is the point)."""
    sa, sb = open_side(scene()), open_side(scene())
    sb.backend = "gl"  # as open_side(..., "gl") names it; only the name is read before running
    assert capture_diff._shared(sa, sb) == 0
    assert capture_diff._shared(open_side(scene()), open_side(scene(), every=1)) == 0
    assert capture_diff._shared(open_side(scene()), open_side(scene())) == len(scene().events)
