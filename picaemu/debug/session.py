"""What the debugger adds to a ``picaemu.replay.Replay``: a packet-exact index and draw-boundary checkpoints.

``Session(replay)`` wraps a fresh ``Replay``. ``index()`` replays the whole capture once with an observer
attached and builds the ``Timeline`` (every packet, write and draw; see ``picaemu.debug.timeline``), keeping:

- a read-only ``GpuState`` copy at every draw trigger (registers, shader memories, LUTs; arrays equal to the
  previous draw's are shared, so a draw costs its 3 KiB register file plus what changed), so the register
  inspector, texture bindings and shader view of any draw need no replay at all;
- a ``Replay.checkpoint()`` after every ``memory_every``-th draw (K, measured in ``bench/bench_gui.py``), at every
  frame start, and after ``EVENT_CHECKPOINT_GAP`` events without one. The session keeps these itself, so the
  replays it opens take none of their own (``Replay(..., checkpoints=False)``).

``goto(cursor)`` restores (``Replay.restore``) the latest checkpoint at or before ``cursor`` (unless the current
position is on the way and clean) and runs forward with ``Replay.run_to(event, packets=k)``. A fault while
indexing is kept in ``fault`` (the timeline covers everything before it); a fault while moving is raised as the
``PicaError`` it is, and the session restores from a checkpoint on the next move.
"""

from __future__ import annotations

import bisect
import inspect
import os
from collections.abc import Callable

import numpy as np

from picaemu import framebuffer as fbm
from picaemu.debug.timeline import Cursor, DrawInfo, EventInfo, Timeline, event_text
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.observer import Observer, PacketEvent, WriteEvent
from picaemu.replay import Checkpoint, Replay, load_capture
from picaemu.state import GpuState, ShaderUnitMemory

MEMORY_EVERY = 8  # K: bench/results/gui.md
MEMORY_BUDGET = 512 * 1024 * 1024  # checkpoint bytes; above it K doubles and every other mid-list one is dropped
THUMB_STEP = 4  # thumbnails keep every 4th pixel of every 4th row (18 KiB for 240x400)
MAX_THUMBNAILS = 4096  # later draws get none (bounded memory on huge captures)
EVENT_CHECKPOINT_GAP = 256
Progress = Callable[[int, int], None]


def packet_bytes(p: PacketEvent) -> int:
    """Size of a packet in its buffer: header pair + extra parameters, padded to 8 bytes."""
    return 8 + (len(p.params) - 1 + 1) // 2 * 8


def _frozen(a: np.ndarray, prev: np.ndarray | None) -> np.ndarray:
    if prev is not None and np.array_equal(a, prev):
        return prev
    out = a.copy()
    out.flags.writeable = False
    return out


def _unit(mem: ShaderUnitMemory, prev: ShaderUnitMemory | None) -> ShaderUnitMemory:
    return ShaderUnitMemory(*(_frozen(getattr(mem, n), getattr(prev, n) if prev else None)
                              for n in ("code", "opdescs", "float_uniforms")))


def share_unchanged(state: GpuState, prev: GpuState | None) -> GpuState:
    """A read-only copy of ``state`` that reuses ``prev``'s arrays where they are equal (per-draw records cost
    the register file plus what changed, not ~70 KiB each)."""
    arrays = {n: _frozen(getattr(state, n), getattr(prev, n) if prev else None)
              for n in ("regs", "lighting_luts", "fog_lut", "proctex_luts", "gas_lut", "fixed_attribs")}
    return GpuState(vs=_unit(state.vs, prev.vs if prev else None), gs=_unit(state.gs, prev.gs if prev else None),
                    **arrays)


