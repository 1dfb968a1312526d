"""PNG (and any Pillow-readable image) <-> (H, W, 4) uint8 RGBA arrays, row 0 = top of the picture.

``read_rgba(path)`` converts any mode to RGBA (gray, palette and RGB images get alpha 255); ``write_rgba(path,
rgba)`` writes an RGBA picture (PNG for ``.png``; atomically). Unreadable or non-image files raise
``FormatError`` naming the path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from picaemu.formats.files import save_image
from PIL import Image, UnidentifiedImageError

from picaemu.errors import FormatError

MAX_PIXELS = 4096 * 4096  # refuse decompression bombs before decoding


def read_rgba(path: str | Path) -> np.ndarray:
    """(H, W, 4) uint8 RGBA pixels of an image file."""
    try:
        with Image.open(path) as img:
            if img.width * img.height > MAX_PIXELS:
                raise FormatError(f"image of {img.width}x{img.height} pixels is too large", path=str(path))
            return np.asarray(img.convert("RGBA"), np.uint8).copy()
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as err:
        raise FormatError(f"not a readable image: {err}", path=str(path)) from None


def write_rgba(path: str | Path, rgba: np.ndarray) -> None:
    """Write an (H, W, 4) uint8 array as an RGBA picture (format by suffix, atomically: ``files.save_image``)."""
    save_image(path, rgba, "RGBA")
