"""Framebuffer and fragment-operation block (0x100-0x13F), gas registers included."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "framebuffer"

REGISTERS: list[Register] = [
    reg(0x110, "GPUREG_FRAMEBUFFER_INVALIDATE", BLOCK, "bit 0 = 1: drop the framebuffer cache (no write-back)",
        f("trigger", 0), action=Action.FRAMEBUFFER_INVALIDATE, aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR1",)),
    reg(0x111, "GPUREG_FRAMEBUFFER_FLUSH", BLOCK, "bit 0 = 1: write the framebuffer cache back to memory",
        f("trigger", 0), action=Action.FRAMEBUFFER_FLUSH, aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR0",)),
    reg(0x123, "GPUREG_GAS_LUT_INDEX", BLOCK, "gas LUT write index",
        f("index", 0, 15), port=Port.GAS_LUT, action=Action.PORT_INDEX, aliases=("PICA_REG_GAS_LUT_INDEX",)),
    *port_range(0x124, 1, "GPUREG_GAS_LUT_DATA", BLOCK, "gas LUT FIFO (16 entries)",
                Port.GAS_LUT, "GAS_LUT_DATA", aliases=("PICA_REG_GAS_LUT_DATA",)),
]
