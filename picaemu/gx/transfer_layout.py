"""The transfer engine's parameters as data and arithmetic, without moving pixels (``picaemu.gx.engines`` moves
them; ``picaemu.gx.lowering`` and ``picaemu info``'s scan read these without loading the pixel codecs): the PPF
flags word decoded (``TransferFlags``), bytes per pixel of the transfer formats (0 RGBA8, 1 RGB8, 2 RGB565,
3 RGB5A1, 4 RGBA4), the downscale shifts, where a display transfer's output starts (``output_start``) and how many
bytes a raw-copy transfer moves (``raw_copy_size``). ``GxError`` is the engines' error.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.errors import PicaError
from picaemu.regs import access

BYTES_PER_PIXEL = {0: 4, 1: 3, 2: 2, 3: 2, 4: 2}  # transfer format -> bytes per pixel
SCALE_SHIFTS = {0: (0, 0), 1: (1, 0), 2: (1, 1)}  # downscale mode -> (x shift, y shift)


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