class _IndexObserver(Observer):
    """Collects one event's packets (buffer != 0: the list, not the GX register pokes), writes and draws."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.packets: list[PacketEvent] = []
        self.writes: list[tuple[int, int, int, int]] = []
        self.draw_calls: list[tuple[DrawCall, int, GpuState]] = []
        self.event = 0

    def on_packet(self, event: PacketEvent) -> None:
        if event.buffer:
            self.packets.append(event)

    def on_write(self, event: WriteEvent) -> None:
        if event.buffer:
            self.writes.append((self.event, len(self.packets) - 1, event.id, event.value))

    def on_draw_end(self, call: DrawCall) -> None:
        states = self.session.draw_states
        prev = self.draw_calls[-1][2] if self.draw_calls else states[-1] if states else None
        self.draw_calls.append((call, len(self.packets) - 1, share_unchanged(call.state, prev)))
        if call.immediate_inputs is not None:
            self.session.immediate_inputs[call.index] = call.immediate_inputs.copy()
        self.session._thumbnail(call)
        self.session._maybe_checkpoint_after_draw(call.index, self.event, self.packets)


class Session:
    """A replay the debugger can move around in; see the module docstring."""

    def __init__(self, replay: Replay, *, path: str = "", memory_every: int = MEMORY_EVERY,
                 thumbnails: bool = True) -> None:
        self.replay = replay
        self.path = path
        self.memory_every = max(1, memory_every)
        self.timeline: Timeline | None = None
        self.draw_states: list[GpuState] = []
        self.immediate_inputs: dict[int, np.ndarray] = {}  # draw -> (N, 16, 4) vertices an immediate draw sent
        self.thumbnails: list[np.ndarray | None] | None = [] if thumbnails else None
        self.checkpoints: list[Checkpoint] = []  # sorted by ``Checkpoint.at``
        self._cursors: list[Cursor] = []
        self.fault: PicaError | None = None
        self.cursor = Cursor(0, 0)
        self._dirty = False
        self._nonfinite: set[int] = set()

    @classmethod
    def open(cls, path: str | os.PathLike[str], **kw) -> Session:
        return cls(Replay(load_capture(path), checkpoints=False), path=str(path), **kw)

    # -- indexing ----------------------------------------------------------------------------------------
    def index(self, progress: Progress | None = None) -> Timeline:
        """Replay everything once (see the module docstring); returns the timeline."""
        replay = self.replay
        if replay.position:
            replay.run_to(0)
        self.checkpoints = [replay.checkpoint()]
        self.draw_states, self.fault, self._nonfinite, self.immediate_inputs = [], None, set(), {}
        self.thumbnails = [] if self.thumbnails is not None else None
        obs = _IndexObserver(self)
        events: list[EventInfo] = []
        writes: list[tuple[int, int, int, int]] = []
        draws: list[DrawInfo] = []
        frame, last_cp = 0, 0
        self._wrap_vertex_shader(True)
        replay.processor.attach(obs)
        try:
            for i, ev in enumerate(replay.events):
                obs.event, obs.packets, obs.draw_calls = i, [], []
                if self.fault is None:
                    try:
                        replay.step()
                    except PicaError as err:
                        self.fault = err
                for call, pk, state in obs.draw_calls:
                    draws.append(DrawInfo(call.index, i, max(pk, 0), frame, call.kind.value, dict(call.stats),
                                          call.index in self._nonfinite, call.bounds))
                    self.draw_states.append(state)
                writes += obs.writes
                obs.writes = []
                events.append(EventInfo(i, type(ev).__name__, frame, event_text(ev), tuple(obs.packets),
                                        tuple(c.index for c, _, _ in obs.draw_calls),
                                        isinstance(ev, pica.CommandList)))
                if isinstance(ev, pica.FrameEnd):
                    frame += 1
                if self.fault is None and (isinstance(ev, pica.FrameEnd) or i + 1 - last_cp >= EVENT_CHECKPOINT_GAP):
                    self.checkpoints.append(replay.checkpoint())
                    last_cp = i + 1
                if progress is not None:
                    progress(i + 1, len(replay.events))
        finally:
            replay.processor.detach(obs)
            self._wrap_vertex_shader(False)
        frame_ends = tuple(e.index for e in events if e.kind == "FrameEnd")
        self.timeline = Timeline(tuple(events), tuple(draws), np.array(writes, np.int64).reshape(-1, 4), frame_ends)
        self.checkpoints.sort(key=lambda c: c.at)
        self._dirty, self.cursor = True, self.timeline.end
        return self.timeline

    def _wrap_vertex_shader(self, on: bool) -> None:
        """While indexing, note draws whose vertex-shader outputs hold NaN/inf (one isfinite per draw)."""
        pipeline = self.replay.pipeline
        if not hasattr(pipeline, "vertex_shader"):
            return
        if not on:
            pipeline.vertex_shader = getattr(pipeline.vertex_shader, "inner", pipeline.vertex_shader)
            return
        inner, session = pipeline.vertex_shader, self
        forwards_counters = "counters" in inspect.signature(inner).parameters

        def checked(state: GpuState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
            out = inner(state, attributes, counters=counters) if forwards_counters else inner(state, attributes)
            if not np.isfinite(out).all():
                session._nonfinite.add(session.replay.processor.draw_count - 1)
            return out

        checked.inner = inner  # type: ignore[attr-defined]
        pipeline.vertex_shader = checked

    def _thumbnail(self, call: DrawCall) -> None:
        """(H/4, W/4, 3) uint8 of the render target right after a draw (None if it cannot be read)."""
        if self.thumbnails is None:
            return
        if len(self.thumbnails) >= MAX_THUMBNAILS:
            self.thumbnails.append(None)
            return
        try:
            fb = call.draw_state.need("framebuffer")  # decoded once for the draw (size checked)
            image = fbm.read_color_image(call.memory, fb, THUMB_STEP)[:, :, :3].copy()
        except PicaError:
            image = None
        self.thumbnails.append(image)

    def _maybe_checkpoint_after_draw(self, draw: int, event: int, packets: list[PacketEvent]) -> None:
        if (draw + 1) % self.memory_every or not packets:
            return
        ev = self.replay.events[event]
        trigger = packets[-1]
        if not isinstance(ev, pica.CommandList) or trigger.buffer != ev.address:
            return
        after = trigger.offset + packet_bytes(trigger)
        if after >= self._list_bytes(ev):
            return  # the list ends here: the event-boundary checkpoint covers it
        self.checkpoints.append(self.replay.checkpoint(packets=len(packets),
                                                       resume=(ev.address + after, self._list_bytes(ev) - after)))
        if self.checkpoint_bytes > MEMORY_BUDGET:
            self._thin()

    def _thin(self) -> None:
        """Over budget: double K and drop every other mid-list checkpoint (event-boundary ones stay)."""
        self.memory_every *= 2
        mids = [cp for cp in self.checkpoints if cp.packets]
        dropped = {id(cp) for cp in mids[::2]}
        self.checkpoints = [cp for cp in self.checkpoints if id(cp) not in dropped]

    # -- checkpoints -------------------------------------------------------------------------------------
    def _restore(self, cp: Checkpoint) -> None:
        self.replay.restore(cp)
        self.cursor, self._dirty = Cursor(*cp.at), False

    @property
    def _checkpoint_cursors(self) -> list[Cursor]:
        """``Cursor`` of every checkpoint, in order (recomputed when checkpoints were added or dropped)."""
        if len(self._cursors) != len(self.checkpoints) or (self._cursors and
                                                           self._cursors[-1] != Cursor(*self.checkpoints[-1].at)):
            self._cursors = [Cursor(*cp.at) for cp in self.checkpoints]
        return self._cursors

    @property
    def checkpoint_bytes(self) -> int:
        return sum(cp.nbytes for cp in self.checkpoints)

    # -- moving ------------------------------------------------------------------------------------------
    @staticmethod
    def _list_bytes(ev: pica.CommandList) -> int:
        return -(-ev.size // 8) * 8

    def goto(self, target: Cursor) -> None:
        """Put the replay in the state at ``target`` (see the module docstring)."""
        tl = self._need_timeline()
        target = tl.normalize(target.event, target.packet)
        if target == self.cursor and not self._dirty:
            return
        nearest = self.checkpoints[bisect.bisect_right(self._checkpoint_cursors, target) - 1]
        if self._dirty or target < self.cursor or Cursor(*nearest.at) > self.cursor:  # never replay what a
            self._restore(nearest)  # checkpoint closer to the target already holds
        try:
            self.replay.run_to(target.event, packets=target.packet)
        except BaseException:
            self._dirty = True
            raise
        self.cursor = target

    def advance(self, target: Cursor) -> None:
        """Run forward from the current position to ``target``, through every packet on the way (never from a
        checkpoint): observers attached meanwhile see each draw in between (probes re-running one draw)."""
        tl = self._need_timeline()
        target = tl.normalize(target.event, target.packet)
        if self._dirty or target < self.cursor:
            raise PicaError(f"cannot run forward from {self.cursor.text()} to {target.text()}")
        try:
            self.replay.run_to(target.event, packets=target.packet)
        except BaseException:
            self._dirty = True
            raise
        self.cursor = target

    def _need_timeline(self) -> Timeline:
        if self.timeline is None:
            raise PicaError("the capture has not been indexed yet")
        return self.timeline

    def mark_dirty(self) -> None:
        """Memory or state was changed behind the session's back (probes): restore on the next move."""
        self._dirty = True

    # -- views -------------------------------------------------------------------------------------------
    def state_at_draw(self, draw: int) -> GpuState:
        """The GPU state at draw ``draw``'s trigger (no replay needed)."""
        return self.draw_states[draw]

    def uniform_names(self, state: GpuState, unit: str) -> dict[str, str]:
        """Register -> uniform name of the program ``unit`` runs in ``state``, when the capture carries them
        (``picaemu.shader.names``); {} otherwise."""
        from picaemu.shader import ShaderSetup, names

        return names.names_for(self.replay.capture.meta, ShaderSetup.from_state(state, unit))


