"""Memory-mapped GPU registers: the write handler that triggers the external engines, and the lowering of GX
capture events to the register writes GSP would make.

``Gx`` owns the external register files (``gpu`` (0x1000,) uint32 = physical 0x10400000 + 4i, ``lcd`` (0x400,)
uint32 = 0x10202000 + 4i) and drives a ``CommandProcessor`` (internal registers, mapped at 0x10401000 + 4 * id).
A write is: bounds check -> byte-lane merge -> act only on the trigger registers (fill CONTROL with bit 0 set,
PPF TRIGGER bit 0, any internal register through the command processor, so a write to CMDBUF_JUMP0 runs the
command list named by CMDBUF_ADDR0/SIZE0; transfer-flag bits of unknown meaning are ignored with one warning per
pattern). Engines finish at once: fill CONTROL gets bit 1 (finished) with bit 0
cleared, PPF TRIGGER bit 8 (done) with bit 0 cleared.

``lower(event)`` turns a ``.pica`` GX event (CommandList, MemoryFill, DisplayTransfer, TextureCopy, Present,
RegWrite) into (physical address, value, width) writes; ``Gx.apply`` replays it through ``write`` — so captures
of GX commands and CiTrace register streams take one path.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import numpy as np

from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor, RunResult
from picaemu.formats import pica
from picaemu.gx import engines as E
from picaemu.gx import registers as R

log = logging.getLogger("picaemu.gx")
Write = tuple[int, int, int]  # (physical address, value, width in bytes)
SHIFT = R.ADDRESS_SHIFT


# GPU register offset whose bit 0 starts an engine -> memory-fill unit (None: the display transfer / texture copy).
# A table of data, not of bound methods: a Gx holding its own methods would be a reference cycle that keeps the
# processor and all of emulated memory alive until the cyclic garbage collector runs.
TRIGGERS: dict[int, int | None] = {
    R.PPF_BASE + R.PPF_TRIGGER - R.GPU_BASE: None,
    **{base + R.FILL_CONTROL - R.GPU_BASE: u for u, base in enumerate(R.FILL_UNITS)},
}


class Gx:
    """External registers + engines over ``processor.memory`` (see the module docstring)."""

    def __init__(self, processor: CommandProcessor) -> None:
        self.processor = processor
        self.memory = processor.memory
        self.gpu = np.zeros(R.GPU_WORDS, np.uint32)
        self.lcd = np.zeros(R.LCD_WORDS, np.uint32)
        self.counts: Counter[str] = Counter()
        self._warned_flags: set[int] = set()
        self.last_run: RunResult | None = None

    # -- writes ------------------------------------------------------------------------------------------
    def write(self, address: int, value: int, width: int = 4) -> None:
        """One register write of ``width`` bytes (1, 2, 4, 8) at physical ``address``."""
        if width == 8:
            self.write(address, value & 0xFFFFFFFF)
            self.write(address + 4, value >> 32 & 0xFFFFFFFF)
            return
        if width not in (1, 2, 4) or address % width:
            raise E.GxError(f"register write of {width} bytes at unaligned address 0x{address:08X}")
        lane = address & 3
        mask = ((1 << 8 * width) - 1) << 8 * lane
        word_value = (value << 8 * lane) & mask
        base = address & ~3
        if R.P3D_BASE <= base < R.P3D_BASE + 4 * R.P3D_IDS:
            self._internal((base - R.P3D_BASE) >> 2, word_value, mask)
        elif R.GPU_BASE <= base < R.GPU_BASE + 4 * R.GPU_WORDS:
            self._store(self.gpu, (base - R.GPU_BASE) >> 2, word_value, mask)
            offset = base - R.GPU_BASE
            if offset in TRIGGERS and word_value & mask & 1:
                unit = TRIGGERS[offset]
                if unit is None:
                    self._transfer(offset)
                else:
                    self._fill(unit, offset)
        elif R.LCD_BASE <= base < R.LCD_BASE + 4 * R.LCD_WORDS:
            self._store(self.lcd, (base - R.LCD_BASE) >> 2, word_value, mask)
        else:
            raise E.GxError(f"write to 0x{address:08X}, which is no GPU or LCD register")

    @staticmethod
    def _store(regs: np.ndarray, index: int, value: int, mask: int) -> None:
        regs[index] = (int(regs[index]) & ~mask | value) & 0xFFFFFFFF

    def _internal(self, reg_id: int, value: int, mask: int) -> None:
        byte_enable = sum(1 << i for i in range(4) if mask >> 8 * i & 0xFF)
        builder = CommandBuilder()
        builder.write(reg_id, value, byte_enable)
        self.last_run = self.processor.run(builder.words())
        if self.last_run.jumps:
            self.counts["command lists"] += 1

    def gpu_word(self, address: int) -> int:
        return int(self.gpu[(address - R.GPU_BASE) >> 2])

    # -- engines -----------------------------------------------------------------------------------------
    def _fill(self, unit: int, offset: int) -> None:
        base = R.FILL_UNITS[unit]
        control = self.gpu_word(base + R.FILL_CONTROL)
        start = self.gpu_word(base + R.FILL_START) << SHIFT
        end = self.gpu_word(base + R.FILL_END) << SHIFT
        E.memory_fill(self.memory, start, end, self.gpu_word(base + R.FILL_VALUE), R.FILL_WIDTH.get(control))
        done = control & ~R.FILL_BUSY.put(1) | R.FILL_FINISHED.put(1)
        self.gpu[offset >> 2] = done
        self.counts["memory fills"] += 1

    def _transfer(self, offset: int) -> None:
        ppf = R.PPF_BASE
        flags_word = self.gpu_word(ppf + R.PPF_FLAGS)
        unknown = flags_word & ~R.TRANSFER_FLAGS_KNOWN
        if unknown and unknown not in self._warned_flags:  # once per pattern of unknown bits
            self._warned_flags.add(unknown)
            log.warning("transfer flags 0x%08X set bits 0x%08X of unknown meaning; they are ignored", flags_word,
                        unknown)
        flags = E.TransferFlags.from_word(flags_word)
        src, dst = self.gpu_word(ppf + R.PPF_IN_ADDR) << SHIFT, self.gpu_word(ppf + R.PPF_OUT_ADDR) << SHIFT
        if flags.texture_copy:
            E.texture_copy(self.memory, src, dst, self.gpu_word(ppf + R.PPF_COPY_SIZE),
                           self.gpu_word(ppf + R.PPF_COPY_IN), self.gpu_word(ppf + R.PPF_COPY_OUT))
            self.counts["texture copies"] += 1
        else:
            dims = [self.gpu_word(ppf + off) for off in (R.PPF_IN_DIM, R.PPF_OUT_DIM)]
            in_dim, out_dim = ((R.DIM_WIDTH.get(d), R.DIM_HEIGHT.get(d)) for d in dims)
            E.display_transfer(self.memory, src, dst, in_dim, out_dim, flags)
            self.counts["display transfers"] += 1
        word = self.gpu_word(ppf + R.PPF_TRIGGER)
        self.gpu[offset >> 2] = word & ~R.PPF_START.put(1) | R.PPF_DONE.put(1)

    # -- events ------------------------------------------------------------------------------------------
    def apply(self, event: pica.Event) -> None:
        """Replay one GX / register event (MemoryWrite, FrameEnd and Marker are not GX events: no-op)."""
        for address, value, width in lower(event):
            self.write(address, value, width)


def _p3d(name_id: int) -> int:
    return R.P3D_BASE + 4 * name_id


CMDBUF_SIZE0, CMDBUF_ADDR0, CMDBUF_JUMP0 = _p3d(0x238), _p3d(0x23A), _p3d(0x23C)


def _lower_command_list(e: pica.CommandList) -> list[Write]:
    return [(CMDBUF_SIZE0, -(-e.size // 8), 4), (CMDBUF_ADDR0, e.address >> SHIFT, 4), (CMDBUF_JUMP0, 1, 4)]


def _lower_fill(e: pica.MemoryFill) -> list[Write]:
    out: list[Write] = []
    for base, unit in zip(R.FILL_UNITS, e.units, strict=True):
        if R.FILL_BUSY.get(unit.control):
            out += [(base + R.FILL_START, unit.start >> SHIFT, 4), (base + R.FILL_END, unit.end >> SHIFT, 4),
                    (base + R.FILL_VALUE, unit.value, 4), (base + R.FILL_CONTROL, unit.control, 4)]
    return out


def _lower_transfer(e: pica.DisplayTransfer) -> list[Write]:
    """A display transfer; with flag bit 3 (raw copy) the contiguous texture copy of the output's bytes."""
    p = R.PPF_BASE
    dims = [(p + R.PPF_OUT_DIM, e.out_dim, 4), (p + R.PPF_IN_DIM, e.in_dim, 4)]
    if R.FLAG_TEXTURE_COPY.get(e.flags):
        out_dim = (R.DIM_WIDTH.get(e.out_dim), R.DIM_HEIGHT.get(e.out_dim))
        size = E.raw_copy_size(out_dim, E.TransferFlags.from_word(e.flags))
        dims += [(p + R.PPF_COPY_SIZE, size, 4), (p + R.PPF_COPY_IN, 0, 4), (p + R.PPF_COPY_OUT, 0, 4)]
    return [(p + R.PPF_IN_ADDR, e.src >> SHIFT, 4), (p + R.PPF_OUT_ADDR, e.dst >> SHIFT, 4), *dims,
            (p + R.PPF_FLAGS, e.flags, 4), (p + R.PPF_TRIGGER, 1, 4)]


