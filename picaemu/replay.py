"""Replaying captures: ``picaemu.open(path) -> Replay``, the object the CLI, statistics and the GUI build on.

A ``Replay`` owns emulated memory, a ``CommandProcessor`` (with the rendering pipeline), the external engines
(``picaemu.gx.Gx``) and the capture's event list. The debugger's index is frame -> event (GX command or register
write) -> draw -> packet:

- ``events``: the capture's events; ``position`` = how many have been applied (0 = initial state).
- ``frames``: for frame i, the index of its FrameEnd event; ``run_to_frame(i)`` stops right after it.
- ``draws``: ``DrawRecord`` per draw (global index, event index, byte offset of the trigger packet, kind, the
  pipeline's counters) — complete after ``index()`` (one pass over the whole capture), else as far as replayed.
- ``packets(event)``: the packets of a command-list event, decoded from memory as it was when the list ran.
- ``run_to(n)`` puts the replay in the state after n events; going backwards restores the nearest checkpoint
  (GPU state copy + sparse memory snapshot + external registers, taken every ``checkpoint_every`` events and
  at every frame start) and replays forward. ``run_to_draw(d)`` stops inside a command list right after draw d.
- Views of the current state: ``state`` (GpuState), ``screen("top"|"bottom")`` (H, W, 3) uint8 upright,
  ``color_buffer()`` (H, W, 4) uint8 / ``depth_buffer()`` ((H, W) uint32, (H, W) uint8) of the render target the
  registers name, ``memory``.

An event that fails raises ``ReplayError`` (a PicaError naming the event index and text; ``cause`` holds the
underlying error: MemoryFault, CommandBufferError, GxError, ...); ``position`` stays at that event, so everything
before the fault stays usable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from picaemu import framebuffer as fbm
from picaemu import lcd
from picaemu.command.packets import Packet, list_packets
from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall, NullPipeline, PipelineEventKind, PipelineSink
from picaemu.errors import FormatError, PicaError
from picaemu.formats import c3dcap, citrace, pica
from picaemu.gx import Gx
from picaemu.gx import convert as gxconvert
from picaemu.memory import PhysicalMemory
from picaemu.state import GpuState, ShaderUnitMemory

PAGE = 4096
DECIMAL_FIELDS = frozenset({"blob", "screen", "select", "stride", "size", "width"})  # the rest print in hex
CHECKPOINT_EVERY = 64


def load_capture(path: str | os.PathLike[str], *, strict: bool = True) -> pica.Capture:
    """Any supported capture as a ``.pica`` Capture: a .pica file, a CiTrace .ctf, or a c3dcap scene directory."""
    p = Path(path)
    if c3dcap.is_scene(p):
        return gxconvert.from_scene(c3dcap.read(p))
    if p.is_dir():
        raise FormatError("directory is not a c3dcap scene (no manifest.json)", path=str(p))
    with p.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(citrace.MAGIC):
        return gxconvert.from_citrace(citrace.read(p, strict=strict))
    if head == pica.MAGIC:
        return pica.read(p, strict=strict)
    raise FormatError(f"unknown capture kind (starts with {head[:8]!r})", offset=0, path=str(p))


def is_capture(path: str | os.PathLike[str]) -> bool:
    """True for a c3dcap directory or a file that starts with the .pica or CiTrace magic."""
    p = Path(path)
    if c3dcap.is_scene(p):
        return True
    if not p.is_file():
        return False
    with p.open("rb") as fh:
        head = fh.read(8)
    return head.startswith(citrace.MAGIC) or head == pica.MAGIC


def initial_gpu_state(s: pica.InitialState) -> GpuState:
    return GpuState(
        regs=s.regs.astype(np.uint32),
        vs=ShaderUnitMemory(s.vs_code.astype(np.uint32), s.vs_opdescs.astype(np.uint32),
                            s.vs_uniforms.astype(np.float32)),
        gs=ShaderUnitMemory(s.gs_code.astype(np.uint32), s.gs_opdescs.astype(np.uint32),
                            s.gs_uniforms.astype(np.float32)),
        lighting_luts=s.lighting_luts.astype(np.uint32), fog_lut=s.fog_lut.astype(np.uint32),
        proctex_luts=s.proctex_luts.astype(np.uint32), gas_lut=s.gas_lut.astype(np.uint32),
        fixed_attribs=s.fixed_attribs.astype(np.float32),
    )


def describe(event: pica.Event) -> str:
    """One line naming an event and its parameters (addresses in hex), for listings and the GUI's event tree."""
    name = type(event).__name__
    if isinstance(event, pica.FrameEnd):
        return name
    if isinstance(event, pica.Marker):
        return f"{name} {event.text!r}"
    if isinstance(event, pica.MemoryFill):
        units = [f"0x{u.start:08X}-0x{u.end:08X}=0x{u.value:08X}" for u in event.units if u.control & 1]
        return f"{name} {' '.join(units)}"
    parts = [f"{key}={value}" if key in DECIMAL_FIELDS else f"{key}=0x{value:X}" for key, value in vars(event).items()]
    return f"{name} {' '.join(parts)}"


