"""Listings of what a command buffer does: packets and register writes with decoded fields.

``ListingObserver`` collects events from a ``CommandProcessor`` and ``ListingWriter`` streams them as text or
JSON lines (``picaemu decode``: memory stays flat however long the listing);
``packet_record`` / ``write_record`` turn them into JSON-ready dicts (the format ``picaemu decode --json``
prints) and ``packet_text`` / ``write_text`` into one-line text. Field meanings come from the register table;
FIFO payloads (data ports) are not field-decoded.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from picaemu import regs as regtable
from picaemu.observer import Observer, PacketEvent, TriggerEvent, WriteEvent
from picaemu.regs import RegKind
from picaemu.regs.schema import Field

JsonValue = int | float | bool | str | None
WORDS_PER_VECTOR = {False: 3, True: 4}  # float-uniform FIFO words per vector: packed float24, float32 (mode bit)


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


class ListingWriter(Observer):
    """Formats events as they arrive and hands ``write`` the text in batches of lines (``picaemu decode``): a
    listing streams, and its memory does not grow with the list. Packets, or with ``writes`` register writes;
    text rows, or with ``as_json`` one JSON object per line. Call ``flush`` at the end."""

    def __init__(
        self, write: Callable[[str], None], *, writes: bool = False, as_json: bool = False, batch: int = 4096
    ) -> None:
        self._write = write
        self._writes = writes
        self._json = as_json
        self._batch = batch
        self._lines: list[str] = []

    def on_packet(self, event: PacketEvent) -> None:
        if self._writes:
            return
        if self._json:
            self._lines.append(json.dumps(packet_record(event)))
        else:
            self._lines.extend(packet_text(event))
        if len(self._lines) >= self._batch:
            self.flush()

    def on_write(self, event: WriteEvent) -> None:
        if not self._writes:
            return
        self._lines.append(json.dumps(write_record(event)) if self._json else write_text(event))
        if len(self._lines) >= self._batch:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            self._write("\n".join(self._lines))
            self._lines.clear()


def _json_safe(value: JsonValue) -> JsonValue:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _reg_name(reg_id: int) -> str:
    return regtable.get(reg_id).name if reg_id < regtable.NUM_REGS else f"UNKNOWN_0x{reg_id:03X}"


@functools.lru_cache(maxsize=1 << 16)
def _decoded(reg_id: int, value: int) -> tuple[tuple[tuple[str, JsonValue], ...], str]:
    """(field name, meaning) pairs and the ``name=text`` line of one written value, decoded once: lists write the
    same values over and over (matrices, TEV and texture setups per draw), and decoding is most of a listing."""
    if reg_id >= regtable.NUM_REGS:
        return (), ""
    reg = regtable.get(reg_id)
    if reg.kind is RegKind.DATA_PORT or not reg.fields:
        return (), ""
    decoded = regtable.decode_fields(reg_id, value)
    items = [(f.name, _json_safe(f.value)) for f in decoded.fields]
    text = " ".join(f"{f.name}={f.text}" for f in decoded.fields)
    if decoded.uncovered:
        items.append(("uncovered_bits", decoded.uncovered))
        text += f" uncovered_bits=0x{decoded.uncovered:08X}"
    return tuple(items), text


def decoded_fields(reg_id: int, value: int) -> dict[str, JsonValue]:
    """Field name -> meaning for one written value ({} for data ports and unknown registers)."""
    return dict(_decoded(reg_id, value)[0])


def fields_text(reg_id: int, value: int) -> str:
    """``name=meaning`` pairs of one written value ('' for data ports and unknown registers)."""
    return _decoded(reg_id, value)[1]


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


@dataclass
class _UploadUnit:
    """One unit's float-uniform upload state (``UniformUploads``): its index register's id and fields, its data
    registers, the row the upload has reached, the mode and the words of the vector under way."""

    index_id: int
    index: Field
    mode: Field
    data: frozenset[int]
    at: int = 0
    f32: bool = False
    words: list[int] = field(default_factory=list)


class UniformUploads:
    """Turns the float-uniform FIFO words of a command list into the vectors they upload: feed it packets in
    order (``lines(packet)``), it returns ``c5 = (x, y, z, w)`` lines for every vector a packet completes. Tracks
    each unit's ``FLOATUNIFORM_INDEX`` (index field, mode bit: float32 words, else packed float24) the way the
    command processor applies them: 3 words per float24 vector (W:Z:Y:X, most significant first), 4 float32 words
    per vector (W, Z, Y, X). ``rows(targets, values)`` follows the same rule over arrays of writes (the linter's
    packet scan: only where each vector lands)."""

    def __init__(self) -> None:
        self._units: dict[str, _UploadUnit] = {}
        for unit in ("VSH", "GSH"):
            index = regtable.by_name(f"{unit}_FLOATUNIFORM_INDEX")
            data = [r.id for r in regtable.all_registers() if r.name.startswith(f"GPUREG_{unit}_FLOATUNIFORM_DATA")]
            self._units[unit] = _UploadUnit(index.id, index.field("index"), index.field("mode"), frozenset(data))

    def vectors(self, p: PacketEvent) -> list[tuple[str, int, list[int], bool]]:
        """(unit "VSH" | "GSH", uniform row, words as uploaded, float32 mode) of every vector ``p`` completes;
        the row is the index as the upload reached it (rows past c95 included: the hardware drops those)."""
        if not p.consecutive:  # every word to one register: a FIFO's words at once
            return self._feed(p.id, p.params)
        out: list[tuple[str, int, list[int], bool]] = []
        for target, value in zip(packet_targets(p), p.params, strict=True):
            out += self._feed(target, (value,))
        return out

    def _feed(self, target: int, values: tuple[int, ...]) -> list[tuple[str, int, list[int], bool]]:
        """``values`` written one after the other to register ``target``."""
        out: list[tuple[str, int, list[int], bool]] = []
        for unit, u in self._units.items():
            if target == u.index_id:  # each write restarts the upload: the last one counts
                u.at, u.f32, u.words = u.index.extract(values[-1]), bool(u.mode.extract(values[-1])), []
            elif target in u.data:
                words, need = u.words, WORDS_PER_VECTOR[u.f32]
                words.extend(values)
                while len(words) >= need:
                    out.append((unit, u.at, words[:need], u.f32))
                    del words[:need]
                    u.at += 1
        return out

    def rows(self, targets: np.ndarray, values: np.ndarray) -> list[tuple[np.ndarray, str, np.ndarray]]:
        """The vectors that register writes ``targets`` (ids) / ``values`` (words), made one after the other,
        complete, as ``vectors`` would name them one write at a time (and the state it keeps advanced the same
        way): per unit with any, (positions in ``targets`` of the writes that complete a vector, unit, their
        rows)."""
        out: list[tuple[np.ndarray, str, np.ndarray]] = []
        for unit, u in self._units.items():
            at = np.flatnonzero((targets == u.index_id) | np.isin(targets, np.fromiter(u.data, np.int64)))
            if at.size == 0:
                continue
            index = targets[at] == u.index_id
            segment = np.cumsum(index)  # 0: the upload going on before these writes; k: from the k-th index write
            marks = values[at[index]].astype(np.int64)
            start = np.concatenate(([u.at], u.index.extract(marks)))
            f32 = np.concatenate(([u.f32], u.mode.extract(marks).astype(bool)))
            carry = np.zeros(start.size, np.int64)
            carry[0] = len(u.words)
            data = np.cumsum(~index)
            words = carry[segment] + data - np.concatenate(([0], data[index]))[segment]  # words of its upload so far
            need = np.where(f32, WORDS_PER_VECTOR[True], WORDS_PER_VECTOR[False])[segment]
            done = ~index & (words % need == 0)
            out.append((at[done], unit, start[segment[done]] + words[done] // need[done] - 1))
            last, total, k = int(segment[-1]), int(words[-1]), int(need[-1])
            held = (u.words if last == 0 else []) + values[at[~index & (segment == last)]].tolist()
            u.at, u.f32 = int(start[last]) + total // k, bool(f32[last])
            u.words = held[len(held) - total % k :]
        return out

    def lines(self, p: PacketEvent) -> list[str]:
        return [
            f"{unit.lower()} c{row} = ({', '.join(_vector(words, f32))})" for unit, row, words, f32 in self.vectors(p)
        ]


def _vector(words: list[int], f32: bool) -> list[str]:
    """x, y, z, w of one uploaded vector as text."""
    import numpy as np

    from picaemu.numeric import f24, unpack_f24_vec4

    if f32:
        values = np.array(words[::-1], np.uint32).view(np.float32).tolist()
    else:
        values = [float(f24(r)) for r in unpack_f24_vec4(*words)]
    return [f"{v:g}" for v in values]
