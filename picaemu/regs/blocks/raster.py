"""Rasterizer block (0x040-0x07F): culling, viewport, clip plane, depth map, output map, scissor, early depth."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import Action, Register

BLOCK = "raster"

REGISTERS: list[Register] = [
    reg(0x063, "GPUREG_EARLYDEPTH_CLEAR", BLOCK, "write 1: clear the early-depth buffer",
        f("clear", 0), action=Action.EARLYDEPTH_CLEAR, aliases=("PICA_REG_EARLY_DEPTH_CLEAR",)),
]
