"""Where two captures part (issue 27 item 3): ``diff_captures(a, b) -> CaptureDiff``, behind ``picaemu diff`` and
the GUI's side-by-side comparison. Qt-free.

The two captures (or one capture under two backends) are aligned frame by frame and draw by draw: draw k of
frame f of A is compared with draw k of frame f of B. Both are replayed frame by frame, each frame once (pass 1),
in lockstep: B runs the frame and runs A on to each place it compares; a frame where they part is looked at again
draw by draw (pass 2). Memory stays near a render's: what a side keeps of a frame (its start, restart positions,
copies) is dropped at the next frame. Neither replay keeps draw records: the watch notes where each draw sits.

0. Shared prefix (``picaemu.debug.shared_prefix``): when both sides render alike (same backend, same points) and
   the captures start from the same state, the leading events whose inputs are equal reach equal states on both
   sides. Side B does not replay them: a frame made only of them it takes from A (``Side.follow``: A's draws,
   points and screens), and at the first event that differs (when the events before it run a command list) it
   starts from A's replay state there (``OutputWatch.handover``, ``Side.adopt``) with A's record of the frame so
   far. Equal captures cost one replay; ``share=False`` replays everything on both sides (the same result).
1. Under ``OutputWatch`` (``picaemu.debug.output_watch``, a wrapper of the replay's pipeline), at every
   ``every``-th draw of a frame and after the last draw of every event, a point: the bytes of every render
   target the capture's draws have used so far (color and depth/stencil in memory, one after the other). Side A
   keeps a copy of them per point (up to ``COPY_BUDGET`` bytes a frame, then their CRC-32); side B compares its
   own with A's at the same place in the frame (memcmp: cheaper than hashing both) and takes no more points
   after the first that differs. Lockstep (``_lockstep``): before comparing, B runs A on to that place
   (``Side.advance``: A pauses right after its point there, ``output_watch.Paused``); once B's frame is over, A
   runs the rest of its frame without points, so neither takes points past B's first difference. (A frame B
   takes from A, or in which it adopts A's state, runs A's whole frame first.) At every frame end both screens.
   The compiled draw loop stops only at those points (``CompiledPlans.with_limit``), so the replay keeps its
   speed. The points are compared at the aligned draws where both sides took one. At each point inside a
   command list a side keeps a restart position for pass 2: a full checkpoint at the list's first, then a
   ``Mark`` (GPU state and position over that checkpoint's memory plus the point's render-target copy: inside
   a list only draws write memory, into their render targets).
2. From the last aligned point where the sides agreed to the first where they differ, both replays go back to the last
   restart position before it (the frame's start when none is: usually the agreeing point itself), step draw by draw
   (``Side.seek``: ``Replay.run_to_draw_at`` where the watch saw the draw) and compare their render targets byte for
   byte; the first draw after which they differ is ``first_draw``. With ``every=1`` every draw is a point: a difference
   that a later draw of the same ``every`` draws hides again is then found too (with larger ``every`` it is not: both
   captures agree at the next point).

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

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from picaemu.debug import state_diff
from picaemu.debug.output_watch import EVERY, Mark, OutputWatch, Paused
from picaemu.debug.shared_prefix import shared_events
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.replay import Checkpoint, Replay, default_pipeline, load_capture

SCHEMA = 1


@dataclass
class Side:
    """One capture being compared: its label, backend, replay (without checkpoints of its own) and output watch;
    ``start``: the replay at the start of the frame being compared (the one checkpoint kept); ``resumed``: side B
    took over side A's replay inside the frame it runs next (``adopt``)."""

    label: str
    backend: str
    replay: Replay
    watch: OutputWatch
    start: Checkpoint | None = None
    resumed: bool = False
    ahead: int | None = None  # lockstep: the event position the frame run in steps (``advance``) ends at
    first: int = 0  # lockstep: the frame's first draw

    @property
    def frame_count(self) -> int:
        """Frames of the capture: one per FrameEnd, and a last one for events after the last FrameEnd."""
        frames, events = self.replay.frames, len(self.replay.events)
        return len(frames) + (events > (frames[-1] + 1 if frames else 0))

    def frame_end(self, frame: int) -> int:
        """The event position right after frame ``frame``."""
        frames = self.replay.frames
        return frames[frame] + 1 if frame < len(frames) else len(self.replay.events)

    def run_frame(self, frame: int) -> list[int]:
        """Pass 1 over frame ``frame`` (the replay stands at its start, or inside it after ``adopt``): returns the
        indices of its draws."""
        self.begin_frame(frame)
        return self.finish_frame()

    def begin_frame(self, frame: int) -> None:
        """Pass 1 starts frame ``frame`` (the replay stands at its start, or inside it after ``adopt``); it runs
        in ``advance`` steps and ``finish_frame``."""
        replay, watch = self.replay, self.watch
        if self.resumed:
            self.resumed, self.first = False, watch.frame_start
        else:  # at the capture's start, the checkpoint the replay took there
            self.start = replay.checkpoint_list()[0] if replay.position == 0 else replay.checkpoint()
            watch.new_frame()
            self.first = watch.draws
        self.ahead = self.frame_end(frame)

    def advance(self, place: int) -> None:
        """Side A in lockstep (side B's watch calls it before comparing a point): run the frame on until a point
        ``place`` draws into the frame or further (pausing there, ``OutputWatch.pause_at``), or to its end."""
        watch = self.watch
        if self.ahead is None or watch.pointed >= watch.frame_start + place:
            return
        watch.pause_at = place
        try:
            self.replay.run_to(self.ahead)
            self.ahead = None
        except Paused as stop:
            self.replay.stopped_within(stop.packets, stop.resume)
        finally:
            watch.pause_at = None

    def finish_frame(self, points: bool = True) -> list[int]:
        """The rest of the frame (``points=False``: without taking any more); returns the indices of its draws."""
        self.watch.quiet = self.watch.quiet or not points
        if self.ahead is not None:
            self.replay.run_to(self.ahead)
            self.ahead = None
        return list(range(self.first, self.watch.draws))

    def follow(self, lead: Side, draws: list[int]) -> list[int]:
        """Side B's frame whose events and every event before are side A's (A's frame ``draws``, just run): A's
        draws, points and screens, without replaying it."""
        self.watch.follow(lead.watch, draws)
        return list(draws)

    def adopt(self, lead: Side, frame: int) -> None:
        """Side B starts where side A stood at the first event whose inputs differ (``OutputWatch.handover``,
        inside or at the start of frame ``frame``): A's replay state there and its record of everything before."""
        handover = lead.watch.handover
        if handover is None:
            raise RuntimeError("side A never reached the first differing event it was to hand over")
        replay = self.replay
        replay.restore(handover.checkpoint)
        self.watch.take_over(handover, lead.watch)
        self.resumed = handover.event > (self.frame_end(frame - 1) if frame else 0)
        if self.resumed:  # inside the frame: A's start of it is B's
            self.start = lead.start

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

    def seek(self, draw: int) -> None:
        """Pass 2: right after draw ``draw`` of the frame being compared (``rewind`` went back before it)."""
        self.replay.run_to_draw_at(draw, *self.watch.position_of(draw))

    def info(self) -> dict[str, Any]:
        return {"capture": self.label, "backend": self.backend, "frames": self.frame_count, "draws": self.watch.draws}


