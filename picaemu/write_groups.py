"""Write groups: which kind of stage state each register id and data port feeds (``Group``: one bit per group;
``GROUP_RANGES`` / ``PORT_GROUPS`` partition the ids and ports; ``WRITE_GROUPS`` is the table the command loop ORs
into its dirty mask). ``picaemu.draw_state`` rebuilds a draw's parts from them (and re-exports them); the
debugger and ``picaemu info`` group draws by them without loading the stages.
"""

# picaemu: kernel constants (register ids, field positions and write groups compiled code freezes: a change
# must recompile, ``picaemu.kernel_cache``)

from __future__ import annotations

import enum

import numpy as np

from picaemu.command import codes as K
from picaemu.regs import NUM_REGS, id_of
from picaemu.regs.blocks.geometry import NUM_LOADERS
from picaemu.regs.blocks.lighting import NUM_LIGHTS

GS_IN_USE = 2  # GEOSTAGE_CONFIG.gs_use: the geometry shader forms the primitives
ALL = -1  # every group: "anything may have changed"


class Group(enum.IntFlag):
    """Write groups: the registers and data ports that one kind of stage state reads."""

    FRAMEBUFFER = enum.auto()
    RASTER = enum.auto()  # culling, viewport, clipping, depth map, scissor
    OUTPUT_MAP = enum.auto()
    TEXTURE_CONFIG = enum.auto()  # TEXUNIT_CONFIG: enables and coordinate routing of every unit
    TEXTURE0 = enum.auto()
    TEXTURE1 = enum.auto()
    TEXTURE2 = enum.auto()
    TEXTURE_ADDRESS = enum.auto()  # the level-0 / +X face address of units 0-2: rebound between most draws
    PROCTEX = enum.auto()
    TEV = enum.auto()
    TEV_COLOR = enum.auto()  # the stages' constant colors and the combiner buffer's initial color: a material's tint
    FOG = enum.auto()
    GAS = enum.auto()
    FRAGOP = enum.auto()  # color operation, blending, logic op, alpha/stencil/depth tests
    SHADOW = enum.auto()
    LIGHTING = enum.auto()
    LIGHT_COLOR = enum.auto()  # each light's four colors and the global ambient: citro3d writes material x light
    LOADER = enum.auto()  # attribute formats, loader layouts (components, stride), fixed attributes
    ATTRIBUTE_ADDRESS = enum.auto()  # the attribute base and each loader's offset: a vertex buffer per object
    DRAW_RANGE = enum.auto()  # index buffer, vertex count, first vertex
    PRIMITIVE = enum.auto()  # topology and geometry-stage mode: written with every draw call
    SHADER_CONFIG = enum.auto()  # shared-unit configuration, output counts, geometry shader modes
    VS_PROGRAM = enum.auto()
    VS_UNIFORMS = enum.auto()
    GS_PROGRAM = enum.auto()
    GS_UNIFORMS = enum.auto()
    # not a kind of state: marked (with the memory's own group) by the data ports whose memories compiled plans
    # read besides registers: shader code and operand descriptors, the fog, procedural-texture and lighting LUTs
    DATA_UPLOAD = enum.auto()


TEXTURE_UNITS = (Group.TEXTURE0, Group.TEXTURE1, Group.TEXTURE2)
PROGRAM_UPLOADS = Group.VS_PROGRAM | Group.GS_PROGRAM  # the groups that code / operand-descriptor uploads mark
# a write to a data-port memory that compiled plans read besides registers (their content is digested into the
# plans' keys); register writes of those groups (an entry point, a LUT index) are keyed as registers
PLAN_DATA_UPLOADS = Group.DATA_UPLOAD

