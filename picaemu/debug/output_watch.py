"""Pass 1 of ``picaemu diff`` (``picaemu.debug.capture_diff``): ``OutputWatch``, the pipeline wrapper that takes the
output points of a replay (its render targets' bytes every ``every`` draws of a frame and at every event's end, the
screens at every frame end), and the restart positions pass 2 starts from (kept checkpoints and ``Mark``).

Side A (no ``reference``) keeps a copy of the render targets' bytes per point (``COPY_BUDGET`` bytes a frame, then
CRC-32 values); side B compares its own with them and stops taking points after the first that differs (pass 2 looks
before it). In lockstep B's ``pull`` first runs A on to the place, and A, with ``pause_at`` set, raises ``Paused`` out
of its replay right after a point that far (at a position inside a list the replay can stand at). Each draw's place in
its event (``position_of``) is noted as it runs: the diff's replays keep no draw records. Restart positions: inside a
command list only draws write memory, into their render targets; so at the first point of a list a side keeps a full
checkpoint and at every later point of the list a ``Mark``: the replay's position, GPU state and registers there
(``Replay.checkpoint_within``) over that checkpoint's memory, with the render targets' bytes of the point (side A's
copy, which side B's agreeing point equals). Where no copy is kept (past the budget), a full checkpoint every
``KEEP_DRAWS`` draws. All are dropped at the next frame.
"""

from __future__ import annotations

import bisect
import weakref
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from picaemu.draw import CompiledSink, DrawCall, PipelineEventKind, PipelineSink, is_compiled_sink, observed_sink
from picaemu.draw_state import PARTS
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.fragment import framebuffer as fbm
from picaemu.gx import lcd
from picaemu.replay import Checkpoint, Replay
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.fused.loop import CompiledDraws, CompiledPlans
    from picaemu.observer import StageObserver

EVERY = 32  # draws of a frame between two points (output comparisons)
COPY_BUDGET = 64 << 20  # bytes of render-target copies side A keeps per frame (then CRC-32 values)
DIFFERS = -1  # side B's token of a point whose content differs from side A's
KEEP_DRAWS = 256  # draws of a frame between two checkpoints a side keeps (where pass 2 starts; 0: none)
Target = tuple[int, int]  # (physical address, bytes) of a render target
SCREENS = ("top", "bottom")
_FRAMEBUFFER_IDS = next(part for part in PARTS if part.name == "framebuffer").register_ids()
_TARGETS: dict[bytes, tuple[Target, ...]] = {}  # framebuffer registers' content -> targets_of (64 kept)


def _crc(views: list[np.ndarray]) -> int:
    """CRC-32 of ``views`` one after the other."""
    crc = 0
    for v in views:
        crc = zlib.crc32(v.data, crc)
    return crc


def targets_of(regs: np.ndarray) -> tuple[Target, ...]:
    """The color and depth/stencil buffers the registers name, as memory ranges; () when they name none
    (remembered by the content of the registers the draw state's framebuffer part reads)."""
    key = regs[_FRAMEBUFFER_IDS].tobytes()
    found = _TARGETS.get(key)
    if found is None:
        found = _TARGETS[key] = _targets_of(regs)
        if len(_TARGETS) > 64:
            _TARGETS.pop(next(iter(_TARGETS)))
    return found


def _targets_of(regs: np.ndarray) -> tuple[Target, ...]:
    try:
        fb = fbm.FramebufferState.from_regs(regs)
        fb.check_size()
    except PicaError:
        return ()
    pixels = fb.width * fb.height
    return (fb.color_address, pixels * fb.color_bpp), (fb.depth_address, pixels * fb.depth_bpp)


