"""The debugger's index of a capture: positions (``Cursor``), events, packets, draws, register writes, and the
navigation and breakpoint rules over them.

A ``Cursor(event, packet)`` is a replay position: ``event`` events fully applied, plus the first ``packet``
packets of command-list event ``event`` (0 = none). Cursors are normalized (``packet`` is never the packet count
of its event: that is ``Cursor(event + 1, 0)``) and ordered, so "forward" is ``>``.

``Timeline`` is built once per capture by ``Session.index`` and is immutable afterwards:

- ``events``: ``EventInfo`` per capture event (kind, frame, one-line text, the packets the command processor
  ran for it, following jumps, as ``PacketEvent``, and the draws it triggered);
- ``draws``: the replay's own ``picaemu.replay.DrawRecord`` per draw (global index, event, index of the trigger
  packet in its event, frame, kind, the pipeline's counters, screen bounds, ``nonfinite``: vertex-shader outputs
  held NaN/inf);
- ``writes``: (W, 4) int64 rows ``event, packet index, register id, value`` of every register write.

Stepping (``step(cursor, unit, direction)``) moves by packet, draw, command list or frame; breakpoints
(``Breakpoint``) turn into sorted hit cursors so "continue" is a search, not a replay.
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, field
from enum import Enum
from functools import cached_property

import numpy as np

from picaemu import regs as regtable
from picaemu.errors import PicaError
from picaemu.replay.records import DrawRecord, EventInfo


@dataclass(frozen=True, order=True)
class Cursor:
    event: int
    packet: int = 0

    def text(self) -> str:
        return f"event {self.event}" + (f" + {self.packet} packets" if self.packet else "")


class Unit(Enum):
    PACKET = "packet"
    DRAW = "draw"
    LIST = "command list"
    FRAME = "frame"


@dataclass(frozen=True)
class Timeline:
    events: tuple[EventInfo, ...]
    draws: tuple[DrawRecord, ...]
    writes: np.ndarray  # (W, 4) int64: event, packet index, register id, value
    frame_ends: tuple[int, ...]  # event index of every FrameEnd
    _stops: dict = field(default_factory=dict, compare=False, repr=False)  # cache of ``stops``

    @property
    def end(self) -> Cursor:
        return Cursor(len(self.events), 0)

    def normalize(self, event: int, packet: int) -> Cursor:
        """The cursor after ``packet`` packets of ``event`` (rolls over to the next event at the end)."""
        if not 0 <= event <= len(self.events):
            raise PicaError(f"event {event} outside 0..{len(self.events)}")
        if event < len(self.events) and packet >= max(1, len(self.events[event].packets)):
            return Cursor(event + 1, 0)
        return Cursor(event, max(0, packet) if event < len(self.events) else 0)

    def before_draw(self, draw: int) -> Cursor:
        """The position right before draw ``draw``'s trigger packet."""
        d = self.draws[draw]
        return Cursor(d.event, d.list_packet)

    def after_draw(self, draw: int) -> Cursor:
        d = self.draws[draw]
        return self.normalize(d.event, d.list_packet + 1)

    def frame_of(self, cursor: Cursor) -> int:
        return bisect.bisect_left(self.frame_ends, cursor.event)

    def frame_start(self, frame: int) -> Cursor:
        """The position right after the FrameEnd of ``frame - 1`` (the start for frame 0)."""
        return Cursor(self.frame_ends[frame - 1] + 1, 0) if frame else Cursor(0, 0)

    def frame_shown(self, cursor: Cursor) -> int:
        """The frame whose draws ``cursor`` comes after: ``frame_of``, except right after a FrameEnd, where it is
        the frame that just ended (what the buffers and the screens still show)."""
        frame = self.frame_of(cursor)
        return frame - 1 if frame and cursor == self.frame_start(frame) else frame

    @cached_property
    def _draw_ends(self) -> list[Cursor]:
        return [self.after_draw(d.index) for d in self.draws]

    def draw_count_before(self, cursor: Cursor) -> int:
        """How many draws have run at ``cursor``."""
        return bisect.bisect_right(self._draw_ends, cursor)

    def last_draw(self, cursor: Cursor) -> int | None:
        """Index of the last draw that has run at ``cursor`` (None before the first)."""
        n = self.draw_count_before(cursor)
        return n - 1 if n else None

    # -- stepping ----------------------------------------------------------------------------------------
    def stops(self, unit: Unit) -> list[Cursor]:
        """Every cursor a step of ``unit`` can land on, sorted (the start and the end included)."""
        if unit in self._stops:
            return self._stops[unit]
        if unit is Unit.PACKET:
            out = [Cursor(e.index, k) for e in self.events for k in range(max(1, len(e.packets)))]
        elif unit is Unit.DRAW:
            out = [self.after_draw(d.index) for d in self.draws]
        elif unit is Unit.LIST:
            out = [Cursor(e.index + 1, 0) for e in self.events if e.is_list]
        else:
            out = [Cursor(f + 1, 0) for f in self.frame_ends]
        self._stops[unit] = sorted({Cursor(0, 0), self.end, *out})
        return self._stops[unit]

    def step(self, cursor: Cursor, unit: Unit, forward: bool = True) -> Cursor:
        """The next (or previous) stop of ``unit`` from ``cursor``; stays put at either end."""
        return self.seek(self.stops(unit), cursor, forward)

    @staticmethod
    def seek(stops: list[Cursor], cursor: Cursor, forward: bool) -> Cursor:
        if forward:
            i = bisect.bisect_right(stops, cursor)
            return stops[i] if i < len(stops) else cursor
        i = bisect.bisect_left(stops, cursor)
        return stops[i - 1] if i > 0 else cursor


