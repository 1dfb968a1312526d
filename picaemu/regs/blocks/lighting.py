"""Fragment lighting block (0x140-0x1FF): eight light blocks, global lighting registers, the LUT port."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "lighting"

REGISTERS: list[Register] = [
    reg(0x1C5, "GPUREG_LIGHTING_LUT_INDEX", BLOCK, "lighting LUT select and start index",
        f("index", 0, 7), f("lut", 8, 12), port=Port.LIGHTING_LUT, action=Action.PORT_INDEX,
        aliases=("PICA_REG_FRAG_LIGHT_LUT",)),
    *port_range(0x1C8, 8, "GPUREG_LIGHTING_LUT_DATA", BLOCK, "lighting LUT FIFO",
                Port.LIGHTING_LUT, "LIGHTING_LUT_DATA", aliases=("PICA_REG_FRAG_LIGHT_LUT_DATA{i}",)),
]
