"""The external GPU register map (physical addresses, offsets and bit fields): data only.

Sources: pica-formats.md §3 (3dbrew "GPU/External Registers", Citra), citrace.md. Everything outside the
internal-register table that names a bit or an address lives here; engines and the LCD read fields through
``Bits.get``. Register files: GPU (0x10400000, 0x1000 words), LCD (0x10202000, 0x400 words).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bits:
    """A bit field ``lo .. lo + width - 1`` of a register word."""

    lo: int
    width: int

    def get(self, word: int) -> int:
        return (word >> self.lo) & ((1 << self.width) - 1)

    def put(self, value: int) -> int:
        return (value & ((1 << self.width) - 1)) << self.lo


GPU_BASE = 0x10400000
GPU_WORDS = 0x1000
LCD_BASE = 0x10202000
LCD_WORDS = 0x400

# P3D: the internal registers, memory-mapped at 0x10401000 + 4 * id (e.g. CMDBUF_SIZE0 0x238 -> 0x104018E0)
P3D_BASE = 0x10401000
P3D_IDS = 0x300
ADDRESS_SHIFT = 3  # engine address registers hold physical address >> 3

# memory fill units PSC0 / PSC1: base addresses and word offsets
FILL_UNITS = (0x10400010, 0x10400020)
FILL_START, FILL_END, FILL_VALUE, FILL_CONTROL = 0x0, 0x4, 0x8, 0xC
FILL_BUSY = Bits(0, 1)  # write 1 to start; cleared when done
FILL_FINISHED = Bits(1, 1)
FILL_WIDTH = Bits(8, 2)  # 0 16-bit, 1 or 3 24-bit, 2 32-bit
FILL_PATTERN_BYTES = {0: 2, 1: 3, 2: 4, 3: 3}

# transfer engine PPF
PPF_BASE = 0x10400C00
PPF_IN_ADDR, PPF_OUT_ADDR, PPF_OUT_DIM, PPF_IN_DIM, PPF_FLAGS = 0x00, 0x04, 0x08, 0x0C, 0x10
PPF_TRIGGER, PPF_COPY_SIZE, PPF_COPY_IN, PPF_COPY_OUT = 0x18, 0x20, 0x24, 0x28
PPF_START = Bits(0, 1)
PPF_DONE = Bits(8, 1)
DIM_WIDTH, DIM_HEIGHT = Bits(0, 16), Bits(16, 16)
LINE_WIDTH, LINE_GAP = Bits(0, 16), Bits(16, 16)  # texture copy lines, 16-byte units
COPY_UNIT = 16
FLAG_FLIP = Bits(0, 1)
FLAG_LINEAR_TO_TILED = Bits(1, 1)
FLAG_CROP = Bits(2, 1)
FLAG_TEXTURE_COPY = Bits(3, 1)
FLAG_NO_TILING = Bits(5, 1)  # with bit 1 clear: tiled -> tiled; with bit 1 set: linear -> linear
FLAG_IN_FORMAT = Bits(8, 3)
FLAG_OUT_FORMAT = Bits(12, 3)
FLAG_BLOCK32 = Bits(16, 1)  # the console draws the same picture with it set: no effect (Citra ignores it too)
FLAG_SCALE = Bits(24, 2)  # 0 none, 1 2x1, 2 2x2, 3 invalid
TRANSFER_FLAG_FIELDS = (FLAG_FLIP, FLAG_LINEAR_TO_TILED, FLAG_CROP, FLAG_TEXTURE_COPY, FLAG_NO_TILING,
                        FLAG_IN_FORMAT, FLAG_OUT_FORMAT, FLAG_BLOCK32, FLAG_SCALE)
TRANSFER_FLAGS_KNOWN = sum(f.put(-1) for f in TRANSFER_FLAG_FIELDS)  # bits with a known meaning

# LCD framebuffer registers PDC0 (top) / PDC1 (bottom): base addresses and offsets
PDC_BASES = (0x10400400, 0x10400500)
PDC_FB_SIZE, PDC_LEFT_A, PDC_LEFT_B, PDC_FORMAT = 0x5C, 0x68, 0x6C, 0x70
PDC_SELECT, PDC_STRIDE, PDC_RIGHT_A, PDC_RIGHT_B = 0x78, 0x90, 0x94, 0x98
FB_WIDTH, FB_HEIGHT = Bits(0, 16), Bits(16, 16)  # memory row length (240) and row count (400 top, 320 bottom)
FB_PIXEL_FORMAT = Bits(0, 3)  # transfer/LCD format enum
FB_INTERLACE = Bits(4, 2)  # scanline source: 0 A only, 1 AA (A twice), 2 AB (left, right alternate), 3 BA
FB_DOUBLE = Bits(6, 1)  # each framebuffer row feeds two scanlines (the top screen's 2D mode)
FB_SELECT = Bits(0, 1)  # 0 first address (A), 1 second (B)
INTERLACE_MODES = {0: "A", 1: "AA", 2: "AB", 3: "BA"}
# scanlines (screen columns) a panel shows per FB_SIZE row: the top LCD has 800 columns for its 400-row size (two
# per row: doubled in 2D, left/right eyes in 3D, 800 distinct rows in wide mode); the bottom LCD 320 for 320
SCANLINES_PER_ROW = {0: 2, 1: 1}

# Citra's reset values of the LCD registers (citrace.md): top 240x400, bottom 240x320, RGB8, stride 720 (the top's
# format word has no mode bits: the wide 800-row layout, until the first present sets the app's mode)
LCD_RESET = {
    0: {PDC_FB_SIZE: 0x019000F0, PDC_FORMAT: 1, PDC_STRIDE: 720},
    1: {PDC_FB_SIZE: 0x014000F0, PDC_FORMAT: 1, PDC_STRIDE: 720},
}
