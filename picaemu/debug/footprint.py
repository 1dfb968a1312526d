"""A draw's footprint: the render target right after one draw, with the pixels that draw rasterized highlighted and
everything else dimmed, and the draw's window bounds outlined -- the debugger's draw thumbnails.

``footprint(session, draw, step, zoom)`` re-runs ``draw`` from its nearest checkpoint with a fragment observer
(the pipeline's exact fates; nothing is re-implemented) and returns ``Footprint``:

- ``region``: (column, row, width, height) of the render target the picture covers, in image pixels (row 0 = the
  top of the target, as ``picaemu render --target color`` writes it): the whole target, or with ``zoom`` a box
  of the target's aspect ratio centred on the draw's bounds, ``ZOOM_CONTEXT`` times their larger relative
  extent (at least ``MIN_ZOOM`` of the target), moved inside the target;
- ``image``: (ceil(H / step), ceil(W / step), 3) uint8 RGB of that region, each cell the region's pixel at its
  top-left corner (whole target: every ``step``-th pixel of every ``step``-th row); cells outside the footprint at
  ``DIM`` of their brightness, cells the draw wrote at full brightness, cells where all of its fragments were
  killed (depth, stencil, alpha) tinted ``KILLED_RGB``, the bounds box outlined one cell outside in ``BOX_RGB``;
- ``written`` / ``killed``: (ceil(H / step), ceil(W / step)) bool, a cell is set when any fragment of the draw in
  the pixels it stands for was written / killed past the scissor (so a one-pixel footprint never vanishes);
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
ZOOM_CONTEXT = 3.0  # a zoomed footprint shows its bounds and as much again around them on each side
MIN_ZOOM = 0.1  # ... but never less than a tenth of the target's width and height


@dataclass(frozen=True)
class Footprint:
    draw: int
    image: np.ndarray
    written: np.ndarray
    killed: np.ndarray
    bounds: tuple[int, int, int, int] | None
    region: tuple[int, int, int, int]


def footprint(session: Session, draw: int, step: int = THUMB_STEP, zoom: bool = False) -> Footprint:
    """Draw ``draw``'s footprint (module docstring); ``PicaError`` for a draw outside the capture or a step < 1."""
    tl = session.timeline
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
    written, killed = _masks(seen, height, width)
    bounds = _image_box(tl.draws[draw].bounds, height)
    region = _zoom_region(bounds, height, width) if zoom and bounds is not None else (0, 0, width, height)
    c0, r0, zw, zh = region
    rows = _starts(zh, -(-height // step), step if not zoom else 0)  # cells' first pixels, inside the region
    cols = _starts(zw, -(-width // step), step if not zoom else 0)
    small = color[r0 : r0 + zh, c0 : c0 + zw][rows][:, cols].astype(np.float32)
    written, killed = (_pool(m[r0 : r0 + zh, c0 : c0 + zw], rows, cols) for m in (written, killed))
    image = _compose(small, written, killed)
    if bounds is not None:
        _outline(image, (bounds[0] - c0, bounds[1] - r0, bounds[2], bounds[3]), rows, cols)
    return Footprint(draw, image, written, killed, bounds, region)


def _compose(small: np.ndarray, written: np.ndarray, killed: np.ndarray) -> np.ndarray:
    """(h, w, 3) uint8: ``small`` (float32 RGB) dimmed, bright where written, tinted where only killed."""
    out = small * DIM
    only_killed = killed & ~written
    out[written] = small[written]
    out[only_killed] = (small[only_killed] + np.array(KILLED_RGB, np.float32)) / 2
    return out.round().astype(np.uint8)


def _masks(seen: list[FragmentFates], height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(H, W) bool pixels where a fragment of the draw was written / killed past the scissor (row 0 = top)."""
    written = np.zeros((height, width), bool)
    killed = np.zeros((height, width), bool)
    for fates in seen:
        rows = height - 1 - fates.y.astype(np.int64)
        cols = fates.x.astype(np.int64)
        inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width) & (fates.fate != Fate.SCISSOR)
        is_written = fates.fate[inside] == Fate.WRITTEN
        written[rows[inside][is_written], cols[inside][is_written]] = True
        killed[rows[inside][~is_written], cols[inside][~is_written]] = True
    return written, killed


def _starts(extent: int, count: int, step: int) -> np.ndarray:
    """(count,) int64 first pixel of each output cell along an axis of ``extent`` pixels: every ``step``-th
    (``step`` > 0: the whole target), else ``count`` cells spread evenly (a cell may stand for less than a pixel:
    neighbours then repeat it)."""
    if step:
        return np.arange(0, extent, step, dtype=np.int64)[:count]
    return (np.arange(count, dtype=np.int64) * extent) // count


def _pool(mask: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(len(rows), len(cols)) bool: whether any pixel of each cell is set (a cell runs from its start to the next
    cell's, the last to the end; a cell narrower than a pixel takes the pixel it starts in)."""
    return np.logical_or.reduceat(np.logical_or.reduceat(mask, rows, axis=0), cols, axis=1)


def _zoom_region(box: tuple[int, int, int, int], height: int, width: int) -> tuple[int, int, int, int]:
    """(column, row, width, height) of the zoomed picture: the module docstring's box around ``box``."""
    col, row, w, h = box
    scale = min(max(ZOOM_CONTEXT * max(w / width, h / height), MIN_ZOOM), 1.0)
    zw, zh = max(1, round(width * scale)), max(1, round(height * scale))
    c0 = min(max(col + w // 2 - zw // 2, 0), width - zw)
    r0 = min(max(row + h // 2 - zh // 2, 0), height - zh)
    return c0, r0, zw, zh


def _image_box(bounds: tuple[int, int, int, int] | None, height: int) -> tuple[int, int, int, int] | None:
    """Window bounds (x0, y0, x1, y1; y up, inclusive) as (column, row, width, height) in image pixels."""
    if bounds is None:
        return None
    x0, y0, x1, y1 = bounds
    return x0, height - 1 - y1, x1 - x0 + 1, y1 - y0 + 1


def _before(starts: np.ndarray, pixel: int) -> int:
    """Index of the cell before the first cell that holds ``pixel`` (cells may repeat a pixel when zoomed in)."""
    holding = max(int(np.searchsorted(starts, pixel, side="right")) - 1, 0)
    return int(np.searchsorted(starts, starts[holding], side="left")) - 1


def _outline(image: np.ndarray, box: tuple[int, int, int, int], row_starts: np.ndarray, col_starts: np.ndarray) -> None:
    """Draw ``box`` (pixels of the picture's region) one cell outside the cells holding it, clipped to ``image``."""
    col, row, w, h = box
    r0, c0 = _before(row_starts, row), _before(col_starts, col)
    r1 = int(np.searchsorted(row_starts, row + h - 1, side="right"))  # the cell after the last holding the end
    c1 = int(np.searchsorted(col_starts, col + w - 1, side="right"))
    rows, cols = image.shape[:2]
    rr0, rr1, cc0, cc1 = max(r0, 0), min(r1, rows - 1), max(c0, 0), min(c1, cols - 1)
    if rr0 > rr1 or cc0 > cc1:
        return
    for r in (r0, r1):
        if 0 <= r < rows:
            image[r, cc0 : cc1 + 1] = BOX_RGB
    for c in (c0, c1):
        if 0 <= c < cols:
            image[rr0 : rr1 + 1, c] = BOX_RGB