class OutputWatch:
    """A pipeline wrapper that takes the output points of pass 1 (module docstring). ``points``: draw index -> the
    point's token: on side A (no ``reference``) the draw's place in its frame, whose render-target content it keeps
    in ``contents``; on side B (``reference``: A's watch) the same place when its content equals A's there, else
    ``DIFFERS``; ``screens``: per frame end, the content of both screens (the last frame's; b"" before it)."""

    def __init__(self, inner: PipelineSink, every: int = EVERY) -> None:
        self.inner = inner
        self.every = max(1, every)
        self.replay: weakref.ref[Replay] | None = None
        self.targets: dict[Target, int] = {}  # every render target used so far -> its first draw, in that order
        self.points: dict[int, int] = {}
        self.screens: list[bytes] = []
        self.frame_start = 0  # index of the first draw of the current frame
        self.draws = 0  # draws seen
        self.pointed = -1  # the last draw with a point
        self.recording = True
        self.quiet = False  # side B past its first differing point of the frame: no more points (pass 2 looks there)
        self.kept: list[tuple[int, Checkpoint]] = []  # (draw, replay checkpoint right after it) in this frame
        self.marks: list[Mark] = []  # light restart positions in this frame, ascending draws
        self._kept_at = -1  # the draw of the last checkpoint kept (the frame's start - 1)
        self.reference: OutputWatch | None = None  # side B: side A's watch, whose frame has run already
        self.contents: dict[int, bytes | int] = {}  # side A: place in the frame -> its render targets' bytes
        self._content_bytes = 0  # bytes ``contents`` holds (past ``COPY_BUDGET``: CRC-32 values instead)
        self.positions: list[tuple[int, int, np.ndarray]] = []  # (first draw, event, packets) per run of draws
        self.pause_at: int | None = None  # side A in lockstep: raise ``Paused`` at a point this far into the frame
        self.pull: Callable[[int], None] | None = None  # side B in lockstep: runs side A on to a place of the frame
        self.hand_over_at = -1  # side A: the event position at which to record a ``Handover`` for side B
        self.handover: Handover | None = None

    @property
    def stage_observer(self) -> StageObserver | None:
        return observed_sink(self.inner).stage_observer

    @stage_observer.setter
    def stage_observer(self, value: StageObserver | None) -> None:
        observed_sink(self.inner).stage_observer = value

    def attach(self, replay: Replay) -> None:
        self.replay = weakref.ref(replay)

    def _memory(self):
        replay = self.replay() if self.replay is not None else None
        if replay is None:
            raise PicaError("the output watch is not attached to a replay")
        return replay

    def _boundary(self, draw: int) -> int:
        """The last draw of ``draw``'s group of ``every`` draws of its frame."""
        return self.frame_start + ((draw - self.frame_start) // self.every + 1) * self.every - 1

    def _use(self, regs: np.ndarray, draw: int) -> None:
        for target in targets_of(regs):
            self.targets.setdefault(target, draw)

    def used_by(self, draw: int) -> list[Target]:
        """The render targets the draws up to ``draw`` used, in first-use order."""
        return [target for target, first in self.targets.items() if first <= draw]

    def _views(self, draw: int) -> list[np.ndarray]:
        """Live views of the render targets the draws up to ``draw`` used, as memory holds them now (after a sync)."""
        replay = self._memory()
        self.inner.event(PipelineEventKind.MEMORY_SYNC, replay.state)
        return [replay.memory.bytes(address, size, "render target") for address, size in self.used_by(draw)]

    def point(self, draw: int) -> int:
        """The token of a point after ``draw`` (class docstring). Contents compare as the render targets' bytes one
        after the other; a frame's copies on side A stop at ``COPY_BUDGET`` bytes, later points keep a CRC-32 (two
        different contents agree with odds of 2^-32; pass 2 compares bytes)."""
        place, views = draw - self.frame_start, self._views(draw)
        if self.reference is None:
            size = sum(v.size for v in views)
            if self._content_bytes + size <= COPY_BUDGET:
                self.contents[place] = b"".join(v.data for v in views)  # one copy (bytes compare with memcmp)
                self._content_bytes += size
            else:
                self.contents[place] = _crc(views)
            return place
        if self.pull is not None:  # lockstep: side A runs on to this place first
            self.pull(place)
        kept = self.reference.contents.get(place)
        if kept is None:  # A has no point here: the pair is not compared
            return DIFFERS
        same = _crc(views) == kept if isinstance(kept, int) else b"".join(v.data for v in views) == kept
        self.quiet = (
            not same
        )  # (it was False) the frame's first difference: pass 2 starts before it, later points go unread
        return place if same else DIFFERS

    def _place(self, first: int, packets: np.ndarray) -> None:
        """Pass 1 ran draws ``first`` .. ``first + len(packets) - 1`` in one go, at these packets of the replay's
        current event (``DrawRecord.packet``: counted from the list's start, -1 outside a list): where pass 2
        finds them (``position_of``; the diff's replays keep no draw records)."""
        self.positions.append((first, self._memory().position, packets))

    def position_of(self, draw: int) -> tuple[int, int]:
        """(event, packet) of a draw of this frame pass 1 ran (``DrawRecord.event`` / ``.packet``)."""
        i = bisect.bisect_right(self.positions, draw, key=lambda p: p[0]) - 1
        if i < 0 or draw - self.positions[i][0] >= len(self.positions[i][2]):
            raise PicaError(f"draw {draw} is not one the output watch saw run in this frame")
        first, event, packets = self.positions[i]
        return event, int(packets[draw - first])

    def _after(self, last: int, force: bool = False, packet: int = -1, resume: tuple[int, int] | None = None) -> None:
        """After draw ``last`` (its ``DrawCall.packet`` and ``resume``) in pass 1: a point at a group's last draw
        (``force``: at the last draw of an event) and, when the draw ends its packet inside a command list (where
        the replay itself would checkpoint), a restart position for pass 2 (``_keep``)."""
        if not self.recording:
            return
        self.draws = last + 1
        if self.pointing and (force or last == self._boundary(last)) and last > self.pointed:
            token = self.point(last)
            self.points[last], self.pointed = token, last
            clean = packet >= 0 and resume is not None and resume[1] > 0  # a position the replay can stand at
            if KEEP_DRAWS and not self.quiet and clean:
                self._keep(last, token, packet, resume)  # type: ignore[arg-type]
            if clean and self.pause_at is not None and last - self.frame_start >= self.pause_at:
                raise Paused(self._memory().packet + packet + 1, resume)  # type: ignore[arg-type]

    def _keep(self, last: int, token: int, packet: int, resume: tuple[int, int]) -> None:
        """A restart position after draw ``last``, inside the command list being run: a ``Mark`` when a checkpoint
        was kept earlier in the same list and the render targets' bytes are known here (side A's copy, which side
        B's agreeing point equals); otherwise a full checkpoint at the list's first point and every ``KEEP_DRAWS``
        draws."""
        replay = self._memory()
        packets = replay.packet + packet + 1
        base = self.kept[-1][1] if self.kept and self.kept[-1][1].position == replay.position else None
        source = self.contents if self.reference is None else self.reference.contents
        content = source.get(token)
        if base is not None and isinstance(content, bytes):
            self.marks.append(Mark(last, replay.checkpoint_within(base, packets=packets, resume=resume), content))
        elif base is None or last - self._kept_at >= KEEP_DRAWS:
            self.kept.append((last, replay.checkpoint(packets=packets, resume=resume)))
            self._kept_at = last

    @property
    def pointing(self) -> bool:
        """Pass 1 takes points (not in pass 2, nor on side B past its first difference of the frame)."""
        return self.recording and not self.quiet

    def restart(self, before: int) -> Checkpoint | Mark | None:
        """The last restart position of this frame before draw ``before`` (None: the frame's start)."""
        positions: list[tuple[int, Checkpoint | Mark]] = [*self.kept, *((m.draw, m) for m in self.marks)]
        earlier = [(draw, position) for draw, position in positions if draw < before]
        return max(earlier, key=lambda p: p[0])[1] if earlier else None

    def new_frame(self) -> None:
        """Pass 1 starts a frame: the checkpoints, marks and contents of the last one are dropped."""
        self.kept, self._kept_at, self.marks, self.quiet = [], self.draws - 1, [], False
        self.contents, self._content_bytes, self.positions = {}, 0, []

    # -- PipelineSink ------------------------------------------------------------------------------------
    def draw(self, call: DrawCall) -> None:
        self._use(call.state.regs, call.index)
        self.inner.draw(call)
        if self.recording:
            packet = call.packet + self._memory().packet if call.packet >= 0 else -1
            self._place(call.index, np.array([packet]))
        self._after(call.index, packet=call.packet, resume=call.resume)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)
        if kind is not PipelineEventKind.DRAWS_COMPLETE or not self.recording:
            return
        replay = self._memory()  # the event that just ended is ``position - 1``
        if self.draws and self.pointed < self.draws - 1:
            self._after(self.draws - 1, force=True)
        if isinstance(replay.events[replay.position - 1], pica.FrameEnd):
            if self.screens:  # the frame before has been compared (``capture_diff``): its screens are not kept
                self.screens[-1] = b""
            self.screens.append(self._screens(replay))
            self.frame_start = self.draws
        if replay.position == self.hand_over_at and self.handover is None:
            self.handover = Handover(
                replay.position,
                replay.checkpoint(),
                self.draws,
                self.frame_start,
                self.pointed,
                dict(self.targets),
                list(self.screens),
                list(self.kept),
                self._kept_at,
                list(self.marks),
                list(self.positions),
            )

    def follow(self, lead: OutputWatch, draws: list[int]) -> None:
        """Side B takes side A's record of a frame it did not run (A's frame ``draws``, whose inputs and everything
        before are B's too): the same points, screens and render targets."""
        points = lead.points
        self.points.update((d, points[d]) for d in draws if d in points)
        self.screens, self.targets = list(lead.screens), dict(lead.targets)
        self.frame_start, self.draws, self.pointed = lead.frame_start, lead.draws, lead.pointed

    def take_over(self, handover: Handover, lead: OutputWatch) -> None:
        """Side B stands where side A stood at ``handover`` (its replay restored there): A's record before it,
        its points of the frame so far and the restart positions it kept in it."""
        h = handover
        self.points.update((d, t) for d, t in lead.points.items() if h.frame_start <= d < h.draws)
        self.screens, self.targets = list(h.screens), dict(h.targets)
        self.frame_start, self.draws, self.pointed = h.frame_start, h.draws, h.pointed
        self.kept, self._kept_at, self.marks, self.quiet = list(h.kept), h.kept_at, list(h.marks), False
        self.positions = list(h.positions)

    def _screens(self, replay: Replay) -> bytes:
        """What both screens show: each picture's shape and RGB in memory order (the pictures ``Replay.screen``
        shows, unturned; alpha, which no screen shows, zeroed), or the reason it has none, one after the other
        (the bytes themselves: both sides' are compared once, right after the frame, and a copy costs a tenth of
        hashing them)."""
        replay.sync_memory()
        parts: list[bytes | memoryview] = []
        for screen in SCREENS:
            try:
                rows = lcd.screen_rows(replay.memory, replay.gx.gpu, screen)
                rows[:, :, 3] = 0
                parts += [repr(rows.shape).encode(), rows.data]
            except PicaError as err:  # a screen the capture never set up: its reason is its content
                parts.append(str(err).encode())
        return b"\0".join(parts)

    # -- CompiledSink (offered only when the inner pipeline is one) --------------------------------------
    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None:
        plans = self.inner.compiled_plans(call) if is_compiled_sink(self.inner) else None
        if plans is None:
            return None
        self._use(call.state.regs, call.index)  # the loop may come back to these plans later without asking
        return plans.with_limit(self._boundary(call.index)) if self.pointing else plans

    def compiled_draws(self, draws: CompiledDraws) -> None:
        cast(CompiledSink, self.inner).compiled_draws(draws)  # it offered the plans: a CompiledSink
        index, _kind, _offset, packet, resume, _stats, _bounds = draws.each(len(draws) - 1)[0]
        if self.recording:  # the loop's draws are consecutive, inside a list
            self._place(index + 1 - len(draws), draws.packets() + self._memory().packet)
        self._after(index, packet=packet, resume=resume)

    def compiled_allowed(self) -> bool:
        return is_compiled_sink(self.inner) and self.inner.compiled_allowed()


