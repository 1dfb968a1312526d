"""The records of a replay's index: ``EventInfo`` per capture event and ``DrawRecord`` per draw, the one shape
of each that the replay, the debugger's timeline, the API, the CLI and the GUI share, ``DrawRecords`` (a replay's
``draws``: the compiled loop's records made when first read), and ``describe(event)``, the one line that names an
event everywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from picaemu import regs as regtable
from picaemu.formats import pica
from picaemu.observer import PacketEvent

DECIMAL_FIELDS = frozenset({"blob", "screen", "select", "stride", "size", "width"})  # the rest print in hex


def _register_write_text(event: pica.RegWrite) -> str:
    """``NAME = 0xVALUE (field=meaning ...)`` from the register table (internal registers through the P3D window,
    external ones by address); the bare address for one the table does not name."""
    try:
        reg = regtable.at_address(event.address)
    except KeyError:
        return f"0x{event.address:08X} = 0x{event.value:X}"
    fields = " ".join(f"{f.name}={f.text}" for f in regtable.decode_fields(reg, event.value).fields)
    return f"{reg.name} = 0x{event.value:X}" + (f" ({fields})" if fields else "")


def describe(event: pica.Event) -> str:
    """One line naming a capture event and its main parameters (addresses in hex): listings, errors, the GUI."""
    name = type(event).__name__
    if isinstance(event, pica.CommandList):
        return f"{name} 0x{event.address:08X} ({event.size} bytes)"
    if isinstance(event, pica.MemoryWrite):
        return f"{name} 0x{event.address:08X} (blob {event.blob})"
    if isinstance(event, pica.MemoryFill):
        return f"{name} " + ", ".join(f"0x{u.start:08X}..0x{u.end:08X}={u.value:08X}" for u in event.units)
    if isinstance(event, pica.DisplayTransfer | pica.TextureCopy):
        return f"{name} 0x{event.src:08X} -> 0x{event.dst:08X}"
    if isinstance(event, pica.RequestDma):
        return f"{name} 0x{event.src:08X} -> 0x{event.dst:08X} ({event.size} bytes)"
    if isinstance(event, pica.FlushCacheRegions):
        used = [f"0x{a:08X} ({n} bytes)" for a, n in event.regions if n]
        return f"{name} " + (", ".join(used) or "nothing")
    if isinstance(event, pica.Present):
        return f"{name} screen {event.screen} 0x{event.left:08X}"
    if isinstance(event, pica.RegWrite):
        return f"{name} {_register_write_text(event)}"
    if isinstance(event, pica.Marker):
        return f"{name} {event.text!r}"
    parts = [f"{key}={value}" if key in DECIMAL_FIELDS else f"{key}=0x{value:X}" for key, value in vars(event).items()]
    return " ".join([name, *parts])


@dataclass(frozen=True)
class EventInfo:
    """One capture event as the replay indexed it: its index, kind (the event type's name), frame, one-line text,
    the draws it triggered; the debugger's timeline adds the packets the command processor ran for it (following
    jumps; ``PacketEvent``) and whether it is a command list."""

    index: int
    kind: str
    frame: int
    text: str
    packets: tuple[PacketEvent, ...] = ()
    draws: tuple[int, ...] = ()
    is_list: bool = False


@dataclass
class DrawRecord:
    """One draw as the replay saw it: the one record of a draw that the replay, the debugger's timeline, the API,
    the CLI and the GUI share (``Replay.draws``, ``Timeline.draws``)."""

    index: int
    event: int
    offset: int  # byte offset of the trigger packet in its buffer
    kind: str
    stats: dict[str, int | float] = field(default_factory=dict)
    bounds: tuple[int, int, int, int] | None = None  # window pixels its triangles can cover (``DrawCall.bounds``)
    packet: int = -1  # index of its trigger packet in its event's command list (-1: not inside a list)
    frame: int = 0  # frames ended before its event
    nonfinite: bool = False  # its vertex-shader outputs held NaN/inf (noted while the debugger indexes)
    route: str = ""  # how it ran: ``picaemu.draw.ROUTE_COMPILED`` or "reference: <reason>" (``DrawCall.route``)
    call_site: pica.CallSite | None = None  # where the program made it (``record --call-sites``; None: not recorded)

    @property
    def list_packet(self) -> int:
        """Index of the trigger packet in its event's packets; 0 when the draw was not triggered inside a list."""
        return max(self.packet, 0)

    def may_cover(self, pixel: tuple[int, int]) -> bool:
        """Whether the draw's triangles can reach window pixel ``pixel`` (its bounds hold it)."""
        if self.bounds is None:
            return False
        x0, y0, x1, y1 = self.bounds
        return x0 <= pixel[0] <= x1 and y0 <= pixel[1] <= y1


class DrawRecords(Sequence[DrawRecord]):
    """A replay's ``draws``: its ``DrawRecord`` in draw order. The draws of a compiled loop call arrive as a batch
    (``defer``: their count and a function that makes their records from a copy of the loop's rows) and become
    records when the sequence is first read past its length: a forward run that reads no record makes none
    (~3 us a draw)."""

    def __init__(self) -> None:
        self._records: list[DrawRecord] = []
        self._deferred: list[Callable[[], list[DrawRecord]]] = []
        self._count = 0

    def _settle(self) -> list[DrawRecord]:
        for make in self._deferred:
            self._records.extend(make())
        self._deferred.clear()
        return self._records

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> DrawRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[DrawRecord]: ...
    def __getitem__(self, i: int | slice) -> DrawRecord | list[DrawRecord]:
        return self._settle()[i]

    def __iter__(self) -> Iterator[DrawRecord]:
        return iter(self._settle())

    def append(self, record: DrawRecord) -> None:
        self._settle().append(record)
        self._count += 1

    def defer(self, count: int, make: Callable[[], list[DrawRecord]]) -> None:
        """The next ``count`` records are ``make()``'s, made when first read."""
        self._deferred.append(make)
        self._count += count

    def clear(self) -> None:
        self._records.clear()
        self._deferred.clear()
        self._count = 0
