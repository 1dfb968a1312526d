"""A ``Replay`` is freed by reference counting alone (no reference cycles): a long-lived process that replays
thousands of captures must not depend on the cyclic garbage collector to get its memory back. (Two cycles did
exist: the draw recorder held its replay, and the GX engines held bound methods of themselves, which kept the
processor and all of emulated memory alive.)"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from picaemu.formats import pica

from picaemu.replay import Replay, ReplayError, load_capture


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _freed_without_gc(make: Callable[[], Replay], use: Callable[[Replay], None]) -> bool:
    """True when the replay and everything big it owns (emulated memory, processor, engines, pipeline) are gone
    as soon as the last reference is dropped."""
    replay = make()
    use(replay)
    refs = [weakref.ref(o) for o in (replay, replay.memory, replay.processor, replay.gx, replay.pipeline)]
    del replay
    return all(ref() is None for ref in refs)


def _faulting_capture() -> pica.Capture:
    cap = pica.Capture()
    cap.events = [
        pica.MemoryWrite(0x20000000, cap.blobs.add(b"\x01" * 16)),
        pica.FrameEnd(),
        pica.CommandList(0x20000000, 16),
        pica.FrameEnd(),
    ]  # 0x01 words: a truncated packet
    return cap


def _run_into_fault(replay: Replay) -> None:
    try:  # plain try/except as a caller would write it (pytest.raises keeps the traceback and its frames)
        replay.run()
    except ReplayError as err:
        assert err.event == 2
    else:
        raise AssertionError("the capture should fault at event #2")


def _debugger_moves(replay: Replay) -> None:
    replay.index()
    replay.run_to_draw(0)
    replay.run_to(0)
    replay.run_to(len(replay.events))
    replay.restore(replay.checkpoint())


@pytest.mark.usefixtures("no_cyclic_gc")
def test_replay_freed_after_a_full_run_and_debugger_moves(captures_dir: Path) -> None:
    capture = load_capture(captures_dir / "scene2_textured_quad")
    assert _freed_without_gc(lambda: Replay(capture), lambda r: r.run())
    assert _freed_without_gc(lambda: Replay(capture), _debugger_moves)
    assert _freed_without_gc(lambda: Replay(capture, checkpoints=False), lambda r: (r.run(), r.screen()))


@pytest.mark.usefixtures("no_cyclic_gc")
def test_replay_freed_after_a_fault() -> None:
    assert _freed_without_gc(lambda: Replay(_faulting_capture()), _run_into_fault)
