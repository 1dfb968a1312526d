"""The edits of edit-and-replay: what a user may change at a draw, parsed from text and turned into command packets.

Three kinds, each a frozen dataclass:

- ``RegisterEdit(register, field, value)``: one field of a plain (CONFIG) register — or the whole word when
  ``field`` is None — set to ``value`` (an enum name such as ``"always"``/``"GREATER_OR_EQUAL"``, a bool, an int,
  a float for float fields; encoded by the register table, ``picaemu.builder.fields.encode_field``);
- ``UniformEdit(unit, index, vector)``: float uniform ``c<index>`` of unit "vs" or "gs" set to (x, y, z, w),
  uploaded in float32 word mode (the value is stored exactly);
- ``ShaderEdit(unit, source)``: the unit's program replaced by picasso source (``picaemu.shader.asm``): its code
  words at offset 0, its operand descriptors at 0 and the entry point register set to its ``main``. The output
  map registers are left alone (the program must keep the outputs of the one it replaces; edit OUTMAP registers
  as registers otherwise); its ``.constf`` / ``.consti`` / ``.setb`` constants are set as citro3d's bind sets them.

``edit.packets(state, builder) -> bool`` appends the packets that give ``state`` the edit (False, appending nothing,
when ``state`` holds it already); ``edit.undo(state, builder)`` appends the packets that put back what ``state``
holds (taken before the edit). Data-port uploads end by writing the port's index register back as it was, so the
capture's own later uploads continue where they would have.

``parse_edit(text)`` reads the CLI / console syntax: ``REG.field=VALUE``, ``REG=0xWORD``, ``c5=(x, y, z, w)``,
``gs.c5=(...)``, ``vs.shader=@path.vsh`` (source read from a file). Bad edits raise ``EditError`` naming the text.
``edit_text(regs, reg, field)`` writes the edit that sets a register (field) to what ``regs`` hold (the GUI's
starting point); ``edit_for_state_row(path, shown, regs)`` finds it for a row of the pipeline-state view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from picaemu import numeric
from picaemu import regs as regtable
from picaemu.builder.fields import encode_field
from picaemu.command.builder import CommandBuilder
from picaemu.errors import EditError, PicaError
from picaemu.regs import RegKind
from picaemu.state import GpuState

SCOPES = ("from", "draw")  # an edit applies "from this draw on" (the default) or to "this draw only"

UNIT_PREFIX = {"vs": "VSH", "gs": "GSH"}
CODE_WORDS = {"vs": 512, "gs": 4096}  # addressable code memory per unit (picaemu.shader.setup.CODE_WORDS)
NUM_FLOAT_UNIFORMS = 96
NUM_OPDESCS = 128
_UNIFORM = re.compile(r"^(?:(vs|gs)\.)?c(\d+)$", re.IGNORECASE)
_SHADER = re.compile(r"^(vs|gs)\.(?:shader|code)$", re.IGNORECASE)


def _index_word(state: GpuState, unit: str, name: str) -> tuple[str, int]:
    """(register name, current word) of a port's index register, e.g. ``VSH_FLOATUNIFORM_INDEX``."""
    reg = f"{UNIT_PREFIX[unit]}_{name}"
    return reg, int(state.regs[regtable.id_of(reg)])


