"""Shader assembler: picasso-language source files -> ``Shbin`` (one shared DVLP, one DVLE per file).

Receives ``[(path, text), ...]`` (e.g. a .vsh and a .gsh); returns a ``picaemu.formats.shbin.Shbin``.
Supported: ``.proc/.end``, ``.entry``, ``.fvec/.ivec/.bool`` (uniforms from register 0 up, exported in the
uniform table unless the name starts with ``_``), ``.constf/.consti/.constfa`` (constants from the top register
down), ``.setf/.seti/.setb`` (constants at explicit registers), ``.alias``, ``.out name prop[.mask] [oN]``,
``.gsh point | variable N | fixed cS N``, ``.word 0x…`` (raw instruction word), labels, every instruction of
pica-shader-isa.md with ``ifu/ifc … .else … .end`` and ``for iN … .end`` blocks. DPH/DST/SGE/SLT become their
inverted forms and MAD becomes MADI automatically when the uniform is the second (third) operand; ADD/MUL/DP3/DP4
and CMP swap their sources when only the second is a uniform. Operand descriptors are deduplicated after
unconsumed swizzle lanes are filled canonically (``disasm.canonical_swizzle``) and ordered by first use, those
used by MAD/MADI first (they can address only 32), so disassembling the output and re-assembling it reproduces
the same words. Hardware-safety NOPs are inserted as picasso does (a block ending in
a jump/call, a loop ending in a break, coinciding block ends, if/for bodies shorter than 2 instructions).
Errors: ``AssemblyError`` naming file, line and column.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from picaemu.formats.shbin import (
    DVLP_HEADER_SIZE,
    OPDESC_SIZE,
    Constant,
    Dvle,
    Output,
    Shbin,
    Uniform,
    uniform_register_raw,
)
from picaemu.numeric import to_f24
from picaemu.shader import isa
from picaemu.shader.asm_syntax import (
    IDENT_RE,
    Alias,
    AssemblyError,
    Operand,
    Where,
    expand,
    parse_operand,
    parse_swizzle,
    parse_vector,
    split_args,
    strip_comment,
)
from picaemu.shader.disasm import canonical_swizzle, lanes_used

OUTPUT_PROPS = {"position": 0, "pos": 0, "normalquat": 1, "nquat": 1, "color": 2, "clr": 2, "texcoord0": 3,
                "tcoord0": 3, "texcoord0w": 4, "tcoord0w": 4, "texcoord1": 5, "tcoord1": 5, "texcoord2": 6,
                "tcoord2": 6, "7": 7, "view": 8, "dummy": 9}
INVERTED = {"dph": "dphi", "dst": "dsti", "sge": "sgei", "slt": "slti"}
COMMUTATIVE = {"add", "mul", "dp3", "dp4"}
MIRRORED_CMP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
BINARY = {"add", "dp3", "dp4", "dph", "dst", "mul", "sge", "slt", "max", "min"}
UNARY = {"ex2", "lg2", "litp", "flr", "rcp", "rsq", "mov"}
PAD_AFTER = {"jmpc", "jmpu", "call", "callc", "callu"}
UNUSED_SELECTOR = 0   # picasso leaves the selector of an operand the instruction lacks at 0
MAX_MAD_DESC = 32
MAX_DESC = 128
GS_MODES = {"point": 0, "variable": 1, "fixed": 2}
BOOL_WORDS = {"true": 1, "on": 1, "1": 1, "false": 0, "off": 0, "0": 0}


@dataclass
class _Block:
    kind: str            # "proc", "if", "for", "constfa"
    start: int           # pc of the opening instruction (proc: first instruction)
    where: Where
    name: str = ""
    else_pc: int | None = None
    values: list = field(default_factory=list)


@dataclass
class _Unit:
    """Per-file state: one DVLE."""

    path: str
    aliases: dict[str, Alias] = field(default_factory=dict)
    next_uniform: dict[str, int] = field(default_factory=lambda: {"c": 0, "i": 0, "b": 0})
    next_const: dict[str, int] = field(default_factory=lambda: {"c": 95, "i": 3})
    uniforms: list[tuple[str, str, int, int]] = field(default_factory=list)   # name, file, first, last
    constants: list[Constant] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    entry: str = "main"
    entry_where: Where | None = None
    gsh: tuple[int, int, int, int] | None = None   # mode, fixed start, variable main count, fixed vertex count


class Assembler:
    def __init__(self) -> None:
        self.code: list[int] = []
        self.kinds: list[str] = []
        self.opdescs: list[int] = []
        self.procs: dict[str, tuple[int, int]] = {}
        self.labels: dict[str, int] = {}
        self.fixups: list[tuple[int, str, str, Where]] = []
        self.desc_ids: dict[int, int] = {}
        self.desc_uses: list[tuple[int, int, bool, Where]] = []
        self.last_block_end = -1

    # ------------------------------------------------------------------ top level

    def assemble(self, sources: list[tuple[str, str]]) -> Shbin:
        units = [self._file(path, text) for path, text in sources]
        for pc, kind, name, where in self.fixups:
            self._resolve(pc, kind, name, where)
        self._place_descs()
        dvles = [self._dvle(u) for u in units]
        data_size = DVLP_HEADER_SIZE + 4 * len(self.code) + OPDESC_SIZE * len(self.opdescs)   # as picasso writes
        return Shbin(code=tuple(self.code), opdescs=tuple((d, 0) for d in self.opdescs), dvles=tuple(dvles),
                     dvlp_unknown=(data_size, 0))

    def _file(self, path: str, text: str) -> _Unit:
        unit = _Unit(path)
        blocks: list[_Block] = []
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = strip_comment(raw)
            body = line.lstrip()
            if not body:
                continue
            where = Where(path, lineno, len(line) - len(body) + 1)
            label, colon, rest = body.partition(":")
            if colon and IDENT_RE.match(label.strip()) and not body.startswith("."):
                self._label(label.strip(), where)
                body = rest.lstrip()
                where = where.at(len(line) - len(body) + 1)
                if not body:
                    continue
            word = body.split(None, 1)[0]
            args = body[len(word):].strip()
            args_col = where.column + (body.index(args, len(word)) if args else len(body))
            if word.startswith("."):
                self._directive(unit, blocks, word.lower(), args, where, args_col)
            else:
                if not any(b.kind == "proc" for b in blocks):
                    raise where.error(f"instruction '{word}' outside a .proc")
                self._instruction(unit, blocks, word.lower(), args, where, args_col)
        if blocks:
            raise blocks[-1].where.error(f"'{blocks[-1].kind}' block is never closed with .end")
        return unit

    def _label(self, name: str, where: Where) -> None:
        if name in self.labels:
            raise where.error(f"label '{name}' defined twice")
        self.labels[name] = len(self.code)

    # ------------------------------------------------------------------ emission helpers

    def _emit(self, word: int, kind: str) -> int:
        self.code.append(word)
        self.kinds.append(kind)
        return len(self.code) - 1

    def _desc(self, value: int, mad: bool, where: Where) -> int:
        """Register a descriptor use of the *next* emitted word; final indices are assigned by ``_place_descs``
        (descriptors used by MAD/MADI first, since those can only address the first 32)."""
        if value not in self.desc_ids:
            self.desc_ids[value] = len(self.desc_ids)
        self.desc_uses.append((len(self.code), value, mad, where))
        return 0

    def _place_descs(self) -> None:
        mad_used = {v for _pc, v, mad, _w in self.desc_uses if mad}
        order = sorted(self.desc_ids, key=lambda v: (v not in mad_used, self.desc_ids[v]))
        index = {v: k for k, v in enumerate(order)}
        for pc, value, mad, where in self.desc_uses:
            limit = MAX_MAD_DESC if mad else MAX_DESC
            if index[value] >= limit:
                raise where.error(f"out of operand descriptors ({limit} usable by this instruction)")
            self.code[pc] |= index[value]
        self.opdescs = order

    def _seal(self, body_start: int, strict: bool) -> None:
        """picasso's safety NOPs at the end of a block body (``strict``: also the 2-instruction minimum)."""
        while True:
            n = len(self.code) - body_start
            last = self.kinds[-1] if n else ""
            if (strict and n < 2) or last in PAD_AFTER or (n and self.last_block_end == len(self.code)):
                self._emit(isa.encode("nop"), "nop")
                continue
            return

    # ------------------------------------------------------------------ directives

    def _directive(self, unit: _Unit, blocks: list[_Block], word: str, args: str, where: Where, col: int) -> None:
        handler = _DIRECTIVES.get(word)
        if handler is None:
            raise where.error(f"unknown directive '{word}'")
        handler(self, unit, blocks, args, where.at(col))

    def _d_proc(self, unit, blocks, args, where):
        if blocks:
            raise where.error(".proc inside another block")
        if not IDENT_RE.match(args):
            raise where.error(f"bad procedure name '{args}'")
        if args in self.procs:
            raise where.error(f"procedure '{args}' defined twice")
        blocks.append(_Block("proc", len(self.code), where, name=args))

    def _d_else(self, unit, blocks, args, where):
        if not blocks or blocks[-1].kind != "if" or blocks[-1].else_pc is not None:
            raise where.error(".else without a matching ifu/ifc")
        self._seal(blocks[-1].start + 1, strict=True)
        blocks[-1].else_pc = len(self.code)
        self.last_block_end = -1

    def _d_end(self, unit, blocks, args, where):
        if not blocks:
            raise where.error(".end without an open block")
        b = blocks.pop()
        if b.kind == "constfa":
            self._close_constfa(unit, b, where)
            return
        if b.kind == "proc":
            self._seal(b.start, strict=False)
            self.procs[b.name] = (b.start, len(self.code))
        elif b.kind == "for":
            if self.kinds[-1] in ("break", "breakc"):
                self._emit(isa.encode("nop"), "nop")
            self._seal(b.start + 1, strict=True)
            self.code[b.start] |= _flow_fields(len(self.code) - 1, 0, where)
        else:
            body = b.else_pc if b.else_pc is not None else b.start + 1
            self._seal(body, strict=True)
            dst, num = (b.else_pc, len(self.code) - b.else_pc) if b.else_pc is not None else (len(self.code), 0)
            if b.else_pc is not None and num == 0:
                dst = len(self.code)
            self.code[b.start] |= _flow_fields(dst, num, where)
        self.last_block_end = len(self.code)

    def _d_entry(self, unit, blocks, args, where):
        unit.entry, unit.entry_where = args, where

    def _d_alias(self, unit, blocks, args, where):
        name, _, target = args.partition(" ")
        op = parse_operand(target.strip(), unit.aliases, where)
        self._define(unit, name, Alias(op.kind, op.index, op.swizzle if "." in target else None), where)

    def _define(self, unit: _Unit, name: str, alias: Alias, where: Where) -> None:
        if not IDENT_RE.match(name):
            raise where.error(f"bad name '{name}'")
        if name in unit.aliases:
            raise where.error(f"name '{name}' defined twice")
        unit.aliases[name] = alias

    def _uniforms(self, unit: _Unit, letter: str, args: str, where: Where) -> None:
        for piece, c in split_args(args, where.column):
            name, size = piece, 1
            if piece.endswith("]") and "[" in piece:
                name, _, num = piece[:-1].partition("[")
                if not num.strip().isdigit() or int(num) < 1:
                    raise where.at(c).error(f"bad array size in '{piece}'")
                size = int(num)
            first = unit.next_uniform[letter]
            limit = unit.next_const.get(letter, 15) + 1
            if first + size > limit:
                raise where.at(c).error(f"out of {letter} registers for '{name}'")
            unit.next_uniform[letter] = first + size
            self._define(unit, name.strip(), Alias(letter, first), where.at(c))
            unit.uniforms.append((name.strip(), letter, first, first + size - 1))

    def _d_fvec(self, unit, blocks, args, where):
        self._uniforms(unit, "c", args, where)

    def _d_ivec(self, unit, blocks, args, where):
        self._uniforms(unit, "i", args, where)

    def _d_bool(self, unit, blocks, args, where):
        self._uniforms(unit, "b", args, where)

    def _const_reg(self, unit: _Unit, letter: str, size: int, where: Where) -> int:
        top = unit.next_const[letter]
        if top - size + 1 < unit.next_uniform[letter]:
            raise where.error(f"out of {letter} registers for constants")
        unit.next_const[letter] = top - size
        return top - size + 1

    def _d_constf(self, unit, blocks, args, where):
        name, paren, rest = args.partition("(")
        vals = parse_vector(paren + rest, where)
        reg = self._const_reg(unit, "c", 1, where)
        self._define(unit, name.strip(), Alias("c", reg), where)
        unit.constants.append(Constant(2, reg, tuple(int(to_f24(v)) for v in vals)))

    def _d_consti(self, unit, blocks, args, where):
        name, paren, rest = args.partition("(")
        reg = self._const_reg(unit, "i", 1, where)
        self._define(unit, name.strip(), Alias("i", reg), where)
        unit.constants.append(_int_constant(reg, parse_vector(paren + rest, where), where))

    def _d_constfa(self, unit, blocks, args, where):
        if args.endswith("[]"):
            blocks.append(_Block("constfa", 0, where, name=args[:-2].strip()))
        elif blocks and blocks[-1].kind == "constfa":
            blocks[-1].values.append(parse_vector(args, where))
        else:
            raise where.error(".constfa value outside a '.constfa name[]' array")

    def _close_constfa(self, unit: _Unit, b: _Block, where: Where) -> None:
        if not b.values:
            raise where.error(f"constant array '{b.name}' is empty")
        first = self._const_reg(unit, "c", len(b.values), where)
        self._define(unit, b.name, Alias("c", first), b.where)
        for k, vals in enumerate(b.values):
            unit.constants.append(Constant(2, first + k, tuple(int(to_f24(v)) for v in vals)))

    def _d_setf(self, unit, blocks, args, where):
        reg, paren, rest = args.partition("(")
        op = parse_operand(reg.strip(), unit.aliases, where)
        if op.kind != "c":
            raise where.error(".setf needs a float uniform register")
        unit.constants.append(Constant(2, op.index, tuple(int(to_f24(v)) for v in parse_vector(paren + rest, where))))

    def _d_seti(self, unit, blocks, args, where):
        reg, paren, rest = args.partition("(")
        op = parse_operand(reg.strip(), unit.aliases, where)
        if op.kind != "i":
            raise where.error(".seti needs an integer uniform register")
        unit.constants.append(_int_constant(op.index, parse_vector(paren + rest, where), where))

    def _d_setb(self, unit, blocks, args, where):
        reg, _, value = args.partition(" ")
        op = parse_operand(reg.strip(), unit.aliases, where)
        if op.kind != "b" or value.strip().lower() not in BOOL_WORDS:
            raise where.error(".setb needs a bool register and true/false")
        unit.constants.append(Constant(0, op.index, (BOOL_WORDS[value.strip().lower()], 0, 0, 0)))

    def _d_out(self, unit, blocks, args, where):
        parts = args.split()
        if len(parts) not in (2, 3):
            raise where.error(".out needs: name property[.mask] [register]")
        name, prop = parts[0], parts[1]
        prop_name, _, mask_text = prop.partition(".")
        if prop_name.lower() not in OUTPUT_PROPS:
            raise where.error(f"unknown output property '{prop_name}'")
        lanes = parse_swizzle(mask_text, where) if mask_text else (0, 1, 2, 3)
        if len(parts) == 3:
            reg = parse_operand(parts[2], {}, where)
            if reg.kind != "o":
                raise where.error(f"'{parts[2]}' is not an output register")
            index = reg.index
        else:
            used = {o.register for o in unit.outputs}
            index = next(i for i in range(17) if i not in used or i == 16)
            if index == 16:
                raise where.error("out of output registers")
        mask = sum(1 << i for i in set(lanes))
        unit.outputs.append(Output(OUTPUT_PROPS[prop_name.lower()], index, mask, 0))
        if name != "-":
            self._define(unit, name, Alias("o", index, expand(lanes) if mask_text else None), where)

    def _d_gsh(self, unit, blocks, args, where):
        parts = args.split()
        if not parts or parts[0] not in GS_MODES:
            raise where.error(".gsh needs: point | variable N | fixed cS N")
        mode = GS_MODES[parts[0]]
        try:
            if mode == 1:
                unit.gsh = (1, 0, int(parts[1], 0), 0)
            elif mode == 2:
                start = parse_operand(parts[1], unit.aliases, where)
                unit.gsh = (2, start.index, 0, int(parts[2], 0))
            else:
                unit.gsh = (0, 0, 0, 0)
        except (IndexError, ValueError):
            raise where.error(f"bad .gsh arguments '{args}'") from None

    def _d_word(self, unit, blocks, args, where):
        try:
            value = int(args, 0)
        except ValueError:
            raise where.error(f"bad word '{args}'") from None
        try:
            kind = isa.identify(value)[1]
        except Exception:
            kind = "word"
        self._emit(value & 0xFFFFFFFF, kind)

    # ------------------------------------------------------------------ instructions

    def _instruction(self, unit: _Unit, blocks: list[_Block], mn: str, args: str, where: Where, col: int) -> None:
        pieces = split_args(args, col) if args else []
        from picaemu.shader.asm_ops import INSTRUCTIONS

        handler = INSTRUCTIONS.get(mn)
        if handler is None:
            raise where.error(f"unknown instruction '{mn}'")
        handler(self, unit, blocks, mn, pieces, where)

    def operand(self, unit: _Unit, piece: tuple[str, int], where: Where) -> Operand:
        return parse_operand(piece[0], unit.aliases, where.at(piece[1]))

    # ------------------------------------------------------------------ linking

    def _resolve(self, pc: int, kind: str, name: str, where: Where) -> None:
        if kind == "proc":
            if name not in self.procs:
                raise where.error(f"unknown procedure '{name}'")
            start, end = self.procs[name]
            self.code[pc] |= _flow_fields(start, end - start, where)
        else:
            if name not in self.labels:
                raise where.error(f"unknown label '{name}'")
            self.code[pc] |= _flow_fields(self.labels[name], 0, where)

    def _dvle(self, u: _Unit) -> Dvle:
        if u.entry not in self.procs:
            where = u.entry_where or Where(u.path, 1)
            raise where.error(f"entry procedure '{u.entry}' is not defined")
        start, end = self.procs[u.entry]
        exported = sorted((x for x in u.uniforms if not x[0].startswith("_")), key=lambda x: (x[1] != "c", x[2]))
        symbols, uniforms = b"", []
        for name, letter, first, last in exported:
            uniforms.append(Uniform(len(symbols), uniform_register_raw(letter, first),
                                    uniform_register_raw(letter, last)))
            symbols += name.replace("$", ".").encode("ascii") + b"\0"
        mode = u.gsh or (0, 0, 0, 0)
        return Dvle(
            shader_type=1 if u.gsh else 0, main_offset=start, main_end=end,
            output_mask=sum(1 << o.register for o in u.outputs), merge_outmaps=int(any(o.type == 9 for o in u.outputs)),
            gs_mode=mode[0], gs_fixed_start=mode[1], gs_variable_num=mode[2], gs_fixed_num=mode[3],
            constants=tuple(u.constants), outputs=tuple(u.outputs), uniforms=tuple(uniforms), symbols=symbols,
        )


