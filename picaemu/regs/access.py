"""Reading register fields by name out of a register file (a (0x300,) uint32 array).

Stages decode their per-draw state with these, so that no bit position is written anywhere but the table:
``raw(regs, "TEXUNIT0_PARAM", "mag_filter")`` -> int, ``value(...)`` -> the field's meaning (float for float
fields, enum name for enums, byte address for addresses). Lookups are cached; a call costs about a microsecond,
which is fine per draw and wrong per fragment (decode once per draw).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from picaemu import regs as _regs
from picaemu.regs.schema import Field


@cache
def locate(reg_name: str, field_name: str) -> tuple[int, Field]:
    """(register id, Field) for a register and field name; KeyError if either is unknown."""
    reg = _regs.by_name(reg_name)
    return reg.id, reg.field(field_name)


@cache
def _bits(reg_name: str, field_name: str) -> tuple[int, int, int]:
    """(register id, lowest bit, mask of the field's width) of a field: ``raw``'s per-call work is one shift."""
    reg_id, fld = locate(reg_name, field_name)
    return reg_id, fld.lo, (1 << fld.width) - 1


def raw(regs: np.ndarray, reg_name: str, field_name: str) -> int:
    """The raw bits of one field."""
    reg_id, lo, mask = _bits(reg_name, field_name)
    return (int(regs[reg_id]) >> lo) & mask


@cache
def _bits_many(reg_name: str, field_names: tuple[str, ...]) -> tuple[int, tuple[tuple[int, int], ...]]:
    """(register id, ((lowest bit, mask), ...)) of several fields of one register."""
    fields = tuple(_bits(reg_name, name) for name in field_names)
    return fields[0][0], tuple((lo, mask) for _reg, lo, mask in fields)


def raws(regs: np.ndarray, reg_name: str, field_names: tuple[str, ...]) -> tuple[int, ...]:
    """The raw bits of several fields of one register (one register read)."""
    return word_raws(int(regs[_bits_many(reg_name, field_names)[0]]), reg_name, field_names)


def word_raws(word_value: int, reg_name: str, field_names: tuple[str, ...]) -> tuple[int, ...]:
    """The raw bits of several fields of ``reg_name`` in the word ``word_value``."""
    return tuple((word_value >> lo) & mask for lo, mask in _bits_many(reg_name, field_names)[1])


def value(regs: np.ndarray, reg_name: str, field_name: str) -> int | float | bool | str:
    """The interpreted value of one field."""
    reg_id, fld = locate(reg_name, field_name)
    return fld.interpret(fld.extract(int(regs[reg_id])))


def word(regs: np.ndarray, reg_name: str) -> int:
    """The whole 32-bit word of a register."""
    return int(regs[_regs.id_of(reg_name)])


def compose(reg_name: str, **fields: int) -> int:
    """Build a register word from raw field values (for builders and tests): ``compose("X", a=1, b=2)``."""
    reg = _regs.by_name(reg_name)
    out = 0
    for name, raw_value in fields.items():
        fld = reg.field(name)
        if raw_value < 0 or raw_value >> fld.width:
            raw_value &= (1 << fld.width) - 1
        out |= raw_value << fld.lo
    return out
