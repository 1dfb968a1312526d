"""Fragment color operations (0x100-0x104): color operation mode, blending, logic op, blend color, alpha test."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.blocks.framebuffer import COMPARE_FUNCS  # shared by the alpha, stencil and depth tests
from picaemu.regs.schema import Register

BLOCK = "fragops"

FRAGMENT_MODES = {0: "default", 1: "gas accumulation", 3: "shadow map rendering"}
BLEND_MODES = {0: "logic op", 1: "blending"}
BLEND_EQUATIONS = {
    0: "add",
    1: "subtract",
    2: "reverse subtract",
    3: "min",
    4: "max",
    5: "add (5)",
    6: "add (6)",
    7: "add (7)",
}
BLEND_FACTORS = {
    0: "zero",
    1: "one",
    2: "src color",
    3: "one minus src color",
    4: "dst color",
    5: "one minus dst color",
    6: "src alpha",
    7: "one minus src alpha",
    8: "dst alpha",
    9: "one minus dst alpha",
    10: "constant color",
    11: "one minus constant color",
    12: "constant alpha",
    13: "one minus constant alpha",
    14: "src alpha saturate",
}
LOGIC_OPS = {
    0: "clear",
    1: "and",
    2: "and reverse",
    3: "copy",
    4: "set",
    5: "copy inverted",
    6: "noop",
    7: "invert",
    8: "nand",
    9: "or",
    10: "nor",
    11: "xor",
    12: "equiv",
    13: "and inverted",
    14: "or reverse",
    15: "or inverted",
}

REGISTERS: list[Register] = [
    reg(
        0x100,
        "GPUREG_COLOR_OPERATION",
        BLOCK,
        "fragment operation mode; blending or logic op",
        f("fragment_mode", 0, 1, enum=FRAGMENT_MODES),
        f("blend_mode", 8, enum=BLEND_MODES, doc="0 = logic op (0x102), 1 = blending (0x101)"),
        f("constant", 16, 23, doc="always 0xE4 (citro3d writes 0xE40000)"),
        aliases=("PICA_REG_COLOR_OPERATION",),
    ),
    reg(
        0x101,
        "GPUREG_BLEND_FUNC",
        BLOCK,
        "blend equations and factors (min/max apply the factors on PICA)",
        f("rgb_equation", 0, 2, enum=BLEND_EQUATIONS),
        f("alpha_equation", 8, 10, enum=BLEND_EQUATIONS),
        f("rgb_src", 16, 19, enum=BLEND_FACTORS, doc="RGB source factor"),
        f("rgb_dst", 20, 23, enum=BLEND_FACTORS, doc="RGB destination factor"),
        f("alpha_src", 24, 27, enum=BLEND_FACTORS, doc="alpha source factor"),
        f("alpha_dst", 28, 31, enum=BLEND_FACTORS, doc="alpha destination factor"),
        aliases=("PICA_REG_BLEND_FUNC",),
    ),
    reg(
        0x102,
        "GPUREG_LOGIC_OP",
        BLOCK,
        "logic operation used when blending is off",
        f("op", 0, 3, enum=LOGIC_OPS),
        aliases=("PICA_REG_LOGIC_OP",),
    ),
    reg(
        0x103,
        "GPUREG_BLEND_COLOR",
        BLOCK,
        "blend constant color RGBA8",
        f("r", 0, 7),
        f("g", 8, 15),
        f("b", 16, 23),
        f("a", 24, 31),
        aliases=("PICA_REG_BLEND_COLOR",),
    ),
    reg(
        0x104,
        "GPUREG_FRAGOP_ALPHA_TEST",
        BLOCK,
        "alpha test: pass if alpha FUNC reference",
        f("enable", 0),
        f("func", 4, 6, enum=COMPARE_FUNCS),
        f("ref", 8, 15, doc="reference alpha 0-255"),
        aliases=("PICA_REG_FRAGOP_ALPHA_TEST",),
    ),
]