@dataclass(frozen=True)
class EventNode:
    """One event in the debugger's tree: its index, frame, one-line text and the draws it made."""

    index: int
    frame: int
    text: str
    draws: tuple[int, ...]


@dataclass
class DrawRecord:
    """One draw as the replay saw it."""

    index: int
    event: int
    offset: int
    kind: str
    stats: dict[str, int | float] = field(default_factory=dict)


class ReplayError(PicaError):
    """An event failed: names the event index and its text, and keeps the underlying error in ``cause``."""

    def __init__(self, index: int, text: str, cause: PicaError) -> None:
        super().__init__(f"event #{index} ({text}): {cause}")
        self.event = index
        self.cause = cause


class _StopAfterDraw(Exception):
    """Internal: unwinds the command processor right after the requested draw."""


class _Recorder:
    """A PipelineSink wrapper: records every draw (no per-packet cost) and can stop after one."""

    def __init__(self, inner: PipelineSink, replay: Replay) -> None:
        self.inner, self.replay = inner, replay
        self.stop_after: int | None = None

    def draw(self, call: DrawCall) -> None:
        self.inner.draw(call)
        self.replay._record_draw(call)
        if self.stop_after is not None and call.index == self.stop_after:
            raise _StopAfterDraw

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)


@dataclass
class Checkpoint:
    position: int
    state: GpuState
    pages: dict[str, tuple[np.ndarray, np.ndarray]]  # region -> (page indices, (n, PAGE) bytes)
    gpu: np.ndarray
    lcd: np.ndarray
    draw_count: int


def default_pipeline() -> PipelineSink:
    """The rendering pipeline (``picaemu.pipeline.Pipeline``)."""
    from picaemu.pipeline import Pipeline

    return Pipeline()


