"""Texture combiners, fog and gas block (0x0C0-0x0FF)."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "tev"

REGISTERS: list[Register] = [
    reg(0x0E6, "GPUREG_FOG_LUT_INDEX", BLOCK, "fog LUT write index (0-127)",
        f("index", 0, 15), port=Port.FOG_LUT, action=Action.PORT_INDEX, aliases=("PICA_REG_FOG_LUT_INDEX",)),
    *port_range(0x0E8, 8, "GPUREG_FOG_LUT_DATA", BLOCK, "fog LUT FIFO",
                Port.FOG_LUT, "FOG_LUT_DATA", aliases=("PICA_REG_FOG_LUT_DATA{i}",)),
]