# (group, ((first register, last register), ...)) inclusive ranges by table name; ids in a range that the table
# does not name belong to the group too. Registers in no range (triggers, interrupts, command-buffer jumps) are
# read by no stage and invalidate nothing.
GROUP_RANGES: tuple[tuple[Group, tuple[tuple[str, str], ...]], ...] = (
    (
        Group.RASTER,
        (
            ("FACECULLING_CONFIG", "DEPTHMAP_OFFSET"),
            ("EARLYDEPTH_FUNC", "EARLYDEPTH_TEST1"),
            ("SCISSORTEST_MODE", "RENDERBUF_DIM"),
        ),
    ),
    (
        Group.OUTPUT_MAP,
        (
            ("SH_OUTMAP_TOTAL", "SH_OUTMAP_O6"),
            ("SH_OUTATTR_MODE", "SH_OUTATTR_MODE"),
            ("SH_OUTATTR_CLOCK", "SH_OUTATTR_CLOCK"),
        ),
    ),
    (Group.TEXTURE_CONFIG, (("TEXUNIT_CONFIG", "TEXUNIT_CONFIG"),)),
    (Group.TEXTURE0, (("TEXUNIT0_BORDER_COLOR", "TEXUNIT0_LOD"), ("TEXUNIT0_ADDR2", "TEXUNIT0_TYPE"))),
    (
        Group.TEXTURE_ADDRESS,
        (("TEXUNIT0_ADDR1", "TEXUNIT0_ADDR1"), ("TEXUNIT1_ADDR", "TEXUNIT1_ADDR"), ("TEXUNIT2_ADDR", "TEXUNIT2_ADDR")),
    ),
    (
        Group.LIGHTING,
        (
            ("LIGHTING_ENABLE0", "LIGHTING_ENABLE0"),
            *((f"LIGHT{n}_XY", f"LIGHT{n}_ATTENUATION_SCALE") for n in range(NUM_LIGHTS)),
            ("LIGHTING_NUM_LIGHTS", "LIGHTING_LIGHT_PERMUTATION"),
        ),
    ),
    (
        Group.LIGHT_COLOR,
        (
            *((f"LIGHT{n}_SPECULAR0", f"LIGHT{n}_AMBIENT") for n in range(NUM_LIGHTS)),
            ("LIGHTING_AMBIENT", "LIGHTING_AMBIENT"),
        ),
    ),
    (Group.TEXTURE1, (("TEXUNIT1_BORDER_COLOR", "TEXUNIT1_LOD"), ("TEXUNIT1_TYPE", "TEXUNIT1_TYPE"))),
    (Group.TEXTURE2, (("TEXUNIT2_BORDER_COLOR", "TEXUNIT2_LOD"), ("TEXUNIT2_TYPE", "TEXUNIT2_TYPE"))),
    (Group.PROCTEX, (("TEXUNIT3_PROCTEX0", "PROCTEX_LUT_DATA7"),)),
    (
        Group.TEV,
        (
            ("TEXENV0_SOURCE", "TEXENV0_COMBINER"),
            *((f"TEXENV{i}_SCALE", f"TEXENV{i + 1}_COMBINER") for i in (0, 1, 2, 4)),
            ("TEXENV3_SCALE", "TEXENV_UPDATE_BUFFER"),
            ("TEXENV4_SOURCE", "TEXENV4_COMBINER"),
            ("TEXENV5_SCALE", "TEXENV5_SCALE"),
        ),
    ),
    (
        Group.TEV_COLOR,
        (*((f"TEXENV{i}_COLOR", f"TEXENV{i}_COLOR") for i in range(6)), ("TEXENV_BUFFER_COLOR", "TEXENV_BUFFER_COLOR")),
    ),
    (Group.FOG, (("FOG_COLOR", "FOG_COLOR"), ("FOG_LUT_INDEX", "FOG_LUT_DATA7"))),
    (Group.GAS, (("GAS_ATTENUATION", "GAS_ACCMAX"), ("GAS_LIGHT_XY", "GAS_DELTAZ_DEPTH"))),
    (Group.FRAGOP, (("COLOR_OPERATION", "DEPTH_COLOR_MASK"),)),
    (Group.FRAMEBUFFER, (("COLORBUFFER_READ", "FRAMEBUFFER_DIM"),)),
    (Group.SHADOW, (("FRAGOP_SHADOW", "FRAGOP_SHADOW"),)),
    (
        Group.LOADER,
        (
            ("ATTRIBBUFFERS_FORMAT_LOW", "ATTRIBBUFFERS_FORMAT_HIGH"),
            *((f"ATTRIBBUFFER{j}_CONFIG1", f"ATTRIBBUFFER{j}_CONFIG2") for j in range(NUM_LOADERS)),
            ("FIXEDATTRIB_INDEX", "FIXEDATTRIB_DATA2"),
            ("VSH_NUM_ATTR", "VSH_NUM_ATTR"),
        ),
    ),
    (
        Group.ATTRIBUTE_ADDRESS,
        (
            ("ATTRIBBUFFERS_LOC", "ATTRIBBUFFERS_LOC"),
            *((f"ATTRIBBUFFER{j}_OFFSET", f"ATTRIBBUFFER{j}_OFFSET") for j in range(NUM_LOADERS)),
        ),
    ),
    (Group.DRAW_RANGE, (("INDEXBUFFER_CONFIG", "NUMVERTICES"), ("VERTEX_OFFSET", "VERTEX_OFFSET"))),
    (
        Group.PRIMITIVE,
        (
            ("GEOSTAGE_CONFIG", "GEOSTAGE_CONFIG"),
            ("GEOSTAGE_CONFIG2", "GEOSTAGE_CONFIG2"),
            ("PRIMITIVE_CONFIG", "PRIMITIVE_CONFIG"),
        ),
    ),
    (
        Group.SHADER_CONFIG,
        (("VSH_COM_MODE", "VSH_COM_MODE"), ("VSH_OUTMAP_TOTAL1", "GSH_MISC0"), ("GSH_MISC1", "GSH_MISC1")),
    ),
    (
        Group.GS_UNIFORMS,
        (("GSH_BOOLUNIFORM", "GSH_INTUNIFORM_I3"), ("GSH_FLOATUNIFORM_INDEX", "GSH_FLOATUNIFORM_DATA7")),
    ),
    (
        Group.GS_PROGRAM,
        (("GSH_INPUTBUFFER_CONFIG", "GSH_CODETRANSFER_END"), ("GSH_CODETRANSFER_INDEX", "GSH_OPDESCS_DATA7")),
    ),
    (
        Group.VS_UNIFORMS,
        (("VSH_BOOLUNIFORM", "VSH_INTUNIFORM_I3"), ("VSH_FLOATUNIFORM_INDEX", "VSH_FLOATUNIFORM_DATA7")),
    ),
    (
        Group.VS_PROGRAM,
        (("VSH_INPUTBUFFER_CONFIG", "VSH_CODETRANSFER_END"), ("VSH_CODETRANSFER_INDEX", "VSH_OPDESCS_DATA7")),
    ),
)

