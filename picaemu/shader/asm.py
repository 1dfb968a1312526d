"""Shader assembler: picasso-language source files -> ``Shbin`` (one shared DVLP, one DVLE per file).

Receives ``[(path, text), ...]`` (e.g. a .vsh and a .gsh); returns a ``picaemu.formats.shbin.Shbin``.
Supported: ``.proc/.end``, ``.entry``, ``.nodvle``, every declaration directive of ``picaemu.shader.asm_decls``
(``.fvec/.ivec/.bool``, ``.constf/.consti/.constfa``, ``.setf/.seti/.setb``, ``.alias``, ``.in``, ``.out``,
``.gsh``), ``.word 0x…`` (raw instruction word), labels (local to their file), every instruction of
pica-shader-isa.md with ``ifu/ifc … .else … .end`` and ``for … .end`` blocks. DPH/DST/SGE/SLT become their
inverted forms and MAD becomes MADI automatically when the uniform is the second (third) operand (the ``…i``
mnemonics are accepted too); ADD/MUL/DP3/DP4 and CMP swap their sources when only the second is a uniform (an
extension: picasso refuses those). Operand descriptors are shared as picasso shares them
(``picaemu.shader.asm_descs``), each use bringing its swizzles as written (``asm_model.descriptor``), so
disassembling the output and re-assembling it reproduces the same words. ``assemble_with_map`` also returns the
source line of every word (``picaemu.shader.linemap``). Padding NOPs go where picasso puts
them: at ``.else``/``.end`` after a block end with no instruction since, after a jump or call, after a BREAKC that
ends a loop, and in an empty body. Errors: ``AssemblyError`` naming file, line and column.
"""

from __future__ import annotations

from picaemu.formats.shbin import (
    DVLP_HEADER_SIZE,
    OPDESC_SIZE,
    Dvle,
    Shbin,
    Uniform,
    uniform_register_raw,
)
from picaemu.shader import asm_decls as decls
from picaemu.shader import isa
from picaemu.shader.asm_descs import DescTable
from picaemu.shader.asm_model import (
    DESC_FIELD_MASK,
    LOOP_EXITS,
    MAD_KINDS,
    PAD_AFTER,
    Block,
    Unit,
    descriptor,
    flow_fields,
)
from picaemu.shader.asm_ops import INSTRUCTIONS
from picaemu.shader.asm_syntax import IDENT_RE, AssemblyError, Operand, Where, parse_operand, strip_comment
from picaemu.shader.linemap import LineMap, code_digest


