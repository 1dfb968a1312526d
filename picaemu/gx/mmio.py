"""Memory-mapped GPU registers: the write handler that triggers the external engines, and the lowering of GX
capture events to the register writes GSP would make.

``Gx`` owns the external register files (``gpu`` (0x1000,) uint32 = physical 0x10400000 + 4i, ``lcd`` (0x400,)
uint32 = 0x10202000 + 4i) and drives a ``CommandProcessor`` (internal registers, mapped at 0x10401000 + 4 * id).
A write is: bounds check -> byte-lane merge -> act only on the trigger registers (fill CONTROL with bit 0 set,
PPF TRIGGER bit 0, any internal register through the command processor, so a write to CMDBUF_JUMP0 runs the
command list named by CMDBUF_ADDR0/SIZE0; transfer-flag bits of unknown meaning are ignored with one warning per
pattern; with ``transfer_log`` set to a list, each display transfer is appended to it as an
``engines.TransferRecord``). Engines finish at once: fill CONTROL gets bit 1 (finished) with bit 0
cleared, PPF TRIGGER bit 8 (done) with bit 0 cleared.

``lower(event)`` (``picaemu.gx.lowering``) turns a ``.pica`` GX event (CommandList, MemoryFill, DisplayTransfer,
TextureCopy, Present, RegWrite) into (physical address, value, width) writes; ``Gx.apply`` replays it through
``write`` — so captures of GX commands and CiTrace register streams take one path. RequestDma has no register
form (the CPU's DMA engine copies memory): ``apply`` performs it with ``engines.dma_copy``; FlushCacheRegions does
nothing.
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from picaemu import regs as regtable
from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor, RunResult
from picaemu.formats import pica
from picaemu.gx import engines as E
from picaemu.gx.lowering import CMDBUF_JUMP0 as CMDBUF_JUMP0
from picaemu.gx.lowering import Write as Write
from picaemu.gx.lowering import lower as lower
from picaemu.regs import access
from picaemu.regs.external import FILL_UNITS, GPU_BASE, GPU_WORDS, LCD_BASE, LCD_WORDS, P3D_BASE, P3D_IDS

log = logging.getLogger("picaemu.gx")


# GPU register word index whose start bit starts an engine -> (register, start field, memory-fill unit or None: the
# display transfer / texture copy). A table of data, not of bound methods: a Gx holding its own methods would be a
# reference cycle that keeps the processor and all of emulated memory alive until the cyclic garbage collector runs.
TRIGGERS: dict[int, tuple[str, str, int | None]] = {
    access.ext_index("PPF_TRIGGER"): ("PPF_TRIGGER", "start", None),
    **{access.ext_index(f"{unit}_CONTROL"): (f"{unit}_CONTROL", "busy", u) for u, unit in enumerate(FILL_UNITS)},
}
TRANSFER_FLAGS_KNOWN = regtable.by_name("PPF_FLAGS").covered_mask  # flag bits with a known meaning


class Gx:
    """External registers + engines over ``processor.memory`` (see the module docstring)."""

    def __init__(self, processor: CommandProcessor) -> None:
        self.processor = processor
        self.memory = processor.memory
        self.gpu = np.zeros(GPU_WORDS, np.uint32)
        self.lcd = np.zeros(LCD_WORDS, np.uint32)
        self.counts: Counter[str] = Counter()
        self._warned_flags: set[int] = set()
        self.last_run: RunResult | None = None
        # display transfers that ran, when a caller asks for them (the debugger maps screen pixels through them)
        self.transfer_log: list[E.TransferRecord] | None = None

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
        if P3D_BASE <= base < P3D_BASE + 4 * P3D_IDS:
            self._internal((base - P3D_BASE) >> 2, word_value, mask)
        elif GPU_BASE <= base < GPU_BASE + 4 * GPU_WORDS:
            index = (base - GPU_BASE) >> 2
            self._store(self.gpu, index, word_value, mask)
            trigger = TRIGGERS.get(index)
            if trigger is not None and access.bits(word_value & mask, trigger[0], trigger[1]):
                if trigger[2] is None:
                    self._transfer()
                else:
                    self._fill(trigger[2])
        elif LCD_BASE <= base < LCD_BASE + 4 * LCD_WORDS:
            self._store(self.lcd, (base - LCD_BASE) >> 2, word_value, mask)
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
        """The GPU register file's word at physical ``address``."""
        return int(self.gpu[(address - GPU_BASE) >> 2])

    def _word(self, name: str) -> int:
        return access.ext_word(self.gpu, name)

    def _address_field(self, name: str) -> int:
        return int(access.ext_value(self.gpu, name, "address"))

    def _dims(self, name: str) -> tuple[int, int]:
        word = self._word(name)
        return access.bits(word, name, "width"), access.bits(word, name, "height")

    # -- engines -----------------------------------------------------------------------------------------
    def _fill(self, unit: int) -> None:
        u = FILL_UNITS[unit]
        control = self._word(f"{u}_CONTROL")
        E.memory_fill(
            self.memory,
            self._address_field(f"{u}_START"),
            self._address_field(f"{u}_END"),
            self._word(f"{u}_VALUE"),
            access.bits(control, f"{u}_CONTROL", "width"),
        )
        done = control & ~access.put(f"{u}_CONTROL", "busy", 1) | access.put(f"{u}_CONTROL", "finished", 1)
        self.gpu[access.ext_index(f"{u}_CONTROL")] = done
        self.counts["memory fills"] += 1

    def _transfer(self) -> None:
        flags_word = self._word("PPF_FLAGS")
        unknown = flags_word & ~TRANSFER_FLAGS_KNOWN
        if unknown and unknown not in self._warned_flags:  # once per pattern of unknown bits
            self._warned_flags.add(unknown)
            log.warning(
                "transfer flags 0x%08X set bits 0x%08X of unknown meaning; they are ignored", flags_word, unknown
            )
        flags = E.TransferFlags.from_word(flags_word)
        src, dst = self._address_field("PPF_IN_ADDR"), self._address_field("PPF_OUT_ADDR")
        if flags.texture_copy:
            E.texture_copy(
                self.memory,
                src,
                dst,
                self._word("PPF_COPY_SIZE"),
                self._word("PPF_COPY_IN"),
                self._word("PPF_COPY_OUT"),
            )
            self.counts["texture copies"] += 1
        else:
            in_dim, out_dim = self._dims("PPF_IN_DIM"), self._dims("PPF_OUT_DIM")
            E.display_transfer(self.memory, src, dst, in_dim, out_dim, flags)
            if self.transfer_log is not None:
                self.transfer_log.append(E.TransferRecord(src, dst, in_dim, out_dim, flags))
            self.counts["display transfers"] += 1
        word = self._word("PPF_TRIGGER")
        self.gpu[access.ext_index("PPF_TRIGGER")] = word & ~access.put("PPF_TRIGGER", "start", 1) | access.put(
            "PPF_TRIGGER", "done", 1
        )

    # -- events ------------------------------------------------------------------------------------------
    def apply(self, event: pica.Event) -> None:
        """Replay one GX / register event: a DMA copies memory (no register is involved); the rest as their
        register writes (MemoryWrite, FrameEnd, Marker and FlushCacheRegions: no-op)."""
        if isinstance(event, pica.RequestDma):
            E.dma_copy(self.memory, event.src, event.dst, event.size)
            self.counts["DMA copies"] += 1
            return
        for address, value, width in lower(event):
            self.write(address, value, width)
