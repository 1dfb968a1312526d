"""The lowering of ``.pica`` GX events to the register writes GSP would make: ``lower(event)`` ->
[(physical address, value, width in bytes)] (``picaemu.gx.mmio.Gx.apply`` replays them; ``picaemu info``'s scan
reads a CommandList's). Plain data and arithmetic: importing it loads no engine.
"""

from __future__ import annotations

from collections.abc import Callable

from picaemu import regs as regtable
from picaemu.formats import pica
from picaemu.gx.transfer_layout import GxError, TransferFlags, raw_copy_size
from picaemu.regs import access, id_of
from picaemu.regs.external import FILL_UNITS, P3D_BASE, SCREENS

Write = tuple[int, int, int]  # (physical address, value, width in bytes)


def _address(name: str) -> int:
    """Physical address of an external register."""
    return regtable.by_name(name).id


def _p3d(name: str) -> int:
    """Physical address of an internal register in the P3D window."""
    return P3D_BASE + 4 * id_of(name)


CMDBUF_SIZE0, CMDBUF_ADDR0, CMDBUF_JUMP0 = _p3d("CMDBUF_SIZE0"), _p3d("CMDBUF_ADDR0"), _p3d("CMDBUF_JUMP0")


def _lower_command_list(e: pica.CommandList) -> list[Write]:
    size = access.put_address("CMDBUF_SIZE0", "size", -(-e.size // 8) * 8)  # whole 8-byte units, rounded up
    return [
        (CMDBUF_SIZE0, size, 4),
        (CMDBUF_ADDR0, access.put_address("CMDBUF_ADDR0", "address", e.address), 4),
        (CMDBUF_JUMP0, 1, 4),
    ]


def started_fill_units(e: pica.MemoryFill) -> list[tuple[str, pica.FillUnit]]:
    """(register prefix, unit) of each fill unit the event starts (its CONTROL word has the busy bit set)."""
    return [
        (u, unit)
        for u, unit in zip(FILL_UNITS, e.units, strict=True)
        if access.bits(unit.control, f"{u}_CONTROL", "busy")
    ]


def _lower_fill(e: pica.MemoryFill) -> list[Write]:
    out: list[Write] = []
    for u, unit in started_fill_units(e):
        out += [
            (_address(f"{u}_START"), access.put_address(f"{u}_START", "address", unit.start), 4),
            (_address(f"{u}_END"), access.put_address(f"{u}_END", "address", unit.end), 4),
            (_address(f"{u}_VALUE"), unit.value, 4),
            (_address(f"{u}_CONTROL"), unit.control, 4),
        ]
    return out


def _ppf_addresses(src: int, dst: int) -> list[Write]:
    return [
        (_address("PPF_IN_ADDR"), access.put_address("PPF_IN_ADDR", "address", src), 4),
        (_address("PPF_OUT_ADDR"), access.put_address("PPF_OUT_ADDR", "address", dst), 4),
    ]


def _lower_transfer(e: pica.DisplayTransfer) -> list[Write]:
    """A display transfer; with the texture_copy flag (raw copy) the contiguous texture copy of the output's bytes."""
    dims = [(_address("PPF_OUT_DIM"), e.out_dim, 4), (_address("PPF_IN_DIM"), e.in_dim, 4)]
    if access.bits(e.flags, "PPF_FLAGS", "texture_copy"):
        out_dim = (access.bits(e.out_dim, "PPF_OUT_DIM", "width"), access.bits(e.out_dim, "PPF_OUT_DIM", "height"))
        size = raw_copy_size(out_dim, TransferFlags.from_word(e.flags))
        dims += [
            (_address("PPF_COPY_SIZE"), size, 4),
            (_address("PPF_COPY_IN"), 0, 4),
            (_address("PPF_COPY_OUT"), 0, 4),
        ]
    return [
        *_ppf_addresses(e.src, e.dst),
        *dims,
        (_address("PPF_FLAGS"), e.flags, 4),
        (_address("PPF_TRIGGER"), access.put("PPF_TRIGGER", "start", 1), 4),
    ]


def _lower_copy(e: pica.TextureCopy) -> list[Write]:
    return [
        *_ppf_addresses(e.src, e.dst),
        (_address("PPF_COPY_SIZE"), e.size, 4),
        (_address("PPF_COPY_IN"), e.in_line, 4),
        (_address("PPF_COPY_OUT"), e.out_line, 4),
        (_address("PPF_FLAGS"), e.flags | access.put("PPF_FLAGS", "texture_copy", 1), 4),
        (_address("PPF_TRIGGER"), access.put("PPF_TRIGGER", "start", 1), 4),
    ]


def _lower_present(e: pica.Present) -> list[Write]:
    if e.screen not in (0, 1):
        raise GxError(f"present on screen {e.screen} (0 top, 1 bottom)")
    pdc = SCREENS[e.screen]
    second = access.bits(e.select, f"{pdc}_SELECT", "second")
    left, right = (f"{pdc}_LEFT_B", f"{pdc}_RIGHT_B") if second else (f"{pdc}_LEFT_A", f"{pdc}_RIGHT_A")
    return [
        (_address(left), e.left, 4),
        (_address(right), e.right, 4),
        (_address(f"{pdc}_STRIDE"), e.stride, 4),
        (_address(f"{pdc}_FORMAT"), e.format, 4),
        (_address(f"{pdc}_SELECT"), access.put(f"{pdc}_SELECT", "second", second), 4),
    ]


_LOWER: dict[type, Callable[..., list[Write]]] = {
    pica.CommandList: _lower_command_list,
    pica.MemoryFill: _lower_fill,
    pica.DisplayTransfer: _lower_transfer,
    pica.TextureCopy: _lower_copy,
    pica.Present: _lower_present,
    pica.RegWrite: lambda e: [(e.address, e.value, e.width)],
}


def lower(event: pica.Event) -> list[Write]:
    """The register writes that perform ``event`` ([] for events that are not GX commands)."""
    handler = _LOWER.get(type(event))
    return handler(event) if handler else []