class BreakKind(Enum):
    DRAW = "draw"
    FRAME_END = "frame end"
    COMMAND_LIST = "command list"
    GX_COMMAND = "GX command"
    REGISTER_WRITE = "register write"
    SHADER_NONFINITE = "shader NaN/inf"


_GX_KINDS = (
    "CommandList",
    "MemoryFill",
    "DisplayTransfer",
    "TextureCopy",
    "RequestDma",
    "FlushCacheRegions",
    "Present",
    "RegWrite",
)


@dataclass(frozen=True)
class Breakpoint:
    """One breakpoint. ``register``: name or id text for REGISTER_WRITE; ``value``: optional condition on the written
    word (the parameter word as the packet carries it), under ``mask`` when given (``word & mask == value & mask``);
    ``field`` + ``equals``: a condition on one field of the written word instead, by its raw number or its meaning
    (an enum name such as ``GREATER``, a float, true/false); ``draw``: a draw number for DRAW (None = every draw)."""

    kind: BreakKind
    register: str = ""
    value: int | None = None
    draw: int | None = None
    enabled: bool = True
    mask: int | None = None
    field: str = ""
    equals: str = ""

    def text(self) -> str:
        if self.kind is BreakKind.REGISTER_WRITE:
            cond = f" == 0x{self.value:X}" if self.value is not None else ""
            if self.value is not None and self.mask is not None:
                cond = f" & 0x{self.mask:X}{cond}"
            if self.field:
                cond += f" with {self.field} == {self.equals}"
            return f"write to {self.register}{cond}"
        if self.kind is BreakKind.DRAW and self.draw is not None:
            return f"draw {self.draw}"
        return self.kind.value

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kind"] = self.kind.value
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Breakpoint:
        return cls(
            BreakKind(d["kind"]),
            str(d.get("register", "")),
            d.get("value"),
            d.get("draw"),
            bool(d.get("enabled", True)),
            d.get("mask"),
            str(d.get("field", "")),
            str(d.get("equals", "")),
        )

    def validate(self) -> None:
        """``PicaError`` when the breakpoint names no register the table knows, a field it does not have, or a value
        the field cannot hold (an enum name the table does not define: the message lists the valid ones)."""
        if self.kind is BreakKind.REGISTER_WRITE:
            reg_id = register_id(self.register)
            if self.field:
                field_equals(_field(reg_id, self.field), 0, self.equals)

    def matches(self, reg_id: int, word: int) -> bool:
        """Whether a write of ``word`` to ``reg_id`` meets the value / mask / field conditions."""
        if self.value is not None:
            mask = 0xFFFFFFFF if self.mask is None else self.mask
            if word & mask != self.value & mask:
                return False
        if self.field:
            fld = _field(reg_id, self.field)
            return field_equals(fld, fld.extract(word), self.equals)
        return True

    def hits(self, tl: Timeline) -> list[Cursor]:
        """Every cursor where this breakpoint stops (after the draw / write, before the list / GX command)."""
        return _HITS[self.kind](self, tl)


