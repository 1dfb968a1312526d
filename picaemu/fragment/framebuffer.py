"""Color and depth/stencil buffers in emulated memory: formats, 8x8 tiling, per-draw buffer state.

Owns: the pixel formats of GPUREG_COLORBUFFER_FORMAT / GPUREG_DEPTHBUFFER_FORMAT, the tiled address map, and
``FramebufferState`` (decoded once per draw from registers 0x112-0x11E).

Pixel words. Every pixel is a little-endian integer of ``bpp`` bytes (``pixel_word``); the formats are bit layouts
of that word (channel, shift, bits), listed in ``COLOR_LAYOUTS`` / ``DEPTH_LAYOUTS`` (pica-formats.md §2.1):

=======  ===  ==========================================  (bytes in memory, lowest address first)
RGBA8    4    R 31-24, G 23-16, B 15-8, A 7-0              A, B, G, R
RGB8     3    R 23-16, G 15-8, B 7-0                       B, G, R
RGB5A1   2    R 15-11, G 10-6, B 5-1, A 0
RGB565   2    R 15-11, G 10-5, B 4-0
RGBA4    2    R 15-12, G 11-8, B 7-4, A 3-0
D16      2    depth 15-0
D24      3    depth 23-0
D24S8    4    depth 23-0, stencil 31-24
=======  ===  ==========================================

Encoding from 8-bit channels truncates (8->5 is v >> 3); decoding expands by bit replication (5->8 is
v << 3 | v >> 2, 1->8 is 0 / 255); formats without alpha read back alpha = 255.

Addressing (pica-pipeline.md §9.6): window y grows upward; memory row ``yy = H - 1 - y`` (``yy = y`` when
FRAMEBUFFER_DIM.orientation = 0, the vertically flipped mode); 8x8 tiles row-major, Morton order inside:
``pixel = ((yy >> 3) * (W >> 3) + (x >> 3)) * 64 + morton(x & 7, yy & 7)``, byte offset = pixel * bpp.
32x32 block mode (FRAMEBUFFER_BLOCK32 = 1) is not public and raises ``UnsupportedFeature``.

Arrays: ``colors`` (F, 4) uint8 r g b a; depth words (F,) uint32 (16 or 24 significant bits); stencil (F,) uint8;
``offsets`` (F,) int64 byte offsets from the buffer base; images (H, W, 4) uint8 / (H, W) with row 0 = memory row
0 = the top of the picture.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

import numba
import numpy as np
import numpy.typing as npt

from picaemu import numba_link
from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of

TILE = 8
TILE_PIXELS = TILE * TILE
# (channel index r=0 g=1 b=2 a=3, shift, bits) of the pixel word
Layout = tuple[tuple[int, int, int], ...]


class ColorFormat(Enum):
    """COLORBUFFER_FORMAT.format codes (not the display-transfer enum)."""

    RGBA8 = 0
    RGB8 = 1
    RGB5A1 = 2
    RGB565 = 3
    RGBA4 = 4


class DepthFormat(Enum):
    """DEPTHBUFFER_FORMAT.format codes (1 is invalid)."""

    D16 = 0
    D24 = 2
    D24S8 = 3


COLOR_BPP = {
    ColorFormat.RGBA8: 4,
    ColorFormat.RGB8: 3,
    ColorFormat.RGB5A1: 2,
    ColorFormat.RGB565: 2,
    ColorFormat.RGBA4: 2,
}
COLOR_LAYOUTS: dict[ColorFormat, Layout] = {
    ColorFormat.RGBA8: ((0, 24, 8), (1, 16, 8), (2, 8, 8), (3, 0, 8)),
    ColorFormat.RGB8: ((0, 16, 8), (1, 8, 8), (2, 0, 8)),
    ColorFormat.RGB5A1: ((0, 11, 5), (1, 6, 5), (2, 1, 5), (3, 0, 1)),
    ColorFormat.RGB565: ((0, 11, 5), (1, 5, 6), (2, 0, 5)),
    ColorFormat.RGBA4: ((0, 12, 4), (1, 8, 4), (2, 4, 4), (3, 0, 4)),
}
DEPTH_BPP = {DepthFormat.D16: 2, DepthFormat.D24: 3, DepthFormat.D24S8: 4}
DEPTH_BITS = {DepthFormat.D16: 16, DepthFormat.D24: 24, DepthFormat.D24S8: 24}
STENCIL_SHIFT = 24  # D24S8: stencil in bits 31-24 of the pixel word


# ---------------------------------------------------------------------------------------------- addressing
@numba.njit(cache=True)
def memory_row(y: int, height: int, flipped: bool) -> int:  # pragma: no cover - compiled
    """The memory row (counted from the first stored row) that holds window row ``y`` (y up)."""
    return y if flipped else height - 1 - y


@numba.njit(cache=True)
def tiled_pixel(x: int, y: int, width: int, height: int, flipped: bool) -> int:  # pragma: no cover - compiled
    """Tiled pixel index of window pixel (x, y), y up: 8x8 tiles row-major, Morton order inside a tile."""
    yy = memory_row(y, height, flipped)
    tx, ty = x & 7, yy & 7
    morton = (tx & 1) | ((ty & 1) << 1) | ((tx & 2) << 1) | ((ty & 2) << 2) | ((tx & 4) << 2) | ((ty & 4) << 3)
    return ((yy >> 3) * (width >> 3) + (x >> 3)) * TILE_PIXELS + morton


@numba.njit(cache=True)
def tiled_pixels(x, y, width, height, flipped):  # pragma: no cover - compiled
    """(n,) int64 ``tiled_pixel`` of each window pixel (x[i], y[i]): one loop over all of a draw's fragments, which
    runs in vector lanes (computed fragment by fragment, between the passes' memory accesses, it cost ~3 ns each)."""
    out = numba_link.empty(x.shape[0], np.int64)
    for i in range(x.shape[0]):  # int32 coordinates, as the fragment passes pass them: ``tiled_pixel`` compiles once
        out[i] = tiled_pixel(np.int32(x[i]), np.int32(y[i]), width, height, flipped)
    return out


def morton8(x: npt.ArrayLike, y: npt.ArrayLike) -> np.ndarray:
    """Index inside an 8x8 tile of in-tile coordinates (x, y), y counted from the first stored row."""
    xs, ys = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(y, np.int64))
    # an 8x8 buffer in flipped orientation is a single tile whose rows are stored in y order
    return tiled_pixels(xs.ravel() & 7, ys.ravel() & 7, 8, 8, True).reshape(xs.shape)


