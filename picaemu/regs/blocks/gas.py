"""Gas rendering and shadow registers: 0x0E4-0x0E5, 0x120-0x126 (gas LUT port included), 0x130."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "gas"

REGISTERS: list[Register] = [
    reg(0x123, "GPUREG_GAS_LUT_INDEX", BLOCK, "gas LUT write index",
        f("index", 0, 15), port=Port.GAS_LUT, action=Action.PORT_INDEX, aliases=("PICA_REG_GAS_LUT_INDEX",)),
    *port_range(0x124, 1, "GPUREG_GAS_LUT_DATA", BLOCK, "gas LUT FIFO (16 entries)",
                Port.GAS_LUT, "GAS_LUT_DATA", aliases=("PICA_REG_GAS_LUT_DATA",)),
]
