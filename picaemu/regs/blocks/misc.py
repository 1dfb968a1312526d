"""Miscellaneous / interrupt registers (0x000-0x03F)."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import Action, Register

BLOCK = "misc"

REGISTERS: list[Register] = [
    reg(
        0x010,
        "GPUREG_FINALIZE",
        BLOCK,
        "P3D interrupt request: a byte equal to IRQ_CMP's raises it; with IRQ_AUTOSTOP the list ends",
        f("value", 0, 31),
        action=Action.FINALIZE,
        aliases=("PICA_REG_INTERRUPT",),
    ),
    reg(0x020, "GPUREG_IRQ_CMP", BLOCK, "IRQ compare value (GSP init 0x12345678; Azahar name)", f("value", 0, 31)),
    reg(
        0x030,
        "GPUREG_IRQ_MASK",
        BLOCK,
        "IRQ mask (GSP init 0xFFFFFFF0; Azahar name, role not modelled)",
        f("mask", 0, 31),
    ),
    reg(
        0x034,
        "GPUREG_IRQ_AUTOSTOP",
        BLOCK,
        "stop the list after a matching finalize (GSP init 1; Azahar name)",
        f("enable", 0),
    ),
]