def pixel_index(x: np.ndarray, y: np.ndarray, width: int, height: int, flipped: bool = False) -> np.ndarray:
    """Tiled pixel index (int64) of window pixels (x, y), y up; multiply by bpp for the byte offset."""
    xs, ys = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(y, np.int64))
    return tiled_pixels(xs.ravel(), ys.ravel(), width, height, flipped).reshape(xs.shape)


# ---------------------------------------------------------------------------------------------- pixel words
def gather_words(buf: np.ndarray, offsets: np.ndarray, bpp: int) -> np.ndarray:
    """Little-endian ``bpp``-byte words at byte ``offsets`` of the uint8 array ``buf`` -> (F,) uint32."""
    out = np.zeros(offsets.shape, np.uint32)
    for i in range(bpp):
        out |= buf[offsets + i].astype(np.uint32) << np.uint32(8 * i)
    return out


def scatter_words(buf: np.ndarray, offsets: np.ndarray, words: np.ndarray, bpp: int) -> None:
    """Store the low ``bpp`` bytes of ``words`` little-endian at byte ``offsets`` of ``buf``."""
    w = words.astype(np.uint32)
    for i in range(bpp):
        buf[offsets + i] = ((w >> np.uint32(8 * i)) & np.uint32(0xFF)).astype(np.uint8)


WORD_DTYPES: dict[int, np.dtype] = {2: np.dtype("<u2"), 4: np.dtype("<u4")}


def gather_pixels(buf: np.ndarray, pixels: np.ndarray, bpp: int) -> np.ndarray:
    """Pixel words of tiled pixel indices ``pixels`` in the buffer ``buf`` -> (F,) uint32."""
    if bpp in WORD_DTYPES and buf.ctypes.data % bpp == 0:
        return buf.view(WORD_DTYPES[bpp])[pixels].astype(np.uint32)
    return gather_words(buf, pixels * bpp, bpp)


def scatter_pixels(buf: np.ndarray, pixels: np.ndarray, words: np.ndarray, bpp: int) -> None:
    """Store pixel words at tiled pixel indices ``pixels`` of ``buf``."""
    if bpp in WORD_DTYPES and buf.ctypes.data % bpp == 0:
        buf.view(WORD_DTYPES[bpp])[pixels] = words.astype(WORD_DTYPES[bpp])
    else:
        scatter_words(buf, pixels * bpp, words, bpp)


