"""GX commands as an application hands them to GSP: eight 32-bit words, decoded into ``.pica`` events and the
memory ranges the engine reads (CPU data the capture must hold) and writes (GPU output the replay reproduces).

Layout (3dbrew "GSP Shared Memory"; word 0 bits 0-7 = command id; addresses are application virtual addresses,
translated with ``picaemu.record.memmap``)::

    0 RequestDma          1 source, 2 destination, 3 size (bytes); 4-7 unused
    1 ProcessCommandList  1 address, 2 size (bytes), 3 flags (bit 0 -> update gas), 7 flush (non-zero)
    2 MemoryFill          1 start0, 2 value0, 3 end0, 4 start1, 5 value1, 6 end1, 7 control (low 16: unit 0,
                          high 16: unit 1); a unit whose start is 0 is skipped
    3 DisplayTransfer     1 input, 2 output, 3 input dims, 4 output dims, 5 flags
    4 TextureCopy         1 input, 2 output, 3 size, 4 input line, 5 output line, 6 flags
    5 FlushCacheRegions   1-6 three (address, size) pairs: no GPU work (a pair of size 0 is unused)

Sizes of transfer images come from the same tables the engines use (``picaemu.gx.engines``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from picaemu.errors import RecordError
from picaemu.formats import pica
from picaemu.gx import engines as E
from picaemu.record.memmap import to_physical
from picaemu.regs import access
from picaemu.regs.external import FILL_UNITS

COMMAND_WORDS = 8
COMMAND_BYTES = 4 * COMMAND_WORDS
ID_MASK = 0xFF
FILL_CONTROL_BITS, FILL_CONTROL_MASK = 16, 0xFFFF
UPDATE_GAS, FLUSH = 1, 2  # CommandList.flags bits
Range = tuple[int, int]  # (physical address, bytes)


class GxId(IntEnum):
    REQUEST_DMA = 0
    PROCESS_COMMAND_LIST = 1
    MEMORY_FILL = 2
    DISPLAY_TRANSFER = 3
    TEXTURE_COPY = 4
    FLUSH_CACHE_REGIONS = 5


@dataclass(frozen=True)
class GxCommand:
    """One decoded GX command: its event and the physical ranges the engine reads and writes."""

    id: GxId
    event: pica.Event
    reads: tuple[Range, ...] = ()
    writes: tuple[Range, ...] = ()


def _phys(word: int, size: int, what: str) -> int:
    return to_physical(word, max(size, 1), what)


def _list(w: list[int]) -> GxCommand:
    address, size = _phys(w[1], w[2], "command list"), w[2]
    flags = (w[3] & UPDATE_GAS) | (FLUSH if w[7] else 0)
    return GxCommand(GxId.PROCESS_COMMAND_LIST, pica.CommandList(address, size, flags))


def _fill(w: list[int]) -> GxCommand:
    units, writes = [], []
    for u, (start, value, end) in enumerate(((w[1], w[2], w[3]), (w[4], w[5], w[6]))):
        control = w[7] >> (FILL_CONTROL_BITS * u) & FILL_CONTROL_MASK
        if start == 0:
            units.append(pica.FillUnit(0, 0, 0, 0))
            continue
        if end <= start:
            raise RecordError(f"memory fill unit {u}: end 0x{end:08X} is not after start 0x{start:08X}")
        p = _phys(start, end - start, f"memory fill unit {u}")
        units.append(pica.FillUnit(p, p + end - start, value, control))
        if access.bits(control, f"{FILL_UNITS[u]}_CONTROL", "busy"):
            writes.append((p, end - start))
    return GxCommand(GxId.MEMORY_FILL, pica.MemoryFill((units[0], units[1])), writes=tuple(writes))


def transfer_sizes(in_dim: int, out_dim: int, flags_word: int) -> tuple[int, int]:
    """(input bytes, output bytes) of a display transfer (unknown pixel formats count 4 bytes a pixel)."""
    flags = E.TransferFlags.from_word(flags_word)
    sx, sy = E.SCALE_SHIFTS.get(flags.scale, (0, 0))
    (in_w, in_h), (out_w, out_h) = (
        (access.bits(d, "PPF_IN_DIM", "width"), access.bits(d, "PPF_IN_DIM", "height")) for d in (in_dim, out_dim)
    )
    in_bytes = in_w * in_h * E.BYTES_PER_PIXEL.get(flags.in_format, 4)
    out_px = (out_w >> sx) * (out_h >> sy)
    return in_bytes, out_px * E.BYTES_PER_PIXEL.get(flags.out_format, 4)


def _transfer(w: list[int]) -> GxCommand:
    in_bytes, out_bytes = transfer_sizes(w[3], w[4], w[5])
    src, dst = _phys(w[1], in_bytes, "display transfer input"), _phys(w[2], out_bytes, "display transfer output")
    return GxCommand(
        GxId.DISPLAY_TRANSFER,
        pica.DisplayTransfer(src, dst, w[3], w[4], w[5]),
        reads=((src, in_bytes),),
        writes=((dst, out_bytes),),
    )


def copy_span(size: int, line: int) -> int:
    """Bytes from the first to the last byte a texture copy of ``size`` bytes touches with ``line``
    (width | gap << 16, 16-byte units)."""
    size = size // E.COPY_UNIT * E.COPY_UNIT
    width, gap = E.copy_line(line)
    if size == 0 or width == 0 or gap == 0:
        return size
    lines = -(-size // width)
    return (lines - 1) * (width + gap) + size - (lines - 1) * width


def _copy(w: list[int]) -> GxCommand:
    in_span, out_span = copy_span(w[3], w[4]), copy_span(w[3], w[5])
    src, dst = _phys(w[1], in_span, "texture copy input"), _phys(w[2], out_span, "texture copy output")
    return GxCommand(
        GxId.TEXTURE_COPY,
        pica.TextureCopy(src, dst, w[3], w[4], w[5], w[6]),
        reads=((src, in_span),),
        writes=((dst, out_span),),
    )


def _dma(w: list[int]) -> GxCommand:
    src, dst = _phys(w[1], w[3], "DMA source"), _phys(w[2], w[3], "DMA destination")
    return GxCommand(GxId.REQUEST_DMA, pica.RequestDma(src, dst, w[3]), reads=((src, w[3]),), writes=((dst, w[3]),))


def _flush(w: list[int]) -> GxCommand:
    pairs = [(w[i], w[i + 1]) for i in (1, 3, 5)]
    regions = tuple((_phys(a, n, f"cache flush region {k}"), n) if n else (0, 0) for k, (a, n) in enumerate(pairs))
    return GxCommand(GxId.FLUSH_CACHE_REGIONS, pica.FlushCacheRegions(regions))


DECODERS = {
    GxId.REQUEST_DMA: _dma,
    GxId.PROCESS_COMMAND_LIST: _list,
    GxId.MEMORY_FILL: _fill,
    GxId.DISPLAY_TRANSFER: _transfer,
    GxId.TEXTURE_COPY: _copy,
    GxId.FLUSH_CACHE_REGIONS: _flush,
}


def decode(data: bytes) -> GxCommand:
    """The GX command in the 32 bytes ``data`` (little-endian words); ``RecordError`` for an unknown id or an
    address outside GPU-visible memory."""
    if len(data) != COMMAND_BYTES:
        raise RecordError(f"a GX command is {COMMAND_BYTES} bytes, got {len(data)}")
    words = [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(COMMAND_WORDS)]
    code = words[0] & ID_MASK
    if code not in GxId.__members__.values():
        raise RecordError(f"unknown GX command id 0x{code:02X}")
    return DECODERS[GxId(code)](words)
