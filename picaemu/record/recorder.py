"""The recording loop: breakpoints in the program's GX submission and present functions, one ``.pica`` event per
GX command, and the CPU-written memory every command reads.

Per stop (the program halted at a hook's entry; arguments per ARM EABI, see ``picaemu.record.symbols``):

- GX submission: the 8 command words are read from the argument register and decoded (``gxcmd``). A command
  list is first fetched, then run through the recorder's own ``CommandProcessor`` over ``MirrorMemory`` with the
  ``DrawReads`` sink: every range a draw reads (vertex arrays, index buffer, textures, mip levels, cube faces) and
  every buffer a jump lands in is fetched from the target before the processor looks at it. Engines: display
  transfer / texture copy / DMA inputs are fetched; a DMA is a RequestDma event (the replay copies, so a DMA
  out of GPU-written memory copies what the GPU wrote) and the mirror copies too; a FlushCacheRegions is an event
  with no work.
- draw function (``--call-sites``, ``picaemu.record.callsites``): the command-buffer write position and a
  backtrace; each draw the processor then meets in a submitted list gets the call that wrote it
  (``Capture.call_sites``, kept for the draws of complete frames).
- present: a Present event (virtual framebuffer addresses made physical); the top screen's present ends a frame
  (FrameEnd). ``gfxSwapBuffers`` (when ``gspPresentBuffer`` is not linked) ends a frame without a Present.

Memory (all physical): a fetch reads only what the GPU has not written (``gpu_owned``) and what this GX command
has not fetched yet (``fresh``), compares it with the mirror (the memory a replay of the capture so far would
hold) in 4 KiB pages and records the pages that changed as MemoryWrite events, in front of the command. Ranges
the GPU writes — render targets, transfer / copy / DMA destinations, memory fills — join ``gpu_owned``: a render
target is read once before the GPU first writes it, and never again. So the capture holds what the CPU wrote
and the replay recomputes what the GPU wrote (a program whose CPU later overwrites GPU output is not seen).

Recording starts at the first hook (``from_start``, the program halted before its first GPU command) or at the
first frame boundary, in which case ``meta["initial_state"] = "unknown"`` makes the replay warn about registers
read before the capture wrote them (``picaemu.replay.unknown_state``). ``run`` always returns a capture of the complete
frames recorded so far; what ended it (a ``LinkError``, ``RecordError``, Ctrl-C) is in ``ended_by``.

Each frame end is reported to ``on_frame`` (a ``FrameDone``: the frame's events, draws, bytes and when its last stop
arrived; ``picaemu.record.live`` writes the growing file from it), with the program halted in its present.
Stepping off a breakpoint is one single step when the stub's step ignores breakpoints (qemu), else the breakpoint
comes out for the step (``_step_off``). On a stub in no-ack mode a draw stop's reads go with its register request
(``_stopped``). ``call_sites_every`` N > 1 keeps the draw breakpoints in during frames
0, N, 2N, ... only (``--call-sites-every``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall
from picaemu.errors import LinkClosed, LinkError, PicaError, RecordError, TargetExited
from picaemu.formats import pica
from picaemu.gx import convert as gxconvert
from picaemu.gx import engines as E
from picaemu.gx.lcd import RESET_ROWS
from picaemu.memory import PhysicalMemory
from picaemu.record import gxcmd, memmap
from picaemu.record.callsites import CallSites, Chunk
from picaemu.record.gdb import GdbClient
from picaemu.record.reads import DrawReads, Intervals
from picaemu.record.symbols import Hook
from picaemu.replay import unknown_state
from picaemu.state import GpuState

PAGE = 4096
MAX_RANGE = 64 << 20  # one read larger than this is refused as a decoding error, not fetched
SP, PC = 13, 15
ARG_REGS = 4
SCREEN_ROWS = RESET_ROWS  # framebuffer rows per screen
PROGRESS_EVERY = 0.5  # seconds between progress lines inside a frame


@dataclass(frozen=True)
class FrameDone:
    """What ``Recorder.on_frame`` hears at each frame end: frame ``frame`` (from 0) is complete; ``events`` are its
    events (its FrameEnd last, memory writes not yet merged), ``draws`` its draws, ``bytes_recorded`` the memory it
    recorded; ``stopped_at`` is when the stop that ended it arrived (``time.perf_counter``)."""

    frame: int
    events: list[pica.Event]
    draws: int
    bytes_recorded: int
    stopped_at: float


@dataclass
class Progress:
    frames: int
    events: int
    bytes_read: int
    bytes_recorded: int
    seconds: float

    def line(self) -> str:
        rate = self.bytes_read / max(self.seconds, 1e-9) / 1024
        return (
            f"record: {self.frames} frame(s), {self.events} events, {self.bytes_read / 1024:.0f} KiB read "
            f"({rate:.0f} KiB/s), {self.bytes_recorded / 1024:.0f} KiB recorded, {self.seconds:.1f} s"
        )


class MirrorMemory(PhysicalMemory):
    """The recorder's copy of GPU-visible memory; ``view`` (how the command processor and the draw decoders
    read) fetches the range from the target first."""

    def __init__(self, on_view: Callable[[int, int], None]) -> None:
        super().__init__()
        self.on_view = on_view

    def view(self, address: int, count: int, dtype: np.dtype | type, who: str = "access") -> np.ndarray:
        self.on_view(address, count * np.dtype(dtype).itemsize)
        return super().view(address, count, dtype, who)


class Recorder:
    """Records from ``link`` (a handshaken ``GdbClient``, target halted) with ``hooks``; see the module docstring."""

    def __init__(
        self,
        link: GdbClient,
        hooks: list[Hook],
        *,
        from_start: bool,
        frames: int | None = None,
        stop_timeout: float = 60.0,
        progress: Callable[[Progress], None] | None = None,
        warn: Callable[[str], None] | None = None,
        meta: dict[str, str] | None = None,
        call_sites: CallSites | None = None,
        on_frame: Callable[[FrameDone], None] | None = None,
        call_sites_every: int = 1,
    ) -> None:
        self.link, self.hooks = link, {h.address: h for h in hooks}
        self.from_start, self.frames_wanted, self.stop_timeout = from_start, frames, stop_timeout
        self.progress_cb, self.warn_cb, self.on_frame = progress, warn, on_frame
        self.stopped_at = 0.0  # when the last stop arrived (perf_counter)
        self._frame_bytes = 0  # bytes_recorded at the last frame end
        self.recording = from_start
        self.linear_base = memmap.MAPPINGS[0].virtual
        self.blobs = pica.BlobStore()
        self.events: list[pica.Event] = []
        self.complete = 0  # events up to the last FrameEnd
        self.frames = 0
        self.bytes_recorded = 0
        self.warnings: list[str] = []
        self.ended_by: BaseException | None = None
        self.gpu_owned, self.fresh = Intervals(), Intervals()
        self.mirror = MirrorMemory(self.fetch)
        self.call_sites, self.call_sites_every = call_sites, max(1, call_sites_every)
        self.installed: dict[int, Hook] = {}  # address -> hook whose breakpoint is in
        self.steps_over: bool | None = None  # whether the stub's single step ignores breakpoints (_step_off)
        self.complete_draws = 0  # draws up to the last FrameEnd
        self.sink = DrawReads(self.fetch, self.target, self.warn, None if call_sites is None else self._draw_made)
        self.processor = CommandProcessor(
            self.mirror, self.sink, GpuState(regs=gxconvert.reset_regs()), record_draws=False
        )
        self.meta = {"source": "picaemu record", **(meta or {})}
        if not from_start:
            self.meta[unknown_state.META_KEY] = unknown_state.UNKNOWN
        self._start = time.monotonic()
        self._last_progress = 0.0

    # -- the loop ----------------------------------------------------------------------------------------
    def run(self) -> pica.Capture:
        """Record until ``frames`` frames are complete, the link fails or Ctrl-C; returns the complete frames."""
        try:
            for each in self.hooks.values():
                if each.role != "draw" or self._sampled(0):
                    self._install(each)
            hook: Hook | None = None
            while self.frames_wanted is None or self.frames < self.frames_wanted:
                if hook is not None and hook.address in self.installed:
                    self._step_off(hook)
                stop = self.link.resume(self.stop_timeout)
                self.stopped_at = time.perf_counter()
                regs, chunks = self._stopped()
                hook = self.hooks.get(regs[PC])
                if hook is None:
                    raise RecordError(
                        f"the program stopped at 0x{regs[PC]:08X} (signal {stop.signal}), not at a recorded function"
                    )
                self._handle(hook, regs, chunks)
        except KeyboardInterrupt as err:
            self.ended_by = err
        except (LinkError, RecordError) as err:
            self.ended_by = err
        finally:
            self._leave()
        self._progress(force=True)
        return self.capture()

    def _stopped(self) -> tuple[list[int], list[Chunk]]:
        """The registers at a stop, and the memory a draw stop reads when the stub takes several requests at once
        (no-ack mode) and draw breakpoints are in: asked for in the same round trip (``CallSites.prefetch``)."""
        sites = self.call_sites
        if sites is None or self.link.ack_mode or not self.recording or not self._draws_in():
            return self.link.registers(), []
        ranges = [(at, size) for at, size in sites.prefetch() if size <= self.link.read_chunk]
        regs, data = self.link.registers_and_memory(ranges)
        return regs, [(at, d) for (at, _), d in zip(ranges, data, strict=True) if d is not None]

    def _draws_in(self) -> bool:
        return any(hook.role == "draw" for hook in self.installed.values())

    def _install(self, hook: Hook) -> None:
        self.link.set_breakpoint(hook.address, hook.kind)
        self.installed[hook.address] = hook

    def _uninstall(self, hook: Hook) -> None:
        del self.installed[hook.address]
        self.link.clear_breakpoint(hook.address, hook.kind)

    def _step_off(self, hook: Hook) -> None:
        """Execute the instruction the program stands on, under the breakpoint of ``hook``. A stub whose single
        step ignores breakpoints (qemu) needs just the step; others would stop at the breakpoint again without
        executing anything, and need it taken out for the step (two more requests; on qemu those also discard
        translated code, the larger cost). The first step tells which (``steps_over``): a step that does not leave
        the hook's address made no progress."""
        if self.steps_over is not False:
            self.link.step()
            if self.steps_over is None:
                self.steps_over = self.link.registers()[PC] != hook.address
            if self.steps_over:
                return
        self.link.clear_breakpoint(hook.address, hook.kind)
        self.link.step()
        self.link.set_breakpoint(hook.address, hook.kind)

    def _sampled(self, frame: int) -> bool:
        """Whether call sites are recorded in frame ``frame`` (``call_sites_every``)."""
        return self.call_sites is not None and frame % self.call_sites_every == 0

    def _sample_next_frame(self) -> None:
        """At a frame end: the draw breakpoints in for the next frame when it is sampled, out otherwise."""
        want = self._sampled(self.frames)
        for hook in self.hooks.values():
            if hook.role == "draw" and want != (hook.address in self.installed):
                (self._install if want else self._uninstall)(hook)

    def capture(self) -> pica.Capture:
        """The capture of every complete frame so far; consecutive adjacent memory writes (separate fetches of
        neighbouring ranges) are merged into one (``pica.merged``)."""
        return pica.merged(
            pica.Capture(
                dict(self.meta), self.initial_state(), self.blobs, self.events[: self.complete], call_sites=self.sites()
            )
        )

    @staticmethod
    def initial_state() -> pica.InitialState:
        """A recording starts from the GPU's power-on registers."""
        return pica.InitialState(regs=gxconvert.reset_regs(), gpu_regs=gxconvert.reset_gpu_regs())

    def sites(self) -> dict[int, pica.CallSite]:
        """The call sites of the draws of the complete frames."""
        return {} if self.call_sites is None else self.call_sites.before(self.complete_draws)

    def _leave(self) -> None:
        """Best effort: stop a running target, take the breakpoints out, detach. A dead link or an exited program
        is left alone (nothing to clean up)."""
        if isinstance(self.ended_by, (LinkClosed, TargetExited)):
            return
        try:
            self.link.drain()
            if self.ended_by is not None:
                self.link.interrupt()
            for hook in list(self.installed.values()):
                self._uninstall(hook)
            self.link.detach()
        except LinkError as err:
            self.warn(f"could not detach cleanly: {err}")

    def _handle(self, hook: Hook, regs: list[int], chunks: list[Chunk]) -> None:
        if hook.role == "submit":
            if self.recording:
                assert hook.command_register is not None
                self._submit(self.link.read_memory(regs[hook.command_register], gxcmd.COMMAND_BYTES))
        elif hook.role == "present":
            self._present(regs)
        elif hook.role == "draw":
            if self.recording and self.call_sites is not None:
                try:
                    self.call_sites.on_call(regs, chunks)
                except RecordError as err:
                    self.warn(f"call site at {hook.name} skipped: {err}")
        elif self.recording:  # "frame": gfxSwapBuffers without gspPresentBuffer
            self._frame_end()
        else:
            self.recording = True

    # -- GX commands -------------------------------------------------------------------------------------
    def _submit(self, raw: bytes) -> None:
        base = memmap.linear_base_of(int.from_bytes(raw[4:8], "little"))
        if base is not None:
            self.linear_base = base
        self.fresh.clear()
        try:
            cmd = gxcmd.decode(raw)
            if cmd.id is gxcmd.GxId.PROCESS_COMMAND_LIST:
                self._command_list(cmd.event)  # type: ignore[arg-type]
                return
            for address, size in cmd.reads:
                self.fetch(address, size)
            if isinstance(cmd.event, pica.RequestDma):  # the mirror follows the copy as the replay will make it
                E.dma_copy(self.mirror, cmd.event.src, cmd.event.dst, cmd.event.size)
        except LinkError:
            raise
        except PicaError as err:
            self.warn(f"GX command {raw[0]:#04x} skipped: {err}")
            return
        for address, size in cmd.writes:
            self.gpu_owned.add(address, address + size)
        self.events.append(cmd.event)

    def _command_list(self, event: pica.CommandList) -> None:
        self.fetch(event.address, event.size)
        try:
            self.processor.run_at(event.address, event.size - event.size % 8)
        except LinkError:
            raise
        except PicaError as err:  # the replay will meet the same error; record the list as it is
            self.warn(f"command list at 0x{event.address:08X}: {err}")
        if self.call_sites is not None:
            self.call_sites.after_list(event.address, event.size)
        self.events.append(event)

    def _draw_made(self, call: DrawCall) -> None:
        assert self.call_sites is not None
        self.call_sites.on_draw(call.index, self.processor.buffer, call.offset)

    def _present(self, regs: list[int]) -> None:
        screen, swap, fb_a, fb_b = regs[:ARG_REGS]
        stack = self.link.read_memory(regs[SP], 8)
        stride, mode = int.from_bytes(stack[:4], "little"), int.from_bytes(stack[4:], "little")
        if not self.recording:
            self.recording = screen == 0
            return
        if screen not in SCREEN_ROWS:
            self.warn(f"present on screen {screen} ignored (0 top, 1 bottom)")
            return
        size = stride * SCREEN_ROWS[screen]
        self.fresh.clear()
        try:
            left = memmap.to_physical(fb_a, size, "framebuffer")
            right = memmap.to_physical(fb_b, size, "framebuffer") if fb_b else left
            for address in {left, right}:  # a framebuffer the CPU drew into (a console, a software renderer)
                self.fetch(address, size)
        except LinkError:
            raise
        except PicaError as err:
            self.warn(f"present on screen {screen} skipped: {err}")
            return
        self.events.append(pica.Present(screen, left, right, mode, stride, swap & 1))
        if screen == 0:
            self._frame_end()

    def _frame_end(self) -> None:
        self.events.append(pica.FrameEnd())
        done = FrameDone(
            self.frames,
            self.events[self.complete :],
            self.processor.draw_count - self.complete_draws,
            self.bytes_recorded - self._frame_bytes,
            self.stopped_at,
        )
        self.frames += 1
        self.complete = len(self.events)
        self.complete_draws = self.processor.draw_count
        self._frame_bytes = self.bytes_recorded
        if self.call_sites_every > 1:
            self._sample_next_frame()
        self._progress(force=True)
        if self.on_frame is not None:
            self.on_frame(done)

    # -- memory ------------------------------------------------------------------------------------------
    def fetch(self, address: int, size: int) -> None:
        """Make ``[address, address + size)`` (physical) current in the mirror, recording what the CPU changed;
        parts the GPU owns or this command already fetched are skipped."""
        if size <= 0:
            return
        if size > MAX_RANGE:
            raise RecordError(f"a read of {size} bytes at 0x{address:08X} is implausibly large")
        for lo, hi in self.gpu_owned.missing(address, address + size):
            for a, b in self.fresh.missing(lo, hi):
                virtual = memmap.to_virtual(a, b - a, linear_base=self.linear_base)
                self._record(a, self.link.read_memory(virtual, b - a))
                self.fresh.add(a, b)
        self._progress()

    def target(self, address: int, size: int) -> None:
        """A render target: read once (what the CPU left there) before the GPU first writes it, then GPU-owned."""
        self.fetch(address, size)
        self.gpu_owned.add(address, address + size)

    def _record(self, address: int, data: bytes) -> None:
        """Compare fetched bytes with the mirror page by page; MemoryWrite events for each run of changed pages."""
        new = np.frombuffer(data, np.uint8)
        old = self.mirror.bytes(address, new.size, "mirror")
        changed = old != new
        if not changed.any():
            return
        starts = np.unique(np.r_[0, np.arange((-address) % PAGE, new.size, PAGE)])  # page pieces of the range
        dirty = np.logical_or.reduceat(changed, starts)
        ends = np.r_[starts[1:], new.size]
        i = 0
        while i < len(starts):
            if not dirty[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(starts) and dirty[j + 1]:
                j += 1
            lo, hi = int(starts[i]), int(ends[j])
            self.events.append(pica.MemoryWrite(address + lo, self.blobs.add(data[lo:hi])))
            self.bytes_recorded += hi - lo
            i = j + 1
        old[:] = new

    # -- reporting ---------------------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            if self.warn_cb is not None:
                self.warn_cb(message)

    def _progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.progress_cb is None or (not force and now - self._last_progress < PROGRESS_EVERY):
            return
        self._last_progress = now
        self.progress_cb(
            Progress(self.frames, len(self.events), self.link.bytes_read, self.bytes_recorded, now - self._start)
        )
