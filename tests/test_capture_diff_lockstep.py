"""Pass 1 of ``picaemu diff`` in lockstep (``picaemu.debug.capture_diff._lockstep``): side B runs a frame and runs
side A on to each place it compares (A pauses at a point: ``OutputWatch.Paused``, ``Replay.stopped_within``), so A
takes no points past B's last. The result must be the one of running A's whole frame first, then B's."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.debug import capture_diff
from picaemu.debug.capture_diff import compare_sides, diff_captures, open_side
from picaemu.replay import Replay
from tests.test_capture_diff import scene
from tests.test_capture_diff_long import DRAWS, long_frame


def _sequential(sa: capture_diff.Side, sb: capture_diff.Side, frame: int) -> tuple[list[int], list[int]]:
    """Pass 1 as before lockstep: A's whole frame (every point), then B's."""
    return sa.run_frame(frame), sb.run_frame(frame)


def _both(monkeypatch: pytest.MonkeyPatch, a: pica.Capture, b: pica.Capture, every: int) -> tuple[dict, dict]:
    """The result in lockstep and run frame after frame, both sides replayed (``share=False``)."""
    lockstep = diff_captures(a, b, every=every, share=False)
    with monkeypatch.context() as m:
        m.setattr(capture_diff, "_lockstep", _sequential)
        sequential = diff_captures(a, b, every=every, share=False)
    pictures = [[p.tobytes() for p in r.pictures] if r.pictures is not None else None for r in (lockstep, sequential)]
    assert pictures[0] == pictures[1]  # not in as_dict
    return lockstep.as_dict(), sequential.as_dict()


@pytest.mark.parametrize("every", [1, 5, 32])
@pytest.mark.parametrize("variant", [{"moved": 0}, {"moved": 40}, {"moved": 257}, {"covered": 100, "red": True}])
def test_lockstep_gives_the_result_of_running_frame_after_frame(
    monkeypatch: pytest.MonkeyPatch, every: int, variant: dict
) -> None:
    lockstep, sequential = _both(monkeypatch, long_frame(), long_frame(**variant), every)
    assert lockstep == sequential


@pytest.mark.parametrize("variant", [{"shift_at": 5}, {"tev_at": 2}, {"extra": True}, {"cover": True}, {}])
def test_lockstep_over_two_frames(monkeypatch: pytest.MonkeyPatch, variant: dict) -> None:
    for every in (1, 2, 32):
        lockstep, sequential = _both(monkeypatch, scene(), scene(**variant), every)
        assert lockstep == sequential, (variant, every)


def test_side_a_stops_taking_points_at_side_b_first_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draw 100 moved, points every 10 draws: A pauses at each of B's points up to 109 (the first that differs)
    and takes none after it; the rest of its frame runs (all its draws, its screens)."""
    pauses: list[int] = []
    stopped = Replay.stopped_within

    def spy(self: Replay, packets: int, resume: tuple[int, int]) -> None:
        pauses.append(packets)
        stopped(self, packets, resume)

    monkeypatch.setattr(Replay, "stopped_within", spy)
    sa, sb = open_side(long_frame(), every=10), open_side(long_frame(moved=100), every=10)
    result = compare_sides(sa, sb, share=False)
    assert result.first_draw == 100 and result.a["draws"] == result.b["draws"] == DRAWS
    assert sorted(sa.watch.points) == sorted(sb.watch.points) == list(range(9, 110, 10))
    assert len(pauses) == 11 and pauses == sorted(pauses)  # one per point of B, each further into the list
    assert result.frames[0]["screens_equal"] is False


@pytest.mark.parametrize("every", [1, 7, 32])
def test_a_paused_replay_goes_on_as_one_that_never_stopped(every: int) -> None:
    """Side A paused at every point and run on each time ends where a plain replay does: same memory, same
    screen, every draw placed where pass 2 seeks it."""
    capture = long_frame(moved=3)
    side = open_side(capture, every=every)
    side.begin_frame(0)
    place = 0
    while side.ahead is not None:
        side.advance(place)
        place = side.watch.pointed - side.watch.frame_start + 1
    assert side.finish_frame() == list(range(DRAWS))
    plain = Replay(capture, checkpoints=False)
    plain.run()
    assert side.replay.position == plain.position and side.replay.draw_count == plain.draw_count == DRAWS
    assert np.array_equal(side.replay.screen("top"), plain.screen("top"))
    assert [side.watch.position_of(d) for d in range(DRAWS)] == [(r.event, r.packet) for r in plain.draws]
