"""Replay of captures whose initial state is unknown (recorded from a frame boundary): every register a draw
reads before the capture wrote it is reported once. The expectation "written by the capture" is computed from
the command lists' own packets, independently of the replay."""

from __future__ import annotations

import logging

import pytest
from picaemu.formats import pica

from picaemu import regs
from picaemu.command.packet_list import list_packets
from picaemu.replay import Replay
from tests.conftest import REPO

CUBE = REPO / "samples" / "captures" / "cube.pica"


def _written_by_lists(capture: pica.Capture) -> set[int]:
    blobs_at = {e.address: capture.blobs[e.blob] for e in capture.events if isinstance(e, pica.MemoryWrite)}
    written: set[int] = set()
    for e in capture.events:
        if isinstance(e, pica.CommandList):
            packets, error = list_packets(blobs_at[e.address][: e.size])
            assert error is None
            written |= {reg for p in packets for reg, _ in p.writes()}
    return written


def test_unwritten_reads_are_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    capture = pica.read(CUBE)
    capture.meta["initial_state"] = "unknown"
    replay = Replay(capture, checkpoints=False)
    with caplog.at_level(logging.WARNING, logger="picaemu.replay"):
        replay.run()
    reported = [reg for reg, _ in replay.unknown_state.unknown]
    assert len(reported) == len(set(reported))  # once per register
    assert not set(reported) & _written_by_lists(capture)
    # the clipping and scissor stages read these for every draw; the cube's list never writes them
    for name in ("GPUREG_FRAGOP_CLIP", "GPUREG_SCISSORTEST_POS"):
        reg = regs.id_of(name)
        assert reg not in _written_by_lists(capture) and reg in reported
    messages = [r.getMessage() for r in caplog.records if "never wrote" in r.getMessage()]
    assert len(messages) == len(reported) and any("GPUREG_FRAGOP_CLIP" in m for m in messages)


def test_known_state_captures_are_not_watched(caplog: pytest.LogCaptureFixture) -> None:
    replay = Replay(pica.read(CUBE), checkpoints=False)
    assert replay.unknown_state is None
    with caplog.at_level(logging.WARNING, logger="picaemu.replay"):
        replay.run()
    assert not [r for r in caplog.records if "never wrote" in r.getMessage()]
