"""Where two captures part (issue 27 item 3): ``diff_captures(a, b) -> CaptureDiff``, behind ``picaemu diff`` and
the GUI's side-by-side comparison. Qt-free.

The two captures (or one capture under two backends) are aligned frame by frame and draw by draw: draw k of
frame f of A is compared with draw k of frame f of B. Both are replayed frame by frame, each frame once (pass 1),
A's frame first, then B's; a frame where they part is looked at again draw by draw (pass 2). A replay keeps the
checkpoint at the start of the frame being compared and, inside it, one at the first point ``KEEP_DRAWS`` draws
or more after the last (where pass 1 stops anyway); they are dropped at the next frame, so memory stays near a render's:

1. Under ``OutputWatch`` (a wrapper of the replay's pipeline), at every ``every``-th draw of a frame and after
   the last draw of every event, a point: the bytes of every render target the capture's draws have used so far
   (color and depth/stencil in memory, one after the other). Side A keeps a copy of them per point (up to
   ``COPY_BUDGET`` bytes a frame, then their CRC-32); side B, running the same frame after it, compares its own
   with A's at the same place in the frame (memcmp: cheaper than hashing both). At every frame end a digest of
   both screens. The compiled draw loop stops only at those points (``CompiledPlans.with_limit``), so the
   replay keeps its speed. The points are compared at the aligned draws where both sides took one.
2. From the last aligned point where the sides agreed to the first where they differ, both replays go back to
   the last checkpoint they kept before it (the frame's start when none is), step draw by draw
   (``Replay.run_to_draw``) and compare their render targets byte for byte; the first draw after which they
   differ is ``first_draw``. With ``every=1`` every draw is a point: a difference that a later draw of the same
   ``every`` draws hides again is then found too (with larger ``every`` it is not: both captures agree at the
   next point).

At ``first_draw`` the result holds the state difference (``picaemu.debug.state_diff``, A the "a" side: registers
by field, uniforms by name, textures by content hash, shader programs by disassembly; taken right after the draw,
where the registers and programs are the draw's and the textures' bytes are the ones it read unless it renders
into its own texture) and the pixels of the draw's render target that differ right after it (count and inclusive
bounding box in PNG coordinates of the color buffer, x = column, y = row, row 0 at the top; color and
depth/stencil apart). A frame whose draws agree but whose screens differ (a display transfer, a fill) is
``first_frame`` with ``first_draw`` None; captures whose frames hold different numbers of draws part at the first
draw one side lacks (``missing``: the side without it). A memory fill or transfer into a render target between two
draws shows at the next draw.
"""

from __future__ import annotations

import hashlib
import os
import weakref
import zlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from picaemu.debug import state_diff
from picaemu.draw import CompiledSink, DrawCall, PipelineEventKind, PipelineSink, is_compiled_sink, observed_sink
from picaemu.draw_state import PARTS
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.fragment import framebuffer as fbm
from picaemu.replay import Checkpoint, Replay, default_pipeline, load_capture
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.fused.loop import CompiledDraws, CompiledPlans
    from picaemu.observer import StageObserver