def _hit_draws(bp: Breakpoint, tl: Timeline) -> list[Cursor]:
    return [tl.after_draw(d.index) for d in tl.draws if bp.draw is None or d.index == bp.draw]


def register_id(text: str, what: str = "breakpoint") -> int:
    """The register id a breakpoint (or ``what``) names (table name, SDK alias or number); ``PicaError`` for
    anything else."""
    text = text.strip()
    try:
        reg_id = int(text, 0) if text[:1].isdigit() else regtable.id_of(text)
    except (KeyError, ValueError):
        raise PicaError(f"{what} names no register: {text!r}") from None
    if not 0 <= reg_id < regtable.NUM_REGS:
        raise PicaError(f"{what} names no register: {text!r} (ids are 0x000-0x{regtable.NUM_REGS - 1:03X})")
    return reg_id


def field_equals(fld: regtable.Field, raw: int, wanted: str) -> bool:
    """Whether field value ``raw`` is ``wanted``: true/false, a raw number, a float (float fields), or an enum name in
    any spelling the table's name has (``regtable.Field.enum_raw``). ``PicaError`` for text the field cannot
    hold, naming the valid enum names."""
    text = wanted.strip()
    meaning = fld.interpret(raw)
    if text.lower() in ("true", "false"):
        return bool(meaning) == (text.lower() == "true")
    try:
        return raw == int(text, 0)
    except ValueError:
        pass
    if fld.enum is not None:
        wanted_raw = fld.enum_raw(text)
        if wanted_raw is None:
            raise PicaError(f"field {fld.name} has no value {text!r} (valid: {', '.join(fld.enum_names())})")
        return raw == wanted_raw
    try:
        return isinstance(meaning, float) and meaning == float(text)
    except ValueError:
        raise PicaError(f"field {fld.name} ({fld.type.value}) cannot be {text!r}: give a number") from None


def _field(reg_id: int, name: str) -> regtable.Field:
    """Field ``name`` of register ``reg_id``; ``PicaError`` naming both when the table has no such field."""
    reg = regtable.get(reg_id)
    try:
        return reg.field(name.strip())
    except KeyError:
        fields = ", ".join(f.name for f in reg.fields)
        raise PicaError(f"register {reg.name} has no field {name!r} (fields: {fields})") from None


def _hit_writes(bp: Breakpoint, tl: Timeline) -> list[Cursor]:
    reg_id = register_id(bp.register)
    rows = tl.writes[tl.writes[:, 2] == reg_id] if len(tl.writes) else tl.writes
    return [tl.normalize(int(e), int(p) + 1) for e, p, _, v in rows if bp.matches(reg_id, int(v) & 0xFFFFFFFF)]


_HITS = {
    BreakKind.DRAW: _hit_draws,
    BreakKind.FRAME_END: lambda bp, tl: [Cursor(f + 1, 0) for f in tl.frame_ends],
    BreakKind.COMMAND_LIST: lambda bp, tl: [Cursor(e.index, 0) for e in tl.events if e.is_list],
    BreakKind.GX_COMMAND: lambda bp, tl: [Cursor(e.index, 0) for e in tl.events if e.kind in _GX_KINDS],
    BreakKind.REGISTER_WRITE: _hit_writes,
    BreakKind.SHADER_NONFINITE: lambda bp, tl: [tl.after_draw(d.index) for d in tl.draws if d.nonfinite],
}


def breakpoint_stops(breakpoints: list[Breakpoint], tl: Timeline) -> list[Cursor]:
    """Sorted hit cursors of every enabled breakpoint."""
    return sorted({c for bp in breakpoints if bp.enabled for c in bp.hits(tl)})