def _lower_copy(e: pica.TextureCopy) -> list[Write]:
    p = R.PPF_BASE
    return [(p + R.PPF_IN_ADDR, e.src >> SHIFT, 4), (p + R.PPF_OUT_ADDR, e.dst >> SHIFT, 4),
            (p + R.PPF_COPY_SIZE, e.size, 4), (p + R.PPF_COPY_IN, e.in_line, 4),
            (p + R.PPF_COPY_OUT, e.out_line, 4), (p + R.PPF_FLAGS, e.flags | R.FLAG_TEXTURE_COPY.put(1), 4),
            (p + R.PPF_TRIGGER, 1, 4)]


def _lower_present(e: pica.Present) -> list[Write]:
    if e.screen not in (0, 1):
        raise E.GxError(f"present on screen {e.screen} (0 top, 1 bottom)")
    base = R.PDC_BASES[e.screen]
    left, right = (R.PDC_LEFT_B, R.PDC_RIGHT_B) if e.select & 1 else (R.PDC_LEFT_A, R.PDC_RIGHT_A)
    return [(base + left, e.left, 4), (base + right, e.right, 4), (base + R.PDC_STRIDE, e.stride, 4),
            (base + R.PDC_FORMAT, e.format, 4), (base + R.PDC_SELECT, e.select & 1, 4)]


_LOWER: dict[type, Callable[..., list[Write]]] = {
    pica.CommandList: _lower_command_list,
    pica.MemoryFill: _lower_fill,
    pica.DisplayTransfer: _lower_transfer,
    pica.TextureCopy: _lower_copy,
    pica.Present: _lower_present,
    pica.RegWrite: lambda e: [(e.address, e.value, e.width)],
}


def lower(event: pica.Event) -> list[Write]:
    """The register writes that perform ``event`` ([] for events that are not GX commands)."""
    handler = _LOWER.get(type(event))
    return handler(event) if handler else []
