"""The transfer engine's parameters as data and arithmetic, without moving pixels (``picaemu.gx.engines`` moves
them; ``picaemu.gx.lowering`` and ``picaemu info``'s scan read these without loading the pixel codecs): the PPF
flags word decoded (``TransferFlags``), bytes per pixel of the transfer formats (0 RGBA8, 1 RGB8, 2 RGB565,
3 RGB5A1, 4 RGBA4), the downscale shifts, the parameters a display transfer refuses (``check_transfer``: the
engine and the scan call it, so ``picaemu info`` refuses what a replay refuses), where its output starts
(``output_start``) and how many bytes a raw-copy transfer moves (``raw_copy_size``). ``GxError`` is the engines'
error.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.errors import PicaError
from picaemu.regs import access

BYTES_PER_PIXEL = {0: 4, 1: 3, 2: 2, 3: 2, 4: 2}  # transfer format -> bytes per pixel
SCALE_SHIFTS = {0: (0, 0), 1: (1, 0), 2: (1, 1)}  # downscale mode -> (x shift, y shift)
TILE = 8  # tiled images are 8x8-pixel tiles


class GxError(PicaError):
    """An external-engine command that hardware would reject or hang on; names the engine and the parameter."""


@dataclass(frozen=True)
class TransferFlags:
    """The PPF flags word, decoded (bit layout: register PPF_FLAGS of ``picaemu.regs.external``)."""

    flip: bool
    linear_in: bool
    tiled_out: bool
    crop: bool
    texture_copy: bool
    in_format: int
    out_format: int
    block32: bool
    scale: int

    @classmethod
    def from_word(cls, word: int) -> TransferFlags:
        names = (
            "flip",
            "linear_to_tiled",
            "no_tiling",
            "crop",
            "texture_copy",
            "in_format",
            "out_format",
            "block32",
            "scale",
        )
        flip, to_tiled, no_tiling, crop, texture_copy, in_format, out_format, block32, scale = (
            access.bits(word, "PPF_FLAGS", name) for name in names
        )
        return cls(
            flip=bool(flip),
            linear_in=bool(to_tiled),  # linear -> tiled, and linear -> linear (linear_to_tiled + no_tiling)
            tiled_out=bool(to_tiled) != bool(no_tiling),  # linear -> tiled, and tiled -> tiled (no_tiling only)
            crop=bool(crop),
            texture_copy=bool(texture_copy),
            in_format=in_format,
            out_format=out_format,
            block32=bool(block32),
            scale=scale,
        )


def check_format(code: int, what: str) -> None:
    """``GxError`` unless ``code`` is a transfer pixel format."""
    if code not in BYTES_PER_PIXEL:
        raise GxError(f"display transfer: {what} format {code} is not a pixel format")


def check_tiles(width: int, height: int, what: str) -> None:
    """``GxError`` unless a tiled image of ``width`` x ``height`` pixels is a whole number of 8x8 tiles."""
    if width % TILE or height % TILE:
        raise GxError(f"{what} {width}x{height} is not a whole number of 8x8 tiles")


def check_transfer(in_dim: tuple[int, int], out_dim: tuple[int, int], flags: TransferFlags) -> tuple[int, int]:
    """The output size (width, height in pixels, after downscale) of a display transfer (not a raw copy) with
    register dimensions ``in_dim`` / ``out_dim``; ``GxError`` for what the engine refuses: downscale mode 3, a
    format that is no pixel format, an empty image, an output larger than the downscaled input, a tiled input or
    output that is not a whole number of 8x8 tiles."""
    if flags.scale not in SCALE_SHIFTS:
        raise GxError("display transfer: downscale mode 3 is invalid")
    check_format(flags.in_format, "input")
    check_format(flags.out_format, "output")
    (in_w, in_h), (sx, sy) = in_dim, SCALE_SHIFTS[flags.scale]
    out_w, out_h = out_dim[0] >> sx, out_dim[1] >> sy
    if in_w == 0 or in_h == 0 or out_w == 0 or out_h == 0:
        raise GxError(f"display transfer: empty image (input {in_w}x{in_h}, output {out_w}x{out_h})")
    if not flags.linear_in:
        check_tiles(in_w, in_h, "tiled image")
    if out_w > in_w >> sx or out_h > in_h >> sy:  # the downscaled input is (in_w >> sx) x (in_h >> sy)
        raise GxError(f"display transfer: output {out_w}x{out_h} is larger than the input {in_w}x{in_h}")
    if flags.tiled_out:
        check_tiles(out_w, out_h, "tiled output")
    return out_w, out_h


def output_start(dst: int, in_dim: tuple[int, int], out_dim: tuple[int, int], flags: TransferFlags) -> int:
    """Where a display transfer's first output pixel goes: ``dst``, or with flip + crop the hardware's skew
    (in_w - out_w) (out_h - 1) pixels later (register sizes, as the tested reference)."""
    if flags.flip and flags.crop:
        return dst + (in_dim[0] - out_dim[0]) * (out_dim[1] - 1) * BYTES_PER_PIXEL[flags.out_format]
    return dst


def raw_copy_size(out_dim: tuple[int, int], flags: TransferFlags) -> int:
    """Bytes a display transfer with flag bit 3 copies unchanged: the output size (after downscale) times the
    output format's bytes per pixel."""
    if flags.scale not in SCALE_SHIFTS:
        raise GxError("display transfer: downscale mode 3 is invalid")
    check_format(flags.out_format, "output")
    sx, sy = SCALE_SHIFTS[flags.scale]
    return (out_dim[0] >> sx) * (out_dim[1] >> sy) * BYTES_PER_PIXEL[flags.out_format]
