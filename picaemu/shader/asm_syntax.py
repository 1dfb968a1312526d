"""Lexical layer of the shader assembler: lines, argument splitting with columns, operand and condition parsing.

Operands (picasso syntax): ``[-]name[ [index] ][.swizzle]`` where name is a register (v0-v15, r0-r15, c0-c95,
o0-o15, i0-i3, b0-b15) or an alias, index is a static offset (``c8[4]`` = c12) or a relative selector with an
optional offset (``m[a0.x+2]``, ``a0.y``, ``aL``; picasso's ``a0``/``a1``/``a2``/``lcnt`` also work), and the
swizzle uses xyzw / rgba / stpq (fewer than 4 letters repeat the last). Errors are ``AssemblyError`` with the
file, 1-based line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from picaemu.errors import PicaError

REGISTER_FILES = {"v": 16, "r": 16, "c": 96, "o": 16, "i": 4, "b": 16}
SWIZZLE_LETTERS = {
    **{ch: i for i, ch in enumerate("xyzw")},
    **{ch: i for i, ch in enumerate("rgba")},
    **{ch: i for i, ch in enumerate("stpq")},
}
RELATIVE = {"a0.x": 1, "a0": 1, "a0.y": 2, "a1": 2, "al": 3, "a2": 3, "lcnt": 3}
OPERAND_RE = re.compile(r"^(-)?\s*([A-Za-z_$][\w$]*)\s*(?:\[([^\]]*)\])?\s*(?:\.([A-Za-z_]+))?$")
REGISTER_RE = re.compile(r"^([vrcoib])(\d+)$")
CONDITION_RE = re.compile(r"^(!?)\s*cmp\.([xy])$")
IDENT_RE = re.compile(r"^[A-Za-z_$][\w$]*$")


class AssemblyError(PicaError):
    """A syntax or semantic error in shader source, located by file, line and column (1-based)."""

    def __init__(self, message: str, *, file: str, line: int, column: int = 1) -> None:
        super().__init__(f"{file}:{line}:{column}: {message}")
        self.file = file
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Where:
    """A source position for error messages."""

    file: str
    line: int
    column: int = 1

    def error(self, message: str) -> AssemblyError:
        return AssemblyError(message, file=self.file, line=self.line, column=self.column)

    def at(self, column: int) -> Where:
        return Where(self.file, self.line, column)


@dataclass(frozen=True)
class Alias:
    """What a name stands for: register file letter, index, an optional swizzle (4 lanes) and a negation."""

    kind: str
    index: int
    swizzle: tuple[int, int, int, int] | None = None
    negate: bool = False


@dataclass(frozen=True)
class Operand:
    """A parsed operand. ``swizzle``: 4 lanes; ``written``: components named by the suffix (for masks)."""

    kind: str
    index: int
    swizzle: tuple[int, int, int, int]
    written: tuple[int, ...]
    negate: bool = False
    relative: int = 0


def split_args(text: str, start_col: int) -> list[tuple[str, int]]:
    """Split on top-level commas; each piece with its 1-based column."""
    out, depth, begin = [], 0, 0
    for pos, ch in enumerate(text + ","):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            piece = text[begin:pos]
            stripped = piece.strip()
            out.append((stripped, start_col + begin + (len(piece) - len(piece.lstrip()))))
            begin = pos + 1
    return out


def parse_swizzle(text: str, where: Where) -> tuple[int, ...]:
    if text == "_":
        return ()
    if not 1 <= len(text) <= 4 or any(ch not in SWIZZLE_LETTERS for ch in text):
        raise where.error(f"bad swizzle or mask '.{text}'")
    return tuple(SWIZZLE_LETTERS[ch] for ch in text)


def expand(lanes: tuple[int, ...]) -> tuple[int, int, int, int]:
    """picasso rule: fewer than 4 lanes repeat the last one."""
    if not lanes:
        return (0, 1, 2, 3)
    return tuple(lanes[i] if i < len(lanes) else lanes[-1] for i in range(4))  # type: ignore[return-value]


def resolve_name(name: str, aliases: dict[str, Alias], where: Where) -> Alias:
    if name in aliases:
        return aliases[name]
    m = REGISTER_RE.match(name)
    if m:
        kind, index = m.group(1), int(m.group(2))
        if index >= REGISTER_FILES[kind]:
            raise where.error(f"register {name} does not exist")
        return Alias(kind, index)
    if name == "c":
        return Alias("c", 0)
    raise where.error(f"unknown register or alias '{name}'")


def _bracket(text: str, where: Where) -> tuple[int, int]:
    """Bracket content -> (relative selector 0-3, static offset)."""
    t = text.replace(" ", "").lower()
    m = re.match(r"^(?:(a0\.x|a0\.y|a0|a1|a2|al|lcnt)([+-]\d+)?|([+-]?\d+))$", t)
    if not m:
        raise where.error(f"bad index '[{text}]'")
    if m.group(3) is not None:
        return 0, int(m.group(3))
    return RELATIVE[m.group(1)], int(m.group(2) or 0)


def parse_operand(text: str, aliases: dict[str, Alias], where: Where) -> Operand:
    m = OPERAND_RE.match(text)
    if not m:
        raise where.error(f"cannot parse operand '{text}'")
    neg, name, bracket, suffix = m.groups()
    base = resolve_name(name, aliases, where)
    rel, offset = _bracket(bracket, where) if bracket is not None else (0, 0)
    index = base.index + offset
    if not 0 <= index < REGISTER_FILES[base.kind]:
        raise where.error(f"{name}[{bracket}] is outside register file {base.kind}")
    written = parse_swizzle(suffix, where) if suffix is not None else None
    sw = expand(written) if written is not None else (0, 1, 2, 3)
    if base.swizzle is not None:
        sw = tuple(base.swizzle[s] for s in sw)  # type: ignore[assignment]
        written = tuple(dict.fromkeys(base.swizzle if written is None else (base.swizzle[w] for w in written)))
    if written is None:
        written = (0, 1, 2, 3)
    return Operand(base.kind, index, sw, written, bool(neg) != base.negate, rel)


def parse_condition(text: str, where: Where) -> dict[str, int]:
    """``cmp.x``, ``!cmp.y``, ``a && b``, ``a || b`` -> fields condop/refx/refy."""
    t = text.strip()
    for sep, condop in (("&&", 1), ("||", 0), ("&", 1), ("|", 0)):
        if sep in t:
            left, right = (p.strip() for p in t.split(sep, 1))
            a, b = _flag(left, where), _flag(right, where)
            if a[0] == b[0]:
                raise where.error(f"condition '{text}' tests the same flag twice")
            refs = dict([a, b])
            return {"condop": condop, "refx": refs["x"], "refy": refs["y"]}
    flag, ref = _flag(t, where)
    return {"condop": 2 if flag == "x" else 3, "refx": ref if flag == "x" else 1, "refy": ref if flag == "y" else 1}


def _flag(text: str, where: Where) -> tuple[str, int]:
    m = CONDITION_RE.match(text.strip())
    if not m:
        raise where.error(f"bad condition '{text}' (expected cmp.x, !cmp.y, a && b, a || b)")
    return m.group(2), 0 if m.group(1) else 1


def parse_vector(text: str, where: Where) -> list[float]:
    """``(x, y, z, w)`` -> four floats."""
    t = text.strip()
    if not (t.startswith("(") and t.endswith(")")):
        raise where.error(f"expected (x, y, z, w), got '{text}'")
    parts = [p.strip() for p in t[1:-1].split(",")]
    if len(parts) != 4:
        raise where.error(f"expected 4 values, got {len(parts)}")
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise where.error(f"bad number in '{text}'") from None


def strip_comment(line: str) -> str:
    return line.split(";", 1)[0].rstrip()
