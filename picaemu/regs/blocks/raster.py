"""Rasterizer block (0x040-0x07F): culling, viewport, clip plane, depth map, output map, scissor, early depth.

Transcribed from pica-registers.md §3.2 / §4 (ids the reference calls unknown are left out and decode as
``UNKNOWN_0xNNN``). ``SEMANTICS`` is the output-map semantic enum shared by the seven SH_OUTMAP_O registers.
"""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, reg
from picaemu.regs.schema import Action, FieldType, Register

BLOCK = "raster"

CULL_MODES = {
    0: "none",
    1: "cull counter-clockwise (keep clockwise)",
    2: "cull clockwise (keep counter-clockwise)",
    3: "none (3, behaves like 0)",
}
SEMANTICS = {
    0x00: "position.x",
    0x01: "position.y",
    0x02: "position.z",
    0x03: "position.w",
    0x04: "quaternion.x",
    0x05: "quaternion.y",
    0x06: "quaternion.z",
    0x07: "quaternion.w",
    0x08: "color.r",
    0x09: "color.g",
    0x0A: "color.b",
    0x0B: "color.a",
    0x0C: "texcoord0.u",
    0x0D: "texcoord0.v",
    0x0E: "texcoord1.u",
    0x0F: "texcoord1.v",
    0x10: "texcoord0.w",
    0x11: "none (0x11)",
    0x12: "view.x",
    0x13: "view.y",
    0x14: "view.z",
    0x15: "none (0x15)",
    0x16: "texcoord2.u",
    0x17: "texcoord2.v",
    0x1F: "unused",
}
EARLYDEPTH_FUNCS = {0: "greater or equal", 1: "greater", 2: "less or equal", 3: "less"}
SCISSOR_MODES = {
    0: "disabled",
    1: "exclude (reject pixels inside the box)",
    2: "disabled (2)",
    3: "include (reject pixels outside the box)",
}
DEPTHMAP_MODES = {0: "W-buffer", 1: "Z-buffer"}
ORIENTATIONS = {0: "vertically flipped", 1: "normal"}
_F24 = FieldType.FLOAT24


def _dim_fields() -> tuple:
    return (
        f("width", 0, 10),
        f("height_minus_1", 12, 21),
        f("orientation", 24, enum=ORIENTATIONS, doc="1 = normal (every SDK writes it); 0 = vertically flipped"),
    )


def _outmap(i: int) -> Register:
    return reg(
        0x050 + i,
        f"GPUREG_SH_OUTMAP_O{i}",
        BLOCK,
        f"semantics of the components of output-map slot {i}",
        *(f(c, lo, lo + 4, enum=SEMANTICS) for c, lo in (("x", 0), ("y", 8), ("z", 16), ("w", 24))),
        aliases=(f"PICA_REG_GS_OUT_ATTR{i}", f"PICA_REG_VS_OUT_ATTR{i}"),
    )


def _clip_data(i: int) -> Register:
    return reg(
        0x048 + i,
        f"GPUREG_FRAGOP_CLIP_DATA{i}",
        BLOCK,
        f"user clip plane coefficient {'xyzw'[i]}, float24",
        f("value", 0, 23, _F24),
        aliases=(f"PICA_REG_FRAGOP_CLIP_DATA{i + 1}",),
    )


