"""PICA200 shader instruction set: encodings as data, and decoding of one word (+ its operand descriptor).

Owns the stage tables of the ISA (pica-shader-isa.md §4-§9): opcode -> (mnemonic, format), per-format field
positions ``(lo, width)``, descriptor fields, compare operators, condition ops, relative-address selectors.
``decode(word, opdescs) -> Instruction`` (frozen) is what the interpreters, the disassembler and the assembler's
self-checks share; ``encode(Instruction-like fields) -> word`` is its inverse for the assembler.

Register numbering inside instructions: sources 0x00-0x0F v, 0x10-0x1F r, 0x20-0x7F c0-c95 (wide fields only);
destinations 0x00-0x0F o, 0x10-0x1F r. Descriptor: mask bit 3 = x ... bit 0 = w; selector byte bits [7:6] feed
lane x ... [1:0] lane w with codes 0 x, 1 y, 2 z, 3 w.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from picaemu.errors import ShaderError


class Fmt(Enum):
    """Instruction formats (3dbrew naming)."""

    F1 = "1"  # two operands, wide SRC1
    F1I = "1i"  # two operands, wide SRC2
    F1U = "1u"  # one operand
    F1C = "1c"  # compare
    F2 = "2"  # condition-code flow
    F3 = "3"  # uniform flow
    F0 = "0"  # no operands
    F4 = "4"  # SETEMIT
    F5 = "5"  # MAD (wide SRC2)
    F5I = "5i"  # MADI (wide SRC3)


# opcode (6-bit) -> (mnemonic, format). CMP (0x2E/0x2F) and MAD/MADI (0x30-0x3F) are found by the special rules.
OPCODES: dict[int, tuple[str, Fmt]] = {
    0x00: ("add", Fmt.F1),
    0x01: ("dp3", Fmt.F1),
    0x02: ("dp4", Fmt.F1),
    0x03: ("dph", Fmt.F1),
    0x04: ("dst", Fmt.F1),
    0x05: ("ex2", Fmt.F1U),
    0x06: ("lg2", Fmt.F1U),
    0x07: ("litp", Fmt.F1U),
    0x08: ("mul", Fmt.F1),
    0x09: ("sge", Fmt.F1),
    0x0A: ("slt", Fmt.F1),
    0x0B: ("flr", Fmt.F1U),
    0x0C: ("max", Fmt.F1),
    0x0D: ("min", Fmt.F1),
    0x0E: ("rcp", Fmt.F1U),
    0x0F: ("rsq", Fmt.F1U),
    0x12: ("mova", Fmt.F1U),
    0x13: ("mov", Fmt.F1U),
    0x18: ("dphi", Fmt.F1I),
    0x19: ("dsti", Fmt.F1I),
    0x1A: ("sgei", Fmt.F1I),
    0x1B: ("slti", Fmt.F1I),
    0x20: ("break", Fmt.F0),
    0x21: ("nop", Fmt.F0),
    0x22: ("end", Fmt.F0),
    0x23: ("breakc", Fmt.F2),
    0x24: ("call", Fmt.F2),
    0x25: ("callc", Fmt.F2),
    0x26: ("callu", Fmt.F3),
    0x27: ("ifu", Fmt.F3),
    0x28: ("ifc", Fmt.F2),
    0x29: ("loop", Fmt.F3),
    0x2A: ("emit", Fmt.F0),
    0x2B: ("setemit", Fmt.F4),
    0x2C: ("jmpc", Fmt.F2),
    0x2D: ("jmpu", Fmt.F3),
}
CMP_OP5 = 0x17  # word >> 27
MAD_OP3 = {0b111: ("mad", Fmt.F5), 0b110: ("madi", Fmt.F5I)}  # word >> 29
OPCODE_OF = {name: op for op, (name, _f) in OPCODES.items()} | {"cmp": CMP_OP5 << 1, "mad": 0x38, "madi": 0x30}

# per format: field name -> (lo, width); "src_wide"/"src_narrow" name which source is which
FIELDS: dict[Fmt, dict[str, tuple[int, int]]] = {
    Fmt.F1: {"desc": (0, 7), "src2": (7, 5), "src1": (12, 7), "idx": (19, 2), "dst": (21, 5)},
    Fmt.F1I: {"desc": (0, 7), "src2": (7, 7), "src1": (14, 5), "idx": (19, 2), "dst": (21, 5)},
    Fmt.F1U: {"desc": (0, 7), "src1": (12, 7), "idx": (19, 2), "dst": (21, 5)},
    Fmt.F1C: {"desc": (0, 7), "src2": (7, 5), "src1": (12, 7), "idx": (19, 2), "cmpy": (21, 3), "cmpx": (24, 3)},
    Fmt.F2: {"num": (0, 8), "target": (10, 12), "condop": (22, 2), "refy": (24, 1), "refx": (25, 1)},
    Fmt.F3: {"num": (0, 8), "target": (10, 12), "uniform": (22, 4)},
    Fmt.F0: {},
    Fmt.F4: {"winding": (22, 1), "primemit": (23, 1), "vtxid": (24, 2)},
    Fmt.F5: {"desc": (0, 5), "src3": (5, 5), "src2": (10, 7), "src1": (17, 5), "idx": (22, 2), "dst": (24, 5)},
    Fmt.F5I: {"desc": (0, 5), "src3": (5, 7), "src2": (12, 5), "src1": (17, 5), "idx": (22, 2), "dst": (24, 5)},
}
OPCODE_FIELD = {Fmt.F1C: (27, 5), Fmt.F5: (29, 3), Fmt.F5I: (29, 3)}  # default (26, 6)
LOOP_INT_WIDTH = 2  # LOOP uses only [23:22] of the uniform field
# which source a relative-address IDX applies to, per format
RELATIVE_SOURCE = {Fmt.F1: 1, Fmt.F1U: 1, Fmt.F1C: 1, Fmt.F1I: 2, Fmt.F5: 2, Fmt.F5I: 3}

DESC_FIELDS = {
    "mask": (0, 4),
    "neg1": (4, 1),
    "sel1": (5, 8),
    "neg2": (13, 1),
    "sel2": (14, 8),
    "neg3": (22, 1),
    "sel3": (23, 8),
}
IDENTITY_SELECTOR = 0x1B
COMPONENTS = "xyzw"
CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "true6", "true7")
CONDOPS = ("or", "and", "x", "y")
IDX_NAMES = ("", "a0.x", "a0.y", "aL")

NUM_V = 16
NUM_R = 16
NUM_C = 96
FIRST_R = 0x10
FIRST_C = 0x20


def bits(word: int, lo: int, width: int) -> int:
    return (word >> lo) & ((1 << width) - 1)


def selector_lanes(sel: int) -> tuple[int, int, int, int]:
    """Selector byte -> source component feeding lanes x, y, z, w."""
    return bits(sel, 6, 2), bits(sel, 4, 2), bits(sel, 2, 2), bits(sel, 0, 2)


def lanes_selector(lanes: tuple[int, ...]) -> int:
    """Inverse of ``selector_lanes`` (4 components)."""
    return (lanes[0] << 6) | (lanes[1] << 4) | (lanes[2] << 2) | lanes[3]


def mask_components(mask: int) -> tuple[int, ...]:
    """Descriptor write mask -> written lane indices (0 = x)."""
    return tuple(i for i in range(4) if mask & (8 >> i))


def source_name(raw: int) -> str:
    if raw < FIRST_R:
        return f"v{raw}"
    if raw < FIRST_C:
        return f"r{raw - FIRST_R}"
    return f"c{raw - FIRST_C}"


def dest_name(raw: int) -> str:
    return f"o{raw}" if raw < FIRST_R else f"r{raw - FIRST_R}"


@dataclass(frozen=True)
class Operand:
    """One source operand: raw register number, swizzle lanes, negation, relative-address selector (0 = none)."""

    raw: int
    swizzle: tuple[int, int, int, int]
    negate: bool
    idx: int = 0

    @property
    def is_uniform(self) -> bool:
        return self.raw >= FIRST_C


@dataclass(frozen=True)
class Instruction:
    """A decoded instruction. Arithmetic ops fill ``dst/mask/srcs``; flow ops fill the flow fields."""

    word: int
    opcode: int
    name: str
    fmt: Fmt
    desc_index: int = 0
    dst: int = 0
    mask: int = 0
    srcs: tuple[Operand, ...] = ()
    cmp_ops: tuple[int, int] = (0, 0)
    num: int = 0
    target: int = 0
    condop: int = 0
    refx: int = 0
    refy: int = 0
    uniform: int = 0
    vtxid: int = 0
    primemit: int = 0
    winding: int = 0

    @property
    def components(self) -> tuple[int, ...]:
        return mask_components(self.mask)


def identify(word: int) -> tuple[int, str, Fmt]:
    """(opcode, mnemonic, format) of a word; ShaderError for the invalid opcodes."""
    if word >> 27 == CMP_OP5:
        return word >> 26, "cmp", Fmt.F1C
    if word >> 29 in MAD_OP3:
        name, fmt = MAD_OP3[word >> 29]
        return word >> 26, name, fmt
    op = word >> 26
    if op not in OPCODES:
        raise ShaderError(f"invalid opcode 0x{op:02X} in word 0x{word:08X}")
    name, fmt = OPCODES[op]
    return op, name, fmt


def decode(word: int, opdescs) -> Instruction:
    """Decode ``word``; ``opdescs`` is the descriptor table (sequence of u32, at least 128 entries or all used)."""
    word = int(word) & 0xFFFFFFFF
    op, name, fmt = identify(word)
    f = {k: bits(word, lo, w) for k, (lo, w) in FIELDS[fmt].items()}
    if "desc" not in f:
        uniform = f.get("uniform", 0)
        if name == "loop":
            uniform &= (1 << LOOP_INT_WIDTH) - 1
        return Instruction(
            word,
            op,
            name,
            fmt,
            num=f.get("num", 0),
            target=f.get("target", 0),
            condop=f.get("condop", 0),
            refx=f.get("refx", 0),
            refy=f.get("refy", 0),
            uniform=uniform,
            vtxid=f.get("vtxid", 0),
            primemit=f.get("primemit", 0),
            winding=f.get("winding", 0),
        )
    desc = int(opdescs[f["desc"]]) if f["desc"] < len(opdescs) else 0
    d = {k: bits(desc, lo, w) for k, (lo, w) in DESC_FIELDS.items()}
    rel = RELATIVE_SOURCE[fmt]
    srcs = tuple(
        Operand(f[f"src{k}"], selector_lanes(d[f"sel{k}"]), bool(d[f"neg{k}"]), f["idx"] if k == rel else 0)
        for k in (1, 2, 3)
        if f"src{k}" in f
    )
    return Instruction(
        word,
        op,
        name,
        fmt,
        desc_index=f["desc"],
        dst=f.get("dst", 0),
        mask=d["mask"],
        srcs=srcs,
        cmp_ops=(f.get("cmpx", 0), f.get("cmpy", 0)),
    )


def encode(name: str, **fields: int) -> int:
    """Build an instruction word from a mnemonic and raw field values (names as in ``FIELDS``)."""
    fmt = MAD_OP3[0b111][1] if name == "mad" else MAD_OP3[0b110][1] if name == "madi" else None
    if name == "cmp":
        fmt = Fmt.F1C
    if fmt is None:
        fmt = OPCODES[OPCODE_OF[name]][1]
    lo, _width = OPCODE_FIELD.get(fmt, (26, 6))
    special = {"cmp": CMP_OP5, "mad": 0b111, "madi": 0b110}
    opcode = special[name] if name in special else OPCODE_OF[name]
    word = opcode << lo
    for key, value in fields.items():
        flo, fw = FIELDS[fmt][key]
        if value < 0 or value >> fw:
            raise ValueError(f"{name}: field {key} value {value} does not fit {fw} bits")
        word |= value << flo
    return word


def encode_desc(
    mask: int,
    sels: tuple[int, int, int] = (IDENTITY_SELECTOR,) * 3,
    negs: tuple[bool, bool, bool] = (False, False, False),
) -> int:
    """Build an operand descriptor word."""
    out = mask << DESC_FIELDS["mask"][0]
    for k in range(3):
        out |= sels[k] << DESC_FIELDS[f"sel{k + 1}"][0]
        out |= int(negs[k]) << DESC_FIELDS[f"neg{k + 1}"][0]
    return out
