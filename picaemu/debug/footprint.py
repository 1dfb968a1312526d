"""A draw's footprint: the render target right after one draw, with the pixels that draw rasterized highlighted and
everything else dimmed, and the draw's window bounds outlined -- the debugger's draw thumbnails.

``footprint(session, draw, step)`` re-runs ``draw`` from its nearest checkpoint with a fragment observer (the
pipeline's exact fates; nothing is re-implemented) and returns ``Footprint``:

- ``image``: (ceil(H / step), ceil(W / step), 3) uint8 RGB, row 0 = the top of the render target (as
  ``picaemu render --target color`` writes it), every ``step``-th pixel of every ``step``-th row; pixels outside
  the footprint at ``DIM`` of their brightness, cells the draw wrote at full brightness, cells where all of its
  fragments were killed (depth, stencil, alpha) tinted ``KILLED_RGB``, the bounds box outlined in ``BOX_RGB``;
- ``written`` / ``killed``: (ceil(H / step), ceil(W / step)) bool, a cell is set when any fragment of the draw in
  its step x step block was written / killed past the scissor (so a one-pixel footprint never vanishes);
- ``bounds``: the draw's box in image pixels (column, row, width, height) at full resolution, or None.

Cost: one draw re-run (a few ms on the 1000-draw sample); callers build footprints only for what they show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.debug.probe import rerun
from picaemu.debug.session import Session
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.fragment.ops import Fate
from picaemu.pipeline import FragmentFates

THUMB_STEP = 4  # thumbnails keep every 4th pixel of every 4th row (100 x 60 for a 240 x 400 target)
DIM = 0.3
KILLED_RGB = (230, 40, 40)
BOX_RGB = (255, 214, 0)


@dataclass(frozen=True)
class Footprint:
    draw: int
    image: np.ndarray
    written: np.ndarray
    killed: np.ndarray
    bounds: tuple[int, int, int, int] | None


def footprint(session: Session, draw: int, step: int = THUMB_STEP) -> Footprint:
    """Draw ``draw``'s footprint (module docstring); ``PicaError`` for a draw outside the capture or a step < 1."""
    tl = session._need_timeline()
    if not 0 <= draw < len(tl.draws):
        raise PicaError(f"draw {draw} outside 0..{len(tl.draws) - 1}")
    if step < 1:
        raise PicaError(f"footprint step {step}: must be at least 1")
    seen: list[FragmentFates] = []

    def keep(call: DrawCall, fates: FragmentFates) -> None:
        if call.index == draw:
            seen.append(fates)

    rerun(session, tl.before_draw(draw), tl.after_draw(draw), keep)
    color = session.replay.color_buffer()[:, :, :3]
    height, width = color.shape[:2]
    small = color[::step, ::step].astype(np.float32)
    written = np.zeros(small.shape[:2], bool)
    killed = np.zeros(small.shape[:2], bool)
    for fates in seen:
        rows = height - 1 - fates.y.astype(np.int64)
        cols = fates.x.astype(np.int64)
        inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width) & (fates.fate != Fate.SCISSOR)
        cells = rows[inside] // step, cols[inside] // step
        is_written = fates.fate[inside] == Fate.WRITTEN
        written[cells[0][is_written], cells[1][is_written]] = True
        killed[cells[0][~is_written], cells[1][~is_written]] = True
    out = small * DIM
    only_killed = killed & ~written
    out[written] = small[written]
    out[only_killed] = (small[only_killed] + np.array(KILLED_RGB, np.float32)) / 2
    image = out.round().astype(np.uint8)
    bounds = _image_box(tl.draws[draw].bounds, height)
    if bounds is not None:
        _outline(image, bounds, step)
    return Footprint(draw, image, written, killed, bounds)


def _image_box(bounds: tuple[int, int, int, int] | None, height: int) -> tuple[int, int, int, int] | None:
    """Window bounds (x0, y0, x1, y1; y up, inclusive) as (column, row, width, height) in image pixels."""
    if bounds is None:
        return None
    x0, y0, x1, y1 = bounds
    return x0, height - 1 - y1, x1 - x0 + 1, y1 - y0 + 1


def _outline(image: np.ndarray, box: tuple[int, int, int, int], step: int) -> None:
    """Draw ``box`` (full-resolution image pixels) one cell outside its cells, clipped to ``image``."""
    col, row, w, h = box
    r0, r1 = row // step - 1, (row + h - 1) // step + 1
    c0, c1 = col // step - 1, (col + w - 1) // step + 1
    rows, cols = image.shape[:2]
    rr0, rr1, cc0, cc1 = max(r0, 0), min(r1, rows - 1), max(c0, 0), min(c1, cols - 1)
    if rr0 > rr1 or cc0 > cc1:
        return
    for r in (r0, r1):
        if 0 <= r < rows:
            image[r, cc0:cc1 + 1] = BOX_RGB
    for c in (c0, c1):
        if 0 <= c < cols:
            image[rr0:rr1 + 1, c] = BOX_RGB
