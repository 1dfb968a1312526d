"""Draw probes: re-run one draw from its checkpoint with the pipeline's fragment observer attached (exact fates)
and recording color stages (interpolated inputs, TEV output, color written). Qt-free. Headless replays pay nothing:
the observer and the recording exist only while a probe runs (STYLE section 8).

``probe_draw(session, draw, pixel=None) -> DrawProbe`` moves the session to just before ``draw``'s trigger,
attaches ``Pipeline.fragment_observer`` (``picaemu.pipeline.FragmentFates``: every rasterized fragment, scissor
rejects included, with its ``picaemu.fragment.ops.Fate``), wraps the ``color_stages`` seam and runs the trigger
packet. In image orientation (row 0 = top of the render target, window y = H - 1 - row) it returns:

- ``fates``: (len(Fate), H, W) uint16, fragments per pixel for each fate (``fates[Fate.DEPTH]`` counts the draw's
  fragments that failed the depth test there), straight from the observer;
- ``overdraw``: (H, W) uint16 fragments per pixel that passed the scissor (the ones that were shaded);
- ``edges``: (H, W) bool pixels on the boundary of a primitive's coverage (the wireframe as the rasterizer
  covered it; a pixel shows the last primitive that was shaded there);
- with ``pixel = (x, y)`` in window coordinates (y up), ``fragments``: one ``FragmentRecord`` per rasterized
  fragment of the draw at that pixel, in rasterization order, with its observer fate. Fragments that passed the
  scissor carry their interpolated inputs and TEV output (the shaded fragments at the pixel, in the same order);
  scissor-rejected ones carry position and fate only (the scissor test precedes interpolation and shading).
  Written fragments carry the color written (blend output under the draw's color write mask, before the
  buffer format's quantization): only that pixel's fragments pass the (wrapped) alpha test, which makes the
  pipeline's per-layer path call ``blend`` once per written fragment of the pixel, in order.
  (The probe's ``stats`` then count the other pixels' fragments as alpha-killed.) Every record also carries the
  pixel's color and depth buffer values before and after it: read from memory before and after the draw, and in
  between from the depth/stencil values the pipeline reports to a ``PixelObserver`` (a ``StageObserver`` with
  ``fragment_tests``) for each fragment that reached the depth/stencil tests; ``observer`` may be a subclass
  that also watches the pixel's shading (``picaemu.debug.fragment``).

The probe leaves the render target modified; the session is marked dirty and restores on its next move.
``pixel_history(session, pixel, until)`` replays up to ``until`` once with a light observer to find the draws
that rasterized a fragment at the pixel (scissor-rejected ones included), then probes each of those draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from picaemu.debug import state_views
from picaemu.debug.pixel import PixelObserver, PixelValues, read_pixel, stored_color
from picaemu.debug.session import Session
from picaemu.debug.timeline import Cursor
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.framebuffer import FramebufferState
from picaemu.fragment.ops import Fate
from picaemu.memory import PhysicalMemory
from picaemu.observer import Observer, StageObserver
from picaemu.pipeline import FragmentFates, FragmentObserver
from picaemu.raster.fragments import Fragments

FATE_TEXT = {Fate.WRITTEN: "written", Fate.SCISSOR: "scissor test", Fate.ALPHA: "alpha test",
             Fate.STENCIL: "stencil test", Fate.DEPTH: "depth test"}
NO_COLOR_TEXT = "passed (color writes off)"  # WRITTEN in a draw with COLORBUFFER_WRITE = 0
SHADOW_TEXT = "written (shadow map)"  # WRITTEN in a shadow-map rendering draw
N_FATES = len(Fate)


@dataclass(frozen=True)
class FragmentRecord:
    """One fragment at a pixel. ``code``: its exact ``Fate``; ``fate``: the same as text (``FATE_TEXT``, or
    ``NO_COLOR_TEXT`` / ``SHADOW_TEXT`` for WRITTEN). The shading fields are None for scissor-rejected fragments;
    ``blended`` (blend output under the color write mask, (4,) 0..255) only for fragments whose color was
    written. ``color_before`` / ``color_after``: the color buffer's RGBA 0..255 at the pixel around this fragment
    (as the buffer format stores it); ``depth_before`` / ``depth_after``: the depth buffer's value there, 0..1
    (None when the depth buffer cannot be read)."""

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


class ProbeMismatch(PicaError):
    """The observer's fates and the recorded shading/blend calls of a pixel do not line up (a pipeline change
    broke the probe's assumptions)."""


