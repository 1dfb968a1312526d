"""The one declarative register table of the PICA200: internal registers 0x000-0x2FF and, as a second address
space, the external (memory-mapped) GPU registers of the engines (``picaemu.regs.external``: id = physical address).

Every other part of picaemu (command processor, stages, CLI, GUI inspector, ``docs/registers.md``) reads register
ids, names, kinds and bit fields from here, and nowhere else. The data lives in ``picaemu.regs.blocks``, one module
per block of the map; this module validates it when imported (ids in range, one entry per id, unique names,
fields inside 32 bits and not overlapping, enums only on enum fields) and indexes it.

Lookup: ``get(id)`` -> ``Register`` (ids the reference does not name give an ``UNKNOWN_0xNNN`` register with no
fields), ``by_name(name)`` (GPUREG_* name, an alias, the name without its ``GPUREG_`` prefix, an external name such
as ``PPF_FLAGS``, or a hex id / physical address), ``at_address(address)`` (external register, or the internal one
the P3D window maps there), ``id_of(name)``, ``decode_fields(id or Register, value)`` -> ``DecodedValue``,
``all_registers()`` (internal) / ``external_registers()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from picaemu.errors import RegisterTableError
from picaemu.regs import external
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
    Space,
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
    "Space",
    "all_registers",
    "at_address",
    "by_name",
    "decode_fields",
    "external_registers",
    "get",
    "id_of",
]

NUM_REGS = 0x300


def _check_id(r: Register) -> None:
    if r.space is Space.INTERNAL and not 0 <= r.id < NUM_REGS:
        raise RegisterTableError(f"{r.name}: id 0x{r.id:X} outside 0x000-0x2FF")
    gpu_file = external.GPU_BASE <= r.id < external.P3D_BASE  # below the P3D window onto the internal registers
    if r.space is Space.EXTERNAL and (r.id % 4 or not gpu_file):
        raise RegisterTableError(f"{r.name}: address 0x{r.id:08X} is no word of the GPU register file")


def _validate(regs: list[Register]) -> dict[int, Register]:
    table: dict[int, Register] = {}
    names: dict[str, int] = {}
    for r in regs:
        _check_id(r)
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
_EXTERNAL: dict[int, Register] = _validate(external.REGISTERS)
_BY_NAME: dict[str, Register] = {}
for _r in (*_TABLE.values(), *_EXTERNAL.values()):
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


def at_address(address: int) -> Register:
    """The register at physical ``address``: an external one, or the internal register the P3D window maps there
    (0x10401000 + 4 * id); KeyError for an address no register of the table covers."""
    if external.P3D_BASE <= address < external.P3D_BASE + 4 * external.P3D_IDS and address % 4 == 0:
        return get((address - external.P3D_BASE) // 4)
    if address in _EXTERNAL:
        return _EXTERNAL[address]
    raise KeyError(f"no register at address 0x{address:08X}")


def by_name(name: str) -> Register:
    """Look a register up by GPUREG_* name, alias, short name, external name, ``UNKNOWN_0xNNN``/hex id text, or a
    hex physical address (0x10400000 and up: ``at_address``)."""
    key = name.strip().upper()
    if key in _BY_NAME:
        return _BY_NAME[key]
    for prefix in ("UNKNOWN_0X", "0X"):
        if key.startswith(prefix):
            try:
                number = int(key[len(prefix) :], 16)
            except ValueError:
                break
            return at_address(number) if number >= external.GPU_BASE else get(number)
    raise KeyError(f"no register named {name!r}")


def id_of(name: str) -> int:
    """Register id of a (known) register name; used by code that must not hard-code ids."""
    return by_name(name).id


def all_registers() -> Iterator[Register]:
    """Every named internal register, in id order."""
    for reg_id in sorted(_TABLE):
        yield _TABLE[reg_id]


def external_registers() -> Iterator[Register]:
    """Every named external register, in address order."""
    for address in sorted(_EXTERNAL):
        yield _EXTERNAL[address]


def decode_fields(reg: int | Register, value: int) -> DecodedValue:
    """Split ``value`` into the named fields of register ``reg`` (an internal id, or any ``Register``); report set
    bits no field covers."""
    reg = get(reg) if isinstance(reg, int) else reg
    value &= 0xFFFFFFFF
    fields = tuple(
        FieldValue(f.name, f.lo, f.hi, raw := f.extract(value), f.interpret(raw), f.describe(raw)) for f in reg.fields
    )
    return DecodedValue(reg, value, fields, value & ~reg.covered_mask & 0xFFFFFFFF)
