"""Framebuffer block (0x105-0x11F): stencil/depth tests, write masks, buffer access, formats, locations, size."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import Action, Register

BLOCK = "framebuffer"

REGISTERS: list[Register] = [
    reg(0x110, "GPUREG_FRAMEBUFFER_INVALIDATE", BLOCK, "bit 0 = 1: drop the framebuffer cache (no write-back)",
        f("trigger", 0), action=Action.FRAMEBUFFER_INVALIDATE, aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR1",)),
    reg(0x111, "GPUREG_FRAMEBUFFER_FLUSH", BLOCK, "bit 0 = 1: write the framebuffer cache back to memory",
        f("trigger", 0), action=Action.FRAMEBUFFER_FLUSH, aliases=("PICA_REG_COLOR_DEPTH_BUFFER_CLEAR0",)),
]
