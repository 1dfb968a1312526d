"""Texturing block (0x080-0x0A7): texture unit configuration and units 0-2.

0x08F (LIGHTING_ENABLE0) sits in this id range but belongs to the lighting block; 0x0A8-0x0AD (procedural texture)
live in ``proctex``. Units 1 and 2 have no cube faces, shadow register or texture type: they are always 2D.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from enum import IntEnum

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import FieldType, Register

BLOCK = "texturing"

FILTERS = {0: "nearest", 1: "linear"}
WRAP_MODES = {
    0: "clamp to edge",
    1: "clamp to border",
    2: "repeat",
    3: "mirrored repeat",
    4: "edge if >= 0, repeat if < 0",
    5: "border if >= size, repeat if < 0",
    6: "repeat (6)",
    7: "repeat (7)",
}
TEXTURE_TYPES = {0: "2D", 1: "cube", 2: "shadow 2D", 3: "projection", 4: "shadow cube", 5: "disabled"}


class TextureFormat(IntEnum):
    """The texture formats by the code of the TEXUNITn_TYPE ``format`` field (codes 14 and 15 name no format)."""

    RGBA8 = 0x0
    RGB8 = 0x1
    RGBA5551 = 0x2
    RGB565 = 0x3
    RGBA4 = 0x4
    IA8 = 0x5
    HILO8 = 0x6
    I8 = 0x7
    A8 = 0x8
    IA4 = 0x9
    I4 = 0xA
    A4 = 0xB
    ETC1 = 0xC
    ETC1A4 = 0xD


TEXTURE_FORMATS = {fmt.value: fmt.name for fmt in TextureFormat}
UNIT3_COORDS = {0: "texcoord0", 1: "texcoord1", 2: "texcoord2"}
UNIT2_COORDS = {0: "texcoord2", 1: "texcoord1"}
CUBE_FACES = ("-X", "+Y", "-Y", "+Z", "-Z")  # ADDR2..ADDR6; ADDR1 is +X


def _rgba(what: str) -> list:
    return [
        f("r", 0, 7, doc=f"{what} red"),
        f("g", 8, 15, doc=f"{what} green"),
        f("b", 16, 23, doc=f"{what} blue"),
        f("a", 24, 31, doc=f"{what} alpha"),
    ]


def _param_fields(unit: int) -> list:
    fields = [
        f("mag_filter", 1, enum=FILTERS, doc="magnification filter"),
        f("min_filter", 2, enum=FILTERS, doc="minification filter"),
        f("etc1", 4, 5, doc="2 for ETC1 (0 for ETC1A4: the TYPE register is authoritative)"),
        f("wrap_t", 8, 10, enum=WRAP_MODES, doc="wrap mode of t (v)"),
        f("wrap_s", 12, 14, enum=WRAP_MODES, doc="wrap mode of s (u)"),
        f("shadow", 20, doc="shadow texture flag (citro3d sets it for shadow 2D/cube)"),
        f("mip_filter", 24, enum=FILTERS, doc="between mip levels: nearest level or blend of two"),
    ]
    if unit == 0:
        fields.append(f("type", 28, 30, enum=TEXTURE_TYPES, doc="texture type (unit 0 only)"))
    return fields


def _unit(unit: int, base: int, addr_name: str, type_id: int) -> list[Register]:
    u, sdk = f"GPUREG_TEXUNIT{unit}", f"PICA_REG_TEXTURE{unit}"
    return [
        reg(
            base + 1,
            f"{u}_BORDER_COLOR",
            BLOCK,
            f"unit {unit}: border color RGBA8 (clamp-to-border wrap)",
            *_rgba("border"),
            aliases=(f"{sdk}_BORDER_COLOR",),
        ),
        reg(
            base + 2,
            f"{u}_DIM",
            BLOCK,
            f"unit {unit}: texture size in texels",
            f("height", 0, 10),
            f("width", 16, 26),
            aliases=(f"{sdk}_SIZE",),
        ),
        reg(
            base + 3,
            f"{u}_PARAM",
            BLOCK,
            f"unit {unit}: filters, wrap modes, ETC1 flag" + (", shadow flag, type" if unit == 0 else ""),
            *_param_fields(unit),
            aliases=(f"{sdk}_WRAP_FILTER",),
        ),
        reg(
            base + 4,
            f"{u}_LOD",
            BLOCK,
            f"unit {unit}: LOD bias, max and min mip level",
            f("bias", 0, 12, fixed=(1, 4, 8), doc="LOD bias, signed fixed 1.4.8"),
            f("max_level", 16, 19, doc="largest mip level index"),
            f("min_level", 24, 27, doc="smallest mip level index"),
            aliases=(f"{sdk}_LOD",),
        ),
        reg(
            base + 5,
            f"{u}_{addr_name}",
            BLOCK,
            f"unit {unit}: texture physical address >> 3" + (" (cube: +X face)" if unit == 0 else ""),
            f("address", 0, 27, FieldType.ADDRESS, scale=8),
            aliases=(f"{sdk}_{addr_name}",),
        ),
        reg(
            type_id,
            f"{u}_TYPE",
            BLOCK,
            f"unit {unit}: texel format",
            f("format", 0, 3, enum=TEXTURE_FORMATS),
            aliases=(f"{sdk}_FORMAT",),
        ),
    ]


def _cube_faces() -> list[Register]:
    return [
        reg(
            0x086 + i,
            f"GPUREG_TEXUNIT0_ADDR{i + 2}",
            BLOCK,
            f"unit 0: cube {face} face address >> 3, bits 0-21 (bits 22-27 come from ADDR1)",
            f("address_low", 0, 21, FieldType.ADDRESS, scale=8),
            aliases=(f"PICA_REG_TEXTURE0_ADDR{i + 2}",),
        )
        for i, face in enumerate(CUBE_FACES)
    ]


REGISTERS: list[Register] = [
    reg(
        0x080,
        "GPUREG_TEXUNIT_CONFIG",
        BLOCK,
        "texture unit enables, unit 2/3 coordinate select, cache clear",
        f("unit0_enable", 0),
        f("unit1_enable", 1),
        f("unit2_enable", 2),
        f("unit3_coords", 8, 9, enum=UNIT3_COORDS, doc="procedural texture coordinate source"),
        f("unit3_enable", 10, doc="procedural texture (unit 3) enable"),
        f("always1", 12, doc="always written as 1 (citro3d initial value 0x1000)"),
        f("unit2_coords", 13, enum=UNIT2_COORDS, doc="texture unit 2 coordinate source"),
        f("clear_cache", 16, doc="write 1: clear the texture cache"),
        aliases=("PICA_REG_TEXTURE_FUNC",),
    ),
    *_unit(0, 0x080, "ADDR1", 0x08E),
    *_cube_faces(),
    reg(
        0x08B,
        "GPUREG_TEXUNIT0_SHADOW",
        BLOCK,
        "unit 0 shadow texture: projection flag and depth bias",
        f("orthographic", 0, doc="1 = orthographic (no divide by w), 0 = perspective"),
        f("bias", 1, 23, doc="depth bias: upper 23 bits of a 24-bit value whose bit 0 is 0"),
        aliases=("PICA_REG_TEXTURE0_SHADOW",),
    ),
    *_unit(1, 0x090, "ADDR", 0x096),
    *_unit(2, 0x098, "ADDR", 0x09E),
]
