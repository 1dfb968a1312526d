"""Geometry pipeline registers (0x200-0x27F): vertex arrays, index buffer, draw triggers, fixed attributes,
command-buffer channels, shader-unit routing and primitive assembly."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, FieldType, Port, Register, RegKind

BLOCK = "geometry"
ATTRIB_TYPES = {0: "s8", 1: "u8", 2: "s16", 3: "f32"}
INDEX_TYPES = {0: "u8", 1: "u16"}
TOPOLOGIES = {0: "triangle list", 1: "triangle strip", 2: "triangle fan", 3: "geometry primitive"}
GS_USE = {0: "no geometry shader", 1: "reserved (1)", 2: "geometry shader", 3: "reserved (3)"}
GS_MODES = {0: "point", 1: "variable-size primitive", 2: "fixed-size primitive"}
COM_MODES = {0: "GS mirrors VS configuration", 1: "GS has its own configuration"}
DRAW_MODES = {0: "drawing", 1: "configuration"}


def _attr_fmt(i: int, lo: int) -> list:
    return [
        f(f"attr{i}_type", lo, lo + 1, enum=ATTRIB_TYPES),
        f(f"attr{i}_components_minus_1", lo + 2, lo + 3),
    ]


NUM_LOADERS = 12  # attribute buffers (loaders), each with an OFFSET, CONFIG1 and CONFIG2 register


def _loaders() -> list[Register]:
    regs: list[Register] = []
    for j in range(NUM_LOADERS):
        b = 0x203 + 3 * j
        regs += [
            reg(
                b,
                f"GPUREG_ATTRIBBUFFER{j}_OFFSET",
                BLOCK,
                f"loader {j}: byte offset from the array base",
                f("offset", 0, 27),
                aliases=(f"PICA_REG_LOAD_ARRAY{j}_ATTR_OFFSET",),
            ),
            reg(
                b + 1,
                f"GPUREG_ATTRIBBUFFER{j}_CONFIG1",
                BLOCK,
                f"loader {j}: component slots 0-7 (0-11 attribute, 12-15 pad 4/8/12/16 bytes)",
                *(f(f"comp{k}", 4 * k, 4 * k + 3) for k in range(8)),
                aliases=(f"PICA_REG_LOAD_ARRAY{j}_ELEMENT0",),
            ),
            reg(
                b + 2,
                f"GPUREG_ATTRIBBUFFER{j}_CONFIG2",
                BLOCK,
                f"loader {j}: component slots 8-11, stride, slot count",
                *(f(f"comp{k + 8}", 4 * k, 4 * k + 3) for k in range(4)),
                f("stride", 16, 23),
                f("num_components", 28, 31),
                aliases=(f"PICA_REG_LOAD_ARRAY{j}_ELEMENT1",),
            ),
        ]
    return regs


REGISTERS: list[Register] = [
    reg(
        0x200,
        "GPUREG_ATTRIBBUFFERS_LOC",
        BLOCK,
        "vertex array base (physical address, 16-byte units in 1-28)",
        f("base", 1, 28, FieldType.ADDRESS, scale=16),
        aliases=("PICA_REG_VTX_ATTR_ARRAYS_BASE_ADDR",),
    ),
    reg(
        0x201,
        "GPUREG_ATTRIBBUFFERS_FORMAT_LOW",
        BLOCK,
        "attributes 0-7: component type and count - 1",
        *(fld for i in range(8) for fld in _attr_fmt(i, 4 * i)),
        aliases=("PICA_REG_VTX_ATTR_ARRAYS0",),
    ),
    reg(
        0x202,
        "GPUREG_ATTRIBBUFFERS_FORMAT_HIGH",
        BLOCK,
        "attributes 8-11: type and count - 1; fixed-attribute mask; total attribute count - 1",
        *(fld for i in range(4) for fld in _attr_fmt(i + 8, 4 * i)),
        *(f(f"fixed{i}", 16 + i) for i in range(12)),
        f("num_attrs_minus_1", 28, 31),
        aliases=("PICA_REG_VTX_ATTR_ARRAYS1",),
    ),
    *_loaders(),
    reg(
        0x227,
        "GPUREG_INDEXBUFFER_CONFIG",
        BLOCK,
        "index array offset from the base, index size",
        f("offset", 0, 27),
        f("format", 31, enum=INDEX_TYPES),
        aliases=("PICA_REG_INDEX_ARRAY_ADDR_OFFSET",),
    ),
    reg(
        0x228,
        "GPUREG_NUMVERTICES",
        BLOCK,
        "vertex (draw arrays) or index (draw elements) count",
        f("count", 0, 31),
        aliases=("PICA_REG_DRAW_VERTEX_NUM",),
    ),
    reg(
        0x229,
        "GPUREG_GEOSTAGE_CONFIG",
        BLOCK,
        "geometry shader use, indexed-triangle-list flag, variable primitive",
        f("gs_use", 0, 1, enum=GS_USE),
        f("indexed_triangles", 8),
        f("bit9", 9),
        f("variable_primitive", 31),
        aliases=("PICA_REG_DRAW_MODE0",),
    ),
    reg(
        0x22A,
        "GPUREG_VERTEX_OFFSET",
        BLOCK,
        "first vertex index for draw arrays",
        f("offset", 0, 31),
        aliases=("PICA_REG_DRAW_VERTEX_OFFSET",),
    ),
    reg(
        0x22D,
        "GPUREG_POST_VERTEX_CACHE_NUM",
        BLOCK,
        "post-transform vertex cache entries (performance only)",
        f("entries", 0, 7),
        aliases=("PICA_REG_POST_VERTEX_CACHE_NUM",),
    ),
    reg(
        0x22E,
        "GPUREG_DRAWARRAYS",
        BLOCK,
        "any write: draw NUMVERTICES vertices from the arrays",
        action=Action.DRAW_ARRAYS,
        aliases=("PICA_REG_START_DRAW_ARRAY",),
    ),
    reg(
        0x22F,
        "GPUREG_DRAWELEMENTS",
        BLOCK,
        "any write: draw NUMVERTICES indices from the index array",
        action=Action.DRAW_ELEMENTS,
        aliases=("PICA_REG_START_DRAW_ELEMENT",),
    ),
    reg(
        0x231,
        "GPUREG_VTX_FUNC",
        BLOCK,
        "any write: clear the post-vertex cache",
        action=Action.VERTEX_CACHE_CLEAR,
        aliases=("PICA_REG_VTX_FUNC",),
    ),
    reg(
        0x232,
        "GPUREG_FIXEDATTRIB_INDEX",
        BLOCK,
        "fixed attribute to set (0-11) or 0xF = immediate-mode vertex; rewinds the attribute FIFO",
        f("index", 0, 3),
        port=Port.FIXED_ATTRIB,
        action=Action.PORT_INDEX,
        aliases=("PICA_REG_VS_FIXED_ATTR",),
    ),
    *port_range(
        0x233,
        3,
        "GPUREG_FIXEDATTRIB_DATA",
        BLOCK,
        "fixed/immediate attribute FIFO (3 words = float24 vec4)",
        Port.FIXED_ATTRIB,
        "FIXEDATTRIB_DATA",
        aliases=("PICA_REG_VS_FIXED_ATTR_DATA{i}",),
    ),
    reg(
        0x238,
        "GPUREG_CMDBUF_SIZE0",
        BLOCK,
        "command buffer channel 0 size (8-byte units)",
        f("size", 0, 20, FieldType.ADDRESS, scale=8),
        aliases=("PICA_REG_COMMAND_BUF_SIZE_CH0",),
    ),
    reg(
        0x239,
        "GPUREG_CMDBUF_SIZE1",
        BLOCK,
        "command buffer channel 1 size (8-byte units)",
        f("size", 0, 20, FieldType.ADDRESS, scale=8),
        aliases=("PICA_REG_COMMAND_BUF_SIZE_CH1",),
    ),
    reg(
        0x23A,
        "GPUREG_CMDBUF_ADDR0",
        BLOCK,
        "command buffer channel 0 physical address >> 3",
        f("address", 0, 28, FieldType.ADDRESS, scale=8),
        aliases=("PICA_REG_COMMAND_BUF_ADDR_CH0",),
    ),
    reg(
        0x23B,
        "GPUREG_CMDBUF_ADDR1",
        BLOCK,
        "command buffer channel 1 physical address >> 3",
        f("address", 0, 28, FieldType.ADDRESS, scale=8),
        aliases=("PICA_REG_COMMAND_BUF_ADDR_CH1",),
    ),
    reg(
        0x23C,
        "GPUREG_CMDBUF_JUMP0",
        BLOCK,
        "any write: continue at channel 0's buffer (no return)",
        kind=RegKind.JUMP,
        action=Action.JUMP0,
        aliases=("PICA_REG_COMMAND_BUF_KICK_CH0",),
    ),
    reg(
        0x23D,
        "GPUREG_CMDBUF_JUMP1",
        BLOCK,
        "any write: continue at channel 1's buffer (no return)",
        kind=RegKind.JUMP,
        action=Action.JUMP1,
        aliases=("PICA_REG_COMMAND_BUF_KICK_CH1",),
    ),
    reg(
        0x242,
        "GPUREG_VSH_NUM_ATTR",
        BLOCK,
        "vertex shader input attribute count - 1",
        f("num_attrs_minus_1", 0, 3),
        aliases=("PICA_REG_VS_ATTR_NUM1",),
    ),
    reg(
        0x244,
        "GPUREG_VSH_COM_MODE",
        BLOCK,
        "geometry unit configuration source",
        f("gs_config", 0, enum=COM_MODES),
        aliases=("PICA_REG_VS_COM_MODE",),
    ),
    reg(
        0x245,
        "GPUREG_START_DRAW_FUNC0",
        BLOCK,
        "1 = configuration mode, 0 = drawing mode",
        f("mode", 0, enum=DRAW_MODES),
        aliases=("PICA_REG_START_DRAW_FUNC0",),
    ),
    reg(
        0x24A,
        "GPUREG_VSH_OUTMAP_TOTAL1",
        BLOCK,
        "VS output register count - 1 (copy 1)",
        f("count_minus_1", 0, 3),
        aliases=("PICA_REG_VS_OUT_REG_NUM1",),
    ),
    reg(
        0x251,
        "GPUREG_VSH_OUTMAP_TOTAL2",
        BLOCK,
        "VS output register count - 1 (copy 2)",
        f("count_minus_1", 0, 3),
        aliases=("PICA_REG_VS_OUT_REG_NUM2",),
    ),
    reg(
        0x252,
        "GPUREG_GSH_MISC0",
        BLOCK,
        "geometry shader mode and fixed-size primitive parameters",
        f("mode", 0, 7, enum=GS_MODES),
        f("fixed_vertices_minus_1", 8, 11),
        f("fixed_stride_minus_1", 12, 15),
        f("fixed_uniform_start", 16, 23),
        f("fixed_mode", 24),
        aliases=("PICA_REG_GS_MISC_REG0",),
    ),
    reg(
        0x253,
        "GPUREG_GEOSTAGE_CONFIG2",
        BLOCK,
        "draw-arrays/immediate flag, indexed-triangle-list flag",
        f("arrays_or_immediate", 0),
        f("indexed_triangles", 8),
        aliases=("PICA_REG_DRAW_MODE1",),
    ),
    reg(
        0x254,
        "GPUREG_GSH_MISC1",
        BLOCK,
        "variable-size primitive mode: main vertex count - 1",
        f("main_vertices_minus_1", 0, 4),
        aliases=("PICA_REG_GS_MISC_REG1",),
    ),
    reg(
        0x25E,
        "GPUREG_PRIMITIVE_CONFIG",
        BLOCK,
        "output-map slot count - 1 and primitive topology",
        f("outmap_total_minus_1", 0, 3),
        f("topology", 8, 9, enum=TOPOLOGIES),
        aliases=("PICA_REG_DRAW_MODE2", "PICA_REG_VS_OUT_REG_NUM3", "PICA_REG_GS_OUT_REG_NUM3"),
    ),
    reg(
        0x25F,
        "GPUREG_RESTART_PRIMITIVE",
        BLOCK,
        "bit 0 = 1: restart strip/fan assembly",
        f("restart", 0),
        action=Action.RESTART_PRIMITIVE,
        aliases=("PICA_REG_START_DRAW_FUNC1",),
    ),
]
