"""Pixel history of one render target, wherever the pixel was picked. Qt-free.

A picked pixel (``picaemu.debug.pick``: a ``BufferPixel``, its render target and colour-buffer PNG pixel, and for a
screen pick the display transfer that showed it) names one render target; its history is the fragments of the draws
into that target whose window bounds hold the pixel, each draw re-run alone (``probe.pixel_fragments``):

- ``shown_span(tl, at, span)``: the draws a pick covers: for a screen pick, those of the frame its display transfer
  ran in, up to the transfer (what the picture shows); for a colour-buffer pick, ``span``;
- ``target_draws(session, span, at, all_targets)``: (draw, its target, window pixel) of the draws in ``span`` into
  ``at``'s target (with ``all_targets``: into any target that holds the same colour-buffer pixel) whose bounds hold
  the pixel;
- ``view_history(session, cursor, view, x, y) -> ViewHistory``: the debugger window's pick, in the picture of
  ``view`` at ``cursor``: a render-target view (``TARGET_VIEWS``: the target the registers name there; (x, y) in
  window coordinates, y up, as the framebuffer panel reads them out) or a screen (``SCREEN_VIEWS``: column, row
  of the LCD picture, traced back through the display transfer that showed it; the left eye). A render-target
  pick covers the draws of the frame shown at ``cursor`` (``Timeline.frame_shown``) up to ``cursor``.
"""

from __future__ import annotations

from dataclasses import dataclass

from picaemu.debug import pick as pick_mod
from picaemu.debug import probe
from picaemu.debug.screen_map import BufferPixel, RenderTarget, screen_to_buffer
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.errors import PicaError

Span = tuple[Cursor, Cursor]  # [start, end) of the timeline
TARGET_VIEWS = ("color", "alpha", "depth", "stencil")  # pictures of the render target the registers name
SCREEN_VIEWS = ("top", "bottom")  # the LCD pictures


def shown_span(tl: Timeline, at: BufferPixel, span: Span) -> Span:
    """The draws pick ``at`` covers (module docstring)."""
    if at.event < 0:
        return span
    end = tl.normalize(at.event, 0)
    return tl.frame_start(tl.frame_of(end)), end


def target_draws(
    session: Session, span: Span, at: BufferPixel, all_targets: bool = False
) -> list[tuple[int, RenderTarget, tuple[int, int]]]:
    """(draw, its render target, window pixel) of the draws in ``span`` whose target and bounds hold ``at``."""
    tl, (start, end) = session.timeline, span
    targets: dict[bytes, tuple[RenderTarget, tuple[int, int]] | None] = {}  # framebuffer registers -> pixel
    out = []
    for d in tl.draws:
        if not start <= tl.before_draw(d.index) < end:
            continue
        key = session.state_at_draw(d.index).regs[pick_mod.FRAMEBUFFER_IDS].tobytes()
        if key not in targets:
            targets[key] = pick_mod.target_pixel(pick_mod.draw_target(session, d.index), at, all_targets)
        found = targets[key]
        if found is not None and d.may_cover(found[1]):
            out.append((d.index, *found))
    return out


@dataclass(frozen=True)
class ViewHistory:
    """A pick in the debugger window and its history: the view and (x, y) as picked, the render-target pixel it
    names, the span of draws covered and the fragments, in order."""

    view: str
    x: int
    y: int
    at: BufferPixel
    span: Span
    fragments: tuple[probe.FragmentRecord, ...]

    def text(self) -> str:
        """One line: where the pick landed."""
        where = f"{self.view} screen ({self.x}, {self.y}) = " if self.view in SCREEN_VIEWS else ""
        window = self.at.target.height - 1 - self.at.y
        return f"{where}{self.at.target.text()} window x={self.at.x} y={window}"


def view_pick(session: Session, cursor: Cursor, view: str, x: int, y: int) -> BufferPixel:
    """The render-target pixel behind (x, y) of ``view``'s picture at ``cursor`` (module docstring)."""
    session.goto(cursor)
    if view in SCREEN_VIEWS:
        transfers = [t for t in session.transfers if t.event < cursor.event]
        # every target drawn so far, the latest first: a screen may show a target an earlier frame drew
        targets = pick_mod.frame_targets(session, Cursor(0, 0), cursor)[::-1]
        return screen_to_buffer(session.replay.gx.gpu, transfers, targets, view, "left", x, y)
    if view not in TARGET_VIEWS:
        raise PicaError(f"unknown view {view!r}: one of {', '.join(TARGET_VIEWS + SCREEN_VIEWS)}")
    fb = session.replay.framebuffer_state()
    fb.check_size()
    if not (0 <= x < fb.width and 0 <= y < fb.height):
        raise PicaError(f"window pixel ({x}, {y}) is outside the {fb.width}x{fb.height} render target")
    return BufferPixel(RenderTarget.of(fb), x, fb.height - 1 - y)


def view_history(session: Session, cursor: Cursor, view: str, x: int, y: int) -> ViewHistory:
    """The history of the pixel picked at (x, y) in ``view`` at ``cursor`` (module docstring)."""
    tl = session.timeline
    at = view_pick(session, cursor, view, x, y)
    span = shown_span(tl, at, (tl.frame_start(tl.frame_shown(cursor)), cursor))
    records = tuple(
        f
        for draw, _target, window in target_draws(session, span, at)
        for f in probe.pixel_fragments(session, draw, window)
    )
    return ViewHistory(view, x, y, at, span, records)
