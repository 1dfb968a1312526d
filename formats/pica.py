"""The ``.pica`` capture format, version 1: bytes <-> ``Capture`` (typed objects, no emulation).

A capture is an initial state plus an ordered event stream, the ATTILA trace idea applied to the 3DS GPU.
Full layout in docs/pica-format.md. All integers little-endian::

    header   8 s magic b"PICAcap\\x1a", u16 major (1), u16 minor (1), u32 section count
    section  4 s tag, u8 codec (0 raw, 1 zstd, 2 zlib), 3 pad, u64 raw size, u64 stored size, u32 CRC-32 of the
             stored bytes, then the stored bytes. Tags, in this order: META, STAT, BLOB, EVNT, then the optional
             CALL (per-draw call sites, ``pica_calls``); unknown tags skip.
    META     u16 count, then (u16-prefixed utf-8 key, u32-prefixed utf-8 value) pairs; keys in use: ``source``,
             ``scene``, ``shader_names`` (optional JSON: uniform names of bound programs, ``picaemu.shader.names``)
    STAT     the fixed arrays of ``InitialState`` (``STATE_ARRAYS``, in order), u32 block count,
             (u32 physical address, u32 blob index) per initial memory block
    BLOB     u32 count, per blob (u8 codec, u64 raw size, u64 stored size, u64 offset from the data start), data;
             every blob is compressed on its own and stored once (deduplicated by SHA-256 on write)
    EVNT     u32 count, then events: u8 type + body (``EventType`` and ``BODIES`` in ``pica_events``, re-exported)

Arrays (``InitialState``): ``regs`` (0x300,) u32 internal registers by id; ``vs_code``/``gs_code`` (4096,) u32;
``vs_opdescs``/``gs_opdescs`` (128,) u32; ``vs_uniforms``/``gs_uniforms`` (96, 4) f32; ``lighting_luts`` (24, 256)
u32; ``fog_lut`` (128,) u32; ``proctex_luts`` (6, 256) u32; ``gas_lut`` (16,) u32; ``fixed_attribs`` (16, 4) f32;
``gpu_regs`` (0x1000,) u32 external GPU registers (word i = physical 0x10400000 + 4i); ``lcd_regs`` (0x400,) u32
(0x10202000 + 4i).

``read``/``parse`` check every size against the bytes that remain before allocating and raise ``FormatError``
with the byte offset of the fault (inside a compressed section: the section header's offset, and the byte within
the decompressed section in the message); with ``strict=False`` a damaged event stream yields the events before
the fault and ``Capture.damage`` holds the error. ``write`` is atomic (temporary file in the same folder + rename);
``build``/``write`` first merge consecutive address-contiguous memory writes into one (``merged``; the replayed
memory is the same) and store only the blobs the capture uses.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import construct as cs
import numpy as np
from picaemu.formats import pica_calls
from picaemu.formats.files import write_atomic
from picaemu.formats.memory_runs import merge_writes
from picaemu.formats.pica_calls import CallFrame, CallSite
from picaemu.formats.pica_events import (
    BODIES,
    CACHE_REGIONS,
    TYPE_OF,
    CommandList,
    DisplayTransfer,
    Event,
    EventType,
    FillUnit,
    FlushCacheRegions,
    FrameEnd,
    Marker,
    MemoryFill,
    MemoryWrite,
    Present,
    RegWrite,
    RequestDma,
    TextureCopy,
    compiled_body,
    event_fields,
    event_from,
)
from picaemu.formats.pica_io import MAX_SECTION_BYTES, Codec, Reader, compress, decompress

from picaemu.errors import FormatError

MAGIC = b"PICAcap\x1a"
VERSION_MAJOR = 1
VERSION_MINOR = 1  # 1.1: RequestDma and FlushCacheRegions events
MINOR_1_EVENTS = (RequestDma, FlushCacheRegions)  # a file holding one is written as 1.1
MAX_BLOBS = 1 << 20
MAX_META_ENTRIES = 4096


__all__ = [
    "CACHE_REGIONS",
    "MAGIC",
    "BlobStore",
    "CallFrame",
    "CallSite",
    "Capture",
    "Codec",
    "CommandList",
    "DisplayTransfer",
    "Event",
    "EventType",
    "FillUnit",
    "FlushCacheRegions",
    "FrameEnd",
    "InitialState",
    "Marker",
    "MemoryFill",
    "MemoryWrite",
    "Present",
    "RegWrite",
    "RequestDma",
    "TextureCopy",
    "build",
    "merged",
    "parse",
    "read",
    "write",
    "write_atomic",
]


# name -> (dtype, shape) of every fixed array of the initial state, in file order
STATE_ARRAYS: dict[str, tuple[str, tuple[int, ...]]] = {
    "regs": ("<u4", (0x300,)),
    "vs_code": ("<u4", (4096,)),
    "vs_opdescs": ("<u4", (128,)),
    "vs_uniforms": ("<f4", (96, 4)),
    "gs_code": ("<u4", (4096,)),
    "gs_opdescs": ("<u4", (128,)),
    "gs_uniforms": ("<f4", (96, 4)),
    "lighting_luts": ("<u4", (24, 256)),
    "fog_lut": ("<u4", (128,)),
    "proctex_luts": ("<u4", (6, 256)),
    "gas_lut": ("<u4", (16,)),
    "fixed_attribs": ("<f4", (16, 4)),
    "gpu_regs": ("<u4", (0x1000,)),
    "lcd_regs": ("<u4", (0x400,)),
}


def _zeros(name: str) -> Callable[[], np.ndarray]:
    dtype, shape = STATE_ARRAYS[name]
    return lambda: np.zeros(shape, np.dtype(dtype).newbyteorder("="))


@dataclass
class InitialState:
    """Everything the GPU holds before the first event (see the module docstring for shapes)."""

    regs: np.ndarray = field(default_factory=_zeros("regs"))
    vs_code: np.ndarray = field(default_factory=_zeros("vs_code"))
    vs_opdescs: np.ndarray = field(default_factory=_zeros("vs_opdescs"))
    vs_uniforms: np.ndarray = field(default_factory=_zeros("vs_uniforms"))
    gs_code: np.ndarray = field(default_factory=_zeros("gs_code"))
    gs_opdescs: np.ndarray = field(default_factory=_zeros("gs_opdescs"))
    gs_uniforms: np.ndarray = field(default_factory=_zeros("gs_uniforms"))
    lighting_luts: np.ndarray = field(default_factory=_zeros("lighting_luts"))
    fog_lut: np.ndarray = field(default_factory=_zeros("fog_lut"))
    proctex_luts: np.ndarray = field(default_factory=_zeros("proctex_luts"))
    gas_lut: np.ndarray = field(default_factory=_zeros("gas_lut"))
    fixed_attribs: np.ndarray = field(default_factory=_zeros("fixed_attribs"))
    gpu_regs: np.ndarray = field(default_factory=_zeros("gpu_regs"))
    lcd_regs: np.ndarray = field(default_factory=_zeros("lcd_regs"))
    memory: list[tuple[int, int]] = field(default_factory=list)  # (physical address, blob index)


# --------------------------------------------------------------------------------------------------- blobs
class BlobStore:
    """Distinct memory contents, by index. ``add`` deduplicates; reading decompresses lazily (and checks)."""

    def __init__(self) -> None:
        self._raw: list[bytes | None] = []
        self._stored: list[tuple[Codec, int, bytes, int]] = []  # codec, raw size, stored bytes, file offset
        self._index: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self._raw)

    def add(self, data: bytes) -> int:
        """Index of ``data`` (stored once)."""
        key = hashlib.sha256(data).digest()
        if key not in self._index:
            self._index[key] = len(self._raw)
            self._raw.append(bytes(data))
            self._stored.append((Codec.RAW, len(data), b"", -1))
        return self._index[key]

    def size(self, index: int) -> int:
        return self._stored[index][1]

    def __getitem__(self, index: int) -> bytes:
        raw = self._raw[index]
        if raw is None:
            codec, raw_size, stored, offset = self._stored[index]
            raw = decompress(codec, stored, raw_size, offset)
            self._raw[index] = raw
        return raw

    def _add_stored(self, codec: Codec, raw_size: int, stored: bytes, offset: int) -> None:
        self._raw.append(None)
        self._stored.append((codec, raw_size, stored, offset))


@dataclass
class Capture:
    """A whole capture: metadata, initial state, memory contents and the event stream."""

    meta: dict[str, str] = field(default_factory=dict)
    state: InitialState = field(default_factory=InitialState)
    blobs: BlobStore = field(default_factory=BlobStore)
    events: list[Event] = field(default_factory=list)
    damage: FormatError | None = None  # set by a non-strict read that stopped at a fault
    call_sites: dict[int, CallSite] = field(default_factory=dict)  # draw index -> where the program made it


# ------------------------------------------------------------------------------------------------- sections
_U32 = cs.Int32ul
_HEADER = cs.Struct("magic" / cs.Bytes(8), "major" / cs.Int16ul, "minor" / cs.Int16ul, "count" / _U32)
_SECTION = cs.Struct(
    "tag" / cs.Bytes(4), "codec" / cs.Int8ul, cs.Padding(3), "raw_size" / cs.Int64ul,
    "stored_size" / cs.Int64ul, "crc" / _U32,
)  # fmt: skip
_META_KEY = cs.PascalString(cs.Int16ul, "utf8")
_META_VALUE = cs.PascalString(cs.Int32ul, "utf8")
_BLOB_ENTRY = cs.Struct("codec" / cs.Int8ul, "raw_size" / cs.Int64ul, "stored_size" / cs.Int64ul, "offset" / cs.Int64ul)
_STATE_BYTES = sum(np.dtype(dt).itemsize * int(np.prod(shape)) for dt, shape in STATE_ARRAYS.values())


def _parse_sections(data: bytes) -> dict[bytes, tuple[bytes, int, int, bool]]:
    """tag -> (raw payload, absolute offset of the stored bytes, offset of the section header, compressed);
    checks header, sizes and CRCs."""
    r = Reader(data)
    r.need(_HEADER.sizeof(), "file header")
    head = r.parse(_HEADER, "file header")
    if head.magic != MAGIC:
        raise FormatError(f"not a .pica capture (magic {head.magic!r})", offset=0)
    if head.major != VERSION_MAJOR:
        raise FormatError(
            f".pica version {head.major}.{head.minor} is not supported (need {VERSION_MAJOR}.x)", offset=8
        )
    sections: dict[bytes, tuple[bytes, int, int, bool]] = {}
    for _ in range(head.count):
        r.need(_SECTION.sizeof(), "section header")
        at = r.offset
        sec = r.parse(_SECTION, "section header")
        stored = r.take(sec.stored_size, f"section {sec.tag!r}")
        if zlib.crc32(stored) != sec.crc:
            raise FormatError(f"section {sec.tag!r} fails its CRC-32 check", offset=at)
        if sec.tag == b"BLOB" and sec.codec != Codec.RAW:
            raise FormatError("BLOB section must be stored raw", offset=at)
        payload = decompress(sec.codec, stored, sec.raw_size, at)
        sections[sec.tag] = (payload, at + _SECTION.sizeof(), at, sec.codec != Codec.RAW)
    missing = [t for t in (b"STAT", b"BLOB", b"EVNT") if t not in sections]
    if missing:
        raise FormatError(f"capture lacks section(s) {', '.join(t.decode() for t in missing)}", offset=r.offset)
    return sections


def _parse_meta(payload: bytes, base: int) -> dict[str, str]:
    r = Reader(payload, base)
    count = int.from_bytes(r.take(2, "META count"), "little")
    if count > MAX_META_ENTRIES:
        raise FormatError(f"{count} metadata entries", offset=base)
    meta = {}
    for _ in range(count):
        key = r.parse(_META_KEY, "metadata key")
        meta[key] = r.parse(_META_VALUE, "metadata value")
    return meta


def _parse_state(payload: bytes, base: int, nblobs: int) -> InitialState:
    r = Reader(payload, base)
    arrays = {}
    for name, (dtype, shape) in STATE_ARRAYS.items():
        nbytes = np.dtype(dtype).itemsize * int(np.prod(shape))
        arrays[name] = np.frombuffer(r.take(nbytes, f"state array {name}"), dtype).reshape(shape).astype(dtype[1:])
    count = r.u32("memory block count")
    r.need(8 * count, "memory block table")
    table = np.frombuffer(r.take(8 * count, "memory block table"), "<u4").reshape(count, 2)
    bad = np.flatnonzero(table[:, 1] >= nblobs) if count else np.zeros(0, np.intp)
    if len(bad):
        raise FormatError(
            f"initial memory block {bad[0]} names missing blob {table[bad[0], 1]}",
            offset=base + _STATE_BYTES + 4 + 8 * int(bad[0]),
        )
    return InitialState(**arrays, memory=[(int(a), int(b)) for a, b in table])


def _parse_blobs(payload: bytes, base: int) -> BlobStore:
    r = Reader(payload, base)
    count = r.u32("blob count")
    if count > MAX_BLOBS or count * _BLOB_ENTRY.sizeof() > r.remaining():
        raise FormatError(f"blob table of {count} entries does not fit", offset=base)
    entries = [(r.offset, r.parse(_BLOB_ENTRY, "blob entry")) for _ in range(count)]
    data_start = r.pos
    store = BlobStore()
    for at, e in entries:
        lo = data_start + e.offset
        if e.offset > len(payload) or lo + e.stored_size > len(payload) or e.codec not in tuple(Codec):
            raise FormatError("blob entry points outside the BLOB section", offset=at)
        if e.raw_size > MAX_SECTION_BYTES:
            raise FormatError(f"blob of {e.raw_size} bytes is implausibly large", offset=at)
        store._add_stored(Codec(e.codec), e.raw_size, payload[lo : lo + e.stored_size], base + lo)
    return store


def _parse_events(payload: bytes, base: int, nblobs: int, strict: bool) -> tuple[list[Event], FormatError | None]:
    r = Reader(payload, base)
    count = r.u32("event count")
    if count > r.remaining():
        raise FormatError(f"{count} events cannot fit in {r.remaining()} bytes", offset=base)
    events: list[Event] = []
    try:
        for _ in range(count):
            at = r.offset
            code = r.take(1, "event type")[0]
            if code not in EventType.__members__.values():
                raise FormatError(f"unknown event type {code}", offset=at)
            kind = EventType(code)
            fast = compiled_body(kind)
            body = fast[0] if fast is not None and r.remaining() >= fast[1] else BODIES[kind][1]
            event = event_from(kind, r.parse(body, f"{kind.name} event"), at)
            if isinstance(event, MemoryWrite) and event.blob >= nblobs:
                raise FormatError(f"memory write names missing blob {event.blob}", offset=at)
            events.append(event)
        if r.remaining():
            raise FormatError(f"{r.remaining()} stray bytes after the last event", offset=r.offset)
    except FormatError as err:
        if strict:
            raise
        return events, err
    return events, None


def _in_section(
    sections: dict[bytes, tuple[bytes, int, int, bool]], tag: bytes, parser: Callable[..., Any], *args: Any
) -> Any:
    """Run a section parser. Offsets inside a compressed section mean nothing in the file: such errors name the
    section header's offset and the byte inside the decompressed section."""
    payload, base, header_at, compressed = sections[tag]
    try:
        return parser(payload, base, *args)
    except FormatError as err:
        if not compressed or err.offset is None:
            raise
        inner = str(err).rsplit(" (byte offset", 1)[0]
        raise FormatError(
            f"{inner} [byte 0x{err.offset - base:X} of the decompressed {tag.decode()} section]", offset=header_at
        ) from None


