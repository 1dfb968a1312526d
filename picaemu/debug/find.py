"""Search a debugger session's index: where a register is written (with a value), where a value is written, which
draws sample a texture address, which draws run a shader program. The GUI's search box, ``Debugger.find`` and
``picaemu find`` all call ``find``.

Receives a ``Session`` that has been indexed (its ``Timeline`` and per-draw ``GpuState``s); replays nothing.
Returns ``Hit``s sorted by position:

- ``register`` (table name, SDK alias or id, as breakpoints take them) [+ ``value``]: one hit per write of that
  register (whose written word equals ``value``), at the cursor right after the packet that wrote it; ``draw`` is
  the first draw the write reaches (None when no draw follows);
- ``register`` + ``field`` (``"depth_func=greater"``: a field and its raw number, enum name, float or true/false,
  as a write breakpoint's field condition): the register's writes whose field holds that;
- ``value`` alone: one hit per register write of exactly that 32-bit word;
- ``texture`` (physical address): one hit per draw with an enabled unit 0-2 whose base address (any cube face, level
  0) is that address, at the cursor after the draw;
- ``shader`` (hex prefix of ``program_hash``, optionally ``@ENTRY``, the entry point in instruction words): one hit
  per draw whose vertex shader (or geometry shader, when in use) runs that program.

Criteria combine with "and" over the same hit kind: ``texture`` and ``shader`` together give draws meeting both;
``register`` / ``value`` (write hits) cannot be combined with draw criteria (``PicaError``).

Draw criteria are decoded once per distinct combination of the registers they read (``np.unique`` over the
stacked (D, 0x300) register files), never once per draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from picaemu.debug.draw_tables import (
    HASH_DIGITS,
    TEXTURE_GROUPS,
    bound_textures,
    distinct_draws,
    draw_programs,
)
from picaemu.debug.draw_tables import program_hash as program_hash
from picaemu.debug.draw_tables import program_table as program_table
from picaemu.debug.draw_tables import texture_table as texture_table
from picaemu.debug.session import Session
from picaemu.debug.timeline import BreakKind, Breakpoint, Cursor, register_id
from picaemu.errors import PicaError
from picaemu.state import GpuState

if TYPE_CHECKING:
    pass

QUERY_KEYS = ("register", "value", "texture", "shader")


@dataclass(frozen=True)
class Hit:
    """One match: ``cursor`` is where "go to" puts the replay (after the write or after the draw); ``draw`` the draw
    it concerns (for a write: the first draw after it, None when none follows); ``text`` says what matched."""

    cursor: Cursor
    draw: int | None
    text: str

    def as_dict(self) -> dict:
        return {"event": self.cursor.event, "packet": self.cursor.packet, "draw": self.draw, "text": self.text}


def find(
    session: Session,
    *,
    register: str | None = None,
    value: int | None = None,
    texture: int | None = None,
    shader: str | None = None,
    field: str = "",
) -> list[Hit]:
    """The hits of the module docstring, sorted by cursor; ``PicaError`` for no criterion, a register (or field)
    the table does not know, a field without its register, a malformed shader key, or write and draw criteria
    mixed."""
    tl = session.timeline
    condition = _field_condition(register, field) if field else None
    if register is None and value is None and texture is None and shader is None:
        raise PicaError("find needs a criterion: register, value, texture or shader")
    if (register is not None or value is not None) and (texture is not None or shader is not None):
        raise PicaError("find: register/value (writes) and texture/shader (draws) cannot be combined")
    if register is not None or value is not None:
        return _writes(session, register, value, condition)
    keep = np.ones(len(tl.draws), bool)
    texts = [""] * len(tl.draws)
    if texture is not None:
        keep &= _texture_draws(session.draw_states, texture)
        texts = [f"samples texture 0x{texture:08X}"] * len(tl.draws)
    if shader is not None:
        match, names = _shader_draws(session.draw_states, shader)
        keep &= match
        texts = [" and ".join(t for t in (a, f"runs {b}") if t) for a, b in zip(texts, names, strict=True)]
    return [Hit(tl.after_draw(d), d, f"draw {d}: {texts[d]}") for d in np.flatnonzero(keep).tolist()]


def _field_condition(register: str | None, field: str) -> Breakpoint:
    """The write breakpoint of a ``field`` condition (``name=meaning``) on ``register``: its ``matches`` filters."""
    if register is None:
        raise PicaError(f"find: field condition {field!r} needs its register")
    name, sep, meaning = field.partition("=")
    if not sep or not name.strip() or not meaning.strip():
        raise PicaError(f"find: field condition {field!r}: expected FIELD=MEANING (e.g. depth_func=greater)")
    bp = Breakpoint(BreakKind.REGISTER_WRITE, register, field=name.strip(), equals=meaning.strip())
    bp.validate()
    return bp


def _writes(session: Session, register: str | None, value: int | None, condition: Breakpoint | None) -> list[Hit]:
    """Write hits; ``condition``: a field condition's breakpoint (``_field_condition``)."""
    from picaemu import regs as regtable

    tl = session.timeline
    rows = tl.writes
    if register is not None:
        rows = rows[rows[:, 2] == register_id(register, "search")]
    if value is not None:
        rows = rows[(rows[:, 3] & 0xFFFFFFFF) == (value & 0xFFFFFFFF)]
    if condition is not None:
        rows = rows[[condition.matches(int(reg), int(word) & 0xFFFFFFFF) for reg, word in rows[:, 2:].tolist()]]
    out = []
    for e, p, reg, word in rows.tolist():
        cursor = tl.normalize(e, p + 1)
        count = tl.draw_count_before(cursor)
        draw = count if count < len(tl.draws) else None
        out.append(Hit(cursor, draw, f"{regtable.get(reg).name} = 0x{word & 0xFFFFFFFF:08X}"))
    return out


