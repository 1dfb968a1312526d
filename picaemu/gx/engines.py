"""The external engines as functions over emulated memory: memory fill, display transfer, texture copy, and the
DMA copy of GX RequestDma.

Receives physical byte addresses and decoded parameters (``TransferFlags`` from the PPF flags word); reads and
writes ``PhysicalMemory`` in place, whole images at once (numpy gathers/scatters, no per-pixel Python).

- ``memory_fill``: bytes ``[start, end)`` get the 2/3/4-byte little-endian pattern of ``value``.
- ``display_transfer``: the input image (``in_w`` x ``in_h`` pixels, tiled 8x8 Morton or linear) is decoded
  with the input format to (H, W, 4) uint8 RGBA in memory-row order (row 0 first), box-filtered for 2x1 / 2x2
  downscale, cropped to the output size (top-left window), optionally flipped (output row y -> out_h - 1 - y;
  with the crop bit too, the output starts (in_w - out_w) (out_h - 1) pixels later: the hardware's skew),
  encoded with the output format and written tiled or linear. Pixel formats use the transfer enum (0 RGBA8,
  1 RGB8, 2 RGB565, 3 RGB5A1, 4 RGBA4) and the byte layouts of ``picaemu.fragment.framebuffer``. Flag bit 16 (32x32
  blocks) changes nothing, as on the console. A display transfer with flag bit 3 (raw copy) is a plain byte copy
  of the output's size, ``raw_copy_size``: no format conversion, no tiling change, whatever the other fields say
  (``picaemu.gx.mmio`` lowers it to the texture-copy registers).
- ``texture_copy``: a raw copy of ``size`` bytes (rounded down to 16) read in lines of ``in_width`` bytes with
  ``in_gap`` bytes skipped after each, written in lines of ``out_width`` / ``out_gap`` (gap 0 = contiguous).

- ``dma_copy``: ``size`` bytes from ``src`` to ``dst`` as they are (GX RequestDma, 3dbrew "GSP Shared Memory"
  command 0: words 1-3 = source, destination, size; the CPU-side DMA engine, no GPU register). Both ranges must
  lie inside one mapped region each (``MemoryFault`` otherwise) and a copy is at most ``MAX_DMA`` bytes.

Hardware behaviour that is not known or hangs the console raises ``GxError``: downscale mode 3, output larger
than input, a texture copy of size 0 or with a zero line width.
Conversions that do not raise the completion interrupt on hardware (RGB8 -> other, 16-bit -> RGBA8/RGB8) are
performed as Citra does and logged as a warning.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import numpy as np

from picaemu.fragment.framebuffer import ColorFormat, decode_color, encode_color, morton8
from picaemu.gx.transfer_layout import (
    BYTES_PER_PIXEL,
    SCALE_SHIFTS,
    TILE,
    GxError,
    TransferFlags,
    check_format,
    check_tiles,
    check_transfer,
    output_start,
)
from picaemu.gx.transfer_layout import raw_copy_size as raw_copy_size
from picaemu.memory import PhysicalMemory
from picaemu.regs import access

log = logging.getLogger("picaemu.gx")

TRANSFER_FORMATS = {
    0: ColorFormat.RGBA8,
    1: ColorFormat.RGB8,
    2: ColorFormat.RGB565,
    3: ColorFormat.RGB5A1,
    4: ColorFormat.RGBA4,
}
SIXTEEN_BIT = frozenset({2, 3, 4})
# pixel sizes that are whole little-endian words
WORD_DTYPES: dict[int, np.dtype] = {4: np.dtype("<u4"), 2: np.dtype("<u2")}
FILL_PATTERN_BYTES = {0: 2, 1: 3, 2: 4, 3: 3}  # PSCn_CONTROL.width code -> bytes of the repeated pattern
COPY_UNIT = 16  # texture copy sizes, line widths and gaps count 16-byte units
MAX_DMA = 16 << 20  # bytes: larger than VRAM (6 MiB), the usual destination; a bigger copy is a decoding fault


def memory_fill(memory: PhysicalMemory, start: int, end: int, value: int, width_code: int) -> None:
    """Fill ``[start, end)`` with the pattern of ``value`` (``width_code``: 0 16-bit, 1/3 24-bit, 2 32-bit)."""
    if end <= start:
        raise GxError(f"memory fill: end 0x{end:08X} is not after start 0x{start:08X}")
    pattern_len = FILL_PATTERN_BYTES[width_code & 3]
    pattern = np.frombuffer((value & 0xFFFFFFFF).to_bytes(4, "little")[:pattern_len], np.uint8)
    target = memory.bytes(start, end - start, "memory fill")
    # byte i gets pattern[i % pattern_len]: store the pattern once, then copy the filled prefix after itself (its
    # length stays a multiple of the pattern's), so a fill of N bytes is log2(N) block copies, not N/3 tiny stores
    done = min(pattern_len, target.size)
    target[:done] = pattern[:done]
    while done < target.size:
        step = min(done, target.size - done)
        target[done : done + step] = target[:step]
        done += step


def dma_copy(memory: PhysicalMemory, src: int, dst: int, size: int) -> None:
    """GX RequestDma: copy ``size`` bytes from ``src`` to ``dst`` (overlap: as if read whole first)."""
    if not 0 <= size <= MAX_DMA:
        raise GxError(f"DMA of {size} bytes from 0x{src:08X} to 0x{dst:08X}: more than {MAX_DMA} bytes")
    if size:
        memory.write(dst, memory.read(src, size, "DMA source"), "DMA destination")


def tiled_offsets(width: int, height: int) -> np.ndarray:
    """(height, width) pixel indices into an 8x8-tiled image, rows in memory order (row 0 first)."""
    y, x = np.mgrid[0:height, 0:width]
    return ((y >> 3) * (width >> 3) + (x >> 3)) * (TILE * TILE) + morton8(x, y)


@functools.lru_cache(maxsize=16)
def _pixel_offsets(width: int, height: int) -> np.ndarray:
    """Flat (H * W,) int64 tiled pixel indices in memory-row order (cached per size: frames reuse them;
    read-only)."""
    offsets = tiled_offsets(width, height).ravel()
    offsets.flags.writeable = False
    return offsets


def _check_format(code: int, what: str) -> ColorFormat:
    check_format(code, what)
    return TRANSFER_FORMATS[code]


def read_image(memory: PhysicalMemory, address: int, width: int, height: int, fmt: int, tiled: bool) -> np.ndarray:
    """(height, width, 4) uint8 RGBA of an image in memory (transfer format enum), memory-row order."""
    cf, bpp = _check_format(fmt, "input"), BYTES_PER_PIXEL[fmt]
    if tiled:
        check_tiles(width, height, "tiled image")
    raw = memory.bytes(address, width * height * bpp, "display transfer input")
    pixels = _pixel_offsets(width, height) if tiled else slice(None)  # memory-row order
    if bpp in WORD_DTYPES:  # whole-pixel words
        words = raw.view(WORD_DTYPES[bpp])[pixels].astype(np.uint32)
    else:  # 3-byte pixels, a byte column at a time (strided numpy passes: cheaper than one gather of rows)
        columns = raw.reshape(-1, bpp)[pixels]
        words = np.zeros(width * height, np.uint32)
        for i in range(bpp):
            words |= columns[:, i].astype(np.uint32) << np.uint32(8 * i)
    return decode_color(words, cf).reshape(height, width, 4)


def write_image(memory: PhysicalMemory, address: int, image: np.ndarray, fmt: int, tiled: bool) -> None:
    """Encode (H, W, 4) uint8 RGBA with transfer format ``fmt`` and store it (tiled or linear) at ``address``."""
    height, width = image.shape[:2]
    cf, bpp = _check_format(fmt, "output"), BYTES_PER_PIXEL[fmt]
    if tiled:
        check_tiles(width, height, "tiled output")
    words = encode_color(image.reshape(-1, 4), cf)
    out = np.empty((width * height, bpp), np.uint8)
    for i in range(bpp):  # a byte column at a time, little-endian (assignment keeps each word's low byte)
        out[:, i] = words >> np.uint32(8 * i)
    if tiled:
        tiled_out = np.empty_like(out)
        tiled_out[_pixel_offsets(width, height)] = out
        out = tiled_out
    memory.write(address, out.ravel(), "display transfer output")


def downscale(image: np.ndarray, scale: int) -> np.ndarray:
    """Box filter: 2x1 averages horizontal pairs, 2x2 averages 2x2 blocks (rounding down, as integer sums)."""
    sx, sy = SCALE_SHIFTS[scale]
    if not sx and not sy:
        return image
    h, w = image.shape[0] >> sy << sy, image.shape[1] >> sx << sx
    acc = image[:h, :w].astype(np.uint16)
    if sy:
        acc = acc[0::2] + acc[1::2]
    if sx:
        acc = acc[:, 0::2] + acc[:, 1::2]
    return (acc >> (sx + sy)).astype(np.uint8)


def display_transfer(
    memory: PhysicalMemory,
    src: int,
    dst: int,
    in_dim: tuple[int, int],
    out_dim: tuple[int, int],
    flags: TransferFlags,
) -> None:
    """Run one display transfer (see the module docstring). ``in_dim``/``out_dim`` are (width, height)."""
    if (flags.in_format == 1 and flags.out_format != 1) or (
        flags.in_format in SIXTEEN_BIT and flags.out_format in (0, 1)
    ):
        log.warning(
            "display transfer %d -> %d does not complete on hardware; converted as Citra does",
            flags.in_format,
            flags.out_format,
        )
    out_w, out_h = check_transfer(in_dim, out_dim, flags)  # before the flip + crop skew reads its bytes per pixel
    image = downscale(read_image(memory, src, *in_dim, flags.in_format, not flags.linear_in), flags.scale)
    image = image[:out_h, :out_w]
    if flags.flip:
        image = image[::-1]
    write_image(
        memory,
        output_start(dst, in_dim, out_dim, flags),
        np.ascontiguousarray(image),
        flags.out_format,
        flags.tiled_out,
    )


@dataclass(frozen=True)
class TransferRecord:
    """One display transfer as it ran (``Gx.transfer_log``): input / output addresses, register dimensions
    (width, height) in pixels and the decoded flags; ``event`` is the capture event that ran it (set by the
    caller that keeps the log, -1 until then)."""

    src: int
    dst: int
    in_dim: tuple[int, int]
    out_dim: tuple[int, int]
    flags: TransferFlags
    event: int = -1


def _line_addresses(base: int, size: int, width: int, gap: int) -> np.ndarray:
    """Byte addresses (int64) of ``size`` bytes read in lines of ``width`` bytes with ``gap`` bytes between."""
    i = np.arange(size, dtype=np.int64)
    if gap == 0:
        return base + i
    return base + (i // width) * (width + gap) + i % width


def copy_line(line: int) -> tuple[int, int]:
    """(line width, gap) in bytes of a texture copy line word (PPF_COPY_IN / PPF_COPY_OUT: 16-byte units)."""
    return (access.bits(line, "PPF_COPY_IN", "width") * COPY_UNIT, access.bits(line, "PPF_COPY_IN", "gap") * COPY_UNIT)


def texture_copy(memory: PhysicalMemory, src: int, dst: int, size: int, in_line: int, out_line: int) -> None:
    """Raw copy with line widths and gaps (``in_line``/``out_line`` = width | gap << 16, in 16-byte units)."""
    size = size // COPY_UNIT * COPY_UNIT
    if size == 0:
        raise GxError("texture copy of 0 bytes (hangs the hardware)")
    sides = []
    for name, base, line in (("input", src, in_line), ("output", dst, out_line)):
        width, gap = copy_line(line)
        if gap and not width:
            raise GxError(f"texture copy: {name} gap {gap} with a zero line width (hangs the hardware)")
        addrs = _line_addresses(0, size, width, gap)
        span = int(addrs[-1]) + 1
        sides.append((memory.bytes(base, span, f"texture copy {name}"), addrs))
    (src_bytes, src_addrs), (dst_bytes, dst_addrs) = sides
    dst_bytes[dst_addrs] = src_bytes[src_addrs].copy()
