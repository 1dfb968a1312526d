"""Where a pixel a user picked lands: the coordinate space it was given in and the render target it belongs to.
Qt-free.

``pick(session, span, x, y, space=, screen=, eye=) -> BufferPixel`` over an indexed ``Session`` and a frame's
(start, end) cursors:

- ``space="screen"``: (x, y) is a pixel of the ``screen`` / ``eye`` picture at the frame's end, as ``picaemu render
  --screen`` writes it (column, row from the top; 400x240 top, 320x240 bottom); it is traced back through the LCD
  framebuffer and the display transfer that wrote it to a render-target pixel (``picaemu.debug.screen_map``);
- ``space="buffer"``: (x, y) is a pixel of the colour-buffer PNG (``render --target color``: portrait, row 0 at the
  top) of the render target that ``screen`` / ``eye`` shows at the frame's end; when no transfer shows one, of the
  target the frame's last draw drew into.

``window_pixel(fb, x, y)``: a colour-buffer PNG pixel in window coordinates (y up); ``target_pixel(fb, at,
all_targets)``: the render target and window pixel a pixel history looks at in ``fb``.
``frame_targets(session, start, end)``: the distinct render targets the frame's draws drew into, in first-use order.
"""

from __future__ import annotations

import numpy as np

from picaemu import draw_state as ds_mod
from picaemu.debug.screen_map import SPACES, BufferPixel, RenderTarget, ScreenMapError, screen_to_buffer
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.errors import PicaError
from picaemu.fragment.framebuffer import FramebufferState

# the registers that name a draw's render targets: draws with equal words there draw into the same buffers
FRAMEBUFFER_IDS = np.flatnonzero(ds_mod.WRITE_GROUPS[: ds_mod.NUM_REGS] & int(ds_mod.Group.FRAMEBUFFER))


def draw_target(session: Session, draw: int) -> FramebufferState | None:
    """The render target draw ``draw`` drew into; None when its registers name no usable one."""
    try:
        fb = FramebufferState.from_regs(session.state_at_draw(draw).regs)
        fb.check_size()
    except PicaError:
        return None
    return fb


def frame_targets(session: Session, start: Cursor, end: Cursor) -> list[FramebufferState]:
    """The distinct render targets (address, format, size) the draws between ``start`` and ``end`` drew into."""
    tl = session.timeline
    seen: dict[RenderTarget, FramebufferState] = {}
    keys: set[bytes] = set()  # framebuffer registers already decoded
    for d in tl.draws:
        if start <= tl.before_draw(d.index) < end:
            key = session.state_at_draw(d.index).regs[FRAMEBUFFER_IDS].tobytes()
            fb = None if key in keys else draw_target(session, d.index)
            keys.add(key)
            if fb is not None:
                seen.setdefault(RenderTarget.of(fb), fb)
    return list(seen.values())


def pick(
    session: Session, span: tuple[Cursor, Cursor], x: int, y: int, *, space: str, screen: str = "top", eye: str = "left"
) -> BufferPixel:
    """The render-target pixel the user picked (module docstring)."""
    if space not in SPACES:
        raise PicaError(f"unknown coordinate space {space!r}: one of {', '.join(SPACES)}")
    start, end = span
    targets = frame_targets(session, start, end)
    session.goto(end)
    gpu = session.replay.gx.gpu
    transfers = [t for t in session.transfers if t.event < end.event]
    if space == "screen":
        return screen_to_buffer(gpu, transfers, targets, screen, eye, x, y)
    try:
        target = screen_to_buffer(gpu, transfers, targets, screen, eye, 0, 0).target
    except ScreenMapError:
        if not targets:
            raise PicaError("no draw of the frame names a usable color buffer") from None
        last = [d.index for d in session.timeline.draws if start <= session.timeline.before_draw(d.index) < end]
        target = RenderTarget.of(draw_target(session, last[-1]) or targets[-1])
    if not (0 <= x < target.width and 0 <= y < target.height):
        raise PicaError(f"pixel ({x}, {y}) is outside the {target.width}x{target.height} color buffer")
    return BufferPixel(target, x, y)


def window_pixel(fb: FramebufferState, x: int, y: int) -> tuple[int, int]:
    """PNG pixel (x, y) of the color buffer ``fb`` in window coordinates (y up); ``PicaError`` outside it."""
    if not (0 <= x < fb.width and 0 <= y < fb.height):
        raise PicaError(f"pixel ({x}, {y}) is outside the {fb.width}x{fb.height} color buffer")
    return x, fb.height - 1 - y


def target_pixel(
    fb: FramebufferState | None, at: BufferPixel, all_targets: bool
) -> tuple[RenderTarget, tuple[int, int]] | None:
    """(the target, the window pixel) a pixel history looks at in render target ``fb``: ``at``'s own target, or
    with ``all_targets`` any target that holds the pixel; None for the others."""
    if fb is None:
        return None
    target = RenderTarget.of(fb)
    if target != at.target and not (all_targets and at.x < fb.width and at.y < fb.height):
        return None
    return target, window_pixel(fb, at.x, at.y)
