"""How far one picture is from another: the figures the OpenGL backend is checked by against the software one.

``compare(reference, other) -> ImageDiff`` over two (H, W, C) uint8 pictures of the same shape: per pixel the
largest channel difference (0-255); ``max_error`` its maximum, ``share_over`` the fraction of pixels whose
difference exceeds ``LEVELS`` (2 levels), ``psnr`` in dB over every channel (inf for equal pictures).
``difference_image`` makes the picture ``picaemu diff-backends`` writes: the per-pixel difference x ``GAIN`` as
gray, pixels over ``LEVELS`` in red. Imports no OpenGL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LEVELS = 2  # the tolerance: a pixel within 2 levels on every channel counts as equal
GAIN = 16  # difference image: gray = 16 x the difference


@dataclass(frozen=True)
class ImageDiff:
    max_error: int
    share_over: float  # fraction of pixels differing by more than LEVELS on some channel
    psnr: float  # dB; inf when the pictures are equal
    pixels: int

    @property
    def within(self) -> float:
        """Fraction of pixels within LEVELS."""
        return 1.0 - self.share_over

    def line(self) -> str:
        psnr = "inf" if math.isinf(self.psnr) else f"{self.psnr:.1f}"
        return (
            f"max error {self.max_error}, {100 * self.share_over:.3f} % of {self.pixels} pixels over "
            f"{LEVELS} levels, PSNR {psnr} dB"
        )


def pixel_error(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(H, W) int: the largest channel difference of every pixel."""
    if reference.shape != other.shape:
        raise ValueError(f"pictures differ in shape: {reference.shape} and {other.shape}")
    diff = np.abs(reference.astype(np.int16) - other.astype(np.int16))
    return diff.max(axis=2) if diff.ndim == 3 else diff


def compare(reference: np.ndarray, other: np.ndarray) -> ImageDiff:
    err = pixel_error(reference, other)
    mse = float(np.mean((reference.astype(np.float64) - other.astype(np.float64)) ** 2))
    psnr = math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)
    return ImageDiff(int(err.max(initial=0)), float((err > LEVELS).mean()) if err.size else 0.0, psnr, int(err.size))


def difference_image(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8: gray = GAIN x the pixel error, red where it exceeds LEVELS."""
    err = pixel_error(reference, other)
    gray = np.minimum(err * GAIN, 255).astype(np.uint8)
    out = np.repeat(gray[:, :, None], 3, axis=2)
    out[err > LEVELS] = (255, 0, 0)
    return out