def parse(data: bytes, *, strict: bool = True) -> Capture:
    """A ``Capture`` from the bytes of a .pica file (see the module docstring for the error contract)."""
    sections = _parse_sections(data)
    blobs = _in_section(sections, b"BLOB", _parse_blobs)
    meta = _in_section(sections, b"META", _parse_meta) if b"META" in sections else {}
    state = _in_section(sections, b"STAT", _parse_state, len(blobs))
    events, damage = _in_section(sections, b"EVNT", _parse_events, len(blobs), strict)
    if damage is not None and sections[b"EVNT"][3] and damage.offset is not None:
        base, header_at = sections[b"EVNT"][1], sections[b"EVNT"][2]
        inner = str(damage).rsplit(" (byte offset", 1)[0]
        damage = FormatError(
            f"{inner} [byte 0x{damage.offset - base:X} of the decompressed EVNT section]", offset=header_at
        )
    calls = _in_section(sections, pica_calls.TAG, pica_calls.parse) if pica_calls.TAG in sections else {}
    return Capture(meta, state, blobs, events, damage, calls)


def read(path: str | os.PathLike[str], *, strict: bool = True) -> Capture:
    """Read a .pica file; errors carry the path and the byte offset."""
    try:
        return parse(Path(path).read_bytes(), strict=strict)
    except FormatError as err:
        raise FormatError(str(err).split(" (")[0], offset=err.offset, path=str(path)) from None