def open_side(source: str | os.PathLike[str] | pica.Capture, backend: str = "software", every: int = EVERY) -> Side:
    """A capture (path or in-memory) ready to be replayed under an ``OutputWatch``."""
    capture = source if isinstance(source, pica.Capture) else load_capture(source)
    watch = OutputWatch(default_pipeline(backend), every)
    # no draw records (their per-draw Python work was a sixth of a render): the watch notes where each draw sits
    # (``OutputWatch.position_of``), which is all pass 2 seeks by; nor the processor's draw log (register snapshots)
    replay = Replay(capture, pipeline=watch, checkpoints=False, record_draws=False)
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
    share: bool = True,
) -> CaptureDiff:
    """Compare two captures (module docstring); ``share=False``: side B replays the events it shares with A too
    (the same result, at the cost of replaying them)."""
    return compare_sides(open_side(a, backend_a, every), open_side(b, backend_b, every), share=share)


def compare_sides(sa: Side, sb: Side, *, share: bool = True) -> CaptureDiff:
    """Run both sides frame by frame (pass 1) until a frame parts them, then find where (pass 2) and describe it."""
    sb.watch.reference = sa.watch  # B compares its points with A's as it runs
    shared = _shared(sa, sb) if share else 0  # B follows A over these events, then starts from A's state
    sa.watch.hand_over_at = shared if shared else -1
    following = shared > 0
    frames: list[dict[str, Any]] = []  # the table of the result: one row per frame compared
    for f in range(max(sa.frame_count, sb.frame_count)):
        fa, fb, following = _run_frames(sa, sb, f, shared, following)
        frames.append(_frame_row(sa, sb, f, fa, fb))
        if fa is None or fb is None:  # one side has frames the other lacks
            return _missing(sa, sb, fa or [], fb or [], frames)
        found = _compare_frame(sa, sb, fa, fb, frames)
        if found is not None:
            return found
    return CaptureDiff(sa.info(), sb.info(), frames=frames)


