"""Draw probes: re-run one draw from its checkpoint with recording color stages, for pixel history and overlays.
Qt-free. Headless replays pay nothing: the recording exists only while a probe runs (STYLE section 8).

``probe_draw(session, draw, pixel=None) -> DrawProbe`` moves the session to just before ``draw``'s trigger, wraps
the pipeline's ``color_stages`` seam and runs the trigger packet. From the fragments that reach coloring
(after rasterization and scissor) it builds, in image orientation (row 0 = top of the render target, window
y = H - 1 - row):

- ``overdraw``: (H, W) uint16 fragments per pixel; ``edges``: (H, W) bool pixels on the boundary of a primitive's
  coverage (the wireframe as the rasterizer covered it);
- with ``pixel = (x, y)`` in window coordinates (y up), ``fragments``: one ``FragmentRecord`` per fragment of the
  draw at that pixel, in rasterization order, with its interpolated inputs, TEV output and fate. Only that pixel's
  fragments pass the (wrapped) alpha test, so each depth/stencil layer holds exactly one of them; a blend call
  at the j-th surviving layer with k kills counted so far belongs to layer j + k, which makes the fate exact
  (when stencil and depth kills fall between the same two writes, the fate says "stencil or depth test").

The probe leaves the render target modified; the session is marked dirty and restores on its next move.
``pixel_history(session, pixel, until)`` probes every draw before ``until`` that rasterized fragments.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from picaemu.gui.replay_adapter import Session
from picaemu.gui.timeline import Cursor

from picaemu.draw import DrawCall
from picaemu.fragments import Fragments
from picaemu.framebuffer import FramebufferState
from picaemu.memory import PhysicalMemory
from picaemu.observer import Observer

KILL_KEYS = ("killed_stencil", "killed_depth")


@dataclass(frozen=True)
class FragmentRecord:
    draw: int
    primitive: int
    x: int
    y: int
    depth: float
    w: float
    color: tuple[float, ...]
    texcoord0: tuple[float, ...]
    texcoord1: tuple[float, ...]
    texcoord2: tuple[float, ...]
    tev: tuple[int, ...]
    fate: str  # "written", "alpha test", "stencil test", "depth test", "stencil or depth test", ...
    blended: tuple[int, ...] | None = None  # blend output for written fragments


@dataclass(frozen=True)
class DrawProbe:
    draw: int
    overdraw: np.ndarray
    edges: np.ndarray
    fragments: tuple[FragmentRecord, ...] = ()
    stats: dict = field(default_factory=dict)


class _Recording:
    """What the wrapped stages saw during one draw."""

    def __init__(self, draw: int, pixel: tuple[int, int] | None, fb: FramebufferState) -> None:
        self.draw, self.pixel, self.fb = draw, pixel, fb
        self.active = False
        self.call: DrawCall | None = None
        self.overdraw = np.zeros((fb.height, fb.width), np.uint16)
        self.prims = np.full((fb.height, fb.width), -1, np.int64)
        self.frags: Fragments | None = None
        self.tev: np.ndarray | None = None
        self.sel: np.ndarray | None = None
        self.alpha: np.ndarray | None = None
        self.blends: list[tuple[int, int, np.ndarray]] = []  # (stencil kills, depth kills, output) per write

    def on_shade(self, frags: Fragments, color: np.ndarray) -> None:
        rows = self.fb.height - 1 - frags.y
        ok = (rows >= 0) & (rows < self.fb.height) & (frags.x >= 0) & (frags.x < self.fb.width)
        np.add.at(self.overdraw, (rows[ok], frags.x[ok]), 1)
        self.prims[rows[ok], frags.x[ok]] = frags.primitive[ok]
        if self.pixel is not None:
            self.sel = (frags.x == self.pixel[0]) & (frags.y == self.pixel[1])
            self.frags, self.tev = frags.select(self.sel), color[self.sel]

    def on_alpha(self, alive: np.ndarray) -> np.ndarray:
        if self.sel is None:
            return alive
        self.alpha = alive[self.sel]
        return alive & self.sel

    def on_blend(self, out: np.ndarray) -> None:
        stats = self.call.stats if self.call is not None else {}
        self.blends.append((int(stats.get(KILL_KEYS[0], 0)), int(stats.get(KILL_KEYS[1], 0)), out[0].copy()))


class _Stages:
    """Wraps a ``ColorStages``; records while ``rec.active``; always reads the destination so blend runs."""

    def __init__(self, inner, rec: _Recording) -> None:
        self.inner, self.rec = inner, rec

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray:
        color = self.inner.shade(frags, memory)
        if self.rec.active:
            self.rec.on_shade(frags, color)
        return color

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        alive = self.inner.alpha_test(color)
        return self.rec.on_alpha(alive) if self.rec.active else alive

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        out = self.inner.blend(src, dst) if self.inner.reads_destination else src
        if self.rec.active and self.rec.pixel is not None:
            self.rec.on_blend(out)
        return out

    @property
    def reads_destination(self) -> bool:
        return True


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


def _fates(rec: _Recording) -> tuple[list[str], dict[int, np.ndarray]]:
    """Fate of each fragment at the pixel and the blend output of the written ones (see the module doc)."""
    n = len(rec.frags)
    alpha = rec.alpha if rec.alpha is not None else np.ones(n, bool)
    fates = ["alpha test" if not a else "" for a in alpha]
    layers = np.flatnonzero(alpha)
    stats = rec.call.stats if rec.call is not None else {}
    marks = [(0, 0, -1)] + [(s, d, j + s + d) for j, (s, d, _) in enumerate(rec.blends)]
    marks.append((int(stats.get(KILL_KEYS[0], 0)), int(stats.get(KILL_KEYS[1], 0)), len(layers)))
    written = {}
    for j, (_, _, out) in enumerate(rec.blends):
        written[int(layers[marks[j + 1][2]])] = out
    for (s0, d0, l0), (s1, d1, l1) in itertools.pairwise(marks):
        kind = "stencil test" if d1 == d0 else "depth test" if s1 == s0 else "stencil or depth test"
        for layer in range(l0 + 1, min(l1, len(layers))):
            fates[int(layers[layer])] = kind
    for i in written:
        fates[i] = "written"
    if not rec.blends and not rec.fb.color_write:
        fates = [f or "passed (color writes off)" for f in fates]
    return fates, written


def _records(rec: _Recording) -> tuple[FragmentRecord, ...]:
    if rec.frags is None or not len(rec.frags):
        return ()
    fates, written = _fates(rec)
    f = rec.frags
    t = lambda a, i: tuple(float(v) for v in a[i])  # noqa: E731
    return tuple(
        FragmentRecord(rec.draw, int(f.primitive[i]), int(f.x[i]), int(f.y[i]), float(f.depth[i]), float(f.w[i]),
                       t(f.color, i), t(f.texcoord0, i), t(f.texcoord1, i), t(f.texcoord2, i),
                       tuple(int(v) for v in rec.tev[i]), fates[i],
                       tuple(int(v) for v in written[i]) if i in written else None)
        for i in range(len(f))
    )


def probe_draw(session: Session, draw: int, pixel: tuple[int, int] | None = None) -> DrawProbe:
    """Re-run ``draw`` with recording stages; see the module docstring."""
    tl = session._need_timeline()
    session.goto(tl.draws[draw].before)
    fb = FramebufferState.from_regs(session.state_at_draw(draw).regs)
    rec = _Recording(draw, pixel, fb)
    pipeline = session.replay.pipeline
    factory = pipeline.color_stages
    pipeline.color_stages = lambda state: _Stages(factory(state), rec)
    activator = _Activator(rec)
    session.replay.processor.attach(activator)
    try:
        session.goto(tl.after_draw(draw))
    finally:
        session.replay.processor.detach(activator)
        pipeline.color_stages = factory
        session.mark_dirty()
    stats = dict(rec.call.stats) if rec.call is not None else {}
    return DrawProbe(draw, rec.overdraw, _edges(rec.prims), _records(rec), stats)


def pixel_history(session: Session, pixel: tuple[int, int], until: Cursor | None = None) -> list[FragmentRecord]:
    """Every fragment of every draw before ``until`` (default: the end) that landed on window pixel ``pixel``."""
    tl = session._need_timeline()
    stop = until if until is not None else tl.end
    out: list[FragmentRecord] = []
    for d in tl.draws:
        if tl.after_draw(d.index) > stop:
            break
        if d.stats.get("fragments_rasterized", 1):
            out += probe_draw(session, d.index, pixel).fragments
    return out


# ------------------------------------------------------------------------------------------------- overlays
WIRE_RGBA = (0, 255, 64, 255)
OVERDRAW_ALPHA = 170


def wireframe_overlay(probe: DrawProbe) -> np.ndarray:
    """(H, W, 4) uint8: the primitive boundaries of the probed draw, transparent elsewhere."""
    out = np.zeros((*probe.edges.shape, 4), np.uint8)
    out[probe.edges] = WIRE_RGBA
    return out


def overdraw_overlay(probe: DrawProbe) -> np.ndarray:
    """(H, W, 4) uint8: fragments per pixel as ``picaemu.stats.heatmap`` colors, transparent where none."""
    from picaemu.stats import heatmap

    out = np.zeros((*probe.overdraw.shape, 4), np.uint8)
    out[..., :3] = heatmap(probe.overdraw.astype(np.int64))
    out[..., 3] = np.where(probe.overdraw > 0, OVERDRAW_ALPHA, 0)
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
