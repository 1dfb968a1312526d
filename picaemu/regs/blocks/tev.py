"""Texture combiners and fog (0x0C0-0x0FF): six TEV stages, combiner buffer, fog mode/color and the fog LUT port.

The gas registers 0x0E4/0x0E5 sit in this range but live in the ``gas`` block. Stage n's five registers start at
0x0C0 + 8n for n < 4 and at 0x0C0 + 8(n + 2) for n >= 4.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "tev"

STAGE_BASES = (0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8)
TEV_SOURCES = {
    0x0: "primary color",
    0x1: "fragment primary color",
    0x2: "fragment secondary color",
    0x3: "texture 0",
    0x4: "texture 1",
    0x5: "texture 2",
    0x6: "texture 3",
    0xD: "previous buffer",
    0xE: "constant",
    0xF: "previous",
}
RGB_OPERANDS = {
    0x0: "src.rgb",
    0x1: "1 - src.rgb",
    0x2: "src.aaa",
    0x3: "1 - src.aaa",
    0x4: "src.rrr",
    0x5: "1 - src.rrr",
    0x8: "src.ggg",
    0x9: "1 - src.ggg",
    0xC: "src.bbb",
    0xD: "1 - src.bbb",
}
ALPHA_OPERANDS = {
    0: "src.a",
    1: "1 - src.a",
    2: "src.r",
    3: "1 - src.r",
    4: "src.g",
    5: "1 - src.g",
    6: "src.b",
    7: "1 - src.b",
}
COMBINE_OPS = {
    0: "replace",
    1: "modulate",
    2: "add",
    3: "add signed",
    4: "interpolate",
    5: "subtract",
    6: "dot3 RGB",
    7: "dot3 RGBA",
    8: "multiply then add",
    9: "add then multiply",
}
SCALES = {0: "x1", 1: "x2", 2: "x4", 3: "x1 (3)"}
FOG_MODES = {0: "disabled", 5: "fog", 7: "gas"}
GAS_DENSITY_SOURCES = {0: "plain density", 1: "depth density"}


def _stage(n: int, base: int) -> list[Register]:
    g, sdk = f"GPUREG_TEXENV{n}", f"PICA_REG_TEX_ENV_{n}"
    slots = range(3)
    return [
        reg(
            base,
            f"{g}_SOURCE",
            BLOCK,
            f"TEV stage {n}: RGB and alpha sources of operand slots 0-2",
            *(f(f"rgb_src{i}", 4 * i, 4 * i + 3, enum=TEV_SOURCES) for i in slots),
            *(f(f"alpha_src{i}", 16 + 4 * i, 19 + 4 * i, enum=TEV_SOURCES) for i in slots),
            aliases=(sdk,),
        ),
        reg(
            base + 1,
            f"{g}_OPERAND",
            BLOCK,
            f"TEV stage {n}: operand modifiers of slots 0-2",
            *(f(f"rgb_op{i}", 4 * i, 4 * i + 3, enum=RGB_OPERANDS) for i in slots),
            *(f(f"alpha_op{i}", 12 + 4 * i, 14 + 4 * i, enum=ALPHA_OPERANDS) for i in slots),
            aliases=(f"{sdk}_OPERAND",),
        ),
        reg(
            base + 2,
            f"{g}_COMBINER",
            BLOCK,
            f"TEV stage {n}: RGB and alpha combine functions",
            f("rgb_combine", 0, 3, enum=COMBINE_OPS),
            f("alpha_combine", 16, 19, enum=COMBINE_OPS),
            aliases=(f"{sdk}_COMBINE",),
        ),
        reg(
            base + 3,
            f"{g}_COLOR",
            BLOCK,
            f"TEV stage {n}: constant color RGBA8",
            f("r", 0, 7),
            f("g", 8, 15),
            f("b", 16, 23),
            f("a", 24, 31),
            aliases=(f"{sdk}_COLOR",),
        ),
        reg(
            base + 4,
            f"{g}_SCALE",
            BLOCK,
            f"TEV stage {n}: output scale (result clamped to 255)",
            f("rgb_scale", 0, 1, enum=SCALES),
            f("alpha_scale", 16, 17, enum=SCALES),
            aliases=(f"{sdk}_SCALE",),
        ),
    ]


REGISTERS: list[Register] = [
    *(r for n, base in enumerate(STAGE_BASES) for r in _stage(n, base)),
    reg(
        0x0E0,
        "GPUREG_TEXENV_UPDATE_BUFFER",
        BLOCK,
        "fog/gas mode, combiner-buffer update bits, fog z flip",
        f("fog_mode", 0, 2, enum=FOG_MODES),
        f("gas_density_source", 3, enum=GAS_DENSITY_SOURCES),
        *(f(f"rgb_update{i}", 8 + i, doc=f"stage {i} RGB result goes to the combiner buffer") for i in range(4)),
        *(f(f"alpha_update{i}", 12 + i, doc=f"stage {i} alpha result goes to the combiner buffer") for i in range(4)),
        f("fog_z_flip", 16, doc="fog LUT input is 1 - depth"),
        aliases=("PICA_REG_GAS_FOG_MODE", "PICA_REG_TEX_ENV_BUF_INPUT"),
    ),
    reg(
        0x0E1,
        "GPUREG_FOG_COLOR",
        BLOCK,
        "fog color RGB8",
        f("r", 0, 7),
        f("g", 8, 15),
        f("b", 16, 23),
        aliases=("PICA_REG_FOG_COLOR",),
    ),
    reg(
        0x0E6,
        "GPUREG_FOG_LUT_INDEX",
        BLOCK,
        "fog LUT write index (0-127)",
        f("index", 0, 15),
        port=Port.FOG_LUT,
        action=Action.PORT_INDEX,
        aliases=("PICA_REG_FOG_LUT_INDEX",),
    ),
    *port_range(
        0x0E8,
        8,
        "GPUREG_FOG_LUT_DATA",
        BLOCK,
        "fog LUT FIFO: bits 0-12 delta (s1.1.11), 13-23 value (0.0.11)",
        Port.FOG_LUT,
        "FOG_LUT_DATA",
        aliases=("PICA_REG_FOG_LUT_DATA{i}",),
    ),
    reg(
        0x0FD,
        "GPUREG_TEXENV_BUFFER_COLOR",
        BLOCK,
        "initial combiner-buffer color RGBA8",
        f("r", 0, 7),
        f("g", 8, 15),
        f("b", 16, 23),
        f("a", 24, 31),
        aliases=("PICA_REG_TEX_ENV_BUF_COLOR",),
    ),
]
