"""Replaying captures: ``picaemu.open(path) -> Replay``, the object the CLI, statistics and the GUI build on.

A ``Replay`` owns emulated memory, a ``CommandProcessor`` (with the rendering pipeline), the external engines
(``picaemu.gx.Gx``) and the capture's event list. The debugger's index is frame -> event (GX command or register
write) -> draw -> packet:

- ``events``: the capture's events; ``position`` = how many have been applied (0 = initial state).
- ``frames``: for frame i, the index of its FrameEnd event; ``run_to_frame(i)`` stops right after it.
- ``draws``: ``DrawRecord`` per draw (global index, event index, byte offset of the trigger packet, kind, the
  pipeline's counters, the route it took: compiled or reference with the reasons) — complete after ``index()``
  (one pass over the whole capture), else as far as replayed (a ``DrawRecords`` sequence: the compiled loop's
  records are made when first read).
- ``packets(event)``: the packets of a command-list event, decoded from memory as it was when the list ran.
- ``run_to(n)`` puts the replay in the state after n events; ``run_to(n, packets=k)`` additionally runs the
  first k packets of command-list event n (a ``CommandList``, or a register write that kicks a list; packets
  counted along the list's jumps, as ``CommandProcessor.run_at(..., packet_limit=k)`` counts them). Going
  backwards restores the nearest checkpoint at or before the target (taken every ``checkpoint_every`` events, at
  every frame start, after any event and, inside command lists, after any draw that brings the work since the last
  checkpoint to ``checkpoint_work`` (``picaemu.replay.checkpoint.draw_work`` and ``EVENT_WORK``: a frame of
  expensive draws gets one after each of them), and after every ``checkpoint_draws``-th draw; within
  ``checkpoint_budget`` bytes) and replays forward;
  going forward past a checkpoint starts from it too.
  ``run_to_draw(d)`` stops inside a command list right after draw d.
- ``checkpoint() -> Checkpoint`` copies the current position (GPU state, sparse 4 KiB pages of memory, external
  registers, the processor's partially received input, where a half-run list continues); ``restore(cp)`` puts
  the replay back there, so a caller (the GUI) can keep checkpoints of its own, e.g. at draw boundaries
  (``picaemu.replay.checkpoint``).
- Views of the current state: ``state`` (GpuState), ``screen("top"|"bottom")`` (H, W, 3) uint8 upright,
  ``color_buffer()`` (H, W, 4) uint8 / ``depth_buffer()`` ((H, W) uint32, (H, W) uint8) of the render target the
  registers name, ``memory``.

A capture whose metadata marks its initial state unknown (recorded mid-program) is replayed through
``picaemu.replay.unknown_state.UnknownStateWatch`` (``unknown_state``): registers read before the capture wrote them are
reported once each.

An event that fails raises ``ReplayError`` (a PicaError naming the event index and text; ``cause`` holds the
underlying error: MemoryFault, CommandBufferError, GxError, ...); ``position`` stays at that event, so everything
before the fault stays usable.
"""

from __future__ import annotations

import os

import numpy as np

from picaemu.command.packet_list import list_packets
from picaemu.command.packets import Packet
from picaemu.command.processor import CommandProcessor
from picaemu.draw import (
    NullPipeline,
    PipelineEventKind,
    PipelineSink,
)
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.fragment import framebuffer as fbm
from picaemu.gx import Gx, lcd, mmio
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from picaemu.replay.capture import initial_gpu_state, load_capture
from picaemu.replay.checkpoint import (
    CHECKPOINT_WORK,
    EVENT_WORK,
    Checkpoint,
    PageStore,
)
from picaemu.replay.checkpointing import Checkpointing
from picaemu.replay.recorder import BACKENDS, Recorder, StopAfterDraw, default_pipeline
from picaemu.replay.records import DrawRecord, DrawRecords, EventInfo, describe
from picaemu.replay.unknown_state import UnknownStateWatch, is_unknown
from picaemu.state import GpuState