class Replay:
    """A capture being replayed; see the module docstring."""

    def __init__(self, capture: pica.Capture, *, pipeline: PipelineSink | None = None,
                 checkpoint_every: int = CHECKPOINT_EVERY, checkpoints: bool = True) -> None:
        """``checkpoints=False`` keeps only the initial one (forward-only headless runs: render, batch, stats)."""
        self.capture = capture
        self.events = capture.events
        self.frames = [i for i, e in enumerate(self.events) if isinstance(e, pica.FrameEnd)]
        self.checkpoint_every = max(1, checkpoint_every)
        self.checkpoints = checkpoints
        self.pipeline = pipeline if pipeline is not None else default_pipeline()
        self._recorder = _Recorder(self.pipeline, self)
        self.memory = PhysicalMemory()
        self.processor = CommandProcessor(self.memory, self._recorder, initial_gpu_state(capture.state))
        self.gx = Gx(self.processor)
        self.gx.gpu[:] = capture.state.gpu_regs
        self.gx.lcd[:] = capture.state.lcd_regs
        for address, blob in capture.state.memory:
            self.memory.write(address, capture.blobs[blob], f"initial memory block at 0x{address:08X}")
        self.position = 0
        self.draws: list[DrawRecord] = []
        self.indexed = False
        self._current = 0
        self._partial = False  # True after run_to_draw stopped inside a command list
        self._packets: dict[int, tuple[list[Packet], PicaError | None]] = {}
        self._checkpoints: dict[int, Checkpoint] = {0: self._checkpoint()}

    # -- views -------------------------------------------------------------------------------------------
    @property
    def state(self) -> GpuState:
        return self.processor.state

    @property
    def frame(self) -> int:
        """Index of the frame the next event belongs to."""
        return sum(1 for f in self.frames if f < self.position)

    def screen(self, screen: str = "top", eye: str = "left") -> np.ndarray:
        """What ``screen`` shows now: (H, W, 3) uint8 upright landscape."""
        return lcd.screen_image(self.memory, self.gx.gpu, screen, eye)

    def framebuffer_state(self) -> fbm.FramebufferState:
        fb = fbm.FramebufferState.from_regs(self.state.regs)
        fb.check_size()
        return fb

    def color_buffer(self) -> np.ndarray:
        """The render target the registers name: (H, W, 4) uint8 RGBA, row 0 = top."""
        return fbm.read_color_image(self.memory, self.framebuffer_state())

    def depth_buffer(self) -> tuple[np.ndarray, np.ndarray]:
        """((H, W) uint32 depth, (H, W) uint8 stencil) of the depth buffer the registers name, row 0 = top."""
        return fbm.read_depth_image(self.memory, self.framebuffer_state())

    def texture(self, unit: int, level: int = 0, face: int = 0) -> np.ndarray:
        """Mip ``level`` (cube ``face``) of the texture bound to ``unit`` now: (H, W, 4) uint8 RGBA, row 0 = top."""
        from picaemu.texture import decode_texture
        from picaemu.texture.state import TextureUnitState

        ustate = TextureUnitState.from_regs(self.state.regs, unit)
        if not 0 <= face < len(ustate.addresses):
            raise PicaError(f"texture unit {unit} has {len(ustate.addresses)} face(s), not face {face}")
        return decode_texture(self.memory, ustate.addresses[face], ustate.width, ustate.height, ustate.format.value,
                              level)

    def outline(self) -> list[list[EventNode]]:
        """Frames -> events (with their draws), after indexing the whole capture; trailing events after the last
        FrameEnd form a final, unfinished frame."""
        self.index()
        by_event: dict[int, list[int]] = {}
        for d in self.draws:
            by_event.setdefault(d.event, []).append(d.index)
        frames: list[list[EventNode]] = [[]]
        for i, event in enumerate(self.events):
            frames[-1].append(EventNode(i, len(frames) - 1, describe(event), tuple(by_event.get(i, ()))))
            if isinstance(event, pica.FrameEnd) and i + 1 < len(self.events):
                frames.append([])
        return frames

    def draws_of(self, event: int) -> list[DrawRecord]:
        return [d for d in self.draws if d.event == event]

    def packets(self, event: int) -> list[Packet]:
        """The packets of command-list event ``event`` (raises the walk's error after a partial list). The first
        call moves the replay to just before that event (the list is read from memory as it then was); results
        are cached."""
        if not isinstance(self.events[event], pica.CommandList):
            raise PicaError(f"event #{event} is {type(self.events[event]).__name__}, not a command list")
        if event not in self._packets:
            self.run_to(event)
            ev = self.events[event]
            data = self.memory.bytes(ev.address, ev.size - ev.size % 4, f"command list of event #{event}")
            self._packets[event] = list_packets(data.copy())
        packets, error = self._packets[event]
        if error is not None:
            raise error
        return packets

    # -- moving ------------------------------------------------------------------------------------------
    def step(self) -> pica.Event:
        """Apply the next event; returns it."""
        index = self.position
        event = self.events[index]
        self._current = index
        try:
            if isinstance(event, pica.MemoryWrite):
                self.memory.write(event.address, self.capture.blobs[event.blob], "memory write")
            else:
                self.gx.apply(event)
        except PicaError as err:
            raise ReplayError(index, describe(event), err) from err
        self.position = index + 1
        if self.checkpoints and (self.position % self.checkpoint_every == 0 or isinstance(event, pica.FrameEnd)):
            self._checkpoints.setdefault(self.position, self._checkpoint())
        return event

    def run_to(self, position: int) -> None:
        """The state after ``position`` events (0 = initial state)."""
        if not 0 <= position <= len(self.events):
            raise PicaError(f"event position {position} outside 0..{len(self.events)}")
        if position < self.position or self._partial:
            self._restore(max(p for p in self._checkpoints if p <= position))
        while self.position < position:
            self.step()

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
        event = self.draws[draw].event
        self.run_to(event)
        self._recorder.stop_after = draw
        try:
            self.step()
        except _StopAfterDraw:
            self._partial = True
        finally:
            self._recorder.stop_after = None

    # -- internals ---------------------------------------------------------------------------------------
    def _record_draw(self, call: DrawCall) -> None:
        if call.index >= len(self.draws):
            self.draws.append(DrawRecord(call.index, self._current, call.offset, call.kind.value, dict(call.stats)))

    def _checkpoint(self) -> Checkpoint:
        pages = {}
        for region in self.memory.regions:
            data = self.memory.region_bytes(region.name)
            full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
            used = np.flatnonzero(full.any(axis=1))
            pages[region.name] = (used, full[used].copy())
        return Checkpoint(self.position, self.state.copy(), pages, self.gx.gpu.copy(), self.gx.lcd.copy(),
                          self.processor.draw_count)

    def _restore(self, position: int) -> None:
        cp = self._checkpoints[position]
        for region in self.memory.regions:
            data = self.memory.region_bytes(region.name)
            full = data[: data.size // PAGE * PAGE].reshape(-1, PAGE)
            full[np.flatnonzero(full.any(axis=1))] = 0
            used, saved = cp.pages[region.name]
            full[used] = saved
        self.processor.load_state(cp.state.copy())
        self.processor.draw_count = cp.draw_count
        self.gx.gpu[:], self.gx.lcd[:] = cp.gpu, cp.lcd
        self.pipeline.event(PipelineEventKind.RESTART_PRIMITIVE, self.state)
        self.position = position
        self._partial = False


def open(path: str | os.PathLike[str], *, pipeline: PipelineSink | None = None, strict: bool = True,
         checkpoints: bool = True) -> Replay:
    """Open a capture (.pica, .ctf or c3dcap directory) for replay."""
    return Replay(load_capture(path, strict=strict), pipeline=pipeline, checkpoints=checkpoints)


def null_replay(capture: pica.Capture) -> Replay:
    """A replay that decodes and runs the engines but renders nothing (tests, listings)."""
    return Replay(capture, pipeline=NullPipeline())
