"""Instruction encoders of the shader assembler: one handler per mnemonic family, dispatched by ``INSTRUCTIONS``.

Each handler receives the assembler, the file unit, the open blocks, the mnemonic, the comma-split arguments
(text, column) and the line position; it appends one word (plus any fixup for labels/procedures).
Source register numbers: v n -> n, r n -> 0x10+n, c n -> 0x20+n; destinations o n -> n, r n -> 0x10+n.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.shader import isa
from picaemu.shader.asm_descs import full_mask
from picaemu.shader.asm_model import COMMUTATIVE, INVERTED, MIRRORED_CMP, Block, Unit, descriptor
from picaemu.shader.asm_syntax import Operand, Where, parse_condition, parse_operand

if TYPE_CHECKING:  # the assembler drives these encoders; they only call back into it
    from picaemu.shader.asm import Assembler

SOURCE_BASE = {"v": 0, "r": isa.FIRST_R, "c": isa.FIRST_C}
DEST_BASE = {"o": 0, "r": isa.FIRST_R}
EMIT_FLAGS = {"prim": "primemit", "primitive": "primemit", "inv": "winding", "invert": "winding"}
BASE_FORMS = {"dphi": "dph", "dsti": "dst", "sgei": "sge", "slti": "slt", "madi": "mad"}  # chosen by operands
# mova destinations: picasso's a0 / a1 / a01 (a0 alone is a0.x) and the component forms
MOVA_MASKS = {"a0": 0x8, "a1": 0x4, "a01": 0xC, "a0.x": 0x8, "a0.y": 0x4, "a0.xy": 0xC}
D12, D1, S12, D123 = full_mask(True, 2), full_mask(True, 1), full_mask(False, 2), full_mask(True, 3)
Pieces = list[tuple[str, int]]


def _count(pieces: Pieces, n: int, mn: str, where: Where) -> None:
    if len(pieces) != n:
        raise where.error(f"'{mn}' takes {n} operand(s), got {len(pieces)}")


def _wide(op: Operand) -> bool:
    return op.kind == "c" or op.relative != 0


def _src(op: Operand, piece: tuple[str, int], where: Where, wide: bool) -> int:
    if op.kind not in SOURCE_BASE:
        raise where.at(piece[1]).error(f"'{piece[0]}' cannot be read by this instruction")
    if not wide and _wide(op):
        raise where.at(piece[1]).error(f"'{piece[0]}' needs a wide source field (uniform/relative)")
    return SOURCE_BASE[op.kind] + op.index


def _dest(a: Assembler, unit: Unit, piece: tuple[str, int], where: Where) -> tuple[int, int]:
    op = parse_operand(piece[0], unit.aliases, where.at(piece[1]))
    if op.kind not in DEST_BASE or op.negate or op.relative:
        raise where.at(piece[1]).error(f"'{piece[0]}' is not a writable register (o or r)")
    return DEST_BASE[op.kind] + op.index, sum(8 >> i for i in set(op.written))


def _two_wide(where: Where, mn: str) -> None:
    raise where.error(f"'{mn}': at most one operand may be a uniform or relatively addressed")


def binary(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 3, mn, where)
    mn = BASE_FORMS.get(mn, mn)
    dst, mask = _dest(a, unit, pieces[0], where)
    p1, p2 = pieces[1], pieces[2]
    s1, s2 = a.operand(unit, p1, where), a.operand(unit, p2, where)
    name = mn
    if _wide(s2):
        if _wide(s1):
            _two_wide(where, mn)
        if mn in INVERTED:
            name = INVERTED[mn]
        elif mn in COMMUTATIVE:
            s1, s2, p1, p2 = s2, s1, p2, p1
        else:
            raise where.at(p2[1]).error(f"'{mn}' cannot take a uniform as its second operand")
    inverted = name != mn
    r1 = _src(s1, p1, where, wide=not inverted)
    r2 = _src(s2, p2, where, wide=inverted)
    rel = s2.relative if inverted else s1.relative
    desc = a._desc(name, descriptor(mask, [s1, s2]), D12, where)
    a._emit(isa.encode(name, dst=dst, src1=r1, src2=r2, idx=rel, desc=desc), name)


def unary(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 2, mn, where)
    dst, mask = _dest(a, unit, pieces[0], where)
    s1 = a.operand(unit, pieces[1], where)
    r1 = _src(s1, pieces[1], where, wide=True)
    desc = a._desc(mn, descriptor(mask, [s1]), D1, where)
    a._emit(isa.encode(mn, dst=dst, src1=r1, idx=s1.relative, desc=desc), mn)


def mova(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 2, mn, where)
    target = pieces[0][0].replace(" ", "").lower()
    if target not in MOVA_MASKS:
        raise where.at(pieces[0][1]).error(
            f"mova writes a0 (= a0.x), a1 (= a0.y), a01, a0.x, a0.y or a0.xy, not '{pieces[0][0]}'"
        )
    s1 = a.operand(unit, pieces[1], where)
    r1 = _src(s1, pieces[1], where, wide=True)
    desc = a._desc(mn, descriptor(MOVA_MASKS[target], [s1]), D1, where)
    a._emit(isa.encode(mn, dst=0, src1=r1, idx=s1.relative, desc=desc), mn)


def cmp(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 4, mn, where)
    p1, p2 = pieces[0], pieces[3]
    ox, oy = pieces[1][0].lower(), pieces[2][0].lower()
    for text, col in (pieces[1], pieces[2]):
        if text.lower() not in isa.CMP_OPS[:6] and text not in ("6", "7"):
            raise where.at(col).error(f"unknown compare operator '{text}'")
    s1, s2 = a.operand(unit, p1, where), a.operand(unit, p2, where)
    if _wide(s2):
        if _wide(s1):
            _two_wide(where, mn)
        s1, s2, p1, p2 = s2, s1, p2, p1
        ox, oy = MIRRORED_CMP.get(ox, ox), MIRRORED_CMP.get(oy, oy)
    codes = [isa.CMP_OPS.index(o) if o in isa.CMP_OPS else int(o) for o in (ox, oy)]
    desc = a._desc(mn, descriptor(0, [s1, s2]), S12, where)
    a._emit(
        isa.encode(
            "cmp",
            src1=_src(s1, p1, where, True),
            src2=_src(s2, p2, where, False),
            idx=s1.relative,
            cmpx=codes[0],
            cmpy=codes[1],
            desc=desc,
        ),
        "cmp",
    )


def mad(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 4, mn, where)
    mn = BASE_FORMS.get(mn, mn)
    dst, mask = _dest(a, unit, pieces[0], where)
    p = list(pieces[1:])
    s = [a.operand(unit, x, where) for x in p]
    if _wide(s[0]) and not _wide(s[1]):
        s[0], s[1], p[0], p[1] = s[1], s[0], p[1], p[0]
    if sum(_wide(x) for x in s) > 1:
        _two_wide(where, mn)
    name = "madi" if _wide(s[2]) else "mad"
    wide_k = 2 if name == "madi" else 1
    raws = [_src(s[k], p[k], where, wide=(k == wide_k)) for k in range(3)]
    desc = a._desc(name, descriptor(mask, s), D123, where)
    a._emit(
        isa.encode(name, dst=dst, src1=raws[0], src2=raws[1], src3=raws[2], idx=s[wide_k].relative, desc=desc), name
    )


def plain(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    _count(pieces, 0, mn, where)
    if mn in ("emit",) and not unit.is_geo:
        raise where.error("emit is only valid in a geometry shader (.gsh)")
    a._emit(isa.encode(mn), mn)


def _uniform_reg(a: Assembler, unit: Unit, piece: tuple[str, int], kind: str, where: Where) -> tuple[int, bool]:
    text = piece[0].strip()
    invert = text.startswith("!")
    op = parse_operand(text.lstrip("!").strip(), unit.aliases, where.at(piece[1]))
    if op.kind != kind:
        raise where.at(piece[1]).error(f"expected a{'n integer' if kind == 'i' else ' bool'} uniform, got '{text}'")
    return op.index, invert


def _cond(piece: tuple[str, int], where: Where) -> dict[str, int]:
    return parse_condition(piece[0], where.at(piece[1]))


def flow(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    """breakc, call, callc, callu, jmpc, jmpu (targets resolved after all files are read)."""
    n_args = {"breakc": 1, "call": 1, "callc": 2, "callu": 2, "jmpc": 2, "jmpu": 2}[mn]
    _count(pieces, n_args, mn, where)
    fields: dict[str, int] = {}
    if mn in ("breakc", "callc", "jmpc"):
        fields = _cond(pieces[0], where)
    elif mn in ("callu", "jmpu"):
        index, invert = _uniform_reg(a, unit, pieces[0], "b", where)
        if invert and mn != "jmpu":
            raise where.at(pieces[0][1]).error("only jmpu can test an inverted bool")
        fields = {"uniform": index, "num": int(invert)}
    pc = a._emit(isa.encode(mn, **fields), mn)
    if mn != "breakc":
        name, col = pieces[-1]
        if mn.startswith("call"):
            a.fixups.append((pc, name.strip(), where.at(col)))
        else:  # labels are local to their file
            unit.label_fixups.append((pc, name.strip(), where.at(col)))


def block(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    """ifu / ifc / for: open a block closed by .else/.end."""
    _count(pieces, 1, mn, where)
    if mn == "ifc":
        fields = _cond(pieces[0], where)
    else:
        index, invert = _uniform_reg(a, unit, pieces[0], "i" if mn == "for" else "b", where)
        if invert:
            raise where.at(pieces[0][1]).error(f"'{mn}' cannot test an inverted uniform")
        fields = {"uniform": index}
    name = "loop" if mn == "for" else mn
    pc = a._emit(isa.encode(name, **fields), name)
    blocks.append(Block("for" if mn == "for" else "if", pc, where))


def setemit(a: Assembler, unit: Unit, blocks: list[Block], mn: str, pieces: Pieces, where: Where) -> None:
    if not unit.is_geo:  # as picasso: a setemit makes the file a compatibility geometry shader
        unit.compat = True
    if not pieces:
        raise where.error("setemit needs a vertex id")
    try:
        vtx = int(pieces[0][0], 0)
    except ValueError:
        raise where.at(pieces[0][1]).error(f"bad vertex id '{pieces[0][0]}'") from None
    if not 0 <= vtx <= 2:
        raise where.at(pieces[0][1]).error("vertex id must be 0, 1 or 2")
    fields = {"vtxid": vtx}
    for text, col in pieces[1:]:
        for flag in text.split():
            if flag.lower() not in EMIT_FLAGS:
                raise where.at(col).error(f"unknown setemit flag '{flag}'")
            fields[EMIT_FLAGS[flag.lower()]] = 1
    a._emit(isa.encode("setemit", **fields), "setemit")


INSTRUCTIONS = {
    **{
        mn: binary
        for mn in ("add", "dp3", "dp4", "dph", "dst", "mul", "sge", "slt", "max", "min", "dphi", "dsti", "sgei", "slti")
    },
    **{mn: unary for mn in ("ex2", "lg2", "litp", "flr", "rcp", "rsq", "mov")},
    "mova": mova,
    "cmp": cmp,
    "mad": mad,
    "madi": mad,
    **{mn: plain for mn in ("nop", "end", "emit", "break")},
    **{mn: flow for mn in ("breakc", "call", "callc", "callu", "jmpc", "jmpu")},
    "ifu": block,
    "ifc": block,
    "for": block,
    "setemit": setemit,
}