class Paused(Exception):
    """Raised out of a replay's run by a watch with ``pause_at`` set, right after a point that far into the frame
    or further, at a position the replay can stand at inside a command list: ``packets`` of its event run, the
    next at ``resume`` (``Replay.stopped_within`` puts the replay there; a ``run_to`` goes on from it)."""

    def __init__(self, packets: int, resume: tuple[int, int]) -> None:
        super().__init__(f"paused after {packets} packets of the list")
        self.packets, self.resume = packets, resume


@dataclass(frozen=True)
class Handover:
    """Side A's replay and watch at event ``event`` (the first whose inputs differ between the captures, see
    ``picaemu.debug.capture_diff.shared_events``), where side B starts: the checkpoint there and A's record of
    everything before (draws run, the frame's first draw, the last point, render targets used, screens, and the
    restart positions and draw positions of the frame so far)."""

    event: int
    checkpoint: Checkpoint
    draws: int
    frame_start: int
    pointed: int
    targets: dict[Target, int]
    screens: list[bytes]
    kept: list[tuple[int, Checkpoint]]
    kept_at: int
    marks: list[Mark]
    positions: list[tuple[int, int, np.ndarray]]


@dataclass(frozen=True)
class Mark:
    """A light restart position of pass 2 (``OutputWatch._keep``): ``checkpoint`` is the replay right after draw
    ``draw`` inside a command list except for memory, which is that of a full checkpoint kept earlier in the same
    list (``Replay.checkpoint_within``); since then only draws wrote memory, into the render targets, whose bytes
    at the point are ``content`` (``OutputWatch.used_by(draw)`` one after the other)."""

    draw: int
    checkpoint: Checkpoint
    content: bytes
