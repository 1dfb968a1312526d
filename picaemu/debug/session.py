"""What the debugger adds to a ``picaemu.replay.Replay``: a packet-exact index and draw-boundary checkpoints.

``Session(replay)`` wraps a fresh ``Replay``. ``index()`` replays the whole capture once with an observer
attached and builds the ``Timeline`` (every packet, write and draw; see ``picaemu.debug.timeline``), keeping:

- a read-only ``GpuState`` copy at every draw trigger (registers, shader memories, LUTs; arrays equal to the
  previous draw's are shared, so a draw costs its 3 KiB register file plus what changed), so the register
  inspector, texture bindings and shader view of any draw need no replay at all;
- every display transfer (``transfers``: ``picaemu.gx.engines.TransferRecord`` with its event), so that a screen
  pixel maps back to its render target (``picaemu.debug.screen_map``);
- the replay's own checkpoints (one checkpoint policy: ``Replay``'s, see ``picaemu.replay``): at the start, at
  every frame end, after every ``memory_every``-th draw inside command lists (``Replay.checkpoint_draws``; K
  measured in ``bench/bench_gui.py``) and after any draw or event that brings the work since the last one to
  ``memory_work`` (``Replay.checkpoint_work``: 256 events without draws), within ``Replay.checkpoint_budget``:
  denser than a plain replay's, since the debugger moves back and forth where a replay mostly runs forward.

``extend(events)`` appends complete frames of a live recording (``picaemu.record.live``, the GUI's File › Attach)
and indexes only them, so the timeline grows frame by frame at the cost of the new frames.

``goto(cursor)`` moves the replay with ``Replay.run_to(event, packets=k)``, which starts from the checkpoint
nearest the target whichever way it lies; ``advance(cursor)`` runs forward through every packet (probes re-running
one draw). A fault while indexing is kept in ``fault`` (the timeline covers everything before it); a fault while
moving is raised as the ``PicaError`` it is, and the session restores from a checkpoint on the next move.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence

import numpy as np

from picaemu.analysis.stats import KernelClock, book_kernels
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.gx.engines import TransferRecord
from picaemu.observer import Observer, PacketEvent, WriteEvent
from picaemu.replay import Checkpoint, Replay, load_capture
from picaemu.replay.records import EventInfo, describe
from picaemu.state import GpuState, share_unchanged

MEMORY_EVERY = 8  # K: bench/results/gui.md
# draw work between checkpoints (``picaemu.replay.checkpoint.draw_work``): ~1.5 ms of compiled replay, so that a jump
# on a 2D game's wide draws replays a few ms (minicraft: 2 ms median / 10-20 ms worst, bench_debugger.py)
MEMORY_WORK = 32768
Progress = Callable[[int, int], None]


class _IndexObserver(Observer):
    """Collects one event's packets (buffer != 0: the list, not the GX register pokes), writes and draws; moves
    the time each draw spent loading or compiling kernels out of its ``time_s`` into ``kernels_s``, as
    ``picaemu stats`` does (the first draw of a process loads ~0.1-0.2 s of them from the cache)."""

    def __init__(self, session: Session, clock: KernelClock) -> None:
        self.session = session
        self.packets: list[PacketEvent] = []
        self.writes: list[tuple[int, int, int, int]] = []
        self.draw_calls: list[tuple[DrawCall, GpuState]] = []
        self.event = 0
        self.clock = clock
        self._kernels_before = 0.0

    def on_packet(self, event: PacketEvent) -> None:
        if event.buffer:
            self.packets.append(event)

    def on_write(self, event: WriteEvent) -> None:
        if event.buffer:
            self.writes.append((self.event, len(self.packets) - 1, event.id, event.value))

    def on_draw_begin(self, call: DrawCall) -> None:
        self._kernels_before = self.clock.seconds

    def on_draw_end(self, call: DrawCall) -> None:
        book_kernels(call.stats, self.clock.seconds - self._kernels_before)
        states = self.session.draw_states
        prev = self.draw_calls[-1][1] if self.draw_calls else states[-1] if states else None
        self.draw_calls.append((call, share_unchanged(call.state, prev)))


class Session:
    """A replay the debugger can move around in; see the module docstring."""

    def __init__(
        self, replay: Replay, *, path: str = "", memory_every: int = MEMORY_EVERY, memory_work: int = MEMORY_WORK
    ) -> None:
        self.replay = replay
        replay.checkpoints = True  # the session moves around: it needs the replay's checkpoints
        replay.checkpoint_draws = max(1, memory_every)
        replay.checkpoint_work = max(1, memory_work)
        self.path = path
        self._timeline: Timeline | None = None
        self.draw_states: list[GpuState] = []
        self.transfers: list[TransferRecord] = []  # display transfers of the capture, in order (screen_map)
        self.fault: PicaError | None = None
        self.cursor = Cursor(0, 0)
        self._dirty = False
        self._infos: list[EventInfo] = []  # what ``index`` / ``extend`` built so far (the timeline's parts)
        self._writes: list[tuple[int, int, int, int]] = []
        self._frame = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str], **kw) -> Session:
        replay = Replay(load_capture(path))
        replay.path = str(path)
        return cls(replay, path=str(path), **kw)

    @property
    def memory_every(self) -> int:
        """Draws between checkpoints inside command lists (doubles while the replay is over its budget)."""
        return self.replay.checkpoint_draws

    @property
    def checkpoints(self) -> list[Checkpoint]:
        return self.replay.checkpoint_list()

    @property
    def checkpoint_bytes(self) -> int:
        return self.replay.checkpoint_bytes

    # -- indexing ----------------------------------------------------------------------------------------
    def index(self, progress: Progress | None = None) -> Timeline:
        """Replay everything once (see the module docstring); returns the timeline."""
        replay = self.replay
        if replay.position or replay.packet:
            replay.run_to(0)
        self.draw_states, self.transfers, self.fault = [], [], None
        self._infos, self._writes, self._frame = [], [], 0
        return self._index_from(0, progress)

    def extend(self, events: Sequence[pica.Event], call_sites: dict[int, pica.CallSite] | None = None) -> Timeline:
        """Append ``events`` (complete frames of a live recording: ``picaemu.record.live``; memory writes name
        blobs of the capture's own store) and index them; returns the grown timeline. The replay first goes to the
        end of what was there (the user may have moved), then on through the new events exactly as ``index``
        would have; a fault met earlier stops indexing there, as it does in ``index``."""
        replay, start = self.replay, len(self.replay.events)
        self.goto(self.timeline.end)
        replay.events.extend(events)  # the capture's own list (``Replay.events`` is ``capture.events``)
        replay.frames.extend(start + i for i, e in enumerate(events) if isinstance(e, pica.FrameEnd))
        replay.capture.call_sites.update(call_sites or {})
        return self._index_from(start, None)

    def _index_from(self, start: int, progress: Progress | None) -> Timeline:
        """Index events ``start ..`` (the replay stands at ``start``) onto what is indexed before them."""
        replay = self.replay
        with KernelClock() as clock:
            self._index_events(start, progress, _IndexObserver(self, clock))
        frame_ends = tuple(e.index for e in self._infos if e.kind == "FrameEnd")
        draws = tuple(replay.draws[: len(self.draw_states)])
        writes_array = np.array(self._writes, np.int64).reshape(-1, 4)
        self._timeline = timeline = Timeline(tuple(self._infos), draws, writes_array, frame_ends)
        self._dirty, self.cursor = True, timeline.end
        if start == 0 and len(draws) > 1 and self.fault is None:
            # indexing watches every draw, so the compiled draw loop (picaemu.fused.loop) has not run: run the draws
            # from the checkpoint before the one before the last (the last one may be a checkpoint's) now, so that
            # the first jump does not pay for loading the loop (~0.1 s; once: ``extend`` finds it loaded)
            self.goto(timeline.after_draw(draws[-2].index))
            self.goto(timeline.end)
        return timeline

    def _index_events(self, start: int, progress: Progress | None, obs: _IndexObserver) -> None:
        """``_index_from``'s pass over events ``start ..`` with ``obs`` attached and the display transfers logged."""
        replay = self.replay
        transfers = replay.gx.transfer_log = []
        replay.processor.attach(obs)
        try:
            for i in range(start, len(replay.events)):
                ev = replay.events[i]
                obs.event, obs.packets, obs.draw_calls = i, [], []
                if self.fault is None:
                    try:
                        replay.step()
                    except PicaError as err:
                        self.fault = err
                self.transfers += [dataclasses.replace(t, event=i) for t in transfers]
                transfers.clear()
                for call, state in obs.draw_calls:
                    # the route counts them (``vertices_nonfinite``): no stage observer, the draws stay compiled
                    replay.draws[call.index].nonfinite = call.stats.get("vertices_nonfinite", 0) > 0
                    self.draw_states.append(state)
                self._writes += obs.writes
                obs.writes = []
                self._infos.append(
                    EventInfo(
                        i,
                        type(ev).__name__,
                        self._frame,
                        describe(ev),
                        tuple(obs.packets),
                        tuple(c.index for c, _ in obs.draw_calls),
                        isinstance(ev, pica.CommandList),
                    )
                )
                if isinstance(ev, pica.FrameEnd):
                    self._frame += 1
                if progress is not None:
                    progress(i + 1, len(replay.events))
        finally:
            replay.processor.detach(obs)
            replay.gx.transfer_log = None

    def goto(self, target: Cursor) -> None:
        """Put the replay in the state at ``target``, from the checkpoint nearest it (module docstring)."""
        self._move(target, forward_only=False)

    def advance(self, target: Cursor) -> None:
        """Run forward from the current position to ``target``, through every packet on the way (never from a
        checkpoint): observers attached meanwhile see each draw in between (probes re-running one draw)."""
        self._move(target, forward_only=True)

    def _move(self, target: Cursor, *, forward_only: bool) -> None:
        tl = self.timeline
        target = tl.normalize(target.event, target.packet)
        if (
            target == self.cursor
            and not self._dirty
            and (self.replay.position, self.replay.packet) == (target.event, target.packet)
        ):
            return
        if forward_only and self._dirty:
            raise PicaError(f"cannot run forward from {self.cursor.text()}: the state was changed")
        try:
            self.replay.run_to(
                target.event, packets=target.packet, fresh=self._dirty and not forward_only, forward_only=forward_only
            )
        except BaseException:
            self._dirty = True
            raise
        self.cursor, self._dirty = target, False

    @property
    def timeline(self) -> Timeline:
        """The index built by ``index`` (PicaError before it ran)."""
        if self._timeline is None:
            raise PicaError("the capture has not been indexed yet")
        return self._timeline

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
        from picaemu.shader.setup import shader_unit

        return names.names_for(self.replay.capture.meta, ShaderSetup.from_state(state, shader_unit(unit)))


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


def raw_capture(
    command_list: str | os.PathLike[str], address: int, memory: Sequence[tuple[int, str | os.PathLike[str]]] = ()
) -> pica.Capture:
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
