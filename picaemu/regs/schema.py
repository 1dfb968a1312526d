"""The shape of the register table: registers, bit fields, field types, enums, side effects.

This module holds no hardware facts; ``picaemu.regs.blocks`` holds them as data in this shape, and
``picaemu.regs`` validates and indexes them. Bit ranges are inclusive (``lo``..``hi``), bit 0 = least significant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

import numpy as np

from picaemu import numeric

_Word = TypeVar("_Word", int, np.ndarray)  # Field.extract works on one register word or an array of them


class RegKind(Enum):
    """How the command processor treats a write."""

    CONFIG = "config"  # stored; read by stages when a draw starts
    DATA_PORT = "data port"  # FIFO: every word is pushed into structured state (uniforms, code, LUTs, ...)
    TRIGGER = "trigger"  # every write starts an action (draw, finalize, cache clear, ...)
    JUMP = "jump"  # every write jumps the command processor to another buffer


class Space(Enum):
    """The address space a register's ``id`` lives in."""

    INTERNAL = "internal"  # PICA200 register id 0x000-0x2FF (command lists; also MMIO at 0x10401000 + 4 * id)
    EXTERNAL = "external"  # memory-mapped GPU (0x10400000) / LCD (0x10202000) register: id = physical address


class Port(Enum):
    """The FIFOs behind the data-port registers (one per structured memory)."""

    GSH_FLOAT_UNIFORM = "gsh float uniform"
    GSH_CODE = "gsh code"
    GSH_OPDESC = "gsh opdesc"
    VSH_FLOAT_UNIFORM = "vsh float uniform"
    VSH_CODE = "vsh code"
    VSH_OPDESC = "vsh opdesc"
    FIXED_ATTRIB = "fixed attribute"
    LIGHTING_LUT = "lighting lut"
    FOG_LUT = "fog lut"
    PROCTEX_LUT = "proctex lut"
    GAS_LUT = "gas lut"


class Action(Enum):
    """Side effects of a write, beyond storing it."""

    FINALIZE = "finalize"
    DRAW_ARRAYS = "draw arrays"
    DRAW_ELEMENTS = "draw elements"
    VERTEX_CACHE_CLEAR = "vertex cache clear"
    RESTART_PRIMITIVE = "restart primitive"
    EARLYDEPTH_CLEAR = "early depth clear"
    FRAMEBUFFER_FLUSH = "framebuffer flush"
    FRAMEBUFFER_INVALIDATE = "framebuffer invalidate"
    CODE_TRANSFER_END = "code transfer end"
    JUMP0 = "jump channel 0"
    JUMP1 = "jump channel 1"
    # index registers of a data port: a write rewinds the port (drops partially received words)
    PORT_INDEX = "port index"


class FieldType(Enum):
    UINT = "uint"
    INT = "int"  # two's complement
    BOOL = "bool"
    ENUM = "enum"
    FLOAT24 = "float24"
    FLOAT20 = "float20"
    FLOAT16 = "float16"
    FLOAT31 = "float31"
    FIXED = "fixed"  # see Field.fixed
    ADDRESS = "address"  # physical address = raw * Field.scale (8 for "address >> 3")
    RAW = "raw"  # opaque data word (FIFO payload)


_FLOATS = {
    FieldType.FLOAT24: numeric.FLOAT24,
    FieldType.FLOAT20: numeric.FLOAT20,
    FieldType.FLOAT16: numeric.FLOAT16,
    FieldType.FLOAT31: numeric.FLOAT31,
}


def enum_key(name: str) -> str:
    """An enum name with case and word separators (spaces, ``_``, ``-``) dropped: what ``Field.enum_raw`` compares."""
    return "".join(c for c in name.lower() if c not in " _-")


@dataclass(frozen=True)
class Field:
    """A bit field ``lo``..``hi`` (inclusive) of a register."""

    name: str
    lo: int
    hi: int
    type: FieldType = FieldType.UINT
    enum: Mapping[int, str] | None = None
    fixed: tuple[int, int, int] | None = None  # (sign bits, integer bits, fraction bits)
    scale: int = 1  # ADDRESS: bytes per raw unit
    doc: str = ""

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo

    def extract(self, value: _Word) -> _Word:
        """The field's bits of ``value`` (an int, or an integer array: each element), shifted down to bit 0."""
        return (value >> self.lo) & ((1 << self.width) - 1)

    def interpret(self, raw: int) -> int | float | bool | str:
        """The field's meaning as a Python value (enum values give their name)."""
        t = self.type
        if t is FieldType.BOOL:
            return bool(raw)
        if t is FieldType.ENUM:
            assert self.enum is not None
            return self.enum.get(raw, f"<invalid {raw}>")
        if t is FieldType.INT:
            return int(numeric.signed(raw, self.width))
        if t in _FLOATS:
            return float(numeric.decode_float(raw, _FLOATS[t]))
        if t is FieldType.FIXED:
            assert self.fixed is not None
            return float(numeric.fixed(raw, *self.fixed))
        if t is FieldType.ADDRESS:
            return raw * self.scale
        return raw

    def enum_raw(self, text: str) -> int | None:
        """The raw value an enum name spells, or None. Every spelling of a table name is accepted: case-blind, with
        spaces, underscores or nothing between its words (``not equal``, ``NOT_EQUAL``, ``notequal``)."""
        key = enum_key(text)
        matches = [raw for raw, name in (self.enum or {}).items() if enum_key(name) == key]
        return matches[0] if len(matches) == 1 else None

    def enum_names(self) -> list[str]:
        """The enum's names as a user types them (words joined by ``_``), in raw-value order."""
        return [name.replace(" ", "_") for _, name in sorted((self.enum or {}).items())]

    def describe(self, raw: int) -> str:
        """Human-readable text of a raw value."""
        v = self.interpret(raw)
        if self.type is FieldType.ADDRESS:
            return f"0x{v:08X}"
        if self.type is FieldType.RAW:
            return f"0x{raw:0{(self.width + 3) // 4}X}"
        if isinstance(v, float):
            return f"{v:.6g}"
        return str(v)


@dataclass(frozen=True)
class Register:
    """One register (internal id or external physical address, see ``space``) and everything known about it."""

    id: int
    name: str  # GPUREG_* (3dbrew) name; external registers: the engine's name (PSC0_CONTROL, PPF_FLAGS, ...)
    block: str  # which block of the map it belongs to (raster, texturing, ...)
    doc: str
    kind: RegKind = RegKind.CONFIG
    fields: tuple[Field, ...] = ()
    aliases: tuple[str, ...] = ()  # other names: SDK PICA_REG_*, libctru spellings
    port: Port | None = None  # for DATA_PORT registers: the FIFO fed; for index registers: the port rewound
    action: Action | None = None
    group: str | None = None  # alias group name when several ids feed one register (e.g. VSH_FLOATUNIFORM_DATA)
    known: bool = True
    space: Space = Space.INTERNAL

    @property
    def covered_mask(self) -> int:
        m = 0
        for f in self.fields:
            m |= f.mask
        return m

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")


@dataclass(frozen=True)
class FieldValue:
    """One decoded field of a register value."""

    name: str
    lo: int
    hi: int
    raw: int
    value: int | float | bool | str
    text: str


@dataclass(frozen=True)
class DecodedValue:
    """A register value split into its fields; ``uncovered`` holds the set bits that no field describes."""

    register: Register
    value: int
    fields: tuple[FieldValue, ...] = field(default=())
    uncovered: int = 0

    def as_dict(self) -> dict[str, int | float | bool | str]:
        return {f.name: f.value for f in self.fields}
