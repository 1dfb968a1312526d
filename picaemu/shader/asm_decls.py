"""Declaration directives of the shader assembler (picasso's rules): uniforms, constants, inputs, outputs, aliases,
geometry-shader modes, entry point, ``.nodvle``.

Register allocation follows picasso: ``.fvec/.ivec/.bool`` take registers from the bottom of a pool shared by all
files (a name declared again in another file gets the same registers), constants (``.constf/.consti/.constfa``)
from the top of the pool, restarting at the top in each file but never below what a uniform already holds. A
geometry shader declared ``.gsh MODE cN ...`` gets its own pool whose float uniforms start at cN (b15 is kept
out); a bare ``.gsh`` (or a ``setemit`` before any ``.gsh``) marks a compatibility geometry shader that keeps the
shared pool. Handlers take ``(assembler, unit, blocks, args, where)``; ``DIRECTIVES`` maps names to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.formats.shbin import Constant, Output
from picaemu.numeric import to_f24
from picaemu.shader.asm_model import Block
from picaemu.shader.asm_syntax import IDENT_RE, Alias, Where, parse_operand, parse_vector, split_args

OUTPUT_PROPS = {
    "position": 0,
    "pos": 0,
    "normalquat": 1,
    "nquat": 1,
    "color": 2,
    "clr": 2,
    "texcoord0": 3,
    "tcoord0": 3,
    "texcoord0w": 4,
    "tcoord0w": 4,
    "texcoord1": 5,
    "tcoord1": 5,
    "texcoord2": 6,
    "tcoord2": 6,
    "7": 7,
    "view": 8,
    "dummy": 9,
}
DUMMY = OUTPUT_PROPS["dummy"]
GS_MODES = {"point": 0, "variable": 1, "subdivision": 1, "fixed": 2, "particle": 2}
BOOL_WORDS = {"true": 1, "on": 1, "1": 1, "false": 0, "off": 0, "0": 0}
FILE_SIZES = {"c": 96, "i": 4, "b": 16}
GS_BOOLS = 15  # a geometry shader's own pool leaves b15 out
VS_OUTPUTS, GS_OUTPUTS = 16, 7  # output registers .out may name; o7+ of a geometry shader only as dummies
INPUTS = 16
CONST_TYPES = {"b": 0, "i": 1, "c": 2}


@dataclass
class Pool:
    """One register file's allocator: uniforms grow from ``start``, constants shrink ``end``; ``bound`` is the
    lowest constant ever placed, ``top`` where constants restart in each file."""

    start: int
    end: int
    bound: int
    top: int

    @classmethod
    def new(cls, start: int, end: int) -> Pool:
        return cls(start, end, end, end)

    def alloc_global(self, size: int) -> int | None:
        if self.start + size > self.bound:
            return None
        self.start += size
        return self.start - size

    def alloc_local(self, size: int) -> int | None:
        pos = self.end - size
        if pos < self.start:
            return None
        self.bound = min(self.bound, pos)
        self.end = pos
        return pos


def shared_pools() -> dict[str, Pool]:
    return {letter: Pool.new(0, n) for letter, n in FILE_SIZES.items()}


def _name_and_size(piece: str, where: Where) -> tuple[str, int | None]:
    """``name`` or ``name[N]`` -> (name, N or None); ``name[]`` -> (name, 0)."""
    if not piece.endswith("]"):
        return piece.strip(), None
    name, _, num = piece[:-1].partition("[")
    if not num.strip():
        return name.strip(), 0
    if not num.strip().isdigit() or int(num) < 1:
        raise where.error(f"bad array size in '{piece}'")
    return name.strip(), int(num)


def define(unit, name: str, alias: Alias, where: Where) -> None:
    if not IDENT_RE.match(name):
        raise where.error(f"bad name '{name}'")
    if name in unit.aliases:
        raise where.error(f"name '{name}' defined twice")
    unit.aliases[name] = alias


def _uniforms(a, unit, letter: str, args: str, where: Where) -> None:
    pool = a.pools(unit)[letter]
    shared = not unit.gsh_space
    for piece, col in split_args(args, where.column):
        here = where.at(col)
        name, size = _name_and_size(piece, here)
        size = size or 1
        known = a.global_uniforms.get(name) if shared else None
        if known is not None and known[::2] != (letter, size):
            raise here.error(f"uniform '{name}' was declared as {known[0]}[{known[2]}] in another file")
        first = known[1] if known is not None else pool.alloc_global(size)
        if first is None:
            raise here.error(f"out of {letter} registers for '{name}'")
        if shared:
            a.global_uniforms[name] = (letter, first, size)
        define(unit, name, Alias(letter, first), here)
        if not name.startswith("_"):
            unit.uniforms.append((name, letter, first, first + size - 1))


def _local(a, unit, letter: str, size: int, name: str, where: Where) -> int:
    reg = a.pools(unit)[letter].alloc_local(size)
    if reg is None:
        raise where.error(f"out of {letter} registers for constant '{name}'")
    return reg


def _float_const(reg: int, values: list[float]) -> Constant:
    """A float constant of the four ``values`` (``parse_vector``: always four)."""
    x, y, z, w = (to_f24(v) for v in values)
    return Constant(CONST_TYPES["c"], reg, (x, y, z, w))


def _int_const(reg: int, values: list[float], where: Where) -> Constant:
    if any(v != int(v) for v in values):
        raise where.error("integer constants must be whole numbers")
    ints = [int(v) & 0xFF for v in values]  # picasso keeps the low byte
    return Constant(CONST_TYPES["i"], reg, (ints[0] | ints[1] << 8 | ints[2] << 16 | ints[3] << 24, 0, 0, 0))


def d_fvec(a, unit, blocks, args, where):
    _uniforms(a, unit, "c", args, where)


def d_ivec(a, unit, blocks, args, where):
    _uniforms(a, unit, "i", args, where)


def d_bool(a, unit, blocks, args, where):
    _uniforms(a, unit, "b", args, where)


def d_constf(a, unit, blocks, args, where):
    name, paren, rest = args.partition("(")
    values = parse_vector(paren + rest, where)
    reg = _local(a, unit, "c", 1, name.strip(), where)
    define(unit, name.strip(), Alias("c", reg), where)
    unit.constants.append(_float_const(reg, values))


def d_consti(a, unit, blocks, args, where):
    name, paren, rest = args.partition("(")
    values = parse_vector(paren + rest, where)
    reg = _local(a, unit, "i", 1, name.strip(), where)
    define(unit, name.strip(), Alias("i", reg), where)
    unit.constants.append(_int_const(reg, values, where))


def d_constfa(a, unit, blocks, args, where):
    """``.constfa name[]`` or ``.constfa name[N]`` opens an array (N: zero-filled up to N entries), closed by
    ``.end``; inside it each ``.constfa (x, y, z, w)`` adds an entry."""
    if blocks and blocks[-1].kind == "constfa":
        array = blocks[-1]
        if array.size and len(array.values) == array.size:
            raise where.error(f"too many entries for '{array.name}[{array.size}]'")
        array.values.append(parse_vector(args, where))
        return
    name, size = _name_and_size(args, where)
    if size is None:
        raise where.error(".constfa needs 'name[]' or 'name[N]' to open an array")
    blocks.append(Block("constfa", 0, where, name=name, size=size))


def close_constfa(a, unit, array, where: Where) -> None:
    values = array.values + [[0.0] * 4] * max(array.size - len(array.values), 0)
    if not values:
        raise where.error(f"constant array '{array.name}' is empty")
    first = _local(a, unit, "c", len(values), array.name, where)
    define(unit, array.name, Alias("c", first), array.where)
    unit.constants.extend(_float_const(first + k, v) for k, v in enumerate(values))


def _set_register(unit, text: str, letter: str, directive: str, where: Where) -> int:
    op = parse_operand(text.strip(), unit.aliases, where)
    if op.kind != letter:
        raise where.error(f"{directive} needs a {letter} register, got '{text.strip()}'")
    return op.index


def d_setf(a, unit, blocks, args, where):
    reg, paren, rest = args.partition("(")
    index = _set_register(unit, reg, "c", ".setf", where)
    unit.constants.append(_float_const(index, parse_vector(paren + rest, where)))


def d_seti(a, unit, blocks, args, where):
    reg, paren, rest = args.partition("(")
    index = _set_register(unit, reg, "i", ".seti", where)
    unit.constants.append(_int_const(index, parse_vector(paren + rest, where), where))


def d_setb(a, unit, blocks, args, where):
    parts = args.replace(",", " ").split()  # picasso reads "b0, true" and "b0 true" alike
    if len(parts) != 2 or parts[1].lower() not in BOOL_WORDS:
        raise where.error(".setb needs a bool register and true/false/on/off/1/0")
    index = _set_register(unit, parts[0], "b", ".setb", where)
    unit.constants.append(Constant(CONST_TYPES["b"], index, (BOOL_WORDS[parts[1].lower()], 0, 0, 0)))


def d_alias(a, unit, blocks, args, where):
    parts = args.split()
    if len(parts) != 2:
        raise where.error(".alias needs: name register")
    op = parse_operand(parts[1], unit.aliases, where)
    define(unit, parts[0], Alias(op.kind, op.index, op.swizzle if "." in parts[1] else None, op.negate), where)


def d_in(a, unit, blocks, args, where):
    """``.in NAME [vN]``: an input alias; sets the DVLE input mask and adds NAME to its uniform table."""
    parts = args.split()
    if len(parts) not in (1, 2):
        raise where.error(".in needs: name [vN]")
    if len(parts) == 2:
        op = parse_operand(parts[1], unit.aliases, where)
        if op.kind != "v":
            raise where.error(f"'{parts[1]}' is not an input register")
        reg = op.index
    else:
        free = next((i for i in range(INPUTS) if not unit.input_mask >> i & 1), None)
        if free is None:
            raise where.error("too many inputs")
        reg = free
    define(unit, parts[0], Alias("v", reg), where)
    unit.input_mask |= 1 << reg
    unit.uniforms.append((parts[0], "v", reg, reg))


def d_out(a, unit, blocks, args, where):
    """``.out NAME|- PROP[.MASK] [REGISTER[.MASK]]``: an output-map entry; NAME aliases the whole register (the mask
    only goes to the map); with a register, its swizzle (through any alias) gives the mask."""
    parts = args.split()
    if len(parts) not in (2, 3):
        raise where.error(".out needs: name|- property[.mask] [register]")
    name, (prop, _, mask_text) = parts[0], parts[1].partition(".")
    if prop.lower() not in OUTPUT_PROPS:
        raise where.error(f"unknown output property '{prop}'")
    kind = OUTPUT_PROPS[prop.lower()]
    limit = GS_OUTPUTS if unit.is_geo else VS_OUTPUTS
    if len(parts) == 3:
        op = parse_operand(parts[2], unit.aliases, where)
        if op.kind != "o" or op.index >= limit:
            raise where.error(f"'{parts[2]}' is not an output register here")
        reg = op.index
    prop_lanes = set(parse_operand(f"o0.{mask_text}", {}, where).swizzle) if mask_text else {0, 1, 2, 3}
    if len(parts) == 3:  # the register's own mask (picasso); a PROP mask with a bare register is our extension
        lanes = set(op.swizzle) if "." in parts[2] or op.swizzle != (0, 1, 2, 3) else prop_lanes
    else:
        lanes = prop_lanes
        free = next((i for i in range(limit) if not unit.output_mask >> i & 1), None)
        if free is None:
            raise where.error("out of output registers")
        reg = free
    mask = sum(1 << lane for lane in lanes)
    if unit.output_used >> 4 * reg & mask:
        raise where.error("this output collides with one declared before")
    if reg >= GS_OUTPUTS and kind != DUMMY:
        raise where.error(f"o{reg} can only be a dummy output")
    unit.outputs.append(Output(kind, reg, mask, 0))
    unit.output_mask |= 1 << reg
    unit.output_used |= mask << 4 * reg
    if name != "-":
        define(unit, name, Alias("o", reg), where)
    if kind == DUMMY and unit.gsh_space:
        unit.merge = True


def d_gsh(a, unit, blocks, args, where):
    """``.gsh`` (compatibility geometry shader), ``.gsh point cN``, ``.gsh variable|subdivision cN n``, ``.gsh
    fixed|particle cS cN n`` (cN: the first float register of the shader's own pool), and the older
    ``.gsh point`` / ``.gsh variable n`` / ``.gsh fixed cS n`` (pool from c0)."""
    parts = args.split()
    if not parts:
        unit.gsh = unit.gsh or (0, 0, 0, 0)
        unit.compat = True
        return
    if unit.gsh is not None:
        raise where.error(".gsh was already used")
    if unit.constants or unit.uniforms or unit.output_mask:
        raise where.error(".gsh must come before any constant, uniform or output")
    mode = GS_MODES.get(parts[0].lower())
    if mode is None:
        raise where.error(f"unknown geometry shader mode '{parts[0]}'")
    regs = [p for p in parts[1:] if p.lower().startswith("c")]
    try:
        first_free = parse_operand(regs[-1], unit.aliases, where).index if len(regs) == 1 + (mode == 2) else 0
        numbers = [int(p, 0) for p in parts[1:] if p not in regs]
        start = parse_operand(regs[0], unit.aliases, where).index if mode == 2 else 0
        count = numbers[0] if mode else 0
    except (IndexError, ValueError):
        raise where.error(f"bad .gsh arguments '{args}'") from None
    if len(numbers) != (1 if mode else 0) or not 0 <= count <= 255:
        raise where.error(f"bad .gsh arguments '{args}'")
    if mode == 2 and first_free and start >= first_free:
        raise where.error(f"fixed-mode array c{start} overlaps the uniform pool from c{first_free}")
    unit.gsh = (mode, start, count if mode == 1 else 0, count if mode == 2 else 0)
    a.gs_pools = {
        "c": Pool.new(first_free, FILE_SIZES["c"]),
        "i": Pool.new(0, FILE_SIZES["i"]),
        "b": Pool.new(0, GS_BOOLS),
    }


def d_entry(a, unit, blocks, args, where):
    if not IDENT_RE.match(args.strip()):
        raise where.error(f"bad entry name '{args}'")
    unit.entry, unit.entry_where = args.strip(), where


def d_nodvle(a, unit, blocks, args, where):
    """The file only provides procedures: no DVLE is written for it."""
    unit.nodvle = True


DIRECTIVES = {
    ".fvec": d_fvec,
    ".ivec": d_ivec,
    ".bool": d_bool,
    ".constf": d_constf,
    ".consti": d_consti,
    ".constfa": d_constfa,
    ".setf": d_setf,
    ".seti": d_seti,
    ".setb": d_setb,
    ".alias": d_alias,
    ".in": d_in,
    ".out": d_out,
    ".gsh": d_gsh,
    ".entry": d_entry,
    ".nodvle": d_nodvle,
}
