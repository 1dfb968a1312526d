"""The linter: replays a capture once without rendering and collects ``Finding``s.

``lint(capture) -> list[Finding]`` builds a ``picaemu.replay.Replay`` whose pipeline is ``_LintSink`` (renders
nothing; runs ``picaemu.lint.draws.DrawChecks`` and ``picaemu.lint.unset.UnsetRegisters`` on every draw's decoded
state). No observer watches the command processor (it would cost several renders): after each list
``picaemu.lint.scan.PacketScan`` walks the buffers the run executed (packets past the register file, uploads past
c95, the registers the capture sets). Around every event it checks what the event itself does: GX
commands (alignment, list size and allocation, the finalize interrupt, display transfers reading a render
target in another format) and keeps the memory the capture has defined so far (``Intervals``: initial memory
blocks, CPU writes, fills, transfer and copy outputs, the render targets draws write): a read outside it reads
what the console happened to hold there, which the capture does not know.

A problem found at many draws (the same attribute buffer, the same texture) is one finding, at its first draw,
whose message counts the later draws. A replay fault (a truncated packet, a jump outside memory, a GX command the
hardware rejects) is a ``command-fault`` finding and ends the run: later events depend on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np

from picaemu import regs as regtable
from picaemu.draw import DrawCall, NullPipeline
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.gx import convert as gxconvert
from picaemu.gx import engines
from picaemu.lint.draws import DrawChecks
from picaemu.lint.rules import Finding
from picaemu.lint.scan import PacketScan
from picaemu.lint.unset import UnsetRegisters
from picaemu.lint.unset import message as unset_message
from picaemu.record.reads import Intervals
from picaemu.regs.external import P3D_BASE
from picaemu.replay import Replay, ReplayError
from picaemu.replay.unknown_state import is_unknown

LIST_ALIGN = 16  # bytes: GX command lists are submitted in whole 16-byte units (citro3d pads with a finalize)
GX_ALIGN = 8  # bytes: GX engines take addresses in 8-byte units (the registers hold address >> 3)
P3D_WINDOW = (P3D_BASE, P3D_BASE + 4 * regtable.NUM_REGS)  # internal registers as physical addresses
FILL_ENABLE = 1  # bit 0 of a memory-fill unit's control word: the unit runs


class _Collector:
    """Findings in order, one per problem key; later repeats are counted into the first finding's message."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._first: dict[Hashable, int] = {}
        self._repeats: dict[int, int] = {}
        self.event = 0
        self.draw = -1
        self.offset = -1
        self.buffer = 0
        self.packet = -1

    def add(self, code: str, message: str, key: Hashable | None = None, **where: int) -> None:
        key = (code, key) if key is not None else None
        if key is not None and key in self._first:
            i = self._first[key]
            self._repeats[i] = self._repeats.get(i, 0) + 1
            return
        place = self.place()
        place.update(where)
        if key is not None:
            self._first[key] = len(self.findings)
        self.findings.append(Finding(code, message=message, **place))

    def place(self) -> dict[str, int]:
        """Where the replay is: event, draw, offset, buffer, packet."""
        return {
            "event": self.event,
            "draw": self.draw,
            "offset": self.offset,
            "buffer": self.buffer,
            "packet": self.packet,
        }

    def result(self) -> list[Finding]:
        out = list(self.findings)
        for i, n in self._repeats.items():
            out[i] = dataclasses.replace(out[i], message=f"{out[i].message} (and {n} later draw(s) or packet(s))")
        return out


class _LintSink(NullPipeline):
    """Renders nothing; checks every draw and records the render targets it writes."""

    def __init__(self, linter: Linter) -> None:
        super().__init__()
        self.linter = linter

    def draw(self, call: DrawCall) -> None:
        lt = self.linter
        out = lt.out
        out.draw, out.offset, out.packet, out.buffer = call.index, call.offset, call.packet, lt.processor.buffer
        try:
            lt.checks.check(call)
            lt.unset.note(call, out.place())
            fb = call.draw_state.need("framebuffer")
        except PicaError:
            return
        finally:
            out.draw = out.offset = out.packet = -1
            out.buffer = 0
        pixels = fb.width * fb.height
        if fb.color_write:
            lt.define(fb.color_address, fb.color_address + pixels * fb.color_bpp)
            lt.targets[fb.color_address] = (fb.color_format, call.index)
        if fb.depth_write or fb.stencil_write:
            lt.define(fb.depth_address, fb.depth_address + pixels * fb.depth_bpp)


def _initially_set(capture: pica.Capture) -> np.ndarray:
    """(NUM_REGS,) bool: registers the capture's initial state sets (a value other than the power-on one), or
    none for a capture whose initial state is unknown."""
    if is_unknown(capture.meta):
        return np.zeros(regtable.NUM_REGS, bool)
    return np.asarray(capture.state.regs, np.uint32) != gxconvert.reset_regs().astype(np.uint32)