EVERY = 32  # draws of a frame between two points (output comparisons)
COPY_BUDGET = 64 << 20  # bytes of render-target copies side A keeps per frame (then CRC-32 values)
DIFFERS = -1  # side B's token of a point whose content differs from side A's
KEEP_DRAWS = 256  # draws of a frame between two checkpoints a side keeps (where pass 2 starts; 0: none)
SCHEMA = 1
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
    ``DIFFERS``; ``screens``: per frame end, the digest of both screens."""

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
        kept = self.reference.contents.get(place)
        if kept is None:  # A has no point here: the pair is not compared
            return DIFFERS
        same = _crc(views) == kept if isinstance(kept, int) else b"".join(v.data for v in views) == kept
        self.quiet = (
            not same
        )  # (it was False) the frame's first difference: pass 2 starts before it, later points go unread
        return place if same else DIFFERS

    def _after(self, last: int, force: bool = False, packet: int = -1, resume: tuple[int, int] | None = None) -> None:
        """After draw ``last`` (its ``DrawCall.packet`` and ``resume``): a point at a group's last draw (``force``:
        at the last draw of an event) and, when the draw ends its packet inside a command list (where the replay
        itself would checkpoint), a restart position for pass 2 (``_keep``)."""
        self.draws = last + 1
        if self.pointing and (force or last == self._boundary(last)) and last > self.pointed:
            token = self.point(last)
            self.points[last], self.pointed = token, last
            if KEEP_DRAWS and not self.quiet and packet >= 0 and resume is not None and resume[1] > 0:
                self._keep(last, token, packet, resume)

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
        best: tuple[int, Checkpoint | Mark] | None = None
        for draw, position in [*self.kept, *((m.draw, m) for m in self.marks)]:
            if draw < before and (best is None or draw > best[0]):
                best = draw, position
        return None if best is None else best[1]

    def new_frame(self) -> None:
        """Pass 1 starts a frame: the checkpoints, marks and contents of the last one are dropped."""
        self.kept, self._kept_at, self.marks, self.quiet = [], self.draws - 1, [], False
        self.contents, self._content_bytes = {}, 0

    # -- PipelineSink ------------------------------------------------------------------------------------
    def draw(self, call: DrawCall) -> None:
        self._use(call.state.regs, call.index)
        self.inner.draw(call)
        self._after(call.index, packet=call.packet, resume=call.resume)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)
        if kind is not PipelineEventKind.DRAWS_COMPLETE or not self.recording:
            return
        replay = self._memory()  # the event that just ended is ``position - 1``
        if self.draws and self.pointed < self.draws - 1:
            self._after(self.draws - 1, force=True)
        if isinstance(replay.events[replay.position - 1], pica.FrameEnd):
            self.screens.append(self._screens(replay))
            self.frame_start = self.draws

    def _screens(self, replay: Replay) -> bytes:
        h = hashlib.blake2b(digest_size=16)  # a few per capture: a real hash
        for screen in SCREENS:
            try:
                h.update(np.ascontiguousarray(replay.screen(screen)).data)
            except PicaError as err:  # a screen the capture never set up: its reason is its content
                h.update(str(err).encode())
        return h.digest()

    # -- CompiledSink (offered only when the inner pipeline is one) --------------------------------------
    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None:
        plans = self.inner.compiled_plans(call) if is_compiled_sink(self.inner) else None
        if plans is None:
            return None
        self._use(call.state.regs, call.index)  # the loop may come back to these plans later without asking
        return plans.with_limit(self._boundary(call.index)) if self.pointing else plans

    def compiled_draws(self, draws: CompiledDraws) -> None:
        cast(CompiledSink, self.inner).compiled_draws(draws)  # it offered the plans: a CompiledSink
        index, _kind, _offset, packet, resume, _stats, _bounds = replace(draws, rows=draws.rows[-1:]).each()[0]
        self._after(index, packet=packet, resume=resume)

    def compiled_allowed(self) -> bool:
        return is_compiled_sink(self.inner) and self.inner.compiled_allowed()


@dataclass(frozen=True)
class Mark:
    """A light restart position of pass 2 (``OutputWatch._keep``): ``checkpoint`` is the replay right after draw
    ``draw`` inside a command list except for memory, which is that of a full checkpoint kept earlier in the same
    list (``Replay.checkpoint_within``); since then only draws wrote memory, into the render targets, whose bytes
    at the point are ``content`` (``OutputWatch.used_by(draw)`` one after the other)."""

    draw: int
    checkpoint: Checkpoint
    content: bytes


@dataclass
class Side:
    """One capture being compared: its label, backend, replay (without checkpoints of its own) and output watch;
    ``start``: the replay at the start of the frame being compared (the one checkpoint kept)."""

    label: str
    backend: str
    replay: Replay
    watch: OutputWatch
    start: Checkpoint | None = None

    @property
    def frame_count(self) -> int:
        """Frames of the capture: one per FrameEnd, and a last one for events after the last FrameEnd."""
        frames, events = self.replay.frames, len(self.replay.events)
        return len(frames) + (events > (frames[-1] + 1 if frames else 0))

    def run_frame(self, frame: int) -> list[int]:
        """Pass 1 over frame ``frame`` (the replay stands at its start): returns the indices of its draws."""
        replay = self.replay
        self.start = replay.checkpoint()
        self.watch.new_frame()
        first = len(replay.draws)
        replay.run_to(replay.frames[frame] + 1 if frame < len(replay.frames) else len(replay.events))
        return [d.index for d in replay.draws[first:]]

    def rewind(self, before: int) -> None:
        """Back to the last restart position of the frame being compared before draw ``before`` (a kept checkpoint
        or a ``Mark``; its start when none is), for pass 2: from there the replay reaches every later draw as pass
        1 did."""
        if self.start is None:
            raise PicaError("rewind before run_frame: there is no frame start to go back to")
        self.watch.recording = False
        position = self.watch.restart(before)
        if isinstance(position, Mark):
            self.replay.restore(position.checkpoint)
            content, at = np.frombuffer(position.content, np.uint8), 0
            for address, size in self.watch.used_by(position.draw):
                self.replay.memory.bytes(address, size, "render target")[:] = content[at : at + size]
                at += size
        else:
            self.replay.restore(self.start if position is None else position)
        self.replay.indexed = True  # pass 2 seeks only to draws already recorded: run_to_draw must not run on

    def info(self) -> dict[str, Any]:
        replay = self.replay
        return {"capture": self.label, "backend": self.backend, "frames": self.frame_count, "draws": len(replay.draws)}


def open_side(source: str | os.PathLike[str] | pica.Capture, backend: str = "software", every: int = EVERY) -> Side:
    """A capture (path or in-memory) ready to be replayed under an ``OutputWatch``."""
    capture = source if isinstance(source, pica.Capture) else load_capture(source)
    watch = OutputWatch(default_pipeline(backend), every)
    replay = Replay(capture, pipeline=watch, checkpoints=False)
    # the diff seeks by the replay's DrawRecords; the processor's per-draw register snapshots (its draw log, which
    # every restore trims) it never reads
    replay.processor.record_draws = False
    watch.attach(replay)
    label = capture.meta.get("name", "capture") if isinstance(source, pica.Capture) else os.fspath(source)
    return Side(label, backend, replay, watch)


@dataclass(frozen=True)
class CaptureDiff:
    """The comparison (module docstring); ``as_dict()`` is ``picaemu diff --json`` (docs/diff.md)."""

    a: dict[str, Any]
    b: dict[str, Any]
    first_draw: int | None = None  # in A
    first_draw_b: int | None = None
    frame: int | None = None
    draw_in_frame: int | None = None
    missing: str | None = None
    first_frame: int | None = None  # a frame whose screens differ while its draws agree
    state: dict[str, Any] | None = None
    pixels: dict[str, Any] | None = None
    frames: list[dict[str, Any]] = field(default_factory=list)
    pictures: tuple[np.ndarray, np.ndarray] | None = None  # A's and B's color buffers after the draw (H, W, 4)

    @property
    def equal(self) -> bool:
        return self.first_draw is None and self.first_draw_b is None and self.first_frame is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "equal": self.equal,
            "a": self.a,
            "b": self.b,
            "first_draw": self.first_draw,
            "first_draw_b": self.first_draw_b,
            "frame": self.frame,
            "draw_in_frame": self.draw_in_frame,
            "missing": self.missing,
            "first_frame": self.first_frame,
            "state": self.state,
            "pixels": self.pixels,
            "frames": self.frames,
        }

    def summary(self) -> str:
        if self.equal:
            return f"equal: {self.a['draws']} draws in {self.a['frames']} frame(s), every output the same"
        if self.first_draw is None and self.first_draw_b is None:
            return f"frame {self.first_frame}: the draws agree, the screens differ"
        if self.missing:
            d = self.first_draw if self.first_draw is not None else self.first_draw_b
            other = "a" if self.missing == "b" else "b"
            return f"frame {self.frame}: draw {d} of {other} has no counterpart in {self.missing}"
        where = f"draw {self.first_draw}" + (
            f" (draw {self.first_draw_b} of b)" if self.first_draw_b != self.first_draw else ""
        )
        return f"first differing draw: {where}, frame {self.frame}, draw {self.draw_in_frame} of the frame"


def diff_captures(
    a: str | os.PathLike[str] | pica.Capture,
    b: str | os.PathLike[str] | pica.Capture,
    *,
    backend_a: str = "software",
    backend_b: str = "software",
    every: int = EVERY,
) -> CaptureDiff:
    """Compare two captures (module docstring)."""
    return compare_sides(open_side(a, backend_a, every), open_side(b, backend_b, every))


def compare_sides(sa: Side, sb: Side) -> CaptureDiff:
    """Run both sides frame by frame (pass 1) until a frame parts them, then find where (pass 2) and describe it."""
    sb.watch.reference = sa.watch  # B compares its points with A's as it runs
    frames: list[dict[str, Any]] = []  # the table of the result: one row per frame compared
    for f in range(max(sa.frame_count, sb.frame_count)):
        fa = sa.run_frame(f) if f < sa.frame_count else None
        fb = sb.run_frame(f) if f < sb.frame_count else None
        frames.append(
            {
                "frame": f,
                "draws_a": None if fa is None else len(fa),
                "draws_b": None if fb is None else len(fb),
                "screens_equal": _screen_equal(sa, sb, f),
            }
        )
        if fa is None or fb is None:  # one side has frames the other lacks
            return _missing(sa, sb, fa or [], fb or [], frames)
        found = _compare_frame(sa, sb, fa, fb, frames)
        if found is not None:
            return found
    return CaptureDiff(sa.info(), sb.info(), frames=frames)


def _compare_frame(sa: Side, sb: Side, fa: list[int], fb: list[int], frames: list[dict]) -> CaptureDiff | None:
    """None when the last frame of ``frames`` agrees on both sides (draws ``fa``, ``fb``), else the result."""
    f = frames[-1]["frame"]
    pairs = [(f, k, da, db) for k, (da, db) in enumerate(zip(fa, fb, strict=False))]
    lo = 0  # pairs[lo:] are not known to agree
    for i, (_, _, da, db) in enumerate(pairs):
        pa, pb = sa.watch.points.get(da), sb.watch.points.get(db)
        if pa is None or pb is None:
            continue
        if pa != pb:
            return _scan_and_describe(sa, sb, pairs, lo, i + 1, frames)
        lo = i + 1
    if len(fa) == len(fb) and frames[-1]["screens_equal"] is not False:
        return None
    found = _scan_and_describe(sa, sb, pairs, lo, len(pairs), frames, required=False) if lo < len(pairs) else None
    if found is not None:
        return found
    if len(fa) != len(fb):
        return _missing(sa, sb, fa, fb, frames)
    return CaptureDiff(sa.info(), sb.info(), first_frame=f, frames=frames)


def _scan_and_describe(
    sa: Side, sb: Side, pairs: list, lo: int, hi: int, frames: list[dict], required: bool = True
) -> CaptureDiff | None:
    """Pass 2 over ``pairs[lo:hi]`` from the last kept checkpoint before them: the result at the first draw whose
    render targets differ; None when none does (``required``: pass 1 said one does)."""
    sa.rewind(pairs[lo][2])
    sb.rewind(pairs[lo][3])
    found = _scan(sa, sb, pairs, lo, hi)
    if found is None:
        if required:  # pass 2 compares what pass 1 hashed: they cannot disagree
            raise RuntimeError("the outputs differ at a point but no draw's render targets do")
        return None
    frame, k, da, db = pairs[found]
    state = state_diff.state_diff(_view(sa), _view(sb))
    pixels, pictures = _pixels(sa.replay, sb.replay)
    return CaptureDiff(
        sa.info(),
        sb.info(),
        first_draw=da,
        first_draw_b=db,
        frame=frame,
        draw_in_frame=k,
        state=state,
        pixels=pixels,
        frames=frames,
        pictures=pictures,
    )


def _screen_equal(sa: Side, sb: Side, frame: int) -> bool | None:
    a, b = sa.watch.screens, sb.watch.screens
    return a[frame] == b[frame] if frame < len(a) and frame < len(b) else None


def _missing(sa: Side, sb: Side, da: list[int], db: list[int], frames: list[dict]) -> CaptureDiff:
    """The result when the last frame of ``frames`` holds more draws on one side (``da``, ``db``)."""
    f, k = frames[-1]["frame"], min(len(da), len(db))
    if len(da) > k:
        return CaptureDiff(sa.info(), sb.info(), first_draw=da[k], frame=f, draw_in_frame=k, missing="b", frames=frames)
    return CaptureDiff(sa.info(), sb.info(), first_draw_b=db[k], frame=f, draw_in_frame=k, missing="a", frames=frames)


def _scan(sa: Side, sb: Side, pairs: list, lo: int, hi: int) -> int | None:
    """Index into ``pairs`` of the first pair in [lo, hi) after which the render targets differ, None if none."""
    ra, rb = sa.replay, sb.replay
    for i in range(lo, hi):
        da, db = pairs[i][2:]
        ra.run_to_draw(da)
        rb.run_to_draw(db)
        ta, tb = sa.watch.used_by(da), sb.watch.used_by(db)
        if len(ta) != len(tb):
            return i
        for (addr_a, size_a), (addr_b, size_b) in zip(ta, tb, strict=True):
            if size_a != size_b or bytes(ra.memory.bytes(addr_a, size_a, "render target")) != bytes(
                rb.memory.bytes(addr_b, size_b, "render target")
            ):  # bytes: one copy each, then memcmp (array_equal builds a boolean array)
                return i
    return None


def _view(side: Side) -> state_diff.DrawView:
    """The state difference's view of the draw the replay has just run (``_scan`` leaves both there): registers and
    shader memories are the draw's, memory differs from what it read only in its own render targets."""
    replay = side.replay
    names = state_diff.uniform_names(replay.capture.meta, replay.state)
    return state_diff.draw_view(replay.state, replay.memory, names)