def _flow_fields(target: int, num: int, where: Where) -> int:
    t_lo, t_w = isa.FIELDS[isa.Fmt.F2]["target"]
    n_lo, n_w = isa.FIELDS[isa.Fmt.F2]["num"]
    if target >> t_w or num >> n_w:
        raise where.error(f"flow target 0x{target:X} / count {num} does not fit the instruction")
    return target << t_lo | num << n_lo


def _int_constant(reg: int, vals: list[float], where: Where) -> Constant:
    ints = [int(v) for v in vals]
    if any(v != int(v) or not 0 <= int(v) <= 255 for v in vals):
        raise where.error("integer constants must be whole numbers 0-255")
    return Constant(1, reg, (ints[0] | ints[1] << 8 | ints[2] << 16 | ints[3] << 24, 0, 0, 0))


def descriptor(mn: str, mask: int, ops: list[Operand]) -> int:
    """Descriptor word with canonical unconsumed lanes (see module docstring)."""
    comps = isa.mask_components(mask)
    sels, negs = [UNUSED_SELECTOR] * 3, [False] * 3
    for k, op in enumerate(ops):
        lanes = lanes_used(mn, comps, k + 1)
        sels[k] = isa.lanes_selector(canonical_swizzle(op.swizzle, lanes))
        negs[k] = op.negate
    return isa.encode_desc(mask, tuple(sels), tuple(negs))  # type: ignore[arg-type]


_DIRECTIVES = {
    ".proc": Assembler._d_proc, ".else": Assembler._d_else, ".end": Assembler._d_end,
    ".entry": Assembler._d_entry, ".alias": Assembler._d_alias, ".fvec": Assembler._d_fvec,
    ".ivec": Assembler._d_ivec, ".bool": Assembler._d_bool, ".constf": Assembler._d_constf,
    ".consti": Assembler._d_consti, ".constfa": Assembler._d_constfa, ".setf": Assembler._d_setf,
    ".seti": Assembler._d_seti, ".setb": Assembler._d_setb, ".out": Assembler._d_out, ".gsh": Assembler._d_gsh,
    ".word": Assembler._d_word,
}


def assemble(sources: list[tuple[str, str]] | str) -> Shbin:
    """Assemble one source text (``str``) or several ``(path, text)`` files into a SHBIN."""
    if isinstance(sources, str):
        sources = [("<source>", sources)]
    return Assembler().assemble(sources)


__all__ = ["AssemblyError", "assemble", "descriptor"]
