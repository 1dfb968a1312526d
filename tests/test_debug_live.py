"""``Session.extend``: a debugger session that grows frame by frame (a live recording, the GUI's File › Attach)
ends up with the same index, states and pictures as one session over the whole capture."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.debug.session import Session
from picaemu.replay import Replay
from picaemu.replay.trim import trim
from tests.conftest import REPO

SAMPLE = REPO / "samples" / "captures" / "animation.pica"
GAME = REPO / "tests" / "data" / "games" / "minicraft.pica"


def _split(capture: pica.Capture, frames: int) -> tuple[pica.Capture, list[list[pica.Event]]]:
    """The capture of the first ``frames`` frames (the same blob store) and the later frames' events."""
    ends = [i for i, e in enumerate(capture.events) if isinstance(e, pica.FrameEnd)]
    head = pica.Capture(capture.meta, capture.state, capture.blobs, capture.events[: ends[frames - 1] + 1])
    rest = [capture.events[a + 1 : b + 1] for a, b in zip(ends[frames - 1 :], ends[frames:], strict=False)]
    return head, rest


@pytest.mark.parametrize(
    ("path", "last", "screens"),
    [(SAMPLE, 3, ("top",)), (GAME, 5, ("top", "bottom"))],
    ids=["animation", "minicraft"],
)
def test_a_session_extended_frame_by_frame_equals_one_indexed_at_once(path, last: int, screens) -> None:
    capture = trim(pica.read(path), 0, last)
    whole = Session(Replay(capture, checkpoints=False))
    whole_tl = whole.index()
    head, rest = _split(capture, 1)
    grown = Session(Replay(head, checkpoints=False))
    grown.index()
    for frame in rest:
        grown.goto(grown.timeline.before_draw(0))  # the user looked elsewhere meanwhile
        tl = grown.extend(frame)
    assert [(e.kind, e.frame, e.text, len(e.packets), e.draws) for e in tl.events] == [
        (e.kind, e.frame, e.text, len(e.packets), e.draws) for e in whole_tl.events
    ]
    assert tl.frame_ends == whole_tl.frame_ends and np.array_equal(tl.writes, whole_tl.writes)

    def counters(d) -> dict:
        return {k: v for k, v in d.stats.items() if k not in ("time_s", "kernels_s")}  # seconds: taken, loading

    assert [(d.index, d.event, d.frame, counters(d)) for d in tl.draws] == [
        (d.index, d.event, d.frame, counters(d)) for d in whole_tl.draws
    ]
    assert len(grown.transfers) == len(whole.transfers)
    for d in (0, len(tl.draws) // 2, len(tl.draws) - 1):
        assert np.array_equal(grown.state_at_draw(d).regs, whole.state_at_draw(d).regs)
    for cursor in (tl.end, tl.after_draw(len(tl.draws) // 2)):
        grown.goto(cursor)
        whole.goto(cursor)
        for screen in screens:
            assert np.array_equal(grown.replay.screen(screen), whole.replay.screen(screen)), (cursor, screen)
