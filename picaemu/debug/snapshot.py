"""Immutable snapshots of the replay at one cursor, built on the worker thread and handed to the GUI. Qt-free.

``take(session, cursor) -> Snapshot``: moves the session to ``cursor`` and copies what the panels show:
registers (0x300,) uint32 now and at the previous draw's trigger (for change highlights: at a draw, the draw
before it; between draws, the last one), the GPU state (shader
memories, LUTs), the render target named by the registers (color (H, W, 4) uint8, depth (H, W) uint32, stencil
(H, W) uint8, row 0 = top), both LCD screens ((240, 400|320, 3) uint8) and the framebuffer's own description.
A view that cannot be produced (no render target configured yet, bad format) leaves None and a message in
``errors[name]``; it never fails the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.errors import PicaError
from picaemu.state import GpuState


@dataclass(frozen=True)
class Snapshot:
    cursor: Cursor
    frame: int
    draws_done: int
    regs: np.ndarray
    prev_regs: np.ndarray | None  # registers at the trigger of draw ``prev_draw``
    state: GpuState
    images: dict[str, np.ndarray] = field(default_factory=dict)  # color, depth, stencil, top, bottom
    fb_text: str = ""
    errors: dict[str, str] = field(default_factory=dict)
    prev_draw: int | None = None  # None with ``prev_regs``: the registers the capture starts with
    written: tuple[int, ...] = ()  # register ids the packet before the cursor wrote (a packet step's changes)
    gpu_regs: np.ndarray | None = None  # (0x1000,) uint32 external GPU registers (picaemu.regs.external)

    @property
    def last_draw(self) -> int | None:
        return self.draws_done - 1 if self.draws_done else None


def _try(errors: dict[str, str], images: dict[str, np.ndarray], name: str, fn) -> None:
    try:
        images[name] = fn()
    except PicaError as err:
        errors[name] = f"{type(err).__name__}: {err}"


def take(session: Session, cursor: Cursor) -> Snapshot:
    """Move to ``cursor`` and copy the views (see the module docstring)."""
    session.goto(cursor)
    tl = session.timeline
    r = session.replay
    done = tl.draw_count_before(session.cursor)
    # "changed since the previous draw": at a draw, the draw before it; between draws, the last one
    prev_draw = done - 2 if done and tl.after_draw(done - 1) == session.cursor else done - 1
    # before the first draw, "changed" means since the start of the capture
    prev = (session.state_at_draw(prev_draw).regs if prev_draw >= 0 else r.capture.state.regs).astype(np.uint32)
    written: tuple[int, ...] = ()
    if session.cursor.packet and len(tl.writes):
        rows = tl.writes[(tl.writes[:, 0] == session.cursor.event) & (tl.writes[:, 1] == session.cursor.packet - 1)]
        written = tuple(int(i) for i in dict.fromkeys(rows[:, 2].tolist()))
    images: dict[str, np.ndarray] = {}
    errors: dict[str, str] = {}
    fb_text = ""
    try:
        fb = r.framebuffer_state()
        fb_text = (
            f"{fb.width}x{fb.height} color {fb.color_format.name} @ 0x{fb.color_address:08X}, "
            f"depth {fb.depth_format.name} @ 0x{fb.depth_address:08X}"
        )
        _try(errors, images, "color", lambda: r.color_buffer().copy())
        depth: dict[str, np.ndarray] = {}
        _try(errors, depth, "ds", lambda: tuple(a.copy() for a in r.depth_buffer()))
        if "ds" in depth:
            images["depth"], images["stencil"] = depth["ds"]
        else:
            errors["depth"] = errors["stencil"] = errors.pop("ds")
    except PicaError as err:
        why = (
            f"no draw has run yet, and the registers name no usable render target ({err})"
            if not done
            else f"{type(err).__name__}: {err}"
        )
        for name in ("color", "depth", "stencil"):
            errors[name] = why
    for screen in ("top", "bottom"):
        _try(errors, images, screen, lambda s=screen: r.screen(s).copy())
    return Snapshot(
        session.cursor,
        tl.frame_of(session.cursor),
        done,
        r.state.regs.copy(),
        prev,
        r.state.copy(),
        images,
        fb_text,
        errors,
        prev_draw if prev_draw >= 0 else None,
        written,
        r.gx.gpu.copy(),
    )