REGISTERS: list[Register] = [
    reg(
        0x040,
        "GPUREG_FACECULLING_CONFIG",
        BLOCK,
        "face culling mode (winding in y-up window coordinates)",
        f("mode", 0, 1, enum=CULL_MODES),
        aliases=("PICA_REG_CULL_FACE",),
    ),
    reg(
        0x041,
        "GPUREG_VIEWPORT_WIDTH",
        BLOCK,
        "viewport width / 2, float24",
        f("half_width", 0, 23, _F24),
        aliases=("PICA_REG_VIEWPORT_WIDTH1",),
    ),
    reg(
        0x042,
        "GPUREG_VIEWPORT_INVW",
        BLOCK,
        "2 / viewport width, float31 in bits 1-31",
        f("inv_half_width", 1, 31, FieldType.FLOAT31),
        aliases=("PICA_REG_VIEWPORT_WIDTH2",),
    ),
    reg(
        0x043,
        "GPUREG_VIEWPORT_HEIGHT",
        BLOCK,
        "viewport height / 2, float24",
        f("half_height", 0, 23, _F24),
        aliases=("PICA_REG_VIEWPORT_HEIGHT1",),
    ),
    reg(
        0x044,
        "GPUREG_VIEWPORT_INVH",
        BLOCK,
        "2 / viewport height, float31 in bits 1-31",
        f("inv_half_height", 1, 31, FieldType.FLOAT31),
        aliases=("PICA_REG_VIEWPORT_HEIGHT2",),
    ),
    reg(
        0x047,
        "GPUREG_FRAGOP_CLIP",
        BLOCK,
        "user clip plane enable (inside when dot(position, plane) >= 0)",
        f("enable", 0),
        aliases=("PICA_REG_FRAGOP_CLIP",),
    ),
    *(_clip_data(i) for i in range(4)),
    reg(
        0x04D,
        "GPUREG_DEPTHMAP_SCALE",
        BLOCK,
        "depth scale, float24 (near - far)",
        f("scale", 0, 23, _F24),
        aliases=("PICA_REG_FRAGOP_WSCALE_DATA1",),
    ),
    reg(
        0x04E,
        "GPUREG_DEPTHMAP_OFFSET",
        BLOCK,
        "depth offset, float24 (near + polygon offset)",
        f("offset", 0, 23, _F24),
        aliases=("PICA_REG_FRAGOP_WSCALE_DATA2",),
    ),
    reg(
        0x04F,
        "GPUREG_SH_OUTMAP_TOTAL",
        BLOCK,
        "number of output-map slots used (1-7)",
        f("count", 0, 2),
        aliases=("PICA_REG_GS_OUT_REG_NUM0", "PICA_REG_VS_OUT_REG_NUM0"),
    ),
    *(_outmap(i) for i in range(7)),
    reg(
        0x061,
        "GPUREG_EARLYDEPTH_FUNC",
        BLOCK,
        "early depth compare function",
        f("func", 0, 1, enum=EARLYDEPTH_FUNCS),
        aliases=("PICA_REG_EARLY_DEPTH_FUNC",),
    ),
    reg(
        0x062,
        "GPUREG_EARLYDEPTH_TEST1",
        BLOCK,
        "early depth enable (copy 1 of 0x118)",
        f("enable", 0),
        aliases=("PICA_REG_EARLY_DEPTH_TEST1",),
    ),
    reg(
        0x063,
        "GPUREG_EARLYDEPTH_CLEAR",
        BLOCK,
        "write 1: clear the early-depth buffer",
        f("clear", 0),
        action=Action.EARLYDEPTH_CLEAR,
        aliases=("PICA_REG_EARLY_DEPTH_CLEAR",),
    ),
    reg(
        0x064,
        "GPUREG_SH_OUTATTR_MODE",
        BLOCK,
        "output attribute mode: 1 when a texcoord output is used",
        f("texcoords_used", 0),
        aliases=("PICA_REG_GS_OUT_ATTR_MODE", "PICA_REG_VS_OUT_ATTR_MODE"),
    ),
    reg(
        0x065,
        "GPUREG_SCISSORTEST_MODE",
        BLOCK,
        "scissor mode",
        f("mode", 0, 1, enum=SCISSOR_MODES),
        aliases=("PICA_REG_SCISSOR",),
    ),
    reg(
        0x066,
        "GPUREG_SCISSORTEST_POS",
        BLOCK,
        "scissor box x1 / y1 (inclusive, y-up window pixels)",
        f("x1", 0, 9),
        f("y1", 16, 25),
        aliases=("PICA_REG_SCISSOR_XY",),
    ),
    reg(
        0x067,
        "GPUREG_SCISSORTEST_DIM",
        BLOCK,
        "scissor box x2 / y2 (inclusive; citro3d writes right-1, bottom-1)",
        f("x2", 0, 9),
        f("y2", 16, 25),
        aliases=("PICA_REG_SCISSOR_SIZE",),
    ),
    reg(
        0x068,
        "GPUREG_VIEWPORT_XY",
        BLOCK,
        "viewport origin x / y in window pixels (signed 10-bit)",
        f("x", 0, 9, FieldType.INT),
        f("y", 16, 25, FieldType.INT),
        aliases=("PICA_REG_VIEWPORT_XY",),
    ),
    reg(
        0x06A,
        "GPUREG_EARLYDEPTH_DATA",
        BLOCK,
        "early depth clear value (unsigned 24-bit)",
        f("clear_value", 0, 23),
        aliases=("PICA_REG_EARLY_DEPTH_DATA",),
    ),
    reg(
        0x06D,
        "GPUREG_DEPTHMAP_ENABLE",
        BLOCK,
        "depth mode: 0 = W-buffer, 1 = Z-buffer",
        f("mode", 0, enum=DEPTHMAP_MODES),
        aliases=("PICA_REG_FRAGOP_WSCALE",),
    ),
    reg(
        0x06E,
        "GPUREG_RENDERBUF_DIM",
        BLOCK,
        "render buffer dimensions (same value as 0x11E)",
        *_dim_fields(),
        aliases=("PICA_REG_RENDER_BUF_RESOLUTION1",),
    ),
    reg(
        0x06F,
        "GPUREG_SH_OUTATTR_CLOCK",
        BLOCK,
        "clock enables of output attribute groups (no visible effect)",
        f("position_z", 0),
        f("color", 1),
        f("texcoord0", 8),
        f("texcoord1", 9),
        f("texcoord2", 10),
        f("texcoord0_w", 16),
        f("quaternion_or_view", 24),
        aliases=("PICA_REG_GS_OUT_ATTR_CLK", "PICA_REG_VS_OUT_ATTR_CLK"),
    ),
]
