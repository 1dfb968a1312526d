"""Shader units: geometry (0x280-0x2AF) and vertex (0x2B0-0x2DF), one layout at two bases."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from picaemu.regs.blocks._build import f, port_range, reg
from picaemu.regs.schema import Action, Port, Register

BLOCK = "shader"
UNIT_BASES = {"GSH": 0x280, "VSH": 0x2B0}
_PORTS = {
    "GSH": (Port.GSH_FLOAT_UNIFORM, Port.GSH_CODE, Port.GSH_OPDESC),
    "VSH": (Port.VSH_FLOAT_UNIFORM, Port.VSH_CODE, Port.VSH_OPDESC),
}
_SDK = {"GSH": "GS", "VSH": "VS"}
INPUT_MODES = {0x08: "geometry shader", 0xA0: "vertex shader"}
FLOAT_MODES = {0: "float24 (3 words per vec4)", 1: "float32 (4 words per vec4, order W Z Y X)"}


def _unit(u: str) -> list[Register]:
    b = UNIT_BASES[u]
    fl, code, op = _PORTS[u]
    s = _SDK[u]
    regs = [
        reg(
            b,
            f"GPUREG_{u}_BOOLUNIFORM",
            BLOCK,
            f"{s}: bool uniforms b0-b15",
            *(f(f"b{i}", i) for i in range(16)),
            f("upper", 16, 31, doc="always written as 0x7FFF"),
            aliases=(f"PICA_REG_{s}_BOOL",),
        ),
        *(
            reg(
                b + 1 + i,
                f"GPUREG_{u}_INTUNIFORM_I{i}",
                BLOCK,
                f"{s}: int uniform i{i}; LOOP runs x+1 times, aL starts at y and steps by z",
                f("x", 0, 7),
                f("y", 8, 15),
                f("z", 16, 23),
                f("w", 24, 31),
                aliases=(f"PICA_REG_{s}_INT{i}",),
            )
            for i in range(4)
        ),
        reg(
            b + 9,
            f"GPUREG_{u}_INPUTBUFFER_CONFIG",
            BLOCK,
            f"{s}: input count - 1, input-to-uniform, mode",
            f("num_input_minus_1", 0, 3),
            f("inputs_to_uniforms", 8, 15),
            f("mode", 24, 31, enum=INPUT_MODES),
            aliases=(f"PICA_REG_{s}_ATTR_NUM" + ("" if u == "GSH" else "0"),),
        ),
        reg(
            b + 0xA,
            f"GPUREG_{u}_ENTRYPOINT",
            BLOCK,
            f"{s}: entry point (instruction word offset)",
            f("entry", 0, 15),
            f("upper", 16, 31, doc="written as 0x7FFF"),
            aliases=(f"PICA_REG_{s}_START_ADDR",),
        ),
        reg(
            b + 0xB,
            f"GPUREG_{u}_ATTRIBUTES_PERMUTATION_LOW",
            BLOCK,
            f"{s}: input attribute k (0-7) -> register vN",
            *(f(f"attr{k}", 4 * k, 4 * k + 3) for k in range(8)),
            aliases=(f"PICA_REG_{s}_ATTR_IN_REG_MAP0",),
        ),
        reg(
            b + 0xC,
            f"GPUREG_{u}_ATTRIBUTES_PERMUTATION_HIGH",
            BLOCK,
            f"{s}: input attribute k (8-15) -> register vN",
            *(f(f"attr{k + 8}", 4 * k, 4 * k + 3) for k in range(8)),
            aliases=(f"PICA_REG_{s}_ATTR_IN_REG_MAP1",),
        ),
        reg(
            b + 0xD,
            f"GPUREG_{u}_OUTMAP_MASK",
            BLOCK,
            f"{s}: enabled output registers (bit n = o n)",
            *(f(f"o{i}", i) for i in range(16)),
            aliases=(f"PICA_REG_{s}_OUT_REG_MASK",),
        ),
        reg(
            b + 0xF,
            f"GPUREG_{u}_CODETRANSFER_END",
            BLOCK,
            f"{s}: end of code upload",
            action=Action.CODE_TRANSFER_END,
            aliases=(f"PICA_REG_{s}_PROG_RENEWAL_END",),
        ),
        reg(
            b + 0x10,
            f"GPUREG_{u}_FLOATUNIFORM_INDEX",
            BLOCK,
            f"{s}: float uniform target index and word mode",
            f("index", 0, 7),
            f("mode", 31, enum=FLOAT_MODES),
            port=fl,
            action=Action.PORT_INDEX,
            aliases=(f"PICA_REG_{s}_FLOAT_ADDR", f"GPUREG_{u}_FLOATUNIFORM_CONFIG"),
        ),
        *port_range(
            b + 0x11,
            8,
            f"GPUREG_{u}_FLOATUNIFORM_DATA",
            BLOCK,
            f"{s}: float uniform data FIFO",
            fl,
            f"{u}_FLOATUNIFORM_DATA",
            aliases=(f"PICA_REG_{s}_FLOAT_DATA{{i}}",),
        ),
        reg(
            b + 0x1B,
            f"GPUREG_{u}_CODETRANSFER_INDEX",
            BLOCK,
            f"{s}: code upload word offset",
            f("offset", 0, 11),
            port=code,
            action=Action.PORT_INDEX,
            aliases=(f"PICA_REG_{s}_PROG_ADDR", f"GPUREG_{u}_CODETRANSFER_CONFIG"),
        ),
        *port_range(
            b + 0x1C,
            8,
            f"GPUREG_{u}_CODETRANSFER_DATA",
            BLOCK,
            f"{s}: shader code FIFO",
            code,
            f"{u}_CODETRANSFER_DATA",
            aliases=(f"PICA_REG_{s}_PROG_DATA{{i}}",),
        ),
        reg(
            b + 0x25,
            f"GPUREG_{u}_OPDESCS_INDEX",
            BLOCK,
            f"{s}: operand-descriptor upload offset",
            f("offset", 0, 11),
            port=op,
            action=Action.PORT_INDEX,
            aliases=(f"PICA_REG_{s}_PROG_SWIZZLE_ADDR", f"GPUREG_{u}_OPDESCS_CONFIG"),
        ),
        *port_range(
            b + 0x26,
            8,
            f"GPUREG_{u}_OPDESCS_DATA",
            BLOCK,
            f"{s}: operand descriptor FIFO",
            op,
            f"{u}_OPDESCS_DATA",
            aliases=(f"PICA_REG_{s}_PROG_SWIZZLE_DATA{{i}}",),
        ),
    ]
    return regs


REGISTERS: list[Register] = _unit("GSH") + _unit("VSH")