@dataclass(frozen=True)
class RegisterEdit:
    """``register.field = value`` (``field`` None: the whole 32-bit word = ``value``)."""

    register: str
    field: str | None
    value: int | float | bool | str

    def __post_init__(self) -> None:
        self.bits()  # refuse unknown registers, fields and values at once

    @property
    def reg(self) -> regtable.Register:
        try:
            reg = regtable.by_name(self.register)
        except KeyError:
            raise EditError(f"unknown register {self.register!r}") from None
        if reg.kind is not RegKind.CONFIG or reg.action is not None:
            raise EditError(
                f"{reg.name} is a {reg.action.value if reg.action else reg.kind.value} register: "
                "only plain configuration registers can be edited (uniforms and code have edits of "
                "their own)"
            )
        return reg

    def bits(self) -> tuple[int, int]:
        """(mask, value bits) the edit puts into the register word."""
        reg = self.reg
        if self.field is None:
            if not isinstance(self.value, int) or isinstance(self.value, bool) or not 0 <= self.value <= 0xFFFFFFFF:
                raise EditError(f"{reg.name} = {self.value!r}: a whole register takes a 32-bit number")
            return 0xFFFFFFFF, self.value
        try:
            fld = reg.field(self.field)
        except KeyError:
            raise EditError(
                f"{reg.name} has no field {self.field!r} (fields: {', '.join(f.name for f in reg.fields)})"
            ) from None
        value = self.value.replace("_", " ") if isinstance(self.value, str) else self.value
        try:
            return fld.mask, encode_field(reg, fld, value)
        except (PicaError, ValueError) as err:
            raise EditError(str(err)) from None

    def text(self) -> str:
        return f"{self.reg.name}{'.' + self.field if self.field else ''}={self.value}"

    def packets(self, state: GpuState, builder: CommandBuilder) -> bool:
        reg = self.reg
        mask, bits = self.bits()
        word = int(state.regs[reg.id])
        new = (word & ~mask & 0xFFFFFFFF) | bits
        if new == word:
            return False
        builder.write(reg.id, new)
        return True

    def undo(self, state: GpuState, builder: CommandBuilder) -> None:
        builder.write(self.reg.id, int(state.regs[self.reg.id]))


@dataclass(frozen=True)
class UniformEdit:
    """Float uniform ``c<index>`` of ``unit`` = ``vector`` (x, y, z, w)."""

    unit: str
    index: int
    vector: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        if self.unit not in UNIT_PREFIX:
            raise EditError(f"unknown shader unit {self.unit!r}: vs or gs")
        if not 0 <= self.index < NUM_FLOAT_UNIFORMS:
            raise EditError(f"float uniform c{self.index} outside c0..c{NUM_FLOAT_UNIFORMS - 1}")
        if len(self.vector) != 4:
            raise EditError(f"c{self.index} needs 4 components (x, y, z, w), got {len(self.vector)}")
        object.__setattr__(self, "vector", tuple(float(v) for v in self.vector))

    def text(self) -> str:
        return f"{self.unit}.c{self.index}=({', '.join(f'{v:g}' for v in self.vector)})"

    def _memory(self, state: GpuState) -> np.ndarray:
        return (state.vs if self.unit == "vs" else state.gs).float_uniforms

    def _upload(self, state: GpuState, builder: CommandBuilder, vector) -> None:
        index_reg, word = _index_word(state, self.unit, "FLOATUNIFORM_INDEX")
        builder.upload_float_uniforms(UNIT_PREFIX[self.unit], self.index, [vector], float32=True)
        builder.write(index_reg, word)

    def packets(self, state: GpuState, builder: CommandBuilder) -> bool:
        if np.array_equal(self._memory(state)[self.index], np.array(self.vector, np.float32)):
            return False
        self._upload(state, builder, self.vector)
        return True

    def undo(self, state: GpuState, builder: CommandBuilder) -> None:
        self._upload(state, builder, [float(v) for v in self._memory(state)[self.index]])


