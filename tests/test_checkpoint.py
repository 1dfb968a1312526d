"""Replay checkpoints share unchanged pages (picaemu/replay/checkpoint.py): a checkpoint copies only the pages that
changed since the previous one, restores are exact whichever checkpoint they come from, and a real game's
checkpoints hold a small multiple of the memory it writes, not a copy of all used memory per checkpoint; a checkpoint
follows each expensive draw, so a jump replays little work."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.debug.session import MEMORY_WORK, Session
from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.memory import PAGE, PhysicalMemory
from picaemu.replay import Replay, load_capture
from picaemu.replay.checkpoint import PageStore, distinct_page_bytes, draw_work, restore_pages
from picaemu.state import frozen_copy
from tests.test_capture_diff_long import long_frame

GAME = Path(__file__).parent / "data" / "games" / "minicraft.pica"
VRAM = 0x18000000


def _ids(pages) -> dict[int, int]:
    return {int(i): id(p) for i, p in zip(pages.index.tolist(), pages.pages, strict=True)}


def test_unchanged_pages_are_shared_and_restores_are_exact() -> None:
    mem = PhysicalMemory()
    store = PageStore(mem)
    mem.write(VRAM, np.arange(3 * PAGE, dtype=np.uint32).view(np.uint8)[: 3 * PAGE])
    first = store.snapshot()
    assert first["vram"].fresh == 3 * PAGE and first["vram"].index.tolist() == [0, 1, 2]
    mem.write(VRAM + PAGE + 5, b"\x07")  # page 1 changes
    mem.fill(VRAM + 2 * PAGE, PAGE, 0)  # page 2 back to zeros
    second = store.snapshot()
    a, b = _ids(first["vram"]), _ids(second["vram"])
    assert b[0] == a[0] and b[1] != a[1] and b[2] != a[2] and second["vram"].fresh == 2 * PAGE
    later = mem.read(VRAM, 3 * PAGE)
    mem.write(VRAM + 9 * PAGE, b"new page")  # a page neither checkpoint names
    restore_pages(mem, first)
    assert mem.read(VRAM, 3 * PAGE) == np.arange(3 * PAGE, dtype=np.uint32).view(np.uint8)[: 3 * PAGE].tobytes()
    assert not mem.bytes(VRAM + 9 * PAGE, PAGE).any()
    restore_pages(mem, second)
    assert mem.read(VRAM, 3 * PAGE) == later
    third = store.snapshot()  # memory equals the second checkpoint's: nothing new to copy
    shared = _ids(third["vram"])
    assert third["vram"].fresh == 0 and {i: shared[i] for i in b} == b
    assert 9 in shared and not third["vram"].pages[-1].any()  # page 9: the shared zero page
    assert distinct_page_bytes([]) == 0


def test_game_checkpoints_share_pages_and_jumps_stay_exact() -> None:
    """minicraft (40 frames, ~250 checkpoints): the checkpoints' distinct pages are a fraction of what full copies
    would hold (1.38 GB before sharing), and the colour buffer after jumps back and forth equals a linear replay's."""
    session = Session(Replay(load_capture(GAME)))
    tl = session.index()
    cps = session.checkpoints
    full = sum(cp.nbytes for cp in cps)
    assert len(cps) > 100 and session.checkpoint_bytes * 5 < full
    assert session.checkpoint_bytes <= sum(cp.fresh_bytes for cp in cps)  # each page held was copied once
    for draw in (400, 37, 250):
        at = tl.after_draw(draw)
        session.goto(at)
        fb = session.replay.framebuffer_state()
        jumped = fbm.read_color_image(session.replay.memory, fb)
        linear = Replay(load_capture(GAME), checkpoints=False)
        linear.run_to(at.event, packets=at.packet)
        np.testing.assert_array_equal(jumped, fbm.read_color_image(linear.memory, fb))


def test_game_jumps_replay_less_than_the_checkpoint_work() -> None:
    """A checkpoint follows every draw that brings the draw work since the last one to the session's ``MEMORY_WORK``
    (``draw_work``: fragments rasterized + ``VERTEX_WORK`` per vertex shaded), so on minicraft (wide 2D frames of
    8-17 draws, up to 192,000 fragments a draw) a jump to the end of any draw replays less than that much draw work;
    without the rule (``checkpoint_work`` unbounded) some jumps replay 8 draws, over ten times as much."""

    def worst_jump_work(session: Session) -> int:
        tl = session.index()
        starts = [cp.at for cp in session.checkpoints]
        ends = [(c.event, c.packet) for c in (tl.after_draw(d.index) for d in tl.draws)]
        worst = 0
        for d in tl.draws:
            start = starts[bisect.bisect_right(starts, ends[d.index]) - 1]
            run = [e for e in tl.draws[: d.index + 1] if ends[e.index] > start]
            worst = max(worst, sum(draw_work(e.stats) for e in run))
        return worst

    assert worst_jump_work(Session(Replay(load_capture(GAME)))) < MEMORY_WORK
    assert worst_jump_work(Session(Replay(load_capture(GAME)), memory_work=1 << 60)) > 10 * MEMORY_WORK


def test_a_checkpoint_shares_arrays_only_when_their_bytes_are_equal() -> None:
    """``frozen_copy`` shares the previous copy by bytes: -0.0 is not 0.0 (a shader's 1 / x tells them apart)."""
    prev = frozen_copy(np.zeros((2, 4), np.float32), None)
    assert not prev.flags.writeable
    assert frozen_copy(np.zeros((2, 4), np.float32), prev) is prev
    negative = frozen_copy(np.full((2, 4), -0.0, np.float32), prev)
    assert negative is not prev and np.signbit(negative).all() and not negative.flags.writeable
    assert frozen_copy(np.zeros(8, np.float32), prev) is not prev  # another shape
    assert frozen_copy(np.zeros((2, 4), np.int32), prev) is not prev  # another dtype


def test_a_checkpoint_within_a_list_needs_a_base_inside_the_same_list() -> None:
    """``checkpoint_within`` shares its base's memory: a base at an event boundary, in another list or past the
    position is refused by name; one earlier in the same list gives the position with the base's pages."""
    replay = Replay(long_frame(), checkpoints=False)
    event = next(i for i, e in enumerate(replay.events) if isinstance(e, pica.CommandList))
    replay.run_to(event)
    boundary = replay.checkpoint()
    replay.run_to(event, packets=40)
    base = replay.checkpoint()
    replay.run_to(event, packets=80)
    resume = replay.checkpoint().resume  # where the list continues after 80 packets
    assert resume is not None
    with pytest.raises(PicaError, match="checkpoint_within needs a base inside the same list"):
        replay.checkpoint_within(boundary, packets=80, resume=resume)
    with pytest.raises(PicaError, match="checkpoint_within needs a base"):
        replay.checkpoint_within(base, packets=30, resume=resume)
    light = replay.checkpoint_within(base, packets=80, resume=resume)
    assert (light.position, light.packets, light.pages) == (event, 80, base.pages)
    assert light.draw_count == replay.draw_count > base.draw_count
