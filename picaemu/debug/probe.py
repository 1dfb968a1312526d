"""Draw probes: re-run one draw from its checkpoint with a stage observer that asks for fragment fates attached
and read what the compiled fragment pass recorded. Qt-free. Headless replays pay nothing: the observers exist only
while a probe runs (STYLE section 8); no stage is wrapped or re-implemented here.

Route: the probe's observers watch fates and depth/stencil tests only, so a draw the fused fragment side covers
stays on the compiled route while it is probed (``picaemu.fused.observed``: the fused plan's compiled shading, the
fates, colors and test values recorded as arrays by the compiled per-fragment pass; its vertex side stays compiled
too, as no probe watches vertices); the draw's route (``DrawCall.route``) names why one did not
(``picaemu stats --per draw``'s reasons: the plan's refusals, a texture outside memory). The fragment debugger
(``picaemu.debug.fragment``) probes the pixel on this route (fate and buffers), then again with a watcher that
asks for per-stage values, which only the readable reference reports (that run's route says "stage observer
watches fragment values"), and compares the two.

``probe_draw(session, draw, pixel=None) -> DrawProbe`` moves the session to just before ``draw``'s trigger,
attaches a stage observer that asks for fates (``on_fragments`` receives ``picaemu.pipeline_seams.FragmentFates``:
every rasterized fragment, scissor rejects included, with its ``picaemu.fragment.ops.Fate``, interpolated inputs,
TEV output and its pixel's color before and after it) and runs the trigger packet. In image orientation (row 0 =
top of the render target, window y = H - 1 - row) it returns:

- ``fates``: (len(Fate), H, W) uint16, fragments per pixel for each fate (``fates[Fate.DEPTH]`` counts the draw's
  fragments that failed the depth test there);
- ``overdraw``: (H, W) uint16 fragments per pixel that passed the scissor (the ones that were shaded);
- ``edges``: (H, W) bool pixels on the boundary of a primitive's coverage (the wireframe as the rasterizer
  covered it; a pixel shows the last primitive that was shaded there);
- ``route``: the draw's route while it was probed (``picaemu.draw.DrawCall.route``);
- with ``pixel = (x, y)`` in window coordinates (y up), ``fragments``: one ``FragmentRecord`` per rasterized
  fragment of the draw at that pixel, in rasterization order, with its fate and the color buffer's pixel before
  and after it, as the pass recorded them. Fragments that passed the scissor carry their interpolated inputs and
  TEV output; scissor-rejected ones carry position, depth, primitive and fate (the scissor test precedes
  shading). The depth buffer's value before and after each comes from the depth/stencil values the pipeline
  reports to a ``PixelObserver`` (a ``StageObserver`` with ``fragment_tests``) for each fragment that reached
  the tests, and from the pixel read before and after the draw; ``observer`` may be a subclass that also watches
  the pixel's shading (``picaemu.debug.fragment``).

The probe leaves the render target modified; the session is marked dirty and restores on its next move.
``pixel_probe(session, draw, pixel)`` / ``pixel_fragments``: the same fragment records (and the route), with only
the pixel's neighbourhood shaded (``StageObserver.fragment_window``). ``pixel_history(session, pixel, until)``
runs it for each draw whose recorded window bounds hold the pixel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from picaemu.debug import state_views
from picaemu.debug.pixel import PixelObserver, PixelValues, read_pixel
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.draw import DrawCall, observed_sink
from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.framebuffer import FramebufferState
from picaemu.fragment.ops import Fate
from picaemu.observer import FateWatcher, StageObserver
from picaemu.pipeline import FragmentFates

FATE_TEXT = {
    Fate.WRITTEN: "written",
    Fate.SCISSOR: "scissor test",
    Fate.ALPHA: "alpha test",
    Fate.STENCIL: "stencil test",
    Fate.DEPTH: "depth test",
}
NO_COLOR_TEXT = "passed (color writes off)"  # WRITTEN in a draw with COLORBUFFER_WRITE = 0
SHADOW_TEXT = "written (shadow map)"  # WRITTEN in a shadow-map rendering draw
N_FATES = len(Fate)


@dataclass(frozen=True)
class FragmentRecord:
    """One fragment at a pixel. ``code``: its exact ``Fate``; ``fate``: the same as text (``FATE_TEXT``, or
    ``NO_COLOR_TEXT`` / ``SHADOW_TEXT`` for WRITTEN). The shading fields are None for scissor-rejected fragments;
    ``blended`` (the color it wrote: blend / logic op under the color write mask, as stored) only for fragments
    whose color was written. ``color_before`` / ``color_after``: the color buffer's RGBA 0..255 at the pixel around
    this fragment, as the fragment pass recorded them; ``depth_before`` / ``depth_after``: the depth buffer's value
    there, 0..1 (None when the depth buffer cannot be read)."""

    draw: int
    x: int
    y: int
    code: Fate
    fate: str
    primitive: int | None = None
    depth: float | None = None
    w: float | None = None
    color: tuple[float, ...] | None = None
    texcoord0: tuple[float, ...] | None = None
    texcoord1: tuple[float, ...] | None = None
    texcoord2: tuple[float, ...] | None = None
    tev: tuple[int, ...] | None = None
    blended: tuple[int, ...] | None = None
    color_before: tuple[int, ...] | None = None
    color_after: tuple[int, ...] | None = None
    depth_before: float | None = None
    depth_after: float | None = None


@dataclass(frozen=True)
class DrawProbe:
    draw: int
    overdraw: np.ndarray
    edges: np.ndarray
    fates: np.ndarray
    fragments: tuple[FragmentRecord, ...] = ()
    stats: dict = field(default_factory=dict)
    route: str = ""  # the draw's route while probed (``DrawCall.route``: "compiled", or "reference: <reasons>")


class ProbeMismatch(PicaError):
    """The fragment observer's fates and the stage observer's depth/stencil tests of a pixel do not line up (a
    pipeline change broke the probe's assumptions)."""


@contextmanager
def observing(session: Session, observer: StageObserver) -> Iterator[None]:
    """Attach ``observer`` as the session pipeline's stage observer for the duration of the block."""
    pipeline = observed_sink(session.replay.pipeline)
    previous = pipeline.stage_observer
    pipeline.stage_observer = observer
    try:
        yield
    finally:
        pipeline.stage_observer = previous


def rerun(session: Session, start: Cursor, end: Cursor, on_fates: Callable[[DrawCall, FragmentFates], None]) -> None:
    """Replay from ``start`` (nearest checkpoint) through every draw up to ``end`` with ``on_fates`` receiving
    each draw's fragment fates; a failure leaves the session marked for a restore on its next move."""
    rerun_observed(session, start, end, FateWatcher(on_fates))


def rerun_observed(session: Session, start: Cursor, end: Cursor, observer: StageObserver) -> None:
    """Replay from ``start`` (nearest checkpoint) through every draw up to ``end`` with ``observer`` as the
    pipeline's stage observer; a failure leaves the session marked for a restore on its next move."""
    session.goto(start)
    with observing(session, observer):
        try:
            session.advance(end)
        except BaseException:
            session.mark_dirty()
            raise


def _inside(fb: FramebufferState, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(F,) bool: window positions inside the render target; (F,) int64 their image rows (H - 1 - y)."""
    rows = fb.height - 1 - y.astype(np.int64)
    return (rows >= 0) & (rows < fb.height) & (x >= 0) & (x < fb.width), rows


class _Recording:
    """What the fragment observer delivered for the probed draw."""

    def __init__(self, draw: int, pixel: tuple[int, int] | None, fb: FramebufferState) -> None:
        self.draw, self.pixel, self.fb = draw, pixel, fb
        self.call: DrawCall | None = None
        self.fates: FragmentFates | None = None

    def on_fates(self, call: DrawCall, fates: FragmentFates) -> None:
        if call.index == self.draw:
            self.call, self.fates = call, fates

    def fate_counts(self) -> np.ndarray:
        """(N_FATES, H, W) uint16 fragments per fate and pixel."""
        h, w = self.fb.height, self.fb.width
        if self.fates is None:
            return np.zeros((N_FATES, h, w), np.uint16)
        f = self.fates
        ok, rows = _inside(self.fb, f.x, f.y)
        flat = (f.fate[ok].astype(np.int64) * h + rows[ok]) * w + f.x[ok]
        counts = np.bincount(flat, minlength=N_FATES * h * w).reshape(N_FATES, h, w)
        return np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)

    def primitives(self) -> np.ndarray:
        """(H, W) int64: the last primitive shaded at each pixel (-1: none)."""
        prims = np.full((self.fb.height, self.fb.width), -1, np.int64)
        f = self.fates
        if f is None or f.fragments is None:
            return prims
        ok, rows = _inside(self.fb, f.x, f.y)
        ok &= f.fate != Fate.SCISSOR
        prims[rows[ok], f.x[ok]] = f.fragments.primitive[ok]
        return prims


def _edges(prims: np.ndarray) -> np.ndarray:
    """Covered pixels whose right/left/up/down neighbour shows another primitive (or nothing)."""
    p = np.pad(prims, 1, constant_values=-1)
    c = p[1:-1, 1:-1]
    diff = (c != p[1:-1, 2:]) | (c != p[1:-1, :-2]) | (c != p[2:, 1:-1]) | (c != p[:-2, 1:-1])
    return diff & (c >= 0)


def _fate_text(code: Fate, fates: FragmentFates) -> str:
    if code is Fate.WRITTEN and fates.shadow:
        return SHADOW_TEXT
    if code is Fate.WRITTEN and not fates.color_written:
        return NO_COLOR_TEXT
    return FATE_TEXT[code]


TESTED = frozenset({Fate.STENCIL, Fate.DEPTH, Fate.WRITTEN})  # fates of fragments that reached depth/stencil


def _records(
    rec: _Recording, observer: PixelObserver, start: PixelValues, end: PixelValues
) -> tuple[FragmentRecord, ...]:
    """The pixel's fragments, in order, from the fragment observer's records, with the depth buffer's values."""
    f, pixel = rec.fates, rec.pixel
    if f is None or pixel is None or f.fragments is None:
        return ()
    fr = f.fragments
    vec = lambda a, i: tuple(float(v) for v in a[i])  # noqa: E731
    ints = lambda a, i: tuple(int(v) for v in a[i])  # noqa: E731
    written = f.color_written and not f.shadow
    out = []
    for i in np.flatnonzero((f.x == pixel[0]) & (f.y == pixel[1])):
        code = Fate(int(f.fate[i]))
        r = FragmentRecord(
            rec.draw,
            pixel[0],
            pixel[1],
            code,
            _fate_text(code, f),
            primitive=int(fr.primitive[i]),
            depth=float(fr.depth[i]),
        )
        if not f.shadow:
            r = replace(r, color_before=ints(f.color_before, i), color_after=ints(f.color_after, i))
        if code is Fate.WRITTEN and written:
            r = replace(r, blended=r.color_after)
        if code is not Fate.SCISSOR:
            r = replace(
                r,
                w=float(fr.w[i]),
                color=vec(fr.color, i),
                texcoord0=vec(fr.texcoord0, i),
                texcoord1=vec(fr.texcoord1, i),
                texcoord2=vec(fr.texcoord2, i),
                tev=ints(f.tev, i),
            )
        out.append(r)
    return _depth_values(out, rec, observer, start, end)


def _depth_values(
    records: list[FragmentRecord], rec: _Recording, observer: PixelObserver, start: PixelValues, end: PixelValues
) -> tuple[FragmentRecord, ...]:
    """``records`` with the depth buffer's value before and after each fragment: the stored depths the observer saw
    at each depth/stencil test (the draw's last ones from the buffer after the draw); colors of a shadow-map draw
    (not recorded by the pass) from the pixel before and after the draw."""
    tested = [i for i, r in enumerate(records) if r.code in TESTED] if observer.tests else []
    if len(tested) != len(observer.tests):
        raise ProbeMismatch(
            f"draw {rec.draw} pixel {rec.pixel}: {len(tested)} fragments reached the depth/stencil "
            f"tests, the observer saw {len(observer.tests)}"
        )
    scale = fbm.depth_max(rec.fb.depth_format)
    stored = {i: observer.tests[k][1] / scale for k, i in enumerate(tested)}
    depth, out = start.depth, []
    for i, r in enumerate(records):
        depth = stored.get(i, depth)
        after_depth = depth
        if i in stored:  # the next tested fragment's stored depth, or the buffer after the draw
            after_depth = next((stored[k] for k in tested if k > i), end.depth)
        if r.color_before is None:
            r = replace(r, color_before=start.color, color_after=end.color)
        out.append(replace(r, depth_before=depth, depth_after=after_depth))
        depth = after_depth
    return tuple(out)


def probe_draw(
    session: Session, draw: int, pixel: tuple[int, int] | None = None, observer: PixelObserver | None = None
) -> DrawProbe:
    """Re-run ``draw`` with the fragment observer attached; see the module docstring (``observer``: the
    ``PixelObserver`` to attach when probing a pixel; a plain one by default)."""
    if pixel is not None:
        observer = observer or PixelObserver()
    rec, values = _run_probe(session, draw, pixel, observer)
    stats = dict(rec.call.stats) if rec.call is not None else {}
    fates = rec.fate_counts()
    overdraw = (fates.sum(axis=0, dtype=np.int64) - fates[Fate.SCISSOR]).astype(np.uint16)
    records = () if values is None or observer is None else _records(rec, observer, *values)
    route = rec.call.route if rec.call is not None else ""
    return DrawProbe(draw, overdraw, _edges(rec.primitives()), fates, records, stats, route)


@dataclass(frozen=True)
class PixelProbe:
    """A probe of one pixel: its fragments (``FragmentRecord``, in rasterization order) and the draw's route while
    it was probed (``DrawCall.route``)."""

    fragments: tuple[FragmentRecord, ...]
    route: str


def pixel_probe(
    session: Session, draw: int, pixel: tuple[int, int], observer: PixelObserver | None = None
) -> PixelProbe:
    """``probe_draw(session, draw, pixel, observer)``'s records and route, with only the pixel's 3x3 neighbourhood
    shaded and tested (``StageObserver.fragment_window``: the pixel and the neighbours its texture LOD reads): a
    wide draw's re-run costs its rasterization, not its whole fragment side."""
    observer = observer or PixelObserver()
    observer.fragment_window = (pixel[0] - 1, pixel[1] - 1, pixel[0] + 1, pixel[1] + 1)
    rec, values = _run_probe(session, draw, pixel, observer)
    assert values is not None  # a pixel with its observer: the pixel's values are read
    return PixelProbe(_records(rec, observer, *values), rec.call.route if rec.call is not None else "")


def pixel_fragments(
    session: Session, draw: int, pixel: tuple[int, int], observer: PixelObserver | None = None
) -> tuple[FragmentRecord, ...]:
    """``pixel_probe(session, draw, pixel, observer).fragments``: the pixel's fragment records."""
    return pixel_probe(session, draw, pixel, observer).fragments


def _run_probe(
    session: Session, draw: int, pixel: tuple[int, int] | None, observer: PixelObserver | None
) -> tuple[_Recording, tuple[PixelValues, PixelValues] | None]:
    """Re-run ``draw`` from before its trigger with ``observer`` (a pixel's; a ``FateWatcher`` without a pixel)
    attached: what it recorded, and the pixel's buffer values before and after the draw (None without a pixel and
    its observer)."""
    tl = session.timeline
    session.goto(tl.before_draw(draw))
    fb = FramebufferState.from_regs(session.state_at_draw(draw).regs)
    rec = _Recording(draw, pixel, fb)
    watcher: StageObserver = FateWatcher(rec.on_fates)
    start = None
    if pixel is not None and observer is not None:
        watcher, observer.fates_to = observer, rec.on_fates
        session.replay.sync_memory()
        start = read_pixel(session.replay.memory, fb, pixel)
        observer.target = int(
            fbm.pixel_index(np.array([pixel[0]]), np.array([pixel[1]]), fb.width, fb.height, fb.flipped)[0]
        )
    try:
        with observing(session, watcher):
            session.advance(tl.after_draw(draw))
    finally:
        session.mark_dirty()
    if pixel is None or start is None:
        return rec, None
    return rec, (start, read_pixel(session.replay.memory, fb, pixel))


def record_vertices(session: Session, draw: int) -> state_views.DrawVertices:
    """Draw ``draw``'s geometry as the pipeline computes it: the draw re-run from its nearest checkpoint with a
    ``state_views.VertexRecorder`` as the pipeline's stage observer (no stage re-implemented here)."""
    tl = session.timeline
    recorder = state_views.VertexRecorder(draw)
    rerun_observed(session, tl.before_draw(draw), tl.after_draw(draw), recorder)
    return recorder.result()


def frame_fragment_map(session: Session, cursor: Cursor, kind: str = "depth-complexity") -> np.ndarray:
    """(H, W) uint32 ATTILA-style fragment map of the frame ``cursor`` lies in, up to ``cursor``: fragments that
    reached each pixel past the scissor ("depth-complexity") or were written ("overdraw"), row 0 = top. The frame is
    re-run from its start with ``picaemu.analysis.stats.FragmentCounter`` as the fragment observer."""
    from picaemu.analysis.stats import FragmentCounter

    tl = session.timeline
    start = tl.frame_start(tl.frame_shown(cursor))
    counter = FragmentCounter(kind)
    rerun(session, start, cursor, counter.observe)
    if not counter.maps:
        fb = session.replay.framebuffer_state()
        return np.zeros((fb.height, fb.width), np.uint32)
    return counter.maps[0]


def candidate_draws(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[int]:
    """The draws before ``until`` (default: the end) whose triangles' window bounds hold ``pixel`` (recorded while
    indexing): the only draws that can have rasterized a fragment there."""
    tl = session.timeline
    stop = until if until is not None else tl.end
    return [d.index for d in tl.draws if tl.after_draw(d.index) <= stop and d.may_cover(pixel)]


def draws_at_pixel(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[int]:
    """The draws before ``until`` (default: the end) that rasterized a fragment at window pixel ``pixel``
    (scissor-rejected ones included): each candidate draw (``candidate_draws``) re-run from its nearest checkpoint
    with a light fragment observer."""
    tl = session.timeline
    hits: list[int] = []

    def seen(call: DrawCall, fates: FragmentFates) -> None:
        if np.any((fates.x == pixel[0]) & (fates.y == pixel[1])):
            hits.append(call.index)

    for draw in candidate_draws(session, pixel, until):
        rerun(session, tl.before_draw(draw), tl.after_draw(draw), seen)
    return hits


def pixel_history(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[FragmentRecord]:
    """Every fragment of every draw before ``until`` (default: the end) rasterized at window pixel ``pixel``, in
    order, with its exact fate (``FragmentRecord``): only the draws whose bounds hold the pixel are re-run, each
    from its nearest checkpoint."""
    out: list[FragmentRecord] = []
    for d in candidate_draws(session, pixel, until):
        out += pixel_fragments(session, d, pixel)
    return out


# ------------------------------------------------------------------------------------------------- overlays
WIRE_RGBA = (0, 255, 64, 255)
OVERDRAW_ALPHA = 170
FATE_RGBA = {
    Fate.DEPTH: (255, 0, 255, 200),
    Fate.STENCIL: (255, 160, 0, 200),
    Fate.SCISSOR: (0, 160, 255, 200),
    Fate.ALPHA: (255, 255, 0, 200),
    Fate.WRITTEN: (0, 255, 0, 200),
}


def wireframe_overlay(probe: DrawProbe) -> np.ndarray:
    """(H, W, 4) uint8: the primitive boundaries of the probed draw, transparent elsewhere."""
    out = np.zeros((*probe.edges.shape, 4), np.uint8)
    out[probe.edges] = WIRE_RGBA
    return out


def count_overlay(counts: np.ndarray) -> np.ndarray:
    """(H, W, 4) uint8: per-pixel fragment counts as ``picaemu.analysis.stats.heatmap`` colors, transparent where
    none."""
    from picaemu.analysis.stats import heatmap

    out = np.zeros((*counts.shape, 4), np.uint8)
    out[..., :3] = heatmap(counts.astype(np.int64))
    out[..., 3] = np.where(counts > 0, OVERDRAW_ALPHA, 0)
    return out


def overdraw_overlay(probe: DrawProbe) -> np.ndarray:
    """(H, W, 4) uint8: the probed draw's fragments per pixel (``count_overlay``)."""
    return count_overlay(probe.overdraw)


def fate_mask(probe: DrawProbe, fate: Fate) -> np.ndarray:
    """(H, W) bool: pixels where at least one fragment of the probed draw met ``fate`` (e.g. failed the depth
    test), from the observer's exact fates."""
    return probe.fates[fate] > 0


def fate_overlay(probe: DrawProbe, fate: Fate) -> np.ndarray:
    """(H, W, 4) uint8: ``FATE_RGBA[fate]`` where ``fate_mask``, transparent elsewhere."""
    mask = fate_mask(probe, fate)
    out = np.zeros((*mask.shape, 4), np.uint8)
    out[mask] = FATE_RGBA[fate]
    return out


def scissor_rect(regs: np.ndarray, height: int) -> tuple[str, tuple[int, int, int, int] | None]:
    """(mode text, (column, row, width, height) of the scissor box in image pixels, or None when disabled)."""
    from picaemu.regs import access

    mode = str(access.value(regs, "SCISSORTEST_MODE", "mode"))
    if mode.startswith("disabled"):
        return mode, None
    x1, y1 = access.raw(regs, "SCISSORTEST_POS", "x1"), access.raw(regs, "SCISSORTEST_POS", "y1")
    x2, y2 = access.raw(regs, "SCISSORTEST_DIM", "x2"), access.raw(regs, "SCISSORTEST_DIM", "y2")
    return mode, (x1, height - 1 - y2, x2 - x1 + 1, y2 - y1 + 1)
