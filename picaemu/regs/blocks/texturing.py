"""Texturing block (0x080-0x0A7): texture unit configuration and units 0-2."""

from __future__ import annotations

from picaemu.regs.schema import Register

BLOCK = "texturing"

REGISTERS: list[Register] = []