# ------------------------------------------------------------------------------------------------- writing
def section(tag: bytes, payload: bytes, codec: Codec) -> bytes:
    stored = compress(codec, payload)
    head = _SECTION.build(
        {"tag": tag, "codec": codec, "raw_size": len(payload), "stored_size": len(stored), "crc": zlib.crc32(stored)}
    )
    return head + stored


def pack_blob(raw: bytes, codec: Codec) -> tuple[Codec, int, bytes]:
    """(codec used, raw size, stored bytes) of one blob: compressed when that is smaller, raw otherwise."""
    packed = compress(codec, raw)
    return (codec, len(raw), packed) if len(packed) < len(raw) else (Codec.RAW, len(raw), raw)


def blob_payload(packed: list[tuple[Codec, int, bytes]]) -> bytes:
    """The BLOB section's payload from every blob's ``pack_blob`` result, in index order."""
    entries, offset = [], 0
    for use, raw_size, stored in packed:
        entries.append(
            _BLOB_ENTRY.build({"codec": use, "raw_size": raw_size, "stored_size": len(stored), "offset": offset})
        )
        offset += len(stored)
    return _U32.build(len(packed)) + b"".join(entries) + b"".join(stored for _, _, stored in packed)


def _build_blobs(store: BlobStore, codec: Codec) -> bytes:
    return blob_payload([pack_blob(store[i], codec) for i in range(len(store))])


