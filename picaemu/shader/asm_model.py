"""The assembler's data: mnemonic tables, the open-block and per-file records, and the word-building rules that
both the assembler (``picaemu.shader.asm``) and its instruction encoders (``picaemu.shader.asm_ops``) use.

Operand descriptors hold what picasso stores for one use (``descriptor``): the write mask, and every source's
negation and four selector lanes exactly as written (a short swizzle repeats its last letter), including the lanes
the instruction never reads; the source fields an instruction does not have are 0 (selector ``xxxx``). Flow
instructions carry a target and a count in their F2 fields (``flow_fields``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from picaemu.formats.shbin import Constant, Output
from picaemu.shader import isa
from picaemu.shader.asm_syntax import Alias, Operand, Where

INVERTED = {"dph": "dphi", "dst": "dsti", "sge": "sgei", "slt": "slti"}
COMMUTATIVE = {"add", "mul", "dp3", "dp4"}
MIRRORED_CMP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
PAD_AFTER = {"jmpc", "jmpu", "call", "callc", "callu"}
LOOP_EXITS = {"breakc", "break"}
MAD_KINDS = {"mad", "madi"}
DESC_FIELD_MASK = (1 << isa.FIELDS[isa.Fmt.F1]["desc"][1]) - 1


@dataclass
class Block:
    kind: str  # "proc", "if", "for", "constfa"
    start: int  # pc of the opening instruction (proc: first instruction)
    where: Where
    name: str = ""
    else_pc: int | None = None
    values: list = field(default_factory=list)
    size: int = 0  # constfa: declared entry count (0: as many as given)


@dataclass
class Unit:
    """Per-file state: one DVLE (none with ``.nodvle``)."""

    path: str
    aliases: dict[str, Alias] = field(default_factory=dict)
    uniforms: list[tuple[str, str, int, int]] = field(default_factory=list)  # name, file, first, last
    constants: list[Constant] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    input_mask: int = 0
    output_mask: int = 0
    output_used: int = 0  # 4 bits per output register: components already mapped
    merge: bool = False
    entry: str = "main"
    entry_where: Where | None = None
    gsh: tuple[int, int, int, int] | None = None  # mode, fixed start, variable main count, fixed vertex count
    compat: bool = False  # bare .gsh / setemit first: a geometry shader on the shared register pool
    nodvle: bool = False
    labels: dict[str, int] = field(default_factory=dict)
    label_fixups: list[tuple[int, str, Where]] = field(default_factory=list)

    @property
    def is_geo(self) -> bool:
        return self.gsh is not None or self.compat

    @property
    def gsh_space(self) -> bool:
        return self.gsh is not None and not self.compat


def flow_fields(target: int, num: int, where: Where) -> int:
    t_lo, t_w = isa.FIELDS[isa.Fmt.F2]["target"]
    n_lo, n_w = isa.FIELDS[isa.Fmt.F2]["num"]
    if target >> t_w or num >> n_w:
        raise where.error(f"flow target 0x{target:X} / count {num} does not fit the instruction")
    return target << t_lo | num << n_lo


def descriptor(mask: int, ops: list[Operand]) -> int:
    """Descriptor word of one use: ``mask`` and the sources as written; absent sources all 0 (module doc)."""
    sels, negs = [0] * 3, [False] * 3
    for k, op in enumerate(ops):
        sels[k] = isa.lanes_selector(op.swizzle)
        negs[k] = op.negate
    return isa.encode_desc(mask, tuple(sels), tuple(negs))  # type: ignore[arg-type]