@contextmanager
def observing(session: Session, observer: FragmentObserver) -> Iterator[None]:
    """Attach ``observer`` as the session pipeline's fragment observer for the duration of the block."""
    pipeline = session.replay.pipeline
    if not hasattr(pipeline, "fragment_observer"):
        raise PicaError(f"fragment fates need picaemu.pipeline.Pipeline, the replay runs {type(pipeline).__name__}")
    previous = pipeline.fragment_observer
    pipeline.fragment_observer = observer
    try:
        yield
    finally:
        pipeline.fragment_observer = previous


def rerun(session: Session, start: Cursor, end: Cursor, observer: FragmentObserver) -> None:
    """Replay from ``start`` (nearest checkpoint) through every draw up to ``end`` with ``observer`` as the
    fragment observer; a failure leaves the session marked for a restore on its next move."""
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
    """What the observer and the wrapped stages saw during one draw."""

    def __init__(self, draw: int, pixel: tuple[int, int] | None, fb: FramebufferState,
                 mask: tuple[bool, bool, bool, bool]) -> None:
        self.draw, self.pixel, self.fb = draw, pixel, fb
        self.mask = np.array(mask, bool)  # the draw's color write mask (DEPTH_COLOR_MASK red..alpha)
        self.active = False
        self.call: DrawCall | None = None
        self.prims = np.full((fb.height, fb.width), -1, np.int64)
        self.fates: FragmentFates | None = None
        self.shaded: list[tuple[Fragments, np.ndarray, int]] = []  # the pixel's shaded fragments: (chunk, TEV, row)
        self.sel: np.ndarray | None = None
        self.blends: list[np.ndarray] = []  # color written by each written fragment at the pixel, in order

    def on_fates(self, call: DrawCall, fates: FragmentFates) -> None:
        if call.index == self.draw:
            self.fates = fates

    def on_shade(self, frags: Fragments, color: np.ndarray) -> None:
        if self.pixel is None:
            ok, rows = _inside(self.fb, frags.x, frags.y)
            self.prims[rows[ok], frags.x[ok]] = frags.primitive[ok]
            return
        self.sel = (frags.x == self.pixel[0]) & (frags.y == self.pixel[1])
        if self.sel.any():  # a draw too large for one raster chunk shades its fragments in several calls
            picked, tev = frags.select(self.sel), color[self.sel]
            self.shaded += [(picked, tev, row) for row in range(len(picked))]

    def on_alpha(self, alive: np.ndarray) -> np.ndarray:
        return alive if self.sel is None else alive & self.sel

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


class _Stages:
    """Wraps a ``ColorStages``; records while ``rec.active``. Probing a pixel, it offers no ``blend_program`` and
    always reads the destination, so the pipeline takes its per-layer path and ``blend`` runs per written
    fragment; probing overlays, it passes the inner stages' compiled blend through."""

    def __init__(self, inner, rec: _Recording) -> None:
        self.inner, self.rec = inner, rec

    def shade(self, frags: Fragments, memory: PhysicalMemory, counters: dict | None = None,
              observer: StageObserver | None = None) -> np.ndarray:
        color = (self.inner.shade(frags, memory, counters) if observer is None
                 else self.inner.shade(frags, memory, counters, observer))
        if self.rec.active:
            self.rec.on_shade(frags, color)
        return color

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        alive = self.inner.alpha_test(color)
        return self.rec.on_alpha(alive) if self.rec.active else alive

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        out = self.inner.blend(src, dst) if self.inner.reads_destination else src
        if self.rec.active and self.rec.pixel is not None:
            self.rec.blends.append(np.where(self.rec.mask, out[0], dst[0]).astype(np.uint8))
        return out

    @property
    def blend_program(self):
        """The inner stages' ``blend_program`` when probing overlays (compiled pass), else None (layered)."""
        return getattr(self.inner, "blend_program", None) if self.rec.pixel is None else None

    @property
    def reads_destination(self) -> bool:
        return True if self.rec.pixel is not None else self.inner.reads_destination


class _Activator(Observer):
    def __init__(self, rec: _Recording) -> None:
        self.rec = rec

    def on_draw_begin(self, call: DrawCall) -> None:
        self.rec.active = call.index == self.rec.draw
        if self.rec.active:
            self.rec.call = call

    def on_draw_end(self, call: DrawCall) -> None:
        self.rec.active = False


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