def _run_frames(
    sa: Side, sb: Side, f: int, shared: int, following: bool
) -> tuple[list[int] | None, list[int] | None, bool]:
    """Pass 1 over frame ``f``: both frames' draws (None: the side has no such frame) and whether B still follows
    A (the first ``shared`` events are both's). A frame both replay from its start runs in lockstep; a frame made
    only of shared events B takes from A's run; in the frame of the first event that differs B adopts A's state."""
    if not following and f < sa.frame_count and f < sb.frame_count:
        return (*_lockstep(sa, sb, f), False)
    fa = sa.run_frame(f) if f < sa.frame_count else None
    if following and fa is not None and sb.frame_end(f) <= shared:
        return fa, sb.follow(sa, fa), True
    if following and f < sb.frame_count:
        sb.adopt(sa, f)
        following = False
    return fa, (sb.run_frame(f) if f < sb.frame_count else None), following


def _lockstep(sa: Side, sb: Side, frame: int) -> tuple[list[int], list[int]]:
    """Pass 1 over a frame both sides replay from its start: B runs it, and before comparing each point runs A on
    to the same place (``Side.advance``); A's rest of the frame, past B's last point, then runs without points (B
    takes none after its first difference). Returns both frames' draws."""
    sa.begin_frame(frame)
    sb.watch.pull = sa.advance
    try:
        fb = sb.run_frame(frame)
    finally:
        sb.watch.pull = None
    return sa.finish_frame(points=False), fb


def _frame_row(sa: Side, sb: Side, f: int, fa: list[int] | None, fb: list[int] | None) -> dict[str, Any]:
    """The result's row of frame ``f`` (draws ``fa``, ``fb``; None: the side has no such frame)."""
    return {
        "frame": f,
        "draws_a": None if fa is None else len(fa),
        "draws_b": None if fb is None else len(fb),
        "screens_equal": _screen_equal(sa, sb, f),
    }


def _shared(sa: Side, sb: Side) -> int:
    """Leading events side B can take from side A (``shared_events``): none unless both sides render alike
    (same backend, same points, the same unknown-state watch) and the shared events run a command list (without
    draws to skip, taking over A's state costs B more than running them)."""
    ra, rb = sa.replay, sb.replay
    if sa.backend != sb.backend or sa.watch.every != sb.watch.every:
        return 0
    if (ra.unknown_state is None) != (rb.unknown_state is None):
        return 0
    shared = shared_events(ra.capture, rb.capture)
    lists = (pica.CommandList, pica.RegWrite)  # a register write may kick a list (CiTrace)
    return shared if any(isinstance(e, lists) for e in ra.events[:shared]) else 0


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
        sa.seek(da)
        sb.seek(db)
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