def _expand(v: np.ndarray, bits: int) -> np.ndarray:
    """Bit replication of a ``bits``-wide value to 8 bits."""
    out = np.zeros_like(v)
    shift = 8 - bits
    while shift > -bits:
        out |= (v << shift) if shift >= 0 else (v >> -shift)
        shift -= bits
    return out & 0xFF


def encode_color(colors: np.ndarray, fmt: ColorFormat) -> np.ndarray:
    """(F, 4) uint8 r g b a -> (F,) uint32 pixel words (truncating to the channel widths)."""
    out = np.zeros(colors.shape[0], np.uint32)
    for ch, shift, bits in COLOR_LAYOUTS[fmt]:  # one channel widened at a time (not the whole (F, 4) array)
        out |= (colors[:, ch] >> np.uint8(8 - bits)).astype(np.uint32) << np.uint32(shift)
    return out


def decode_color(words: np.ndarray, fmt: ColorFormat) -> np.ndarray:
    """(F,) pixel words -> (F, 4) uint8 r g b a (alpha 255 when the format has none)."""
    w = np.asarray(words, np.uint32)
    out = np.full((w.shape[0], 4), 255, np.uint8)
    for ch, shift, bits in COLOR_LAYOUTS[fmt]:
        field = (w >> np.uint32(shift)) & np.uint32((1 << bits) - 1)
        out[:, ch] = field if bits == 8 else _expand(field, bits)  # 8 bits: already what replication gives
    return out


def depth_max(fmt: DepthFormat) -> int:
    return (1 << DEPTH_BITS[fmt]) - 1


def quantize_depth(depth: np.ndarray, fmt: DepthFormat) -> np.ndarray:
    """Depth in [0, 1] (float) -> integer depth of the format: trunc(clamp(d) * (2^bits - 1))."""
    d = np.clip(np.nan_to_num(depth.astype(np.float64), nan=0.0), 0.0, 1.0)
    return (d * depth_max(fmt)).astype(np.uint32)


def split_depth_word(words: np.ndarray, fmt: DepthFormat) -> tuple[np.ndarray, np.ndarray]:
    """Pixel words -> (depth (F,) uint32, stencil (F,) uint8; stencil 0 unless D24S8)."""
    depth = words & np.uint32(depth_max(fmt))
    if fmt is DepthFormat.D24S8:
        return depth, (words >> np.uint32(STENCIL_SHIFT)).astype(np.uint8)
    return depth, np.zeros(words.shape, np.uint8)


def join_depth_word(depth: np.ndarray, stencil: np.ndarray, fmt: DepthFormat) -> np.ndarray:
    word = depth.astype(np.uint32) & np.uint32(depth_max(fmt))
    if fmt is DepthFormat.D24S8:
        word |= stencil.astype(np.uint32) << np.uint32(STENCIL_SHIFT)
    return word