def _records(rec: _Recording, observer: PixelObserver, start: PixelValues,
             end: PixelValues) -> tuple[FragmentRecord, ...]:
    """The pixel's fragments: observer fates joined in order with the shaded fragments and the written colors."""
    fates = rec.fates
    if fates is None or rec.pixel is None:
        return ()
    codes = [Fate(int(c)) for c in fates.fate[(fates.x == rec.pixel[0]) & (fates.y == rec.pixel[1])]]
    shaded = [i for i, c in enumerate(codes) if c is not Fate.SCISSOR]
    blends = fates.color_written and not fates.shadow
    written = [i for i, c in enumerate(codes) if c is Fate.WRITTEN] if blends else []
    n_frags = len(rec.shaded)
    if len(shaded) != n_frags or len(written) != len(rec.blends):
        raise ProbeMismatch(f"draw {rec.draw} pixel {rec.pixel}: {len(shaded)} fates past the scissor vs {n_frags} "
                            f"shaded fragments, {len(written)} written vs {len(rec.blends)} blends")
    out = {i: FragmentRecord(rec.draw, rec.pixel[0], rec.pixel[1], c, _fate_text(c, fates))
           for i, c in enumerate(codes)}
    for j, i in enumerate(shaded):
        out[i] = _shaded(out[i], *rec.shaded[j])
    for j, i in enumerate(written):
        out[i] = replace(out[i], blended=tuple(int(v) for v in rec.blends[j]))
    return _buffer_values([out[i] for i in range(len(codes))], rec, observer, start, end)


def _buffer_values(records: list[FragmentRecord], rec: _Recording, observer: PixelObserver, start: PixelValues,
                   end: PixelValues) -> tuple[FragmentRecord, ...]:
    """``records`` with the color and depth buffer values before and after each fragment (``FragmentRecord``):
    colors chain through the written colors as the buffer format stores them, depths through the stored depths the
    observer saw at each depth/stencil test (the draw's last ones from the buffer after the draw)."""
    tested = [i for i, r in enumerate(records) if r.code in TESTED] if observer.tests else []
    if len(tested) != len(observer.tests):
        raise ProbeMismatch(f"draw {rec.draw} pixel {rec.pixel}: {len(tested)} fragments reached the depth/stencil "
                            f"tests, the observer saw {len(observer.tests)}")
    last_write = max((i for i, r in enumerate(records) if r.blended is not None), default=-1)
    scale = fbm.depth_max(rec.fb.depth_format)
    stored = {i: observer.tests[k][1] / scale for k, i in enumerate(tested)}
    color, depth, out = start.color, start.depth, []
    for i, r in enumerate(records):
        depth = stored.get(i, depth)
        after_depth = depth
        if i in stored:  # the next tested fragment's stored depth, or the buffer after the draw
            after_depth = next((stored[k] for k in tested if k > i), end.depth)
        after = color
        if r.blended is not None:
            after = end.color if i == last_write else stored_color(r.blended, rec.fb)
        out.append(replace(r, color_before=color, color_after=after, depth_before=depth, depth_after=after_depth))
        color, depth = after, after_depth
    return tuple(out)


def _shaded(r: FragmentRecord, f: Fragments, tev: np.ndarray, j: int) -> FragmentRecord:
    t = lambda a: tuple(float(v) for v in a[j])  # noqa: E731
    return replace(r, primitive=int(f.primitive[j]), depth=float(f.depth[j]), w=float(f.w[j]), color=t(f.color),
                   texcoord0=t(f.texcoord0), texcoord1=t(f.texcoord1), texcoord2=t(f.texcoord2),
                   tev=tuple(int(v) for v in tev[j]))