def _region(mask: np.ndarray) -> dict[str, Any]:
    """{"count", "bbox": [x0, y0, x1, y1] inclusive, None when empty} of a (H, W) bool mask, row 0 = top."""
    ys, xs = np.nonzero(mask)
    box = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else None
    return {"count": len(xs), "bbox": box}


def _pixels(ra: Replay, rb: Replay) -> tuple[dict[str, Any] | None, tuple[np.ndarray, np.ndarray] | None]:
    """The pixels of the current draw's render target that differ between the two replays (module docstring)."""
    try:
        fa, fb = ra.framebuffer_state(), rb.framebuffer_state()
    except PicaError as err:
        return {"error": str(err)}, None
    target = {
        "color_address": f"0x{fa.color_address:08X}",
        "color_format": fa.color_format.name,
        "depth_address": f"0x{fa.depth_address:08X}",
        "depth_format": fa.depth_format.name,
        "size": [fa.width, fa.height],
    }
    ca, cb = ra.color_buffer(), rb.color_buffer()
    if ca.shape != cb.shape:
        return {
            "target": target,
            "error": f"the render targets differ in size: {fa.width}x{fa.height} vs {fb.width}x{fb.height}",
        }, (ca, cb)
    # every channel, alpha too (a render target has it; screens' diffs look at RGB): RGBA as one uint32 a pixel
    bad = ca.view(np.uint32)[..., 0] != cb.view(np.uint32)[..., 0]
    (za, sa), (zb, sb) = ra.depth_buffer(), rb.depth_buffer()
    return {"target": target, "color": _region(bad), "depth": _region((za != zb) | (sa != sb))}, (ca, cb)
