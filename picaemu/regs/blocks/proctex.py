"""Procedural texture unit (texture 3): PROCTEX0-5 (0x0A8-0x0AD) and its LUT port (0x0AF-0x0B7).

Also holds, as data, the entry layouts of the proctex LUTs (``MAP_ENTRY`` for the 128-entry noise / RGB-map /
alpha-map tables, ``COLOR_ENTRY`` for the color and color-difference tables, whose channels are bytes), the
table sizes, and the color-LUT offsets of mip levels 4-7, which no register holds.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Field, FieldType, Port, Register

BLOCK = "proctex"
PROCTEX_TABLES = {0: "noise", 1: "unused", 2: "RGB map", 3: "alpha map", 4: "color", 5: "color difference"}
TABLE_ENTRIES = {"noise": 128, "RGB map": 128, "alpha map": 128, "color": 256, "color difference": 256}

CLAMPS = {
    0: "clamp to zero",
    1: "clamp to edge",
    2: "symmetrical repeat",
    3: "mirrored repeat",
    4: "pulse",
    **{v: f"invalid ({v})" for v in range(5, 8)},
}
MAPPINGS = {
    0: "U",
    1: "U2",
    2: "V",
    3: "V2",
    4: "(U+V)/2",
    5: "(U2+V2)/2",
    6: "sqrt(U2+V2)",
    7: "min",
    8: "max",
    9: "rmax",
    **{v: f"invalid ({v})" for v in range(10, 16)},
}
SHIFTS = {0: "none", 1: "odd", 2: "even", 3: "invalid (3)"}
FILTERS = {
    0: "nearest",
    1: "linear",
    2: "nearest mip nearest",
    3: "linear mip nearest",
    4: "nearest mip linear",
    5: "linear mip linear",
    6: "invalid (6)",
    7: "invalid (7)",
}

# Entries of the noise, RGB-map and alpha-map tables (0x0AF tables 0, 2, 3)
MAP_ENTRY: tuple[Field, ...] = (
    f("value", 0, 11, doc="value, unsigned, 4095 = 1.0"),
    f("diff", 12, 23, FieldType.INT, doc="difference to the next entry, 12-bit two's complement, 4095 = 1.0"),
)
# Entries of the color table (unsigned bytes) and the color-difference table (signed bytes: (next - this) / 2)
COLOR_ENTRY: tuple[Field, ...] = (f("r", 0, 7), f("g", 8, 15), f("b", 16, 23), f("a", 24, 31))
LEVEL_OFFSETS_4_TO_7 = (0xF0, 0xF8, 0xFC, 0xFE)  # color-LUT offsets of mip levels 4-7 (fixed by hardware)

REGISTERS: list[Register] = [
    reg(
        0x0A8,
        "GPUREG_TEXUNIT3_PROCTEX0",
        BLOCK,
        "proctex clamp, mapping functions, noise, shift, LOD bias low",
        f("u_clamp", 0, 2, enum=CLAMPS),
        f("v_clamp", 3, 5, enum=CLAMPS),
        f("rgb_func", 6, 9, enum=MAPPINGS, doc="mapping function feeding the RGB map"),
        f("alpha_func", 10, 13, enum=MAPPINGS, doc="mapping function of alpha (used with separate_alpha)"),
        f("separate_alpha", 14, doc="alpha from the alpha map instead of the color table"),
        f("noise_enable", 15),
        f("u_shift", 16, 17, enum=SHIFTS),
        f("v_shift", 18, 19, enum=SHIFTS),
        f("lod_bias_low", 20, 27, doc="LOD bias, float16 bits 0-7"),
        aliases=("PICA_REG_TEXTURE3_PROCTEX0",),
    ),
    reg(
        0x0A9,
        "GPUREG_TEXUNIT3_PROCTEX1",
        BLOCK,
        "proctex U noise amplitude and phase",
        f("u_amplitude", 0, 15, fixed=(1, 3, 12)),
        f("u_phase", 16, 31, FieldType.FLOAT16),
        aliases=("PICA_REG_TEXTURE3_PROCTEX1",),
    ),
    reg(
        0x0AA,
        "GPUREG_TEXUNIT3_PROCTEX2",
        BLOCK,
        "proctex V noise amplitude and phase",
        f("v_amplitude", 0, 15, fixed=(1, 3, 12)),
        f("v_phase", 16, 31, FieldType.FLOAT16),
        aliases=("PICA_REG_TEXTURE3_PROCTEX2",),
    ),
    reg(
        0x0AB,
        "GPUREG_TEXUNIT3_PROCTEX3",
        BLOCK,
        "proctex U and V noise frequency",
        f("u_frequency", 0, 15, FieldType.FLOAT16),
        f("v_frequency", 16, 31, FieldType.FLOAT16),
        aliases=("PICA_REG_TEXTURE3_PROCTEX3",),
    ),
    reg(
        0x0AC,
        "GPUREG_TEXUNIT3_PROCTEX4",
        BLOCK,
        "proctex filter, LOD range, color-table width, LOD bias high",
        f("filter", 0, 2, enum=FILTERS),
        f("min_lod", 3, 6),
        f("max_lod", 7, 10),
        f("width", 11, 18, doc="color-table entries of level 0"),
        f("lod_bias_high", 19, 26, doc="LOD bias, float16 bits 8-15"),
        aliases=("PICA_REG_TEXTURE3_PROCTEX4",),
    ),  # libctru's registers.h misnumbers it 0x00A
    reg(
        0x0AD,
        "GPUREG_TEXUNIT3_PROCTEX5",
        BLOCK,
        "proctex color-table offsets of mip levels 0-3",
        *(f(f"offset{k}", 8 * k, 8 * k + 7, doc=f"color-table offset of level {k}") for k in range(4)),
        aliases=("PICA_REG_TEXTURE3_PROCTEX5",),
    ),  # libctru's registers.h misnumbers it 0x00D
    reg(
        0x0AF,
        "GPUREG_PROCTEX_LUT",
        BLOCK,
        "procedural texture LUT select and start index",
        f("index", 0, 7),
        f("table", 8, 11, enum=PROCTEX_TABLES),
        port=Port.PROCTEX_LUT,
        action=Action.PORT_INDEX,
        aliases=("PICA_REG_PROCTEX_LUT",),
    ),
    *port_range(
        0x0B0,
        8,
        "GPUREG_PROCTEX_LUT_DATA",
        BLOCK,
        "procedural texture LUT FIFO",
        Port.PROCTEX_LUT,
        "PROCTEX_LUT_DATA",
        aliases=("PICA_REG_PROCTEX_LUT_DATA{i}",),
    ),
]
