"""``picaemu record --call-sites``: which call in the program made each draw.

citro3d writes a frame's draws into one command buffer and submits it at frame end, so the GX submission says
nothing about any one draw. The recorder therefore also stops at the draw entry points (``DRAW_FUNCTIONS``, found
by name in the ELF, plus any ``--draw-symbol``), and at each such stop

1. reads the command-buffer write position from libctru's globals (``CMDBUF_GLOBALS``: ``gpuCmdBuf``, a pointer
   to the buffer, and ``gpuCmdBufOffset``, the next free word; position = buffer + 4 x offset, one read when the
   two lie within ``ADJACENT_BYTES``), and
2. unwinds the caller's stack to a short backtrace (``picaemu.record.unwind``); its reads of saved registers lie
   just above the stack pointer, so they go through a ``StackWindow``: one read of ``STACK_WINDOW`` bytes at the
   first slot serves the frames above it (a read the stub refuses there, at the top of a stack, falls back to
   reading each slot alone).

On a stub in no-ack mode these reads travel with the stop's register request (``prefetch``,
``GdbClient.registers_and_memory``): the globals, and a stack window at the stack pointer of the previous draw stop
(a program draws from a few stack depths; when the guess misses, the window is read as above). A draw stop is then
three round trips (continue, registers with both reads, the step off the breakpoint) instead of five. In
acknowledgement mode (qemu 7) requests cannot be sent ahead, and each read is its own round trip.

When the recorder's command processor later meets a draw trigger at physical address T in a submitted list, the
call that made it is the pending call with the highest write position at or before T in the same buffer (a draw
function writes its state packets and then the trigger, so its entry position lies before its trigger and after
the previous draw's). Calls between two triggers that made none (a nested draw function, an empty draw) give way
to the last of them. Pending calls whose position lies inside a submitted list are dropped once it has run.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from picaemu.errors import LinkProtocolError, RecordError
from picaemu.formats.pica_calls import CallFrame, CallSite
from picaemu.record import memmap
from picaemu.record.gdb import GdbClient
from picaemu.record.symbols import Hook, elf_symbols, hook_at
from picaemu.record.unwind import ProgramInfo

# the functions that end in a draw trigger: citro3d's draws and immediate-mode end, citro2d's vertex-buffer flush
DRAW_FUNCTIONS = ("C3D_DrawArrays", "C3D_DrawElements", "C3D_ImmDrawEnd", "C2Di_FlushVtxBuf")
CMDBUF_GLOBALS = ("gpuCmdBuf", "gpuCmdBufOffset")  # libctru's gpu.c: u32 *gpuCmdBuf; u32 gpuCmdBufOffset (words)
ADJACENT_BYTES = 64  # read both globals with one request when they lie this close
DEFAULT_DEPTH = 4  # backtrace frames kept per draw
WORD = 4
SP = 13
STACK_WINDOW = 256  # bytes read at once for the unwinder: a few small frames (gx_player's take 8-16 bytes each)


def find_draw_hooks(path: str | os.PathLike[str], extra: tuple[str, ...] = ()) -> tuple[list[Hook], tuple[int, int]]:
    """The draw hooks the ELF at ``path`` links (``DRAW_FUNCTIONS`` and ``extra``) and the addresses of the two
    ``CMDBUF_GLOBALS``; ``RecordError`` naming what is missing."""
    symbols = elf_symbols(path, ("STT_FUNC", "STT_OBJECT"))
    missing = [name for name in extra if name not in symbols or symbols[name].type != "STT_FUNC"]
    if missing:
        raise RecordError(f"{path}: --draw-symbol {', '.join(missing)}: no such function in the ELF")
    names = [n for n in DRAW_FUNCTIONS if n in symbols] + [n for n in extra if n not in DRAW_FUNCTIONS]
    if not names:
        raise RecordError(
            f"{path}: --call-sites needs a draw function ({', '.join(DRAW_FUNCTIONS)}) or --draw-symbol NAME"
        )
    globals_missing = [n for n in CMDBUF_GLOBALS if n not in symbols or symbols[n].type != "STT_OBJECT"]
    if globals_missing:
        raise RecordError(
            f"{path}: --call-sites needs the command-buffer globals {', '.join(globals_missing)} (libctru's gpu.c)"
        )
    hooks = [hook_at("draw", n, symbols[n].value) for n in names]
    return hooks, (symbols[CMDBUF_GLOBALS[0]].value, symbols[CMDBUF_GLOBALS[1]].value)


Chunk = tuple[int, bytes]  # (virtual address, the bytes read there) at this stop


def covered(chunks: Sequence[Chunk], address: int, size: int) -> Chunk | None:
    """The chunk holding all of ``[address, address + size)``, if one does."""
    for at, data in chunks:
        if at <= address and address + size <= at + len(data):
            return at, data
    return None


def word_at(chunks: Sequence[Chunk], address: int) -> int:
    """The little-endian word at ``address`` in ``chunks`` (which hold it)."""
    hit = covered(chunks, address, WORD)
    if hit is None:
        raise ValueError(f"no chunk holds 0x{address:08X}")
    at, data = hit
    return int.from_bytes(data[address - at : address - at + WORD], "little")


class StackWindow:
    """``read`` through one read of ``size`` bytes at the first address asked for (see the module docstring);
    ``chunks``: memory already read at this stop, used first."""

    def __init__(
        self, read: Callable[[int, int], bytes], size: int = STACK_WINDOW, chunks: Sequence[Chunk] = ()
    ) -> None:
        self.read, self.size, self.chunks = read, size, chunks
        self.lo, self.data = 0, b""

    def __call__(self, address: int, size: int) -> bytes:
        at = address - self.lo
        if self.data and at >= 0 and at + size <= len(self.data):
            return self.data[at : at + size]
        hit = covered(self.chunks, address, size)
        if hit is not None:
            self.lo, self.data = hit
            return self(address, size)
        try:
            self.lo, self.data = address, self.read(address, max(size, self.size))
        except LinkProtocolError:  # the window crosses the end of the stack's mapping
            self.lo, self.data = address, self.read(address, size)
        return self.data[:size]


@dataclass
class CallSites:
    """The recorder's call-site bookkeeping (see the module docstring). ``read`` reads target memory at a virtual
    address; ``globals_at``: (address of ``gpuCmdBuf``, of ``gpuCmdBufOffset``)."""

    info: ProgramInfo
    read: Callable[[int, int], bytes]
    globals_at: tuple[int, int]
    depth: int = DEFAULT_DEPTH
    sites: dict[int, CallSite] = field(default_factory=dict)  # draw index -> call site
    calls: int = 0
    _positions: list[int] = field(default_factory=list)  # physical write positions of pending calls, sorted
    _frames: list[tuple[CallFrame, ...]] = field(default_factory=list)  # their backtraces, same order
    _last_sp: int | None = None  # the stack pointer at the last draw stop (``prefetch``)

    @classmethod
    def attach(cls, link: GdbClient, elf: str | os.PathLike[str], globals_at: tuple[int, int], depth: int) -> CallSites:
        return cls(ProgramInfo(elf), link.read_memory, globals_at, depth)

    def global_ranges(self) -> list[tuple[int, int]]:
        """The reads of the two globals: one when they lie within ``ADJACENT_BYTES``, else one each."""
        buf, off = self.globals_at
        if abs(buf - off) < ADJACENT_BYTES:
            return [(min(buf, off), abs(buf - off) + WORD)]
        return [(buf, WORD), (off, WORD)]

    def prefetch(self) -> list[tuple[int, int]]:
        """What a draw stop will read, to be asked for with the stop's registers (module docstring): the
        globals, and ``STACK_WINDOW`` bytes at the stack pointer of the last draw stop."""
        guess = [] if self._last_sp is None else [(self._last_sp, STACK_WINDOW)]
        return self.global_ranges() + guess

    def write_position(self, chunks: Sequence[Chunk] = ()) -> int:
        """Virtual address of the next command word the program will write (``gpuCmdBuf + 4 * gpuCmdBufOffset``);
        ``chunks``: memory already read at this stop."""
        read = [covered(chunks, at, size) or (at, self.read(at, size)) for at, size in self.global_ranges()]
        pointer, words = (word_at(read, address) for address in self.globals_at)
        return (pointer + WORD * words) & 0xFFFFFFFF

    def on_call(self, regs: list[int], chunks: Sequence[Chunk] = ()) -> None:
        """A stop at a draw function's entry with registers ``regs`` (``chunks``: memory read with them, see
        ``prefetch``); a write position outside GPU-visible memory raises ``RecordError`` (the globals are not
        libctru's)."""
        position = memmap.to_physical(self.write_position(chunks), WORD, "command buffer write position")
        self._last_sp = regs[SP]
        frames = self.info.backtrace(regs, StackWindow(self.read, chunks=chunks), self.depth)
        i = bisect.bisect_right(self._positions, position)
        self._positions.insert(i, position)
        self._frames.insert(i, frames)
        self.calls += 1

    def on_draw(self, index: int, buffer: int, offset: int) -> None:
        """Draw ``index`` triggered at byte ``offset`` of the command buffer at physical ``buffer``."""
        trigger = buffer + offset
        lo = bisect.bisect_left(self._positions, buffer)
        hi = bisect.bisect_right(self._positions, trigger)
        if hi > lo:
            self.sites[index] = CallSite(offset, self._frames[hi - 1])
            del self._positions[lo:hi], self._frames[lo:hi]

    def after_list(self, address: int, size: int) -> None:
        """A command list at physical ``address`` has run: calls that wrote into it are done."""
        lo = bisect.bisect_left(self._positions, address)
        hi = bisect.bisect_left(self._positions, address + size)
        del self._positions[lo:hi], self._frames[lo:hi]

    def before(self, draws: int) -> dict[int, CallSite]:
        """The call sites of draws ``0 .. draws - 1``."""
        return {i: site for i, site in self.sites.items() if i < draws}