def build_state(state: InitialState) -> bytes:
    parts = []
    for name, (dtype, shape) in STATE_ARRAYS.items():
        arr = np.asarray(getattr(state, name))
        if arr.shape != shape:
            raise FormatError(f"state array {name} has shape {arr.shape}, expected {shape}")
        parts.append(arr.astype(dtype).tobytes())
    table = np.array(state.memory, "<u4").reshape(-1, 2)
    return b"".join(parts) + _U32.build(len(table)) + table.tobytes()


def event_bytes(i: int, event: Event) -> bytes:
    """Event #``i`` as stored in the EVNT section (type byte + body)."""
    kind = TYPE_OF[type(event)]
    try:
        return bytes([kind]) + BODIES[kind][1].build(event_fields(event))
    except cs.ConstructError as err:  # a field value the format cannot hold (e.g. 2**31 in a u8)
        raise FormatError(f"event #{i} ({type(event).__name__}) cannot be written: {err}") from None


def _build_events(events: list[Event]) -> bytes:
    return _U32.build(len(events)) + b"".join(event_bytes(i, e) for i, e in enumerate(events))


def merged(capture: Capture) -> Capture:
    """``capture`` with consecutive address-contiguous memory writes merged (``memory_runs.merge_writes``) and a
    blob store that holds only the blobs it uses (the same metadata, state arrays and other events)."""
    store = BlobStore()
    kept: dict[int, int] = {}

    def keep(index: int) -> int:
        if index not in kept:
            kept[index] = store.add(capture.blobs[index])
        return kept[index]

    memory = [(address, keep(blob)) for address, blob in capture.state.memory]
    events = merge_writes(capture.events, capture.blobs, keep, store.add)
    state = InitialState(**{**vars(capture.state), "memory": memory})
    return Capture(dict(capture.meta), state, store, events, capture.damage, dict(capture.call_sites))