# ---------------------------------------------------------------------------------------------- per-draw state
@dataclass(frozen=True)
class FramebufferState:
    """Where and how the render targets live, decoded from registers 0x112-0x11E."""

    width: int
    height: int
    flipped: bool
    color_address: int
    color_format: ColorFormat
    depth_address: int
    depth_format: DepthFormat
    color_read: bool
    color_write: bool
    depth_read: bool
    stencil_read: bool
    depth_write: bool
    stencil_write: bool

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> FramebufferState:
        if access.raw(regs, "FRAMEBUFFER_BLOCK32", "mode"):
            raise UnsupportedFeature(
                "32x32 block framebuffer layout",
                register=id_of("FRAMEBUFFER_BLOCK32"),
                value=access.word(regs, "FRAMEBUFFER_BLOCK32"),
            )
        color_code = access.raw(regs, "COLORBUFFER_FORMAT", "format")
        depth_code = access.raw(regs, "DEPTHBUFFER_FORMAT", "format")
        try:
            color_format = ColorFormat(color_code)
        except ValueError:
            raise UnsupportedFeature(
                "color buffer format",
                register=id_of("COLORBUFFER_FORMAT"),
                value=access.word(regs, "COLORBUFFER_FORMAT"),
            ) from None
        try:
            depth_format = DepthFormat(depth_code)
        except ValueError:
            raise UnsupportedFeature(
                "depth buffer format",
                register=id_of("DEPTHBUFFER_FORMAT"),
                value=access.word(regs, "DEPTHBUFFER_FORMAT"),
            ) from None
        return cls(
            width=access.raw(regs, "FRAMEBUFFER_DIM", "width"),
            height=access.raw(regs, "FRAMEBUFFER_DIM", "height_minus_1") + 1,
            flipped=access.raw(regs, "FRAMEBUFFER_DIM", "orientation") == 0,
            color_address=int(access.value(regs, "COLORBUFFER_LOC", "address")),
            color_format=color_format,
            depth_address=int(access.value(regs, "DEPTHBUFFER_LOC", "address")),
            depth_format=depth_format,
            color_read=access.raw(regs, "COLORBUFFER_READ", "enable") != 0,
            color_write=access.raw(regs, "COLORBUFFER_WRITE", "enable") != 0,
            depth_read=bool(access.raw(regs, "DEPTHBUFFER_READ", "depth")),
            stencil_read=bool(access.raw(regs, "DEPTHBUFFER_READ", "stencil")),
            depth_write=bool(access.raw(regs, "DEPTHBUFFER_WRITE", "depth")),
            stencil_write=bool(access.raw(regs, "DEPTHBUFFER_WRITE", "stencil")),
        )

    @property
    def color_bpp(self) -> int:
        return COLOR_BPP[self.color_format]

    @property
    def depth_bpp(self) -> int:
        return DEPTH_BPP[self.depth_format]

    def check_size(self) -> None:
        """PipelineError unless the dimensions are a non-empty whole number of 8x8 tiles."""
        if self.width == 0 or self.width % TILE or self.height % TILE:
            raise PipelineError(
                f"framebuffer {self.width}x{self.height} is not a whole number of 8x8 tiles",
                register=id_of("FRAMEBUFFER_DIM"),
            )

    def offsets(self, x: np.ndarray, y: np.ndarray, bpp: int) -> np.ndarray:
        return pixel_index(x, y, self.width, self.height, self.flipped) * bpp

    @property
    def color_extent(self) -> tuple[int, int]:
        """(physical address, bytes) of the whole color buffer."""
        return self.color_address, self.width * self.height * self.color_bpp

    @property
    def depth_extent(self) -> tuple[int, int]:
        """(physical address, bytes) of the whole depth/stencil buffer."""
        return self.depth_address, self.width * self.height * self.depth_bpp

    def color_bytes(self, memory: PhysicalMemory) -> np.ndarray:
        """Live uint8 view of the whole color buffer (MemoryFault if it leaves mapped memory)."""
        return memory.bytes(*self.color_extent, "color buffer")

    def depth_bytes(self, memory: PhysicalMemory) -> np.ndarray:
        """Live uint8 view of the whole depth/stencil buffer."""
        return memory.bytes(*self.depth_extent, "depth buffer")


@functools.lru_cache(maxsize=16)
def _image_pixels(width: int, height: int, flipped: bool, step: int) -> np.ndarray:
    """Tiled pixel indices of every ``step``-th pixel of every ``step``-th row of the picture, (H', W') int64 with
    row 0 = the top (read-only; the same for every buffer of that size and orientation)."""
    yy, x = np.mgrid[0:height:step, 0:width:step]
    pixels = pixel_index(x, (height - 1) - yy, width, height, flipped)
    pixels.flags.writeable = False
    return pixels


def read_color_image(memory: PhysicalMemory, fb: FramebufferState, step: int = 1) -> np.ndarray:
    """The color buffer as (H, W, 4) uint8 RGBA, row 0 = top of the picture; with ``step`` > 1 only every
    ``step``-th pixel of every ``step``-th row ((ceil(H / step), ceil(W / step), 4): thumbnails)."""
    pixels = _image_pixels(fb.width, fb.height, fb.flipped, step)
    words = gather_pixels(fb.color_bytes(memory), pixels.ravel(), fb.color_bpp)
    return decode_color(words, fb.color_format).reshape(*pixels.shape, 4)


def read_depth_image(memory: PhysicalMemory, fb: FramebufferState) -> tuple[np.ndarray, np.ndarray]:
    """The depth buffer as ((H, W) uint32 depth, (H, W) uint8 stencil), row 0 = top of the picture."""
    pixels = _image_pixels(fb.width, fb.height, fb.flipped, 1)
    words = gather_pixels(fb.depth_bytes(memory), pixels.ravel(), fb.depth_bpp)
    depth, stencil = split_depth_word(words, fb.depth_format)
    return depth.reshape(fb.height, fb.width), stencil.reshape(fb.height, fb.width)
