"""Fragment color operations (0x100-0x104): color operation mode, blending, logic op, blend color, alpha test."""

from __future__ import annotations

from picaemu.regs.schema import Register

BLOCK = "fragops"

REGISTERS: list[Register] = []