# ---------------------------------------------------------------------------------------------- raw captures
MAX_RAW_BYTES = 256 * 1024 * 1024


def address_from_name(path: str | os.PathLike[str]) -> int:
    """The physical address a memory dump's file name starts with: ``18000000.bin``, ``0x20100000_heap.bin``."""
    stem = os.path.basename(os.fspath(path)).split(".")[0].split("_")[0]
    try:
        return int(stem, 16)
    except ValueError:
        raise PicaError(f"memory dump {os.fspath(path)!r}: the file name must start with its hex address") from None


def _read_limited(path: str | os.PathLike[str]) -> bytes:
    size = os.path.getsize(path)
    if size > MAX_RAW_BYTES:
        raise PicaError(f"{os.fspath(path)!r} is {size} bytes, more than the {MAX_RAW_BYTES} a raw input may be")
    with open(path, "rb") as fh:
        return fh.read()


def raw_capture(command_list: str | os.PathLike[str], address: int,
                memory: list[tuple[int, str | os.PathLike[str]]] = ()) -> pica.Capture:
    """A one-frame capture from a raw command list (little-endian u32 words, run at physical ``address``) and
    memory dumps ``(address, path)``: power-on registers, the dumps, the list, one FrameEnd."""
    from picaemu.gx.convert import reset_gpu_regs, reset_regs

    cap = pica.Capture(meta={"source": f"raw command list {os.fspath(command_list)}"})
    cap.state.regs[:] = reset_regs()
    cap.state.gpu_regs[:] = reset_gpu_regs()
    for where, path in memory:
        cap.events.append(pica.MemoryWrite(where, cap.blobs.add(_read_limited(path))))
    words = _read_limited(command_list)
    if not words:
        raise PicaError(f"command list {os.fspath(command_list)!r} is empty")
    cap.events.append(pica.MemoryWrite(address, cap.blobs.add(words)))
    cap.events += [pica.CommandList(address, len(words), 0), pica.FrameEnd()]
    return cap