@dataclass(frozen=True)
class ShaderEdit:
    """The program of ``unit`` replaced by picasso ``source`` (its first DVLE's ``main`` is the entry point)."""

    unit: str
    source: str
    code: tuple[int, ...] = field(init=False, repr=False)
    opdescs: tuple[int, ...] = field(init=False, repr=False)
    entry: int = field(init=False)
    constants: tuple[RegisterEdit | UniformEdit, ...] = field(init=False, repr=False)  # .constf/.consti/.setb

    def __post_init__(self) -> None:
        from picaemu.shader.asm import assemble

        if self.unit not in UNIT_PREFIX:
            raise EditError(f"unknown shader unit {self.unit!r}: vs or gs")
        try:
            shbin = assemble(self.source)
        except PicaError as err:
            raise EditError(f"{self.unit} shader: {err}") from None
        if not shbin.dvles:
            raise EditError(f"{self.unit} shader: the source defines no program (.proc main ... .end)")
        if len(shbin.code) > CODE_WORDS[self.unit] or len(shbin.opdescs) > NUM_OPDESCS:
            raise EditError(
                f"{self.unit} shader: {len(shbin.code)} words / {len(shbin.opdescs)} descriptors "
                f"exceed the unit's {CODE_WORDS[self.unit]} / {NUM_OPDESCS}"
            )
        object.__setattr__(self, "code", tuple(int(w) for w in shbin.code))
        object.__setattr__(self, "opdescs", tuple(int(d) for d, _ in shbin.opdescs))
        object.__setattr__(self, "entry", int(shbin.dvles[0].main_offset))
        object.__setattr__(self, "constants", tuple(self._constant(c) for c in shbin.dvles[0].constants))

    def _constant(self, c) -> RegisterEdit | UniformEdit:
        """A DVLE constant as the edit citro3d's bind makes of it (bool -> BOOLUNIFORM bit, ivec -> INTUNIFORM
        word, fvec -> float uniform)."""
        prefix = UNIT_PREFIX[self.unit]
        if c.type == 0:
            return RegisterEdit(f"{prefix}_BOOLUNIFORM", f"b{c.register}", bool(c.data[0] & 1))
        if c.type == 1:
            return RegisterEdit(f"{prefix}_INTUNIFORM_I{c.register}", None, int(c.data[0]))
        x, y, z, w = (float(numeric.f24(word & 0xFFFFFF)) for word in c.data)
        return UniformEdit(self.unit, c.register, (x, y, z, w))

    def text(self) -> str:
        return f"{self.unit}.shader=<{len(self.code)} words, entry 0x{self.entry:03X}>"

    def _held(self, state: GpuState) -> tuple[np.ndarray, np.ndarray, int]:
        mem = state.vs if self.unit == "vs" else state.gs
        entry = int(state.regs[regtable.id_of(f"{UNIT_PREFIX[self.unit]}_ENTRYPOINT")]) & 0xFFFF
        return mem.code[: len(self.code)], mem.opdescs[: len(self.opdescs)], entry

    def _upload(self, state: GpuState, builder: CommandBuilder, code, opdescs, entry: int) -> None:
        unit = UNIT_PREFIX[self.unit]
        code_reg, code_word = _index_word(state, self.unit, "CODETRANSFER_INDEX")
        desc_reg, desc_word = _index_word(state, self.unit, "OPDESCS_INDEX")
        builder.upload_code(unit, [int(w) for w in code])
        builder.upload_opdescs(unit, [int(d) for d in opdescs])
        entry_id = regtable.id_of(f"{unit}_ENTRYPOINT")
        builder.write(entry_id, (int(state.regs[entry_id]) & 0xFFFF0000) | entry)
        builder.write(code_reg, code_word)
        builder.write(desc_reg, desc_word)

    def packets(self, state: GpuState, builder: CommandBuilder) -> bool:
        changed = [c.packets(state, builder) for c in self.constants]
        code, opdescs, entry = self._held(state)
        if np.array_equal(code, self.code) and np.array_equal(opdescs, self.opdescs) and entry == self.entry:
            return any(changed)
        self._upload(state, builder, self.code, self.opdescs, self.entry)
        return True

    def undo(self, state: GpuState, builder: CommandBuilder) -> None:
        for c in self.constants:
            c.undo(state, builder)
        self._upload(state, builder, *self._held(state))


Edit = RegisterEdit | UniformEdit | ShaderEdit