# data port (the command kernel's port numbers) -> the group its words land in
PORT_GROUPS: dict[int, Group] = {
    K.P_VS_FLOAT: Group.VS_UNIFORMS,
    K.P_VS_CODE: Group.VS_PROGRAM | Group.DATA_UPLOAD,
    K.P_VS_OPDESC: Group.VS_PROGRAM | Group.DATA_UPLOAD,
    K.P_GS_FLOAT: Group.GS_UNIFORMS,
    K.P_GS_CODE: Group.GS_PROGRAM | Group.DATA_UPLOAD,
    K.P_GS_OPDESC: Group.GS_PROGRAM | Group.DATA_UPLOAD,
    K.P_FIXED: Group.LOADER,
    K.P_LIGHTING: Group.LIGHTING | Group.DATA_UPLOAD,
    K.P_FOG: Group.FOG | Group.DATA_UPLOAD,
    K.P_PROCTEX: Group.PROCTEX | Group.DATA_UPLOAD,
    K.P_GAS: Group.GAS,
}


def write_group_table() -> np.ndarray:
    """(NUM_REGS + NUM_PORTS,) int64: the group bit of every register id, then of every data port (index
    ``NUM_REGS + port``); 0 for ids no stage reads."""
    table = np.zeros(NUM_REGS + K.NUM_PORTS, np.int64)
    for group, ranges in GROUP_RANGES:
        for first, last in ranges:
            lo, hi = id_of(first), id_of(last)
            if table[lo : hi + 1].any():
                raise ValueError(f"register range {first}..{last} overlaps another group")
            table[lo : hi + 1] = int(group)
    for port, group in PORT_GROUPS.items():
        table[NUM_REGS + port] = int(group)
    return table


WRITE_GROUPS = write_group_table()
