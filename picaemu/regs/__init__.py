"""The one declarative register table of the PICA200 (internal registers 0x000-0x2FF).

Every other part of picaemu (command processor, stages, CLI, GUI inspector, ``docs/registers.md``) reads register
ids, names, kinds and bit fields from here, and nowhere else. The data lives in ``picaemu.regs.blocks``, one module
per block of the map; this module validates it when imported (ids in range, one entry per id, unique names,
fields inside 32 bits and not overlapping, enums only on enum fields) and indexes it.

Lookup: ``get(id)`` -> ``Register`` (ids the reference does not name give an ``UNKNOWN_0xNNN`` register with no
fields), ``by_name(name)`` (GPUREG_* name, an alias, or the name without its ``GPUREG_`` prefix), ``id_of(name)``,
``decode_fields(id, value)`` -> ``DecodedValue``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from picaemu.errors import RegisterTableError
from picaemu.regs.blocks import ALL_BLOCKS
from picaemu.regs.schema import (
    Action,
    DecodedValue,
    Field,
    FieldType,
    FieldValue,
    Port,
    Register,
    RegKind,
)

__all__ = [
    "NUM_REGS",
    "Action",
    "DecodedValue",
    "Field",
    "FieldType",
    "FieldValue",
    "Port",
    "RegKind",
    "Register",
    "all_registers",
    "by_name",
    "decode_fields",
    "get",
    "id_of",
]

NUM_REGS = 0x300


def _validate(regs: list[Register]) -> dict[int, Register]:
    table: dict[int, Register] = {}
    names: dict[str, int] = {}
    for r in regs:
        if not 0 <= r.id < NUM_REGS:
            raise RegisterTableError(f"{r.name}: id 0x{r.id:X} outside 0x000-0x2FF")
        if r.id in table:
            raise RegisterTableError(f"id 0x{r.id:03X} defined twice ({table[r.id].name}, {r.name})")
        for n in (r.name, *r.aliases):
            if n in names and names[n] != r.id:
                raise RegisterTableError(f"name {n} used by 0x{names[n]:03X} and 0x{r.id:03X}")
            names[n] = r.id
        is_port = r.kind is RegKind.DATA_PORT
        names_port = r.port is not None
        if is_port != (names_port and r.action is None) and (is_port or r.action is not Action.PORT_INDEX):
            raise RegisterTableError(f"{r.name}: data ports (and only they, or port indexes) name a port")
        taken = 0
        seen: set[str] = set()
        for f in r.fields:
            if not 0 <= f.lo <= f.hi <= 31:
                raise RegisterTableError(f"{r.name}.{f.name}: bits {f.lo}-{f.hi} outside 0-31")
            if taken & f.mask:
                raise RegisterTableError(f"{r.name}.{f.name}: bits {f.lo}-{f.hi} overlap another field")
            if f.name in seen:
                raise RegisterTableError(f"{r.name}: field {f.name} defined twice")
            if (f.type is FieldType.ENUM) != (f.enum is not None):
                raise RegisterTableError(f"{r.name}.{f.name}: enum values go with type ENUM only")
            if (f.type is FieldType.FIXED) != (f.fixed is not None):
                raise RegisterTableError(f"{r.name}.{f.name}: FIXED fields need (sign, int, frac)")
            if f.fixed is not None and sum(f.fixed) != f.width:
                raise RegisterTableError(f"{r.name}.{f.name}: fixed layout {f.fixed} is not {f.width} bits")
            taken |= f.mask
            seen.add(f.name)
        table[r.id] = r
    return table


_TABLE: dict[int, Register] = _validate([r for block in ALL_BLOCKS for r in block.REGISTERS])
_BY_NAME: dict[str, Register] = {}
for _r in _TABLE.values():
    for _n in (_r.name, *_r.aliases):
        _BY_NAME[_n.upper()] = _r
        if _n.upper().startswith("GPUREG_"):
            _BY_NAME.setdefault(_n.upper()[7:], _r)


@cache
def get(reg_id: int) -> Register:
    """The register at ``reg_id``; an unnamed id gives ``UNKNOWN_0xNNN`` (no fields, kind CONFIG)."""
    found = _TABLE.get(reg_id)
    if found is not None:
        return found
    return Register(
        id=reg_id,
        name=f"UNKNOWN_0x{reg_id:03X}",
        block="unknown",
        doc="not named by the reference: stored, not decoded",
        aliases=(f"GPUREG_{reg_id:04X}",) if 0 <= reg_id < NUM_REGS else (),
        known=False,
    )


def by_name(name: str) -> Register:
    """Look a register up by GPUREG_* name, alias, short name, or ``UNKNOWN_0xNNN``/hex id text."""
    key = name.strip().upper()
    if key in _BY_NAME:
        return _BY_NAME[key]
    for prefix in ("UNKNOWN_0X", "0X"):
        if key.startswith(prefix):
            try:
                return get(int(key[len(prefix) :], 16))
            except ValueError:
                break
    raise KeyError(f"no register named {name!r}")


def id_of(name: str) -> int:
    """Register id of a (known) register name; used by code that must not hard-code ids."""
    return by_name(name).id


def all_registers() -> Iterator[Register]:
    """Every named register, in id order."""
    for reg_id in sorted(_TABLE):
        yield _TABLE[reg_id]


def decode_fields(reg_id: int, value: int) -> DecodedValue:
    """Split ``value`` into the named fields of register ``reg_id``; report set bits no field covers."""
    reg = get(reg_id)
    value &= 0xFFFFFFFF
    fields = tuple(
        FieldValue(f.name, f.lo, f.hi, raw := f.extract(value), f.interpret(raw), f.describe(raw))
        for f in reg.fields
    )
    return DecodedValue(reg, value, fields, value & ~reg.covered_mask & 0xFFFFFFFF)
