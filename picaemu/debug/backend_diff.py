"""One draw rendered by both backends: the debugger's "GL beside software" answer (issue 19, item 5).

``backend_diff(session, draw) -> BackendDiff``: the session moves to just before ``draw`` (from its nearest
checkpoint) and runs the draw; an ``Observer`` attached for that run hands the same ``DrawCall`` (same decoded
draw state, same memory) to the session's ``picaemu.gl.GLPipeline`` at ``on_draw_begin``, writes the GL result
back, reads it, and puts the bytes of the draw's color and depth buffers back before the software pipeline
draws — so the replay's own state stays the software reference. No stage is re-implemented or patched.

``BackendDiff``: ``software`` and ``gl`` (H, W, 4) uint8 RGBA color buffers after the draw (row 0 = top, the
draw's render target), ``difference`` (H, W, 3) uint8 (``picaemu.gl.compare.difference_image``: gray = 16 x the
per-pixel difference, red over 2 levels), ``figures`` (``ImageDiff``: max error, share over 2 levels, PSNR),
``fallback``: the ``picaemu.gl.rules`` rule that sent the draw to the software pipeline (then both pictures come
from it), or None when GL rendered it. Without EGL, ``BackendUnavailable`` (one line).
``difference_overlay(diff)``: the difference as an RGBA overlay (the GUI draws it over the GL picture).
"""

from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.fragment.framebuffer import FramebufferState, read_color_image
from picaemu.gl.compare import ImageDiff, compare, difference_image
from picaemu.observer import Observer

if TYPE_CHECKING:
    from picaemu.debug.session import Session
    from picaemu.gl.backend import GLPipeline

_pipelines: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Session -> its GLPipeline


@dataclass(frozen=True)
class BackendDiff:
    draw: int
    software: np.ndarray
    gl: np.ndarray
    difference: np.ndarray
    figures: ImageDiff
    fallback: str | None

    def summary(self) -> str:
        how = f"GL handed it to the software pipeline ({self.fallback})" if self.fallback else "rendered by GL"
        return f"draw {self.draw}: {how}; {self.figures.line()}"


OVERLAY_ALPHA = 220  # opacity of the difference overlay where the pictures differ


def difference_overlay(diff: BackendDiff) -> np.ndarray:
    """(H, W, 4) uint8: ``diff.difference`` where the pictures differ (gray = 16 x the difference, red over 2
    levels), transparent where they are equal; drawn over the GL picture by the GUI."""
    alpha = np.where(diff.difference.any(axis=2), OVERLAY_ALPHA, 0).astype(np.uint8)
    return np.concatenate([diff.difference, alpha[..., None]], axis=2)


def gl_pipeline(session: Session) -> GLPipeline:
    """The session's OpenGL pipeline, made on first use (``BackendUnavailable`` without EGL)."""
    pipeline = _pipelines.get(session)
    if pipeline is None:
        from picaemu import gl

        pipeline = _pipelines[session] = gl.GLPipeline()
    return pipeline


class _GLFirst(Observer):
    """At ``draw``'s begin: render it with GL, keep the picture, restore the buffers' bytes."""

    def __init__(self, draw: int, pipeline: GLPipeline) -> None:
        self.draw, self.pipeline = draw, pipeline
        self.image: np.ndarray | None = None
        self.fallback: str | None = None

    def on_draw_begin(self, call: DrawCall) -> None:
        if call.index != self.draw:
            return
        fb = call.draw_state.framebuffer
        buffers = [(view, view.copy()) for view in (fb.color_bytes(call.memory), fb.depth_bytes(call.memory))]
        gl_call = dataclasses.replace(call, stats={})
        gl_call.__dict__["draw_state"] = call.draw_state  # the one decoded state (cached_property's slot)
        before = dict(self.pipeline.fallbacks)
        try:
            self.pipeline.draw(gl_call)
            self.pipeline.sync()
            self.image = read_color_image(call.memory, fb)
        finally:
            for view, saved in buffers:
                view[:] = saved
        self.fallback = next((rule for rule, n in self.pipeline.fallbacks.items() if n > before.get(rule, 0)), None)


def backend_diff(session: Session, draw: int) -> BackendDiff:
    """See the module docstring."""
    pipeline = gl_pipeline(session)
    tl = session.timeline
    session.goto(tl.before_draw(draw))
    observer = _GLFirst(draw, pipeline)
    processor = session.replay.processor
    processor.attach(observer)
    try:
        session.advance(tl.after_draw(draw))
    finally:
        processor.detach(observer)
    if observer.image is None:
        raise PicaError(f"draw {draw} did not run between its cursors")
    session.replay.sync_memory()
    software = read_color_image(session.replay.memory, FramebufferState.from_regs(session.state_at_draw(draw).regs))
    return BackendDiff(
        draw,
        software,
        observer.image,
        difference_image(software, observer.image),
        compare(software, observer.image),
        observer.fallback,
    )
