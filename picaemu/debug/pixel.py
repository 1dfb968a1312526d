"""One render-target pixel during a probe (``picaemu.debug.probe``): the buffers' values there and what its
depth/stencil tests compared. Qt-free.

- ``PixelObserver``: a ``picaemu.observer.StageObserver`` with ``fragment_tests`` that keeps, for one tiled pixel
  index (``target``), each fragment's depth/stencil test values in order (``tests``);
- ``read_pixel(memory, fb, window) -> PixelValues``: color RGBA 0..255, depth 0..1 and stencil at a window pixel
  (y up) of the buffers ``fb`` names (depth and stencil None when the depth buffer cannot be read);
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.framebuffer import FramebufferState
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver

if TYPE_CHECKING:
    from picaemu.draw import DrawCall
    from picaemu.pipeline import FragmentFates


class PixelObserver(StageObserver):
    """Watches one window pixel's depth/stencil tests during a probe: ``tests`` gets, per fragment of the pixel
    that reached them and in order, (fragment depth, stored depth, stored stencil, stencil pass, depth pass) with
    depths as the buffer's integers. The draw's fragment fates go to ``fates_to`` (the probe's record)."""

    fragment_tests = True
    fragment_fates = True

    def __init__(self) -> None:
        self.target = -1  # tiled pixel index, set by the probe (picaemu.debug.probe)
        self.tests: list[tuple[int, int, int, bool, bool]] = []
        self.fates_to: Callable[[DrawCall, FragmentFates], None] | None = None  # set by the probe (picaemu.debug.probe)

    def on_fragments(self, call: DrawCall, fates: FragmentFates) -> None:
        if self.fates_to is not None:
            self.fates_to(call, fates)

    def on_depth_stencil(
        self,
        pixels: np.ndarray,
        depth: np.ndarray,
        stored_depth: np.ndarray,
        stored_stencil: np.ndarray,
        stencil_pass: np.ndarray,
        depth_pass: np.ndarray,
    ) -> None:
        for i in np.flatnonzero(pixels == self.target):
            self.tests.append(
                (
                    int(depth[i]),
                    int(stored_depth[i]),
                    int(stored_stencil[i]),
                    bool(stencil_pass[i]),
                    bool(depth_pass[i]),
                )
            )


@dataclass(frozen=True)
class PixelValues:
    """One pixel of the render target: color RGBA 0..255, depth 0..1 and stencil (None when the depth buffer
    cannot be read)."""

    color: tuple[int, ...]
    depth: float | None
    stencil: int | None


def read_pixel(memory: PhysicalMemory, fb: FramebufferState, window: tuple[int, int]) -> PixelValues:
    """The color and depth/stencil buffers at window pixel ``window`` (y up)."""
    index = fbm.pixel_index(np.array([window[0]]), np.array([window[1]]), fb.width, fb.height, fb.flipped)
    word = fbm.gather_words(fb.color_bytes(memory), index * fb.color_bpp, fb.color_bpp)
    color = tuple(int(v) for v in fbm.decode_color(word, fb.color_format)[0])
    try:
        depth, stencil = fbm.split_depth_word(
            fbm.gather_words(fb.depth_bytes(memory), index * fb.depth_bpp, fb.depth_bpp), fb.depth_format
        )
    except PicaError:
        return PixelValues(color, None, None)
    return PixelValues(color, int(depth[0]) / fbm.depth_max(fb.depth_format), int(stencil[0]))
