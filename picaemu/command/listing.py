"""Listings of what a command buffer does: packets and register writes with decoded fields.

``ListingObserver`` collects events from a ``CommandProcessor``; ``StreamingListing`` formats each event as it
arrives and hands the lines to a callback (``picaemu decode``: memory stays flat however long the listing);
``packet_record`` / ``write_record`` turn events into JSON-ready dicts (the format ``picaemu decode --json``
prints) and ``packet_text`` / ``write_text`` into one-line text. Field meanings come from the register table;
FIFO payloads (data ports) are not field-decoded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from picaemu import regs as regtable
from picaemu.observer import Observer, PacketEvent, TriggerEvent, WriteEvent
from picaemu.regs import RegKind

JsonValue = int | float | bool | str | None


@dataclass
class ListingObserver(Observer):
    """Keeps every packet and write event, in order."""

    packets: list[PacketEvent] = field(default_factory=list)
    writes: list[WriteEvent] = field(default_factory=list)
    triggers: list[TriggerEvent] = field(default_factory=list)

    def on_packet(self, event: PacketEvent) -> None:
        self.packets.append(event)

    def on_write(self, event: WriteEvent) -> None:
        self.writes.append(event)

    def on_trigger(self, event: TriggerEvent) -> None:
        self.triggers.append(event)


class StreamingListing(Observer):
    """Formats every packet (or, with ``writes``, every register write) as text or JSON lines as it arrives and
    passes each line to ``emit``; nothing is kept."""

    def __init__(self, emit: Callable[[str], None], *, writes: bool = False, as_json: bool = False) -> None:
        self.emit, self.writes, self.as_json = emit, writes, as_json
        self.lines = 0

    def _out(self, line: str) -> None:
        self.emit(line)
        self.lines += 1

    def on_packet(self, event: PacketEvent) -> None:
        if self.writes:
            return
        if self.as_json:
            self._out(json.dumps(packet_record(event)))
        else:
            for line in packet_text(event):
                self._out(line)

    def on_write(self, event: WriteEvent) -> None:
        if self.writes:
            self._out(json.dumps(write_record(event)) if self.as_json else write_text(event))


def _json_safe(value: JsonValue) -> JsonValue:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _reg_name(reg_id: int) -> str:
    return regtable.get(reg_id).name if reg_id < regtable.NUM_REGS else f"UNKNOWN_0x{reg_id:03X}"


def decoded_fields(reg_id: int, value: int) -> dict[str, JsonValue]:
    """Field name -> meaning for one written value ({} for data ports and unknown registers)."""
    if reg_id >= regtable.NUM_REGS:
        return {}
    reg = regtable.get(reg_id)
    if reg.kind is RegKind.DATA_PORT or not reg.fields:
        return {}
    decoded = regtable.decode_fields(reg_id, value)
    out: dict[str, JsonValue] = {f.name: _json_safe(f.value) for f in decoded.fields}
    if decoded.uncovered:
        out["uncovered_bits"] = decoded.uncovered
    return out


def packet_targets(p: PacketEvent) -> list[int]:
    return [p.id + k if p.consecutive else p.id for k in range(len(p.params))]


def packet_record(p: PacketEvent) -> dict[str, object]:
    targets = packet_targets(p)
    return {
        "offset": p.offset,
        "id": p.id,
        "name": _reg_name(p.id),
        "mask": p.mask,
        "consecutive": p.consecutive,
        "params": list(p.params),
        "fields": [decoded_fields(t, v) for t, v in zip(targets, p.params, strict=True)],
    }


def write_record(w: WriteEvent) -> dict[str, object]:
    return {
        "offset": w.offset,
        "id": w.id,
        "name": _reg_name(w.id),
        "value": w.value,
        "mask": w.mask,
        "fields": decoded_fields(w.id, w.value),
    }


def fields_text(reg_id: int, value: int) -> str:
    """``name=meaning`` pairs of one written value ('' for data ports and unknown registers)."""
    if not decoded_fields(reg_id, value):
        return ""
    decoded = regtable.decode_fields(reg_id, value)
    text = " ".join(f"{f.name}={f.text}" for f in decoded.fields)
    return text + (f" uncovered_bits=0x{decoded.uncovered:08X}" if decoded.uncovered else "")


def packet_text(p: PacketEvent) -> list[str]:
    """The packet's row, then one indented line per written register that has decodable fields."""
    names = _reg_name(p.id)
    if p.consecutive and len(p.params) > 1:
        names += f" .. {_reg_name(p.id + len(p.params) - 1)}"
    mode = "incr" if p.consecutive else "same"
    values = " ".join(f"{v:08X}" for v in p.params)
    lines = [f"{p.offset:06X}  {names} (0x{p.id:03X}) mask={p.mask:X} {mode} n={len(p.params)}  {values}"]
    for target, value in zip(packet_targets(p), p.params, strict=True):
        fields = fields_text(target, value)
        if fields:
            lines.append(f"          {_reg_name(target)}: {fields}")
    return lines


def write_text(w: WriteEvent) -> str:
    fields = fields_text(w.id, w.value)
    text = f"{w.offset:06X}  {_reg_name(w.id)} (0x{w.id:03X}) mask={w.mask:X} {w.value:08X}"
    return text + (f"  {fields}" if fields else "")
