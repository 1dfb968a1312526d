"""Framebuffer block (0x105-0x11F): stencil/depth tests, write masks, buffer access, formats, locations, size.

Transcribed from pica-registers.md §3.2 / §7. ``COMPARE_FUNCS`` is the compare enum shared by the alpha, stencil
and depth tests; the ids 0x108-0x10F, 0x119-0x11A and 0x11F are unknown and stay out of the table.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import Action, FieldType, Register

BLOCK = "framebuffer"

COMPARE_FUNCS = {
    0: "never",
    1: "always",
    2: "equal",
    3: "not equal",
    4: "less",
    5: "less or equal",
    6: "greater",
    7: "greater or equal",
}
STENCIL_OPS = {
    0: "keep",
    1: "zero",
    2: "replace",
    3: "increment saturate",
    4: "decrement saturate",
    5: "invert",
    6: "increment wrap",
    7: "decrement wrap",
}
DEPTH_FORMATS = {0: "D16", 1: "invalid (1)", 2: "D24", 3: "D24S8"}
COLOR_FORMATS = {0: "RGBA8", 1: "RGB8", 2: "RGB5A1", 3: "RGB565", 4: "RGBA4"}
PIXEL_SIZES = {0: "16-bit", 1: "24-bit", 2: "32-bit"}
BLOCK_MODES = {0: "8x8 tiles", 1: "32x32 blocks"}
ORIENTATIONS = {0: "vertically flipped", 1: "normal"}
_ADDR8 = FieldType.ADDRESS


REGISTERS: list[Register] = [
    reg(
        0x105,
        "GPUREG_STENCIL_TEST",
        BLOCK,
        "stencil test: passes if (ref & input_mask) FUNC (stored & input_mask); D24S8 only",
        f("enable", 0),
        f("func", 4, 6, enum=COMPARE_FUNCS),
        f("write_mask", 8, 15, doc="bits of the stored value an update may change"),
        f("ref", 16, 23),
        f("input_mask", 24, 31, doc="applied to both sides before comparing"),
        aliases=("PICA_REG_STENCIL_TEST",),
    ),
    reg(
        0x106,
        "GPUREG_STENCIL_OP",
        BLOCK,
        "stencil update on stencil fail / depth fail / depth pass",
        f("fail", 0, 2, enum=STENCIL_OPS),
        f("depth_fail", 4, 6, enum=STENCIL_OPS),
        f("depth_pass", 8, 10, enum=STENCIL_OPS),
        aliases=("PICA_REG_STENCIL_OP",),
    ),
    reg(
        0x107,
        "GPUREG_DEPTH_COLOR_MASK",
        BLOCK,
        "depth test enable/function, RGBA and depth write enables (test off still writes depth)",
        f("depth_test", 0),
        f("depth_func", 4, 6, enum=COMPARE_FUNCS, doc="fragment FUNC stored"),
        f("red", 8),
        f("green", 9),
        f("blue", 10),
        f("alpha", 11),
        f("depth_write", 12),
        aliases=("PICA_REG_DEPTH_COLOR_MASK",),
    ),
    reg(
        0x110,
        "GPUREG_FRAMEBUFFER_INVALIDATE",
        BLOCK,
        "bit 0 = 1: drop the framebuffer cache (no write-back)",
        f("trigger", 0),
        action=Action.FRAMEBUFFER_INVALIDATE,
        aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR1", "PICA_REG_COLOR_BUFFER_CLEAR0"),
    ),
    reg(
        0x111,
        "GPUREG_FRAMEBUFFER_FLUSH",
        BLOCK,
        "bit 0 = 1: write the framebuffer cache back to memory",
        f("trigger", 0),
        action=Action.FRAMEBUFFER_FLUSH,
        aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR0", "PICA_REG_COLOR_BUFFER_CLEAR1"),
    ),
    reg(
        0x112,
        "GPUREG_COLORBUFFER_READ",
        BLOCK,
        "color buffer read enable (0 off, 0xF on)",
        f("enable", 0, 3),
        aliases=("PICA_REG_COLOR_BUFFER_READ",),
    ),
    reg(
        0x113,
        "GPUREG_COLORBUFFER_WRITE",
        BLOCK,
        "color buffer write enable (0 = no color writes, 0xF = on)",
        f("enable", 0, 3),
        aliases=("PICA_REG_COLOR_BUFFER_WRITE",),
    ),
    reg(
        0x114,
        "GPUREG_DEPTHBUFFER_READ",
        BLOCK,
        "depth/stencil read enables",
        f("stencil", 0),
        f("depth", 1),
        aliases=("PICA_REG_DEPTH_STENCIL_READ",),
    ),
    reg(
        0x115,
        "GPUREG_DEPTHBUFFER_WRITE",
        BLOCK,
        "depth/stencil write enables",
        f("stencil", 0),
        f("depth", 1),
        aliases=("PICA_REG_DEPTH_STENCIL_WRITE",),
    ),
    reg(
        0x116,
        "GPUREG_DEPTHBUFFER_FORMAT",
        BLOCK,
        "depth buffer format",
        f("format", 0, 1, enum=DEPTH_FORMATS),
        aliases=("PICA_REG_RENDER_BUF_DEPTH_MODE",),
    ),
    reg(
        0x117,
        "GPUREG_COLORBUFFER_FORMAT",
        BLOCK,
        "color buffer pixel size and format",
        f("pixel_size", 0, 1, enum=PIXEL_SIZES),
        f("format", 16, 18, enum=COLOR_FORMATS),
        aliases=("PICA_REG_RENDER_BUF_COLOR_MODE",),
    ),
    reg(
        0x118,
        "GPUREG_EARLYDEPTH_TEST2",
        BLOCK,
        "early depth enable (copy 2 of 0x062)",
        f("enable", 0),
        aliases=("PICA_REG_EARLY_DEPTH_TEST2",),
    ),
    reg(
        0x11B,
        "GPUREG_FRAMEBUFFER_BLOCK32",
        BLOCK,
        "framebuffer tiling: 0 = 8x8 tiles, 1 = 32x32 blocks",
        f("mode", 0, enum=BLOCK_MODES),
        aliases=("PICA_REG_RENDER_BLOCK_FORMAT",),
    ),
    reg(
        0x11C,
        "GPUREG_DEPTHBUFFER_LOC",
        BLOCK,
        "depth buffer physical address >> 3",
        f("address", 0, 27, _ADDR8, scale=8),
        aliases=("PICA_REG_RENDER_BUF_DEPTH_ADDR",),
    ),
    reg(
        0x11D,
        "GPUREG_COLORBUFFER_LOC",
        BLOCK,
        "color buffer physical address >> 3",
        f("address", 0, 27, _ADDR8, scale=8),
        aliases=("PICA_REG_RENDER_BUF_COLOR_ADDR",),
    ),
    reg(
        0x11E,
        "GPUREG_FRAMEBUFFER_DIM",
        BLOCK,
        "framebuffer width, height - 1, orientation flag",
        f("width", 0, 10),
        f("height_minus_1", 12, 21),
        f("orientation", 24, enum=ORIENTATIONS, doc="1 = normal (every SDK writes it); 0 = vertically flipped"),
        aliases=("PICA_REG_RENDER_BUF_RESOLUTION0",),
    ),
]