# events between event-boundary checkpoints whatever their work (each event's own replay counts as ``EVENT_WORK``
# towards ``checkpoint_work``, so cheap events bring one every 2048, the session's every 256)
CHECKPOINT_EVERY = 4096
# draws between checkpoints inside a command list whatever their work (doubled while over the budget; the debugger
# session asks for 8): the work rule (``DRAW_WORK`` a draw) takes one every ~2000 tiny draws, and 1024 replay in
# 3-10 ms where a checkpoint costs 0.3-0.7 ms (its page compare and copies; one every 32 draws cost a first replay
# 30-70 %: bench/RESULTS.md)
CHECKPOINT_DRAWS = 1024
CHECKPOINT_BUDGET = 512 * 1024 * 1024  # bytes of mid-list checkpoints a replay keeps
JUMP_CHANNEL = {mmio.CMDBUF_JUMP0: 0, mmio.CMDBUF_JUMP0 + 4: 1}  # MMIO address of CMDBUF_JUMP0/1 -> channel
Write = tuple[int, int, int]  # (MMIO address, value, width), as ``mmio.lower`` gives them
Kick = tuple[list[Write], int, int, list[Write]]  # ``Replay._list_kick``


class ReplayError(PicaError):
    """An event failed: names the event index and its text, and keeps the underlying error in ``cause``."""

    def __init__(self, index: int, text: str, cause: PicaError) -> None:
        super().__init__(f"event #{index} ({text}): {cause}")
        self.event = index
        self.cause = cause