def _texture_draws(states: list[GpuState], address: int) -> np.ndarray:
    """(D,) bool: draws with an enabled unit 0-2 whose faces include ``address``."""
    first, inverse = distinct_draws(states, TEXTURE_GROUPS)
    hit = np.array([any(address in u.addresses for u in bound_textures(states[d].regs)) for d in first.tolist()], bool)
    return hit[inverse] if len(first) else np.zeros(0, bool)


def parse_shader_key(key: str) -> tuple[str, int | None]:
    """``"1a2b3c4d"`` or ``"1a2b3c4d@0x10"`` -> (lower-case hex prefix, entry or None); ``PicaError`` otherwise."""
    prefix, _, entry = key.strip().lower().partition("@")
    if not prefix or any(c not in "0123456789abcdef" for c in prefix):
        raise PicaError(f"shader key {key!r}: expected a hex program hash (prefix), optionally @ENTRY")
    try:
        return prefix, int(entry, 0) if entry else None
    except ValueError:
        raise PicaError(f"shader key {key!r}: entry {entry!r} is not a number") from None


def _shader_draws(states: list[GpuState], key: str) -> tuple[np.ndarray, list[str]]:
    """((D,) bool: draws running a program matching ``key``, (D,) their ``draw_programs`` texts)."""
    prefix, entry = parse_shader_key(key)
    programs = draw_programs(states)
    match = np.zeros(len(states), bool)
    for d, text in enumerate(programs):
        for part in text.split(", "):
            digest, _, at = part.split(" ")[1].partition("@")
            if digest.startswith(prefix[:HASH_DIGITS]) and (entry is None or int(at, 16) == entry):
                match[d] = True
    return match, programs


def parse_query(text: str) -> dict:
    """The search box's words as ``find`` keywords: ``texture 0x18000000``, ``reg TEXUNIT0_ADDR1 [= 0x...]``,
    ``reg DEPTH_COLOR_MASK.depth_func = greater`` (a field condition),
    ``value 0x3F800000``, ``shader 1a2b3c4d[@0x0]``; criteria may follow each other (``texture 0x... shader ...``).
    ``PicaError`` for an unknown word or a missing / malformed number."""
    words = text.replace("=", " = ").split()
    out: dict = {}
    aliases = {
        "reg": "register",
        "register": "register",
        "value": "value",
        "texture": "texture",
        "tex": "texture",
        "shader": "shader",
    }
    i = 0
    while i < len(words):
        key = aliases.get(words[i].lower())
        if key is None or i + 1 >= len(words):
            raise PicaError(f"search {text!r}: expected one of {', '.join(QUERY_KEYS)} followed by what to find")
        arg, i = words[i + 1], i + 2
        if key == "register" and "." in arg:  # reg NAME.field = meaning (words up to the next criterion)
            arg, _, name = arg.partition(".")
            end = next((j for j in range(i + 1, len(words)) if words[j].lower() in aliases), len(words))
            if i + 1 >= end or words[i] != "=":
                raise PicaError(f"search {text!r}: expected reg {arg}.{name} = MEANING")
            out["field"], i = f"{name}={' '.join(words[i + 1 : end])}", end
        elif key == "register" and i + 1 < len(words) and words[i] == "=":
            out["value"], i = _number(words[i + 1], text), i + 2
        out[key] = _number(arg, text) if key in ("value", "texture") else arg
    return out


def _number(word: str, text: str) -> int:
    try:
        return int(word, 0)
    except ValueError:
        raise PicaError(f"search {text!r}: {word!r} is not a number (0x... for hex)") from None
