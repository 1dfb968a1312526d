"""Fragment lighting block (0x140-0x1FF): eight light blocks, global lighting registers, the LUT port; plus
0x08F LIGHTING_ENABLE0, which sits in the texturing range but belongs to lighting.

Also holds, as data, the layout of one lighting-LUT entry (``LUT_ENTRY``: the FIFO words of 0x1C8-0x1CF) and the
LUT ids of 0x1C5 (``LUT_IDS``), so that ``picaemu.color.lighting`` needs no bit position of its own.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Field, FieldType, Port, Register

BLOCK = "lighting"
NUM_LIGHTS = 8
LIGHT_STRIDE = 0x10

# LUT ids of 0x1C5 bits 8-12 (libctru: group << 3 | lut; group 0 common, 1 spotlight, 2 distance attenuation)
LUT_IDS: dict[int, str] = {
    0: "D0",
    1: "D1",
    2: "unused (2)",
    3: "FR",
    4: "RB",
    5: "RG",
    6: "RR",
    7: "unused (7)",
    **{8 + n: f"SP{n}" for n in range(NUM_LIGHTS)},
    **{16 + n: f"DA{n}" for n in range(NUM_LIGHTS)},
}
# Per-LUT slots of 0x1D0-0x1D2 and of CONFIG1 bits 16-22: slot k at 4k (inputs) and 16 + k (disables)
INPUT_SLOTS = {"d0": 0, "d1": 1, "sp": 2, "fr": 3, "rb": 4, "rg": 5, "rr": 6}

FRESNEL = {0: "none", 1: "primary alpha", 2: "secondary alpha", 3: "both alphas"}
LUT_CONFIGS = {
    0: "config0 (D0 RR SP DA)",
    1: "config1 (FR RR SP DA)",
    2: "config2 (D0 D1 RR DA)",
    3: "config3 (D0 D1 FR DA)",
    4: "config4 (all but FR)",
    5: "config5 (all but D1)",
    6: "config6 (all but RB RG)",
    7: "invalid (7)",
    8: "config7 (all)",
    **{v: f"invalid ({v})" for v in range(9, 16)},
}
BUMP_MODES = {0: "none", 1: "bump map", 2: "tangent map", 3: "invalid (3)"}
TEXTURE_UNITS = {0: "texture 0", 1: "texture 1", 2: "texture 2", 3: "invalid (3)"}
LUT_INPUTS = {0: "N.H", 1: "V.H", 2: "N.V", 3: "L.N", 4: "-L.P", 5: "cos phi", 6: "invalid (6)", 7: "invalid (7)"}
LUT_SCALES = {0: "x1", 1: "x2", 2: "x4", 3: "x8", 4: "unknown (4)", 5: "unknown (5)", 6: "x0.25", 7: "x0.5"}
LIGHT_TYPES = {0: "positional", 1: "directional"}

# One lighting-LUT entry as written through LIGHTING_LUT_DATA (24 bits used)
LUT_ENTRY: tuple[Field, ...] = (
    f("value", 0, 11, doc="entry value, unsigned 0.0.12"),
    f("diff_magnitude", 12, 22, doc="|next - this|, 0.0.11"),
    f("diff_negative", 23, doc="sign of the difference (sign-magnitude)"),
)


def _color(reg_id: int, name: str, doc: str, *aliases: str) -> Register:
    """A light color word: three 10-bit channels where 255 = 1.0 (citro3d writes 8-bit values)."""
    return reg(
        reg_id,
        name,
        BLOCK,
        doc,
        f("b", 0, 9, doc="blue, 255 = 1.0"),
        f("g", 10, 19, doc="green, 255 = 1.0"),
        f("r", 20, 29, doc="red, 255 = 1.0"),
        aliases=aliases,
    )


def _light(n: int) -> list[Register]:
    b = 0x140 + LIGHT_STRIDE * n
    sdk = f"PICA_REG_FRAG_LIGHT{n}_"
    extra = ("PICA_REG_FRAG_LIGHT_START",) if n == 0 else ()
    return [
        _color(
            b,
            f"GPUREG_LIGHT{n}_SPECULAR0",
            f"light {n}: specular 0 color (material x light)",
            sdk + "SPECULAR0",
            *extra,
        ),
        _color(b + 1, f"GPUREG_LIGHT{n}_SPECULAR1", f"light {n}: specular 1 color", sdk + "SPECULAR1"),
        _color(b + 2, f"GPUREG_LIGHT{n}_DIFFUSE", f"light {n}: diffuse color", sdk + "DIFFUSE"),
        _color(b + 3, f"GPUREG_LIGHT{n}_AMBIENT", f"light {n}: ambient color", sdk + "AMBIENT"),
        reg(
            b + 4,
            f"GPUREG_LIGHT{n}_XY",
            BLOCK,
            f"light {n}: position (positional) or direction x, y",
            f("x", 0, 15, FieldType.FLOAT16),
            f("y", 16, 31, FieldType.FLOAT16),
            aliases=(sdk + "POSITION_XY",),
        ),
        reg(
            b + 5,
            f"GPUREG_LIGHT{n}_Z",
            BLOCK,
            f"light {n}: position or direction z",
            f("z", 0, 15, FieldType.FLOAT16),
            aliases=(sdk + "POSITION_Z",),
        ),
        reg(
            b + 6,
            f"GPUREG_LIGHT{n}_SPOTDIR_XY",
            BLOCK,
            f"light {n}: negated spot direction x, y",
            f("x", 0, 12, fixed=(1, 1, 11)),
            f("y", 16, 28, fixed=(1, 1, 11)),
            aliases=(sdk + "SPOT_XY",),
        ),
        reg(
            b + 7,
            f"GPUREG_LIGHT{n}_SPOTDIR_Z",
            BLOCK,
            f"light {n}: negated spot direction z",
            f("z", 0, 12, fixed=(1, 1, 11)),
            aliases=(sdk + "SPOT_Z",),
        ),
        reg(
            b + 9,
            f"GPUREG_LIGHT{n}_CONFIG",
            BLOCK,
            f"light {n}: type, two-sided diffuse, geometric factors",
            f("type", 0, enum=LIGHT_TYPES),
            f("two_sided", 1, doc="diffuse uses |L.N| instead of max(L.N, 0)"),
            f("geometric_factor_0", 2, doc="specular 0 times the geometric factor"),
            f("geometric_factor_1", 3, doc="specular 1 times the geometric factor"),
            aliases=(sdk + "TYPE",),
        ),
        reg(
            b + 10,
            f"GPUREG_LIGHT{n}_ATTENUATION_BIAS",
            BLOCK,
            f"light {n}: distance attenuation bias",
            f("bias", 0, 19, FieldType.FLOAT20),
            aliases=(sdk + "DIST_ATTN_BIAS",),
        ),
        reg(
            b + 11,
            f"GPUREG_LIGHT{n}_ATTENUATION_SCALE",
            BLOCK,
            f"light {n}: distance attenuation scale",
            f("scale", 0, 19, FieldType.FLOAT20),
            aliases=(sdk + "DIST_ATTN_SCALE",),
        ),
    ]


def _per_lut(prefix: str, width: int, enum: dict[int, str] | None, doc: str) -> list[Field]:
    return [
        f(
            f"{name}{prefix}",
            4 * k + (1 if width == 1 else 0),
            4 * k + (1 if width == 1 else width - 1),
            enum=enum,
            doc=f"{doc} of LUT {name.upper()}",
        )
        for name, k in INPUT_SLOTS.items()
    ]


_CONFIG0 = (
    f("shadow_enable", 0, doc="shadow factor (texture of shadow_unit) enabled"),
    f("fresnel", 2, 3, enum=FRESNEL, doc="which alpha(s) the FR LUT writes"),
    f("config", 4, 7, enum=LUT_CONFIGS, doc="light environment configuration: which LUTs exist"),
    f("constant_4", 8, 11, doc="always 4"),
    f("shadow_primary", 16, doc="shadow attenuates the diffuse term"),
    f("shadow_secondary", 17, doc="shadow attenuates the specular term"),
    f("shadow_invert", 18, doc="use 1 - shadow"),
    f("shadow_alpha", 19, doc="shadow alpha multiplies the Fresnel-selected alphas"),
    f("bump_unit", 22, 23, enum=TEXTURE_UNITS, doc="texture unit of the bump/tangent map"),
    f("shadow_unit", 24, 25, enum=TEXTURE_UNITS, doc="texture unit of the shadow map"),
    f("clamp_highlights", 27, doc="no specular where the clamped L.N is 0"),
    f("bump_mode", 28, 29, enum=BUMP_MODES),
    f("bump_no_renorm", 30, doc="1 = keep the bump normal's z as sampled (no recompute)"),
    f("constant_1", 31, doc="always 1"),
)
_CONFIG1 = (
    *(f(f"shadow_disable{n}", n, doc=f"no shadow for light {n}") for n in range(NUM_LIGHTS)),
    *(f(f"spot_disable{n}", 8 + n, doc=f"no spotlight attenuation for light {n}") for n in range(NUM_LIGHTS)),
    *(
        f(f"{name}_disable", 16 + k, doc=f"LUT {name.upper()} disabled (reads 1.0)")
        for name, k in INPUT_SLOTS.items()
        if name != "sp"
    ),
    f("constant_1", 16 + INPUT_SLOTS["sp"], doc="always 1"),
    *(f(f"dist_atten_disable{n}", 24 + n, doc=f"no distance attenuation for light {n}") for n in range(NUM_LIGHTS)),
)

REGISTERS: list[Register] = [
    reg(
        0x08F,
        "GPUREG_LIGHTING_ENABLE0",
        BLOCK,
        "fragment lighting enable (paired with 0x1C6)",
        f("enable", 0),
        aliases=("PICA_REG_FRAG_LIGHT_EN0",),
    ),
    *(r for n in range(NUM_LIGHTS) for r in _light(n)),
    _color(
        0x1C0,
        "GPUREG_LIGHTING_AMBIENT",
        "global ambient: emission + material ambient x scene ambient",
        "PICA_REG_FRAG_LIGHT_AMBIENT",
    ),
    reg(
        0x1C2,
        "GPUREG_LIGHTING_NUM_LIGHTS",
        BLOCK,
        "number of active lights - 1",
        f("count_minus_1", 0, 2),
        aliases=("PICA_REG_FRAG_LIGHT_SRC_NUM",),
    ),
    reg(
        0x1C3,
        "GPUREG_LIGHTING_CONFIG0",
        BLOCK,
        "light environment: shadow, Fresnel, LUT config, bump, clamp",
        *_CONFIG0,
        aliases=("PICA_REG_FRAG_LIGHT_FUNC_MODE0",),
    ),
    reg(
        0x1C4,
        "GPUREG_LIGHTING_CONFIG1",
        BLOCK,
        "per-light shadow/spot/distance disables, LUT disables (1 = off)",
        *_CONFIG1,
        aliases=("PICA_REG_FRAG_LIGHT_FUNC_MODE1",),
    ),
    reg(
        0x1C5,
        "GPUREG_LIGHTING_LUT_INDEX",
        BLOCK,
        "lighting LUT select and start index",
        f("index", 0, 7),
        f("lut", 8, 12, enum=LUT_IDS),
        port=Port.LIGHTING_LUT,
        action=Action.PORT_INDEX,
        aliases=("PICA_REG_FRAG_LIGHT_LUT",),
    ),
    reg(
        0x1C6,
        "GPUREG_LIGHTING_ENABLE1",
        BLOCK,
        "fragment lighting disable (1 = off; inverse of 0x08F)",
        f("disable", 0),
        aliases=("PICA_REG_FRAG_LIGHT_EN1",),
    ),
    *port_range(
        0x1C8,
        8,
        "GPUREG_LIGHTING_LUT_DATA",
        BLOCK,
        "lighting LUT FIFO",
        Port.LIGHTING_LUT,
        "LIGHTING_LUT_DATA",
        aliases=("PICA_REG_FRAG_LIGHT_LUT_DATA{i}",),
    ),
    reg(
        0x1D0,
        "GPUREG_LIGHTING_LUTINPUT_ABS",
        BLOCK,
        "per-LUT abs() disable (1 = signed input)",
        *_per_lut("_abs_disable", 1, None, "1 = signed input"),
        aliases=("PICA_REG_FRAG_LIGHT_ABSLUTINPUT",),
    ),
    reg(
        0x1D1,
        "GPUREG_LIGHTING_LUTINPUT_SELECT",
        BLOCK,
        "per-LUT input selector",
        *_per_lut("_input", 3, LUT_INPUTS, "input"),
        aliases=("PICA_REG_FRAG_LIGHT_LUTINPUT",),
    ),
    reg(
        0x1D2,
        "GPUREG_LIGHTING_LUTINPUT_SCALE",
        BLOCK,
        "per-LUT output scale",
        *_per_lut("_scale", 3, LUT_SCALES, "output scale"),
        aliases=("PICA_REG_FRAG_LIGHT_LUTSCALE",),
    ),
    reg(
        0x1D9,
        "GPUREG_LIGHTING_LIGHT_PERMUTATION",
        BLOCK,
        "light slot -> hardware light id",
        *(f(f"slot{k}", 4 * k, 4 * k + 2, doc=f"light id used in slot {k}") for k in range(NUM_LIGHTS)),
        aliases=("PICA_REG_FRAG_LIGHT_SRC_EN_ID",),
    ),
]
