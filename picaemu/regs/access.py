"""Reading register fields by name out of a register file (a (0x300,) uint32 array).

Stages decode their per-draw state with these, so that no bit position is written anywhere but the table:
``raw(regs, "TEXUNIT0_PARAM", "mag_filter")`` -> int, ``value(...)`` -> the field's meaning (float for float
fields, enum name for enums, byte address for addresses). Lookups are cached; a call costs about a microsecond,
which is fine per draw and wrong per fragment (decode once per draw).

Plain words and the external register files (``picaemu.regs.external``): ``bits(word, "PPF_FLAGS", "scale")`` ->
int, ``put("PSC0_CONTROL", "busy", 1)`` -> the field's bits in place (as ``compose``), ``ext_index("PDC0_FORMAT")``
-> the word index in the GPU file (physical address - 0x10400000) / 4, ``ext_word(gpu, "PDC0_FORMAT")`` -> int.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from picaemu import regs as _regs
from picaemu.regs import external
from picaemu.regs.schema import Field, Space


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


def rgba(regs: np.ndarray, reg_name: str) -> tuple[int, int, int, int]:
    """The raw "r", "g", "b", "a" fields of a color register (one register read)."""
    r, g, b, a = raws(regs, reg_name, ("r", "g", "b", "a"))
    return r, g, b, a


def rgb(regs: np.ndarray, reg_name: str) -> tuple[int, int, int]:
    """The raw "r", "g", "b" fields of a color register (one register read)."""
    r, g, b = raws(regs, reg_name, ("r", "g", "b"))
    return r, g, b


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


def bits(word_value: int, reg_name: str, field_name: str) -> int:
    """The raw bits of one field of a register word."""
    _reg, lo, mask = _bits(reg_name, field_name)
    return (int(word_value) >> lo) & mask


def put(reg_name: str, field_name: str, raw_value: int) -> int:
    """One field's raw value at its bits (``compose`` of one field)."""
    return compose(reg_name, **{field_name: raw_value})


def put_address(reg_name: str, field_name: str, byte_address: int) -> int:
    """An ADDRESS field holding ``byte_address`` (divided by the field's scale: 8 for "address >> 3")."""
    return put(reg_name, field_name, byte_address // locate(reg_name, field_name)[1].scale)


@cache
def ext_index(reg_name: str) -> int:
    """Word index of an external register in the GPU register file (``external.GPU_BASE`` + 4 * index)."""
    reg = _regs.by_name(reg_name)
    if reg.space is not Space.EXTERNAL:
        raise KeyError(f"{reg.name} is no external register")
    return (reg.id - external.GPU_BASE) >> 2


def ext_word(gpu: np.ndarray, reg_name: str) -> int:
    """The word of an external register in the GPU register file ``gpu`` ((GPU_WORDS,) uint32)."""
    return int(gpu[ext_index(reg_name)])


def ext_value(gpu: np.ndarray, reg_name: str, field_name: str) -> int | float | bool | str:
    """The interpreted value of one field of an external register (byte address for address fields)."""
    fld = locate(reg_name, field_name)[1]
    return fld.interpret(fld.extract(ext_word(gpu, reg_name)))