class Linter:
    """One lint run over ``capture``; ``run()`` returns the findings (see the module docstring)."""

    def __init__(self, capture: pica.Capture) -> None:
        self.capture = capture
        self.out = _Collector()
        self.defined = Intervals()
        self.targets: dict[int, tuple] = {}  # color buffer address -> (format drawn, draw index)
        written = _initially_set(capture)
        self.checks = DrawChecks(self.defined, self.out.add)
        self.unset = UnsetRegisters(written)
        self.scan = PacketScan(written, self.out.add)
        self.replay = Replay(capture, pipeline=_LintSink(self), checkpoints=False, record_draws=False)
        self.processor = self.replay.processor
        for address, blob in capture.state.memory:
            self.define(address, address + len(capture.blobs[blob]))

    def define(self, start: int, end: int) -> None:
        """The capture has written ``[start, end)``."""
        if not self.defined.covers(start, end):
            self.defined.add(start, end)
            self.checks.version += 1

    def run(self) -> list[Finding]:
        for index, event in enumerate(self.capture.events):
            self.out.event = index
            self._before(event)
            try:
                self.replay.step()
            except PicaError as err:
                cause = err.cause if isinstance(err, ReplayError) else err
                offset = getattr(cause, "offset", None)
                self.out.add("command-fault", f"{cause} (the lint stops here)", offset=-1 if offset is None else offset)
                break
            self._after(event)
        for place, registers in self.unset.findings():
            self.out.add("uninitialized-state", unset_message(registers), **place)
        # in capture order: by event, then by packet (the event's own findings first); stable otherwise
        return sorted(self.out.result(), key=lambda f: (f.event, f.packet))

    # -- GX events -----------------------------------------------------------------------------------------
    def _before(self, event: pica.Event) -> None:
        if isinstance(event, pica.CommandList):
            self._list(event)
        elif isinstance(event, pica.DisplayTransfer | pica.TextureCopy):
            self._aligned(f"{type(event).__name__} source", event.src)
            self._aligned(f"{type(event).__name__} destination", event.dst)
            if isinstance(event, pica.DisplayTransfer):
                self._transfer_format(event)
        elif isinstance(event, pica.MemoryFill):
            for unit in event.units:
                if unit.control & FILL_ENABLE:
                    self._aligned("MemoryFill start", unit.start)
                    self._aligned("MemoryFill end", unit.end)

    def _aligned(self, what: str, address: int, unit: int = GX_ALIGN) -> None:
        if address % unit:
            self.out.add("misaligned-address", f"{what} 0x{address:08X} is not a multiple of {unit} bytes")

    def _list(self, event: pica.CommandList) -> None:
        where = f"command list 0x{event.address:08X} ({event.size} bytes)"
        self._aligned(where + ": address", event.address)
        if event.size % LIST_ALIGN:
            self.out.add("list-size", f"{where}: size is not a multiple of {LIST_ALIGN} bytes")
        if not self.defined.covers(event.address, event.address + event.size):
            end = self.defined.end_of(event.address)
            written = "none of it" if end is None else f"only {end - event.address} bytes"
            self.out.add("list-size", f"{where} runs past the memory the capture wrote ({written})")

    def _transfer_format(self, event: pica.DisplayTransfer) -> None:
        flags = engines.TransferFlags.from_word(event.flags)
        drawn = self.targets.get(event.src)
        reads = engines.TRANSFER_FORMATS.get(flags.in_format)
        if flags.texture_copy or drawn is None or reads is None or reads == drawn[0]:
            return
        self.out.add(
            "transfer-format-mismatch",
            f"display transfer reads 0x{event.src:08X} as {reads.name}; draw {drawn[1]} drew it as {drawn[0].name}",
        )

    def _after(self, event: pica.Event) -> None:
        run = self.replay.gx.last_run
        if isinstance(event, pica.CommandList | pica.RegWrite) and run is not None:
            self.replay.gx.last_run = None
            self.scan.run_buffers(self.replay.memory, run)
        if isinstance(event, pica.CommandList):
            if run is not None and not run.finalized:
                self.out.add(
                    "list-no-finalize",
                    f"command list 0x{event.address:08X} ({event.size} bytes) ends without raising the P3D interrupt",
                )
        elif isinstance(event, pica.RegWrite) and P3D_WINDOW[0] <= event.address < P3D_WINDOW[1]:
            self.scan.written[(event.address - P3D_WINDOW[0]) // 4] = True  # an internal register set directly
        elif isinstance(event, pica.MemoryWrite):
            size = len(self.capture.blobs[event.blob])
            self.define(event.address, event.address + size)
            for address in [a for a in self.targets if event.address <= a < event.address + size]:
                del self.targets[address]  # the CPU overwrote the render target: its drawn format is gone
        elif isinstance(event, pica.MemoryFill):
            for unit in event.units:
                if unit.control & FILL_ENABLE:
                    self.define(unit.start, unit.end)
        elif isinstance(event, pica.DisplayTransfer):
            self._transfer_output(event)
        elif isinstance(event, pica.TextureCopy):
            width, gap = engines.copy_line(event.out_line)
            lines = -(-event.size // width) if width else 1
            self.define(event.dst, event.dst + event.size + (lines - 1) * gap)

    def _transfer_output(self, event: pica.DisplayTransfer) -> None:
        flags = engines.TransferFlags.from_word(event.flags)
        out_dim = (event.out_dim & 0xFFFF, event.out_dim >> 16)
        try:
            size = engines.raw_copy_size(out_dim, flags)
        except engines.GxError:
            return
        self.define(event.dst, event.dst + size)


def lint(capture: pica.Capture) -> list[Finding]:
    """Every finding of ``capture``, by event, then packet (see the module docstring)."""
    return Linter(capture).run()
