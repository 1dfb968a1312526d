"""Procedural texture unit (texture 3): PROCTEX0-5 (0x0A8-0x0AD) and its LUT port (0x0AF-0x0B7)."""

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "proctex"
PROCTEX_TABLES = {0: "noise", 1: "unused", 2: "RGB map", 3: "alpha map", 4: "color", 5: "color difference"}

REGISTERS: list[Register] = [
    reg(0x0AF, "GPUREG_PROCTEX_LUT", BLOCK, "procedural texture LUT select and start index",
        f("index", 0, 7), f("table", 8, 11, enum=PROCTEX_TABLES), port=Port.PROCTEX_LUT,
        action=Action.PORT_INDEX, aliases=("PICA_REG_PROCTEX_LUT",)),
    *port_range(0x0B0, 8, "GPUREG_PROCTEX_LUT_DATA", BLOCK, "procedural texture LUT FIFO",
                Port.PROCTEX_LUT, "PROCTEX_LUT_DATA", aliases=("PICA_REG_PROCTEX_LUT_DATA{i}",)),
]
