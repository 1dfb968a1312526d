"""What the debugger needs from a replay and ``picaemu.replay.Replay`` does not (yet) offer: a packet-exact index,
packet-granular positioning, and draw-boundary checkpoints. Qt-free (could move to ``picaemu/``).

``Session(replay)`` wraps a fresh ``Replay``. ``index()`` replays the whole capture once with an observer
attached and builds the ``Timeline`` (every packet, write and draw; see ``gui.timeline``), keeping:

- a read-only ``GpuState`` copy at every draw trigger (registers, shader memories, LUTs; arrays equal to the
  previous draw's are shared, so a draw costs its 3 KiB register file plus what changed), so the register
  inspector, texture bindings and shader view of any draw need no replay at all;
- a memory checkpoint (sparse 4 KiB pages of every region + GPU state + external registers) after every
  ``memory_every``-th draw (K, measured in ``bench/bench_gui.py``), at every frame start, and after
  ``EVENT_CHECKPOINT_GAP`` events without one.

``goto(cursor)`` restores the latest checkpoint at or before ``cursor`` (unless the current position is on the way
and clean) and runs forward: whole events through ``Replay.step``, partial command lists through
``CommandProcessor.run_at`` with a packet limit. A fault while indexing is kept in ``fault`` (the timeline covers
everything before it); a fault while moving is raised as the ``PicaError`` it is, and the session restores from a
checkpoint on the next move.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from picaemu.formats import pica
from picaemu.gui.timeline import Cursor, DrawInfo, EventInfo, Timeline, event_text

from picaemu import framebuffer as fbm
from picaemu.draw import DrawCall, PipelineEventKind
from picaemu.errors import PicaError
from picaemu.gx import mmio
from picaemu.memory import PhysicalMemory
from picaemu.observer import Observer, PacketEvent, WriteEvent
from picaemu.regs import id_of
from picaemu.replay import Replay, load_capture
from picaemu.state import GpuState, ShaderUnitMemory

PAGE = 4096
MEMORY_EVERY = 8  # K: bench/results/gui.md
MEMORY_BUDGET = 512 * 1024 * 1024  # checkpoint bytes; above it K doubles and every other mid-list one is dropped
THUMB_STEP = 4  # thumbnails keep every 4th pixel of every 4th row (18 KiB for 240x400)
MAX_THUMBNAILS = 4096  # later draws get none (bounded memory on huge captures)
EVENT_CHECKPOINT_GAP = 256
Progress = Callable[[int, int], None]


def snapshot_pages(memory: PhysicalMemory) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """region -> (indices of non-zero 4 KiB pages, (n, PAGE) uint8 copies)."""
    out = {}
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
        used = np.flatnonzero(full.any(axis=1))
        out[region.name] = (used, full[used].copy())
    return out


def restore_pages(memory: PhysicalMemory, pages: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
        full[np.flatnonzero(full.any(axis=1))] = 0
        used, saved = pages[region.name]
        full[used] = saved


@dataclass(frozen=True)
class MemoryCheckpoint:
    cursor: Cursor
    pages: dict[str, tuple[np.ndarray, np.ndarray]]
    state: GpuState
    gpu: np.ndarray
    lcd: np.ndarray
    draw_count: int

    @property
    def nbytes(self) -> int:
        return sum(int(saved.nbytes) for _, saved in self.pages.values())


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
        self.session._thumbnail(call)
        self.session._maybe_checkpoint_after_draw(call.index, self.event, self.packets)


class Session:
    """A replay the debugger can move around in; see the module docstring."""

    def __init__(self, replay: Replay, *, path: str = "", memory_every: int = MEMORY_EVERY,
                 thumbnails: bool = True) -> None:
        self.replay = replay
        replay.checkpoints = False  # the session keeps its own (draw-boundary) checkpoints
        self.path = path
        self.memory_every = max(1, memory_every)
        self.timeline: Timeline | None = None
        self.draw_states: list[GpuState] = []
        self.thumbnails: list[np.ndarray | None] | None = [] if thumbnails else None
        self.checkpoints: list[MemoryCheckpoint] = []
        self.fault: PicaError | None = None
        self.cursor = Cursor(0, 0)
        self._dirty = False
        self._nonfinite: set[int] = set()

    @classmethod
    def open(cls, path: str | os.PathLike[str], **kw) -> Session:
        return cls(Replay(load_capture(path)), path=str(path), **kw)

    # -- indexing ----------------------------------------------------------------------------------------
    def index(self, progress: Progress | None = None) -> Timeline:
        """Replay everything once (see the module docstring); returns the timeline."""
        replay = self.replay
        if replay.position:
            replay.run_to(0)
        self.checkpoints = [self._checkpoint(Cursor(0, 0))]
        self.draw_states, self.fault, self._nonfinite = [], None, set()
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
                                          call.index in self._nonfinite))
                    self.draw_states.append(state)
                writes += obs.writes
                obs.writes = []
                events.append(EventInfo(i, type(ev).__name__, frame, event_text(ev), tuple(obs.packets),
                                        tuple(c.index for c, _, _ in obs.draw_calls),
                                        isinstance(ev, pica.CommandList)))
                if isinstance(ev, pica.FrameEnd):
                    frame += 1
                if self.fault is None and (isinstance(ev, pica.FrameEnd) or i + 1 - last_cp >= EVENT_CHECKPOINT_GAP):
                    self.checkpoints.append(self._checkpoint(Cursor(i + 1, 0)))
                    last_cp = i + 1
                if progress is not None:
                    progress(i + 1, len(replay.events))
        finally:
            replay.processor.detach(obs)
            self._wrap_vertex_shader(False)
        frame_ends = tuple(e.index for e in events if e.kind == "FrameEnd")
        self.timeline = Timeline(tuple(events), tuple(draws), np.array(writes, np.int64).reshape(-1, 4), frame_ends)
        self.checkpoints.sort(key=lambda c: c.cursor)
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

        def checked(state: GpuState, attributes: np.ndarray) -> np.ndarray:
            out = inner(state, attributes)
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
            fb = fbm.FramebufferState.from_regs(call.state.regs)
            fb.check_size()
            image = fbm.read_color_image(call.memory, fb)[::THUMB_STEP, ::THUMB_STEP, :3].copy()
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
        if trigger.offset + packet_bytes(trigger) >= self._list_bytes(ev):
            return  # the list ends here: the event-boundary checkpoint covers it
        self.checkpoints.append(self._checkpoint(Cursor(event, len(packets))))
        if self.checkpoint_bytes > MEMORY_BUDGET:
            self._thin()

    def _thin(self) -> None:
        """Over budget: double K and drop every other mid-list checkpoint (event-boundary ones stay)."""
        self.memory_every *= 2
        mids = [cp for cp in self.checkpoints if cp.cursor.packet]
        dropped = {id(cp) for cp in mids[::2]}
        self.checkpoints = [cp for cp in self.checkpoints if id(cp) not in dropped]

    # -- checkpoints -------------------------------------------------------------------------------------
    def _checkpoint(self, cursor: Cursor) -> MemoryCheckpoint:
        r = self.replay
        return MemoryCheckpoint(cursor, snapshot_pages(r.memory), r.state.copy(), r.gx.gpu.copy(), r.gx.lcd.copy(),
                                r.processor.draw_count)

    def _restore(self, cp: MemoryCheckpoint) -> None:
        r = self.replay
        restore_pages(r.memory, cp.pages)
        r.processor.load_state(cp.state.copy())
        r.processor.draw_count = cp.draw_count
        r.gx.gpu[:], r.gx.lcd[:] = cp.gpu, cp.lcd
        r.pipeline.event(PipelineEventKind.RESTART_PRIMITIVE, r.state)
        r.position = cp.cursor.event
        self.cursor, self._dirty = cp.cursor, False

    @property
    def checkpoint_bytes(self) -> int:
        return sum(cp.nbytes for cp in self.checkpoints)

    # -- moving ------------------------------------------------------------------------------------------
    @staticmethod
    def _list_bytes(ev: pica.CommandList) -> int:
        return -(-ev.size // 8) * 8

    def _resumable(self, cursor: Cursor) -> bool:
        if cursor.packet == 0:
            return True
        ev = self.replay.events[cursor.event]
        return self.timeline.events[cursor.event].packets[cursor.packet].buffer == ev.address

    def goto(self, target: Cursor) -> None:
        """Put the replay in the state at ``target`` (see the module docstring)."""
        tl = self._need_timeline()
        target = tl.normalize(target.event, target.packet)
        if target == self.cursor and not self._dirty:
            return
        if self._dirty or target < self.cursor or not self._resumable(self.cursor):
            candidates = [cp for cp in self.checkpoints if cp.cursor <= target]
            self._restore(candidates[-1])
        try:
            self._advance(target)
        except BaseException:
            self._dirty = True
            raise
        self.cursor = target

    def _advance(self, target: Cursor) -> None:
        r = self.replay
        e, k = self.cursor.event, self.cursor.packet
        if k:
            limit = target.packet - k if target.event == e else -1
            self._run_packets(e, k, limit)
            if target.event == e:
                return
            r.position = e + 1
        while r.position < target.event:
            r.step()
        if target.packet:
            self._run_packets(target.event, 0, target.packet)

    def _run_packets(self, event: int, first: int, limit: int) -> None:
        """Run command-list event ``event`` from its packet ``first`` (in the list's own buffer) for ``limit``
        packets (-1: to its end)."""
        ev = self.replay.events[event]
        offset = self.timeline.events[event].packets[first].offset if first else 0
        if not first:  # what GX ProcessCommandList writes before its jump (the jump register keeps its value)
            for address, value, width in mmio.lower(ev):
                if address == mmio.CMDBUF_JUMP0:
                    self.replay.state.regs[id_of("CMDBUF_JUMP0")] = value
                else:
                    self.replay.gx.write(address, value, width)
        self.replay.processor.run_at(ev.address + offset, self._list_bytes(ev) - offset, packet_limit=limit)

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
