"""Citra's CiTrace (.ctf) v1 GPU traces: bytes <-> ``CiTrace`` (typed objects, no emulation).

Layout (little-endian, reference citrace.md)::

    0x00 "CiTr"  0x04 u32 version (1)  0x08 u32 header size (100)
    0x0C 10 x (u32 offset, u32 size in u32 words): the initial-state arrays, named in ``ARRAYS`` order
    0x5C u32 stream offset  0x60 u32 stream element count
    stream: elements of u32 type + 16-byte payload
        0xE1 frame marker; 0xE2 memory load (u32 file offset, u32 size in bytes, u32 physical address, u32 pad)
        0xE3 register write, legacy layout: u32 physical address, u32 size tag 0xD1-0xD4 (8/16/32/64 bit), u64 value
        0xE3 register write, new layout:    u32 physical address, u32 value, 8 zero bytes

``parse`` tells the two layouts apart from the data: a trace is legacy when every register write carries a size
tag 0xD1-0xD4 at payload +4 (a trace without register writes counts as new). Register values stay as recorded;
the one unit difference between the layouts (the P3D command-list size register: bytes in legacy traces,
bytes >> 3 in new ones) is the converter's business (``picaemu.gx.convert``).

Arrays are raw uint32 words (float24 values sit in bits 0-23, as Citra stored them). Known real-world defects are
tolerated and reported in ``CiTrace.warnings``: an array whose offset/size points outside the file reads as
absent (``None``); an array longer than its hardware size keeps its first words (the rest must be zero, else a
warning). Everything else that is wrong raises ``FormatError`` with the byte offset; with ``strict=False`` a damaged
stream yields the elements before the fault and ``CiTrace.damage`` holds the error. ``build`` writes either
layout, one blob per distinct load content.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from pathlib import Path

import numpy as np

from picaemu.errors import FormatError

MAGIC = b"CiTr"
VERSION = 1
HEADER_SIZE = 100
ELEMENT_SIZE = 20
STREAM_FIELD = 0x5C

# array name -> hardware size in u32 words, in header order
ARRAYS: dict[str, int] = {
    "gpu_regs": 0x1000,
    "lcd_regs": 0x400,
    "pica_regs": 0x300,
    "default_attributes": 64,
    "vs_program": 4096,
    "vs_swizzle": 4096,
    "vs_uniforms": 384,
    "gs_program": 4096,
    "gs_swizzle": 4096,
    "gs_uniforms": 384,
}


class ElementType(IntEnum):
    FRAME_MARKER = 0xE1
    MEMORY_LOAD = 0xE2
    REGISTER_WRITE = 0xE3


class Layout(Enum):
    LEGACY = "legacy"  # 2015-2023: size tags, command-list size in bytes
    NEW = "new"  # after Citra PR #7272: plain u32 values, command-list size in bytes >> 3


SIZE_TAGS = {0xD1: 1, 0xD2: 2, 0xD3: 4, 0xD4: 8}  # legacy size tag -> width in bytes
TAG_OF_WIDTH = {w: t for t, w in SIZE_TAGS.items()}


@dataclass(frozen=True)
class FrameMarker:
    pass


@dataclass(frozen=True)
class MemoryLoad:
    """``data`` copied to physical ``address``."""

    address: int
    data: bytes


@dataclass(frozen=True)
class RegisterWrite:
    """A ``width``-byte write (1, 2, 4, 8; new-layout writes are 4) to the physical register ``address``."""

    address: int
    value: int
    width: int = 4


Element = FrameMarker | MemoryLoad | RegisterWrite


@dataclass
class CiTrace:
    """A parsed trace: initial-state arrays (raw u32, ``None`` when absent), elements, layout, diagnostics."""

    arrays: dict[str, np.ndarray | None] = field(default_factory=lambda: dict.fromkeys(ARRAYS))
    elements: list[Element] = field(default_factory=list)
    layout: Layout = Layout.NEW
    warnings: list[str] = field(default_factory=list)
    damage: FormatError | None = None


def _u32(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset : offset + 4], "little")


def _read_array(data: bytes, name: str, index: int, trace: CiTrace) -> None:
    field_at = 0x0C + 8 * index
    offset, words = _u32(data, field_at), _u32(data, field_at + 4)
    want = ARRAYS[name]
    if words == 0:
        return
    if offset < HEADER_SIZE or offset + 4 * words > len(data):
        trace.warnings.append(
            f"array {name} (offset 0x{offset:X}, {words} words, header byte 0x{field_at:X}) "
            "lies outside the file; read as absent"
        )
        return
    arr = np.frombuffer(data, "<u4", count=words, offset=offset).astype(np.uint32)
    if words > want and np.any(arr[want:]):
        trace.warnings.append(f"array {name} has {words} words with a non-zero tail past word {want}; tail dropped")
    if words < want:
        trace.warnings.append(f"array {name} has {words} words, fewer than {want}; the rest reads as zero")
        arr = np.concatenate([arr, np.zeros(want - words, np.uint32)])
    trace.arrays[name] = arr[:want]


def _detect_layout(raw: np.ndarray) -> Layout:
    """Legacy when every register write has a size tag at payload +4 (see the module docstring)."""
    writes = raw[raw[:, 0] == ElementType.REGISTER_WRITE]
    if len(writes) == 0:
        return Layout.NEW
    return Layout.LEGACY if np.isin(writes[:, 2], list(SIZE_TAGS)).all() else Layout.NEW


def _element(data: bytes, row: np.ndarray, layout: Layout, at: int) -> Element:
    kind = int(row[0])
    if kind == ElementType.FRAME_MARKER:
        return FrameMarker()
    if kind == ElementType.MEMORY_LOAD:
        blob, size, address = int(row[1]), int(row[2]), int(row[3])
        if blob < HEADER_SIZE or blob + size > len(data):
            raise FormatError(f"memory load of {size} bytes from file offset 0x{blob:X} runs past the end", offset=at)
        return MemoryLoad(address, data[blob : blob + size])
    if kind == ElementType.REGISTER_WRITE:
        if layout is Layout.NEW:
            return RegisterWrite(int(row[1]), int(row[2]))
        width = SIZE_TAGS[int(row[2])]
        value = int(row[3]) | int(row[4]) << 32
        return RegisterWrite(int(row[1]), value & ((1 << 8 * width) - 1), width)
    raise FormatError(f"unknown stream element type 0x{kind:X}", offset=at)


def parse(data: bytes, *, strict: bool = True) -> CiTrace:
    """A ``CiTrace`` from the bytes of a .ctf file (error contract in the module docstring)."""
    if len(data) < HEADER_SIZE:
        raise FormatError(f"file of {len(data)} bytes is shorter than the {HEADER_SIZE}-byte header", offset=0)
    if data[:4] != MAGIC:
        raise FormatError(f"not a CiTrace file (magic {data[:4]!r})", offset=0)
    if _u32(data, 4) != VERSION:
        raise FormatError(f"CiTrace version {_u32(data, 4)} is not supported (need 1)", offset=4)
    if _u32(data, 8) < HEADER_SIZE:
        raise FormatError(f"header size {_u32(data, 8)} is smaller than {HEADER_SIZE}", offset=8)
    trace = CiTrace()
    for i, name in enumerate(ARRAYS):
        _read_array(data, name, i, trace)
    start, count = _u32(data, STREAM_FIELD), _u32(data, STREAM_FIELD + 4)
    fits = max(0, (len(data) - start) // ELEMENT_SIZE) if HEADER_SIZE <= start <= len(data) else 0
    if start < HEADER_SIZE or start > len(data):
        raise FormatError(f"stream offset 0x{start:X} lies outside the file", offset=STREAM_FIELD)
    if count > fits:
        err = FormatError(f"stream of {count} elements runs past the end ({fits} fit)", offset=STREAM_FIELD + 4)
        if strict:
            raise err
        trace.damage, count = err, fits
    raw = np.frombuffer(data, "<u4", count=count * 5, offset=start).reshape(count, 5)
    trace.layout = _detect_layout(raw)
    for i, row in enumerate(raw):
        try:
            trace.elements.append(_element(data, row, trace.layout, start + ELEMENT_SIZE * i))
        except FormatError as err:
            if strict:
                raise
            trace.damage = err
            break
    return trace


def read(path: str | os.PathLike[str], *, strict: bool = True) -> CiTrace:
    """Read a .ctf file; errors carry the path and byte offset."""
    try:
        return parse(Path(path).read_bytes(), strict=strict)
    except FormatError as err:
        raise FormatError(str(err).split(" (")[0], offset=err.offset, path=str(path)) from None


# ------------------------------------------------------------------------------------------------- writing
def _payload(element: Element, layout: Layout, blob_offsets: dict[bytes, int]) -> list[int]:
    if isinstance(element, FrameMarker):
        return [ElementType.FRAME_MARKER, 0, 0, 0, 0]
    if isinstance(element, MemoryLoad):
        return [ElementType.MEMORY_LOAD, blob_offsets[element.data], len(element.data), element.address, 0]
    if layout is Layout.LEGACY:
        value = element.value
        return [
            ElementType.REGISTER_WRITE,
            element.address,
            TAG_OF_WIDTH[element.width],
            value & 0xFFFFFFFF,
            value >> 32 & 0xFFFFFFFF,
        ]
    if element.width != 4:
        raise FormatError(f"the new CiTrace layout cannot hold a {element.width}-byte register write")
    return [ElementType.REGISTER_WRITE, element.address, element.value & 0xFFFFFFFF, 0, 0]


def build(trace: CiTrace) -> bytes:
    """The bytes of a .ctf file in ``trace.layout`` (absent arrays get size 0, as Citra wrote the GS arrays)."""
    header = np.zeros(HEADER_SIZE // 4, np.uint32)
    header[0] = int.from_bytes(MAGIC, "little")
    header[1], header[2] = VERSION, HEADER_SIZE
    chunks: list[bytes] = []
    pos = HEADER_SIZE
    for i, name in enumerate(ARRAYS):
        arr = trace.arrays.get(name)
        arr = np.zeros(0, np.uint32) if arr is None else np.asarray(arr, np.uint32)
        header[3 + 2 * i], header[4 + 2 * i] = pos, arr.size
        chunks.append(arr.astype("<u4").tobytes())
        pos += 4 * arr.size
    blob_offsets: dict[bytes, int] = {}
    for element in trace.elements:
        if isinstance(element, MemoryLoad) and element.data not in blob_offsets:
            blob_offsets[element.data] = pos
            chunks.append(element.data)
            pos += len(element.data)
    header[STREAM_FIELD // 4], header[STREAM_FIELD // 4 + 1] = pos, len(trace.elements)
    rows = np.array([_payload(e, trace.layout, blob_offsets) for e in trace.elements], "<u4").reshape(-1, 5)
    return header.astype("<u4").tobytes() + b"".join(chunks) + rows.tobytes()