class Assembler:
    def __init__(self) -> None:
        self.code: list[int] = []
        self.kinds: list[str] = []
        self.descs = DescTable()
        self.desc_pcs: list[int] = []  # words with a 7-bit descriptor field (all but MAD/MADI)
        self.procs: dict[str, tuple[int, int]] = {}
        self.fixups: list[tuple[int, str, Where]] = []  # CALL/CALLC/CALLU words and their procedures
        self.shared = decls.shared_pools()
        self.gs_pools = decls.shared_pools()
        self.global_uniforms: dict[str, tuple[str, int, int]] = {}
        self.last_was_end = False  # a block closed and no instruction since (picasso's rule; spans files)
        self.file_index = 0
        self.line = 0  # the source line being read: every word emitted now belongs to it (the line map)
        self.lines: list[tuple[int, int]] = []  # per code word: (file index, 1-based line)

    # ------------------------------------------------------------------ top level

    def assemble(self, sources: list[tuple[str, str]]) -> Shbin:
        units = []
        for k, (path, text) in enumerate(sources):
            self.file_index = k
            units.append(self._file(path, text))
        for pc, name, where in self.fixups:
            self._resolve(pc, name, where)
        dvles = [self._dvle(u) for u in units if not u.nodvle]
        if not dvles:
            raise Where(sources[-1][0] if sources else "<source>", 1).error("no DVLE: every file is .nodvle")
        data_size = DVLP_HEADER_SIZE + 4 * len(self.code) + OPDESC_SIZE * len(self.descs.values)  # as picasso
        return Shbin(
            code=tuple(self.code),
            opdescs=tuple((d, 0) for d in self.descs.values),
            dvles=tuple(dvles),
            dvlp_unknown=(data_size, 0),
        )

    def pools(self, unit: Unit) -> dict[str, decls.Pool]:
        return self.gs_pools if unit.gsh_space else self.shared

    def _file(self, path: str, text: str) -> Unit:
        unit = Unit(path)
        for pool in self.shared.values():
            pool.end = pool.top  # constants restart at the top of each file
        blocks: list[Block] = []
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = strip_comment(raw)
            body = line.lstrip()
            if not body:
                continue
            where = Where(path, lineno, len(line) - len(body) + 1)
            self.line = lineno
            label, colon, rest = body.partition(":")
            if colon and IDENT_RE.match(label.strip()) and not body.startswith("."):
                self._label(unit, label.strip(), where)
                body = rest.lstrip()
                where = where.at(len(line) - len(body) + 1)
                if not body:
                    continue
            word = body.split(None, 1)[0]
            args = body[len(word) :].strip()
            args_col = where.column + (body.index(args, len(word)) if args else len(body))
            if word.startswith("."):
                self._directive(unit, blocks, word.lower(), args, where, args_col)
            else:
                if not any(b.kind == "proc" for b in blocks):
                    raise where.error(f"instruction '{word}' outside a .proc")
                self.last_was_end = False
                self._instruction(unit, blocks, word.lower(), args, where, args_col)
        if blocks:
            raise blocks[-1].where.error(f"'{blocks[-1].kind}' block is never closed with .end")
        for pc, name, where in unit.label_fixups:
            if name not in unit.labels:
                raise where.error(f"unknown label '{name}'")
            self.code[pc] |= flow_fields(unit.labels[name], 0, where)
        return unit

    def _label(self, unit: Unit, name: str, where: Where) -> None:
        if name in unit.labels:
            raise where.error(f"label '{name}' defined twice")
        unit.labels[name] = len(self.code)

    # ------------------------------------------------------------------ emission helpers

    def _emit(self, word: int, kind: str) -> int:
        self.code.append(word)
        self.kinds.append(kind)
        self.lines.append((self.file_index, self.line))
        return len(self.code) - 1

    def _desc(self, name: str, value: int, full: int, where: Where) -> int:
        """Descriptor index for the next emitted word (``asm_descs``); MAD words must get one below 32."""
        index = self.descs.add(name, value, full, self._relabel)
        if index is None:
            limit = 32 if name in MAD_KINDS else 128
            raise where.error(f"out of operand descriptors ({limit} usable by this instruction)")
        if name not in MAD_KINDS:
            self.desc_pcs.append(len(self.code))
        return index

    def _relabel(self, a: int, b: int) -> None:
        for pc in self.desc_pcs:
            index = self.code[pc] & DESC_FIELD_MASK
            if index in (a, b):
                self.code[pc] ^= index ^ (b if index == a else a)

    def _pad(self) -> None:
        self._emit(isa.encode("nop"), "nop")

    def _pad_before_else(self, b: Block) -> None:
        if self.last_was_end:
            self._pad()
            self.last_was_end = False
        elif self.kinds[-1] in PAD_AFTER or len(self.code) - b.start < 2:
            self._pad()

    def _pad_before_end(self, b: Block) -> None:
        if self.last_was_end:
            self._pad()
            self.last_was_end = False
            return
        if b.kind == "if" and not self.code:
            return
        last = self.kinds[-1] if self.code else ""
        body_min = 1 if b.kind == "proc" else 2
        if last in PAD_AFTER or (b.kind == "for" and last in LOOP_EXITS) or len(self.code) - b.start < body_min:
            self._pad()

    # ------------------------------------------------------------------ directives

    def _directive(self, unit: Unit, blocks: list[Block], word: str, args: str, where: Where, col: int) -> None:
        handler = _DIRECTIVES.get(word) or decls.DIRECTIVES.get(word)
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
        blocks.append(Block("proc", len(self.code), where, name=args))

    def _d_else(self, unit, blocks, args, where):
        if not blocks or blocks[-1].kind != "if" or blocks[-1].else_pc is not None:
            raise where.error(".else without a matching ifu/ifc")
        self._pad_before_else(blocks[-1])
        blocks[-1].else_pc = len(self.code)

    def _d_end(self, unit, blocks, args, where):
        if not blocks:
            raise where.error(".end without an open block")
        b = blocks.pop()
        if b.kind == "constfa":
            decls.close_constfa(self, unit, b, where)
            return
        self._pad_before_end(b)
        if b.kind == "proc":
            self.procs[b.name] = (b.start, len(self.code))
            return
        if b.kind == "for":
            self.code[b.start] |= flow_fields(len(self.code) - 1, 0, where)
        elif b.else_pc is None:
            self.code[b.start] |= flow_fields(len(self.code), 0, where)
        else:
            self.code[b.start] |= flow_fields(b.else_pc, len(self.code) - b.else_pc, where)
        self.last_was_end = True

    def _d_word(self, unit, blocks, args, where):
        try:
            value = int(args, 0)
        except ValueError:
            raise where.error(f"bad word '{args}'") from None
        try:
            kind = isa.identify(value)[1]
        except Exception:
            kind = "word"
        self.last_was_end = False
        self._emit(value & 0xFFFFFFFF, kind)

    # ------------------------------------------------------------------ instructions

    def _instruction(self, unit: Unit, blocks: list[Block], mn: str, args: str, where: Where, col: int) -> None:
        from picaemu.shader.asm_syntax import split_args

        pieces = split_args(args, col) if args else []
        handler = INSTRUCTIONS.get(mn)
        if handler is None:
            raise where.error(f"unknown instruction '{mn}'")
        handler(self, unit, blocks, mn, pieces, where)

    def operand(self, unit: Unit, piece: tuple[str, int], where: Where) -> Operand:
        return parse_operand(piece[0], unit.aliases, where.at(piece[1]))

    # ------------------------------------------------------------------ linking

    def _resolve(self, pc: int, name: str, where: Where) -> None:
        if name not in self.procs:
            raise where.error(f"unknown procedure '{name}'")
        start, end = self.procs[name]
        self.code[pc] |= flow_fields(start, end - start, where)

    def _dvle(self, u: Unit) -> Dvle:
        if u.entry not in self.procs:
            where = u.entry_where or Where(u.path, 1)
            raise where.error(f"entry procedure '{u.entry}' is not defined")
        start, end = self.procs[u.entry]
        table = sorted(
            (
                (uniform_register_raw(letter, first), uniform_register_raw(letter, last), name)
                for name, letter, first, last in u.uniforms
            ),
            key=lambda t: t[0],
        )
        symbols, uniforms = b"", []
        for first, last, name in table:
            uniforms.append(Uniform(len(symbols), first, last))
            symbols += name.replace("$", ".").encode("ascii") + b"\0"
        mode = u.gsh or (0, 0, 0, 0)
        return Dvle(
            shader_type=int(u.is_geo),
            main_offset=start,
            main_end=end,
            input_mask=u.input_mask,
            output_mask=u.output_mask,
            merge_outmaps=int(u.merge),
            gs_mode=mode[0],
            gs_fixed_start=mode[1],
            gs_variable_num=mode[2],
            gs_fixed_num=mode[3],
            constants=tuple(u.constants),
            outputs=tuple(u.outputs),
            uniforms=tuple(uniforms),
            symbols=symbols,
        )


_DIRECTIVES = {
    ".proc": Assembler._d_proc,
    ".else": Assembler._d_else,
    ".end": Assembler._d_end,
    ".word": Assembler._d_word,
}


def assemble(sources: list[tuple[str, str]] | str) -> Shbin:
    """Assemble one source text (``str``) or several ``(path, text)`` files into a SHBIN."""
    return assemble_with_map(sources)[0]


def assemble_with_map(sources: list[tuple[str, str]] | str) -> tuple[Shbin, LineMap]:
    """``assemble`` plus the line map of the code (``picaemu.shader.linemap``; file names as given)."""
    if isinstance(sources, str):
        sources = [("<source>", sources)]
    a = Assembler()
    result = a.assemble(sources)
    names = tuple(path for path, _text in sources)
    return result, LineMap(names, tuple(a.lines), code_digest(result.code))


__all__ = ["AssemblyError", "assemble", "assemble_with_map", "descriptor"]