def build(capture: Capture, *, codec: Codec = Codec.ZSTD, merge: bool = True) -> bytes:
    """The bytes of a .pica file for ``capture`` (``merge``: of ``merged(capture)``, see the module docstring)."""
    if merge:
        capture = merged(capture)
    return assemble(
        capture.meta,
        section(b"STAT", build_state(capture.state), codec),
        _build_blobs(capture.blobs, codec),
        _build_events(capture.events),
        capture.call_sites,
        any(isinstance(e, MINOR_1_EVENTS) for e in capture.events),
        codec,
    )


def assemble(
    meta: dict[str, str],
    state_section: bytes,
    blobs: bytes,
    events: bytes,
    call_sites: dict[int, CallSite],
    minor_1: bool,
    codec: Codec,
) -> bytes:
    """A .pica file from its parts: the metadata, the STAT section as built (``section``), the BLOB and EVNT
    payloads, the call sites (no CALL section without any) and whether a 1.1 event is there."""
    meta_payload = cs.Int16ul.build(len(meta)) + b"".join(
        _META_KEY.build(k) + _META_VALUE.build(v) for k, v in meta.items()
    )
    sections = [
        section(b"META", meta_payload, Codec.RAW),
        state_section,
        section(b"BLOB", blobs, Codec.RAW),
        section(b"EVNT", events, codec),
    ]
    if call_sites:  # optional: a capture without call sites stays byte for byte what it was
        sections.append(section(pica_calls.TAG, pica_calls.build(call_sites), codec))
    # 1.0 unless a 1.1 event is there: a capture without one stays readable by 1.0 readers, byte for byte
    minor = VERSION_MINOR if minor_1 else 0
    header = _HEADER.build({"magic": MAGIC, "major": VERSION_MAJOR, "minor": minor, "count": len(sections)})
    return header + b"".join(sections)


def write(path: str | os.PathLike[str], capture: Capture, *, codec: Codec = Codec.ZSTD, merge: bool = True) -> None:
    """Write ``capture`` to ``path`` atomically (``merge``: see ``build``)."""
    write_atomic(path, build(capture, codec=codec, merge=merge))