def probe_draw(session: Session, draw: int, pixel: tuple[int, int] | None = None,
               observer: PixelObserver | None = None) -> DrawProbe:
    """Re-run ``draw`` with the fragment observer and recording stages; see the module docstring (``observer``:
    the ``PixelObserver`` to attach when probing a pixel; a plain one by default)."""
    tl = session._need_timeline()
    session.goto(tl.before_draw(draw))
    regs = session.state_at_draw(draw).regs
    fb = FramebufferState.from_regs(regs)
    rec = _Recording(draw, pixel, fb, DepthStencilState.from_regs(regs).color_mask)
    observer = (observer or PixelObserver()) if pixel is not None else None
    start = None
    if pixel is not None:
        session.replay.sync_memory()
        start = read_pixel(session.replay.memory, fb, pixel)
        observer.target = int(fbm.pixel_index(np.array([pixel[0]]), np.array([pixel[1]]), fb.width, fb.height,
                                              fb.flipped)[0])
    pipeline = session.replay.pipeline
    factory = pipeline.color_stages
    pipeline.color_stages = lambda state: _Stages(factory(state), rec)
    activator = _Activator(rec)
    session.replay.processor.attach(activator)
    previous, pipeline.stage_observer = pipeline.stage_observer, observer
    try:
        with observing(session, rec.on_fates):
            session.advance(tl.after_draw(draw))
    finally:
        session.replay.processor.detach(activator)
        pipeline.color_stages, pipeline.stage_observer = factory, previous
        session.mark_dirty()
    stats = dict(rec.call.stats) if rec.call is not None else {}
    fates = rec.fate_counts()
    overdraw = (fates.sum(axis=0, dtype=np.int64) - fates[Fate.SCISSOR]).astype(np.uint16)
    records = () if pixel is None else _records(rec, observer, start, read_pixel(session.replay.memory, fb, pixel))
    return DrawProbe(draw, overdraw, _edges(rec.prims), fates, records, stats)


def record_vertices(session: Session, draw: int) -> state_views.DrawVertices:
    """Draw ``draw``'s geometry as the pipeline computes it: the draw re-run from its nearest checkpoint with a
    ``state_views.VertexRecorder`` as the pipeline's stage observer (no stage re-implemented here)."""
    tl = session._need_timeline()
    pipeline = session.replay.pipeline
    if not hasattr(pipeline, "stage_observer"):
        raise PicaError(f"stage observation needs picaemu.pipeline.Pipeline, the replay runs {type(pipeline).__name__}")
    recorder = state_views.VertexRecorder(draw)
    session.goto(tl.before_draw(draw))
    previous, pipeline.stage_observer = pipeline.stage_observer, recorder
    try:
        session.advance(tl.after_draw(draw))
    except BaseException:
        session.mark_dirty()
        raise
    finally:
        pipeline.stage_observer = previous
    return recorder.result()


def frame_fragment_map(session: Session, cursor: Cursor, kind: str = "depth-complexity") -> np.ndarray:
    """(H, W) uint32 ATTILA-style fragment map of the frame ``cursor`` lies in, up to ``cursor``: fragments that
    reached each pixel past the scissor ("depth-complexity") or were written ("overdraw"), row 0 = top. The frame is
    re-run from its start with ``picaemu.analysis.stats.FragmentCounter`` as the fragment observer."""
    from picaemu.analysis.stats import FragmentCounter

    tl = session._need_timeline()
    frame = tl.frame_of(cursor)
    if frame and cursor == Cursor(tl.frame_ends[frame - 1] + 1, 0):
        frame -= 1  # right after a FrameEnd: the frame that just ended (what the screen shows)
    start = Cursor(tl.frame_ends[frame - 1] + 1, 0) if frame else Cursor(0, 0)
    counter = FragmentCounter(kind)
    rerun(session, start, cursor, counter.observe)
    if not counter.maps:
        fb = session.replay.framebuffer_state()
        return np.zeros((fb.height, fb.width), np.uint32)
    return counter.maps[0]


def candidate_draws(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[int]:
    """The draws before ``until`` (default: the end) whose triangles' window bounds hold ``pixel`` (recorded while
    indexing): the only draws that can have rasterized a fragment there."""
    tl = session._need_timeline()
    stop = until if until is not None else tl.end
    return [d.index for d in tl.draws if tl.after_draw(d.index) <= stop and d.may_cover(pixel)]


def draws_at_pixel(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[int]:
    """The draws before ``until`` (default: the end) that rasterized a fragment at window pixel ``pixel``
    (scissor-rejected ones included): each candidate draw (``candidate_draws``) re-run from its nearest checkpoint
    with a light fragment observer."""
    tl = session._need_timeline()
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
        out += probe_draw(session, d, pixel).fragments
    return out


# ------------------------------------------------------------------------------------------------- overlays
WIRE_RGBA = (0, 255, 64, 255)
OVERDRAW_ALPHA = 170
FATE_RGBA = {Fate.DEPTH: (255, 0, 255, 200), Fate.STENCIL: (255, 160, 0, 200), Fate.SCISSOR: (0, 160, 255, 200),
             Fate.ALPHA: (255, 255, 0, 200), Fate.WRITTEN: (0, 255, 0, 200)}


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
