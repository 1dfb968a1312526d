"""Small constructors that keep the block tables short (data in, schema objects out)."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from __future__ import annotations

from collections.abc import Mapping

from picaemu.regs.schema import Action, Field, FieldType, Port, Register, RegKind


def f(
    name: str,
    lo: int,
    hi: int | None = None,
    type: FieldType = FieldType.UINT,
    *,
    enum: Mapping[int, str] | None = None,
    fixed: tuple[int, int, int] | None = None,
    scale: int = 1,
    doc: str = "",
) -> Field:
    """A field of bits lo..hi (hi defaults to lo); a BOOL when it is one bit wide and no type is given."""
    hi = lo if hi is None else hi
    if hi == lo and type is FieldType.UINT and enum is None:
        type = FieldType.BOOL
    if enum is not None:
        type = FieldType.ENUM
    if fixed is not None:
        type = FieldType.FIXED
    return Field(name, lo, hi, type, enum, fixed, scale, doc)


def reg(
    reg_id: int,
    name: str,
    block: str,
    doc: str,
    *fields: Field,
    kind: RegKind = RegKind.CONFIG,
    aliases: tuple[str, ...] = (),
    port: Port | None = None,
    action: Action | None = None,
    group: str | None = None,
) -> Register:
    if action is not None and kind is RegKind.CONFIG and action is not Action.PORT_INDEX:
        kind = RegKind.TRIGGER
    return Register(reg_id, name, block, doc, kind, tuple(fields), aliases, port, action, group)


def port_range(
    first: int, count: int, name: str, block: str, doc: str, port: Port, group: str, *, aliases: tuple[str, ...] = ()
) -> list[Register]:
    """An alias group: ``count`` consecutive ids that all feed the FIFO ``port``."""
    return [
        Register(
            first + i,
            f"{name}{i}" if count > 1 else name,
            block,
            doc,
            RegKind.DATA_PORT,
            (Field("data", 0, 31, FieldType.RAW),),
            tuple(a.format(i=i) for a in aliases),
            port,
            None,
            group,
        )
        for i in range(count)
    ]