def _value(text: str) -> int | float | bool | str:
    """A field value from text: a number (0x.. hex, decimal, float), true/false, else an enum name."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for parse in (lambda s: int(s, 0), float):
        try:
            return parse(low)
        except ValueError:
            pass
    return text.strip()


def _vector(text: str, where: str) -> tuple[float, float, float, float]:
    parts = [p for p in re.split(r"[\s,]+", text.strip().strip("()[]")) if p]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise EditError(f"{where}: {text!r} is not a vector (x, y, z, w)") from None
    if len(values) != 4:
        raise EditError(f"{where}: {text!r} has {len(values)} components, not 4")
    return values


def parse_edit(text: str) -> Edit:
    """An edit from ``REG.field=VALUE`` / ``REG=WORD`` / ``[vs.|gs.]cN=(x, y, z, w)`` / ``vs.shader=@file``."""
    target, sep, value = text.partition("=")
    target = target.strip()
    if not sep or not target or not value.strip():
        raise EditError(f"edit {text!r}: expected TARGET=VALUE (REG.field=VALUE, c5=(x, y, z, w), vs.shader=@file)")
    if m := _UNIFORM.match(target):
        return UniformEdit((m.group(1) or "vs").lower(), int(m.group(2)), _vector(value, target))
    if m := _SHADER.match(target):
        path = value.strip()
        if not path.startswith("@"):
            raise EditError(f"edit {text!r}: a shader edit names its source file as @path")
        try:
            source = Path(path[1:]).read_text()
        except OSError as err:
            raise EditError(f"edit {text!r}: cannot read {path[1:]}: {err.strerror}") from None
        return ShaderEdit(m.group(1).lower(), source)
    register, dot, fld = target.partition(".")
    parsed = _value(value)
    if not dot and not isinstance(parsed, int):
        raise EditError(f"edit {text!r}: a whole register takes a number; name a field for other values")
    return RegisterEdit(register, fld or None, parsed)


def _value_text(fld, raw: int) -> str:
    """A field value as ``parse_edit`` reads it back: enum names with ``_`` for spaces, true/false, hex addresses,
    floats, else the number (also for an enum value the table does not name)."""
    if fld.enum is not None and raw not in fld.enum:
        return str(raw)
    value = fld.interpret(raw)
    if isinstance(value, str):
        return value.replace(" ", "_")
    if isinstance(value, bool):
        return str(value).lower()
    if fld.type.value == "address":
        return f"0x{value:08X}"
    return repr(value) if isinstance(value, float) else str(value)


def edit_text(regs: np.ndarray, reg: regtable.Register, fld=None) -> str:
    """The edit that sets ``reg`` (its field ``fld``; the whole word when None) to what ``regs`` holds."""
    value = int(regs[reg.id])
    if fld is None:
        return f"{reg.name}=0x{value:08X}"
    return f"{reg.name}.{fld.name}={_value_text(fld, fld.extract(value))}"


def edit_for_state_row(path: str, shown: str, regs: np.ndarray) -> str:
    """The edit for a row of ``picaemu.debug.api.pipeline_state_of``'s tree: ``vs_uniforms....c5`` -> ``vs.c5=(...)``
    (its shown ``x, y, z, w``); another leaf -> the editable register field of that name whose value in ``regs``
    is the one shown (``EditError`` when none or several are)."""
    parts = path.split(".")
    key = parts[-1]
    if parts[0] in ("vs_uniforms", "gs_uniforms") and _UNIFORM.match(key):
        return f"{parts[0][:2]}.{key}=({shown})"
    matches = []
    for reg in regtable.all_registers():
        if reg.kind is not RegKind.CONFIG or reg.action is not None:
            continue
        for fld in reg.fields:
            raw = fld.extract(int(regs[reg.id]))
            if fld.name == key and shown in (str(raw), str(fld.interpret(raw)), fld.describe(raw)):
                matches.append((reg, fld))
    if len(matches) != 1:
        which = ", ".join(f"{r.name}.{f.name}" for r, f in matches) or "none"
        raise EditError(
            f"{path} = {shown}: no single register field holds it ({which}); edit it in the registers panel"
        )
    return edit_text(regs, *matches[0])