class Replay(Checkpointing):
    """A capture being replayed; see the module docstring."""

    def __init__(
        self,
        capture: pica.Capture,
        *,
        pipeline: PipelineSink | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        checkpoints: bool = True,
        record_draws: bool = True,
        checkpoint_draws: int = CHECKPOINT_DRAWS,
        checkpoint_budget: int = CHECKPOINT_BUDGET,
        checkpoint_work: int = CHECKPOINT_WORK,
    ) -> None:
        """``checkpoints=False`` keeps only the initial one (forward-only headless runs: render, batch, stats);
        ``record_draws=False`` keeps no per-draw record (``draws`` stays empty, ``draw_count`` counts): memory
        that does not grow with the length of the capture (streaming renders of long captures)."""
        self.capture = capture
        self.path = ""  # the file or folder ``open`` read (where the debugger keeps bookmarks); "" in memory
        self.events = capture.events
        self.frames = [i for i, e in enumerate(self.events) if isinstance(e, pica.FrameEnd)]
        self.checkpoint_every = max(1, checkpoint_every)
        self.checkpoint_draws = max(1, checkpoint_draws)
        self.checkpoint_budget = checkpoint_budget
        self.checkpoint_work = max(1, checkpoint_work)
        self._work = 0  # work (``draw_work``, ``EVENT_WORK``) run since the last checkpoint was taken or restored
        self._checkpoint_bytes = 0
        self.checkpoints = checkpoints
        self.pipeline = pipeline if pipeline is not None else default_pipeline()
        # a capture recorded mid-program: warn about registers read before the capture wrote them
        self.unknown_state = UnknownStateWatch(self.pipeline) if is_unknown(capture.meta) else None
        self._recorder = Recorder(self.unknown_state or self.pipeline, self)
        self.memory = PhysicalMemory()
        self.record_draws = record_draws
        self.processor = CommandProcessor(
            self.memory, self._recorder, initial_gpu_state(capture.state), record_draws=record_draws
        )
        if self.unknown_state is not None:
            self.processor.attach(self.unknown_state)
        self.gx = Gx(self.processor)
        self.gx.gpu[:] = capture.state.gpu_regs
        self.gx.lcd[:] = capture.state.lcd_regs
        for address, blob in capture.state.memory:
            self.memory.write(address, capture.blobs[blob], f"initial memory block at 0x{address:08X}")
        self.position = 0
        self.packet = 0  # packets of command-list event ``position`` already run (0 = none)
        self.draws = DrawRecords()
        self.indexed = False
        self._current = 0
        self._partial = False  # True after run_to_draw stopped inside a command list (packet count unknown)
        self._resume: tuple[int, int] | None = None  # where the half-run list of event ``position`` continues
        self._packets: dict[int, tuple[list[Packet], PicaError | None]] = {}
        self._kicks: dict[int, Kick | None] = {}  # ``_list_kick`` per event index
        self._last_state: GpuState | None = None  # the GPU state the last checkpoint copied
        self._last_checkpoint_regs: tuple[np.ndarray, np.ndarray] | None = None  # and its external GPU / LCD registers
        self._pages = PageStore(self.memory)  # checkpoints share the pages that did not change between them
        self._checkpoints: dict[tuple[int, int], Checkpoint] = {(0, 0): self.checkpoint()}

    # -- views -------------------------------------------------------------------------------------------
    @property
    def frame(self) -> int:
        """Index of the frame the next event belongs to."""
        return sum(1 for f in self.frames if f < self.position)

    def screen(self, screen: str = "top", eye: str = "left") -> np.ndarray:
        """What ``screen`` shows now: (H, W, 3) uint8 upright landscape."""
        self.sync_memory()
        return lcd.screen_image(self.memory, self.gx.gpu, screen, eye)

    def framebuffer_state(self) -> fbm.FramebufferState:
        fb = fbm.FramebufferState.from_regs(self.state.regs)
        fb.check_size()
        return fb

    def color_buffer(self) -> np.ndarray:
        """The render target the registers name: (H, W, 4) uint8 RGBA, row 0 = top."""
        self.sync_memory()
        return fbm.read_color_image(self.memory, self.framebuffer_state())

    def depth_buffer(self) -> tuple[np.ndarray, np.ndarray]:
        """((H, W) uint32 depth, (H, W) uint8 stencil) of the depth buffer the registers name, row 0 = top."""
        self.sync_memory()
        return fbm.read_depth_image(self.memory, self.framebuffer_state())

    def texture(self, unit: int, level: int = 0, face: int = 0) -> np.ndarray:
        """Mip ``level`` (cube ``face``) of the texture bound to ``unit`` now: (H, W, 4) uint8 RGBA, row 0 = top
        (``picaemu.debug.replay.DebugReplay.texture`` also as bound at a draw)."""
        from picaemu.texture import decode_texture
        from picaemu.texture.state import TextureUnitState

        ustate = TextureUnitState.from_regs(self.state.regs, unit)
        self.sync_memory()
        if not 0 <= face < len(ustate.addresses):
            raise PicaError(f"texture unit {unit} has {len(ustate.addresses)} face(s), not face {face}")
        return decode_texture(
            self.memory, ustate.addresses[face], ustate.width, ustate.height, ustate.format.value, level
        )

    def outline(self) -> list[list[EventInfo]]:
        """Frames -> events (with their draws), after indexing the whole capture; trailing events after the last
        FrameEnd form a final, unfinished frame."""
        self.index()
        by_event: dict[int, list[int]] = {}
        for d in self.draws:
            by_event.setdefault(d.event, []).append(d.index)
        frames: list[list[EventInfo]] = [[]]
        for i, event in enumerate(self.events):
            frames[-1].append(
                EventInfo(
                    i,
                    type(event).__name__,
                    len(frames) - 1,
                    describe(event),
                    draws=tuple(by_event.get(i, ())),
                    is_list=isinstance(event, pica.CommandList),
                )
            )
            if isinstance(event, pica.FrameEnd) and i + 1 < len(self.events):
                frames.append([])
        return frames

    def draws_of(self, event: int) -> list[DrawRecord]:
        return [d for d in self.draws if d.event == event]

    def packets(self, event: int) -> list[Packet]:
        """The packets of command-list event ``event`` (raises the walk's error after a partial list). The first
        call moves the replay to just before that event (the list is read from memory as it then was); results
        are cached."""
        kick = self._list_kick(event) if 0 <= event < len(self.events) else None
        if kick is None:
            raise PicaError(f"event #{event} is {type(self.events[event]).__name__}, not a command list")
        if event not in self._packets:
            self.run_to(event)
            ev = self.events[event]
            if isinstance(ev, pica.CommandList):
                address, size = ev.address, ev.size - ev.size % 4
            else:  # a register write kicking the list the channel's registers name
                address, size = self._channel_buffer(kick[1])
            data = self.memory.bytes(address, size, f"command list of event #{event}")
            self._packets[event] = list_packets(data.copy())
        packets, error = self._packets[event]
        if error is not None:
            raise error
        return packets

    # -- moving ------------------------------------------------------------------------------------------
    def step(self) -> pica.Event:
        """Apply the next event (the rest of it, inside a command list); returns it."""
        index = self.position
        event = self.events[index]
        if self._partial or self.packet:
            self.run_to(index + 1)
            return event
        self._current = index
        written = isinstance(event, pica.MemoryWrite)  # the commonest event (a game's uploads): never a list kick
        if written or (not isinstance(event, pica.CommandList) and self._list_kick(index) is None):
            self.sync_memory()  # the engines and the CPU read and write memory the pipeline may hold
        try:
            if isinstance(event, pica.MemoryWrite):
                self.memory.write(event.address, self.capture.blobs[event.blob], "memory write")
            else:
                self.gx.apply(event)
        except PicaError as err:
            raise ReplayError(index, describe(event), err) from err
        self._finish_event()
        self.pipeline.event(PipelineEventKind.DRAWS_COMPLETE, self.state)  # the event's draw records are complete
        return event

    def run_to(self, position: int, *, packets: int = 0, fresh: bool = False, forward_only: bool = False) -> None:
        """The state after ``position`` events (0 = initial state) and, with ``packets`` = k, after the first k
        packets of command-list event ``position`` (k at or past the list's end: the state after the event).

        From the checkpoint nearest the target when it is closer than the current position (always with ``fresh``:
        memory or state was changed behind the replay's back). ``forward_only`` runs from the current position
        through every packet on the way (observers see every draw in between) and refuses a target behind it."""
        if not 0 <= position <= len(self.events):
            raise PicaError(f"event position {position} outside 0..{len(self.events)}")
        if packets < 0:
            raise PicaError(f"packet count {packets} is negative")
        if packets and (position == len(self.events) or self._list_kick(position) is None):
            text = describe(self.events[position]) if position < len(self.events) else "the end"
            raise PicaError(f"event #{position} ({text}) runs no command list: it has no packet positions")
        target, current = (position, packets), (self.position, self.packet)
        if forward_only:
            if self._partial or target < current:
                raise PicaError(
                    f"cannot run forward from event {current[0]} + {current[1]} packets to event "
                    f"{position} + {packets} packets"
                )
        else:
            nearest = max(at for at in self._checkpoints if at <= target)
            if fresh or self._partial or target < current or nearest > current:
                self.restore(self._checkpoints[nearest])  # from the checkpoint closest to the target, either way
        if self.packet:  # inside the list of event ``self.position``
            if position == self.position:
                if packets > self.packet:
                    self._run_packets(packets - self.packet)  # finishes the event when the list ends first
                self.sync_memory()  # as on every return: a GL pipeline's pixels reach memory
                return
            self._run_packets(-1)
        while self.position < position:
            self.step()
        if packets:
            self._run_packets(packets)
        self.sync_memory()

    def run(self) -> None:
        """Replay every remaining event."""
        self.run_to(len(self.events))

    def run_to_frame(self, frame: int) -> None:
        """The state right after the FrameEnd of ``frame`` (what the screens show for it)."""
        if not 0 <= frame < len(self.frames):
            raise PicaError(f"frame {frame} outside 0..{len(self.frames) - 1}")
        self.run_to(self.frames[frame] + 1)

    def index(self) -> None:
        """Replay the whole capture once so ``draws`` is complete (checkpoints are kept)."""
        if not self.indexed:
            self.run()
            self.indexed = True

    def run_to_draw(self, draw: int) -> None:
        """The state right after draw ``draw`` (inside its command list)."""
        self.index()
        if not 0 <= draw < len(self.draws):
            raise PicaError(f"draw {draw} outside 0..{len(self.draws) - 1}")
        record = self.draws[draw]
        self.run_to_draw_at(draw, record.event, record.packet)

    def run_to_draw_at(self, draw: int, event: int, packet: int) -> None:
        """``run_to_draw`` given where the draw sits (its ``DrawRecord.event`` and ``.packet``): for a replay without
        draw records (``record_draws=False``) whose pipeline noted them (``picaemu.debug.output_watch``)."""
        if packet >= 0 and self._list_kick(event) is not None:  # a packet position: from the nearest checkpoint
            self.run_to(event, packets=packet + 1)
            return
        self.run_to(event)
        self._recorder.stop_after = draw
        try:
            self.step()
        except StopAfterDraw:
            self._partial = True
            self.sync_memory()  # as run_to returns: a GL pipeline's pixels reach memory
        finally:
            self._recorder.stop_after = None

    def stopped_within(self, packets: int, resume: tuple[int, int]) -> None:
        """The pipeline stopped the run (raised out of it) right after a draw inside the command list of event
        ``position``, where ``packets`` of it had run and the next starts at ``resume`` (a draw that ended its
        packet: a position a checkpoint can name). The replay stands there, as after ``run_to(position,
        packets=packets)``: ``run_to`` goes on from it."""
        self.packet, self._resume, self._partial = packets, resume, False
        self.sync_memory()

    # -- internals ---------------------------------------------------------------------------------------
    @property
    def draw_count(self) -> int:
        """Draws run so far (also without ``record_draws``)."""
        return self.processor.draw_count

    def _finish_event(self) -> None:
        """Event ``position`` is complete: move on, take the periodic / frame-start checkpoint, or one after an
        event that brought the work since the last checkpoint (its draws', and ``EVENT_WORK`` an event) to
        ``checkpoint_work``."""
        event = self.events[self.position]
        self.position += 1
        self.packet, self._resume = 0, None
        self._work += EVENT_WORK
        if self.checkpoints and (
            self.position % self.checkpoint_every == 0
            or isinstance(event, pica.FrameEnd)
            or self._work >= self.checkpoint_work
        ):
            self._work = 0
            self._checkpoints.setdefault((self.position, 0), self.checkpoint())

    def _list_kick(self, index: int) -> Kick | None:
        """(writes before the jump, jump channel, value written to it, writes after) of an event that kicks a
        command list through CMDBUF_JUMP0/1 (GX ProcessCommandList, a CiTrace register write); None otherwise.
        Remembered per event (events are only ever appended): seeks ask it at every step and draw."""
        if index not in self._kicks:
            self._kicks[index] = self._lower_kick(index)
        return self._kicks[index]

    def _lower_kick(self, index: int) -> Kick | None:
        writes = mmio.lower(self.events[index])
        for i in range(len(writes) - 1, -1, -1):
            address, value, width = writes[i]
            if address in JUMP_CHANNEL and width == 4:
                return writes[:i], JUMP_CHANNEL[address], value, writes[i + 1 :]
        return None

    def _channel_buffer(self, channel: int) -> tuple[int, int]:
        """(address, bytes) of the command buffer CMDBUF_ADDR/SIZE of ``channel`` name now."""
        regs = self.state.regs
        return (
            int(access.value(regs, f"CMDBUF_ADDR{channel}", "address")),
            int(access.value(regs, f"CMDBUF_SIZE{channel}", "size")),
        )

    def _run_packets(self, limit: int) -> None:
        """Run ``limit`` more packets (-1: all the rest) of command-list event ``position``; finishes the event
        when the list ends."""
        index = self.position
        before, channel, value, after = self._list_kick(index)  # type: ignore[misc]
        self._current = index
        try:
            if not self.packet:  # what the event writes before its jump; the jump register keeps its value
                for write in before:
                    self.gx.write(*write)
                self.state.regs[id_of(f"CMDBUF_JUMP{channel}")] = value
                self._resume = self._channel_buffer(channel)
            result = self.processor.run_at(*self._resume, packet_limit=limit)  # type: ignore[misc]
            if result.stopped_at_limit and result.resume is not None and result.resume[1] > 0:
                self.packet += result.packets
                self._resume = result.resume
                return
            for write in after:
                self.gx.write(*write)
        except PicaError as err:
            raise ReplayError(index, describe(self.events[index]), err) from err
        self._finish_event()
        self.pipeline.event(PipelineEventKind.DRAWS_COMPLETE, self.state)  # as ``step`` ends an event


def open(
    path: str | os.PathLike[str],
    *,
    pipeline: PipelineSink | None = None,
    strict: bool = True,
    checkpoints: bool = True,
    record_draws: bool = True,
    backend: str = "software",
    kind: type[Replay] = Replay,
) -> Replay:
    """Open a capture (.pica, .ctf or c3dcap directory) for replay; ``backend`` picks the rendering pipeline
    when ``pipeline`` is not given (``default_pipeline``); ``kind``: the class (``picaemu.debug.replay.DebugReplay``
    adds the debugger's answers)."""
    capture = load_capture(path, strict=strict)
    replay = kind(
        capture,
        pipeline=pipeline if pipeline is not None else default_pipeline(backend),
        checkpoints=checkpoints,
        record_draws=record_draws,
    )
    replay.path = os.fspath(path)
    return replay


def null_replay(capture: pica.Capture) -> Replay:
    """A replay that decodes and runs the engines but renders nothing (tests, listings)."""
    return Replay(capture, pipeline=NullPipeline())


__all__ = [
    "BACKENDS",
    "Checkpoint",
    "DrawRecord",
    "EventInfo",
    "Replay",
    "ReplayError",
    "default_pipeline",
    "describe",
    "null_replay",
    "open",
]
