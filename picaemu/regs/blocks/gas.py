"""Gas rendering and shadow registers: 0x0E4-0x0E5, 0x120-0x126 (gas LUT port included), 0x130.

Also holds, as data, the gas-LUT entry layout (``GAS_LUT_ENTRY``: entries 0-7 are per-channel differences whose
sign encoding is unknown, entries 8-15 unsigned colors) and the split of the 16 entries.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Field, FieldType, Port, Register

BLOCK = "gas"
GAS_DEPTH_FUNCS = {0: "never", 1: "always", 2: "greater/gequal", 3: "less/lequal/equal/notequal"}
GAS_LUT_INPUTS = {0: "density", 1: "light factor"}

GAS_LUT_ENTRY: tuple[Field, ...] = (f("r", 0, 7), f("g", 8, 15), f("b", 16, 23))
GAS_LUT_DIFF_ENTRIES = range(0, 8)  # per-channel differences (sign bit 7: sign-magnitude or two's complement?)
GAS_LUT_COLOR_ENTRIES = range(8, 16)  # unsigned colors
GAS_LUT_DIFF_SIGN_BIT = 7

REGISTERS: list[Register] = [
    reg(
        0x0E4,
        "GPUREG_GAS_ATTENUATION",
        BLOCK,
        "gas density attenuation",
        f("attenuation", 0, 15, FieldType.FLOAT16),
        aliases=("PICA_REG_GAS_ATTENUATION",),
    ),
    reg(
        0x0E5,
        "GPUREG_GAS_ACCMAX",
        BLOCK,
        "gas maximum accumulated density (citro3d writes f16(1/value))",
        f("accmax", 0, 15, FieldType.FLOAT16),
        aliases=("PICA_REG_GAS_ACCMAX",),
    ),
    reg(
        0x120,
        "GPUREG_GAS_LIGHT_XY",
        BLOCK,
        "gas planar shading: minimum, maximum intensity, density attenuation",
        f("min", 0, 7),
        f("max", 8, 15),
        f("attenuation", 16, 23),
        aliases=("PICA_REG_GAS_LIGHT_XY",),
    ),
    reg(
        0x121,
        "GPUREG_GAS_LIGHT_Z",
        BLOCK,
        "gas view shading: minimum, maximum intensity, density attenuation",
        f("min", 0, 7),
        f("max", 8, 15),
        f("attenuation", 16, 23),
        aliases=("PICA_REG_GAS_LIGHT_Z",),
    ),
    reg(
        0x122,
        "GPUREG_GAS_LIGHT_Z_COLOR",
        BLOCK,
        "gas shading along the line of sight, color-LUT input select",
        f("effect", 0, 7, doc="shading effect in the line-of-sight direction"),
        f("lut_input", 8, enum=GAS_LUT_INPUTS),
        aliases=("PICA_REG_GAS_LIGHT_Z_COLOR",),
    ),
    reg(
        0x123,
        "GPUREG_GAS_LUT_INDEX",
        BLOCK,
        "gas LUT write index",
        f("index", 0, 15),
        port=Port.GAS_LUT,
        action=Action.PORT_INDEX,
        aliases=("PICA_REG_GAS_LUT_INDEX",),
    ),
    *port_range(
        0x124,
        1,
        "GPUREG_GAS_LUT_DATA",
        BLOCK,
        "gas LUT FIFO (16 entries)",
        Port.GAS_LUT,
        "GAS_LUT_DATA",
        aliases=("PICA_REG_GAS_LUT_DATA",),
    ),
    reg(
        0x125,
        "GPUREG_GAS_ACCMAX_FEEDBACK",
        BLOCK,
        "gas accumulation feedback/reset (libctru name; fields unknown; citro3d writes 0, mask 0x3, to begin)",
    ),
    reg(
        0x126,
        "GPUREG_GAS_DELTAZ_DEPTH",
        BLOCK,
        "gas depth-direction attenuation and gas depth function",
        f("delta_z", 0, 23, fixed=(0, 16, 8), doc="depth-direction attenuation (citro3d: value * 256)"),
        f("depth_func", 24, 25, enum=GAS_DEPTH_FUNCS, doc="derived from the depth function, written with mask 0x8"),
        aliases=("PICA_REG_GAS_DELTAZ_DEPTH",),
    ),
    reg(
        0x130,
        "GPUREG_FRAGOP_SHADOW",
        BLOCK,
        "shadow-map rendering penumbra: K = scale + bias, L = -scale",
        f("constant", 0, 15, FieldType.FLOAT16, doc="K = penumbra scale + penumbra bias"),
        f("linear", 16, 31, FieldType.FLOAT16, doc="L = -penumbra scale"),
        aliases=("PICA_REG_FRAGOP_SHADOW",),
    ),
]
