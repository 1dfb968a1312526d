"""Replay statistics (ATTILA's per-batch / per-frame statistics and fragment maps) for ``picaemu stats``.

``collect(path_or_capture)`` replays a capture and returns one row per draw: ``frame``, ``draw``, ``event``,
``kind``, ``route`` (``compiled`` or ``reference: <reason>[; <reason>]``, ``picaemu.draw.DrawCall.route``), every
counter the pipeline fills in ``DrawCall.stats`` (``picaemu.pipeline.STAT_KEYS``: vertices, vertices loaded and
shaded, primitives assembled / clipped / culled / rasterized, fragments rasterized, killed by scissor / alpha /
stencil / depth, fragments written, shader instructions executed x active lanes (VS + GS), texels fetched (filter
taps x fragments)), ``time_ms`` and ``kernels_ms``. ``per_frame(rows)`` sums them per frame
(with ``draws`` and ``compiled``, the draws that took the compiled route); ``route_summary(rows)`` is the one line
that counts the routes ("route: 412/445 draws compiled; reference: fog x33").
``time_ms`` is the draw's replay time without the time spent loading numba kernels from their cache or compiling
them (the first draw that needs a kernel pays for it: up to seconds on a first run); that time is ``kernels_ms``,
measured as the time numba holds its compiler lock (``KernelClock``). The replay runs as any other, draws in the
compiled draw loop included; a run of draws the loop ran in one call shares that call's time equally.
``NOT_MEASURED`` lists counters the pipeline does not provide (none now).

Fragment maps, from the fragment fates the pipeline hands its stage observer (a ``picaemu.observer.FateWatcher``:
the fates of every rasterized fragment, from the recorded fragment pass): ``depth-complexity`` counts, per
render-target pixel and frame, the fragments that reach fragment coloring (after rasterization and scissor);
``overdraw`` the fragments that were written to the color buffer (passed every test, color writes enabled; in
shadow-map rendering, every fragment). Arrays are (H, W) uint32 with row 0 = the top of the render target;
``heatmap`` turns one into an RGB picture (0 black, then blue -> green -> yellow -> red, white from ``HEAT_MAX``).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from picaemu.draw import REASON_SEPARATOR, ROUTE_COMPILED, CompiledSink, DrawCall, is_compiled_sink, route_reasons
from picaemu.errors import UnsupportedFeature
from picaemu.formats import pica
from picaemu.fragment.ops import Fate
from picaemu.pipeline import FragmentFates
from picaemu.replay import Replay, load_capture

if TYPE_CHECKING:
    from picaemu.fused.loop import CompiledDraws, CompiledPlans

NOT_MEASURED: tuple[str, ...] = ()
FRAGMENT_MAPS = ("depth-complexity", "overdraw")
HEAT_COLORS = np.array([[0, 0, 0], [0, 0, 255], [0, 200, 0], [255, 220, 0], [255, 0, 0], [255, 255, 255]], np.uint8)
HEAT_MAX = len(HEAT_COLORS) - 1
ID_COLUMNS = ("frame", "draw", "event", "kind", "route")
# every statistics column: (header as shown in tables, unit, what it counts) -- the debugger's header tooltips
COLUMN_DOCS: dict[str, tuple[str, str, str]] = {
    "frame": ("frame", "index", "frame the draw belongs to (FrameEnd events counted from 0)"),
    "draw": ("draw", "index", "draw number in the capture, from 0 (per frame: the number of draws)"),
    "event": ("event", "index", "capture event that ran the draw"),
    "kind": ("kind", "", "how the draw was triggered: draw arrays, draw elements (indexed) or immediate"),
    "route": ("route", "", "compiled (both sides in compiled code) or reference: the reason it took the staged path"),
    "draws": ("draws", "draws", "draws in the frame"),
    "compiled": ("compiled", "draws", "draws in the frame that took the compiled route"),
    "vertices": ("vertices", "vertices", "vertex count the draw asks for"),
    "vertices_loaded": ("vertices loaded", "vertices", "vertices the loader fetched"),
    "vertices_shaded": ("vertices shaded", "vertices", "vertex-shader invocations (each unique index once)"),
    "vertices_nonfinite": (
        "vertices not finite",
        "vertices",
        "shaded vertices with a NaN or an infinity in an output register",
    ),
    "primitives_assembled": ("primitives assembled", "triangles", "triangles primitive assembly formed"),
    "primitives_invalid": ("primitives invalid", "triangles", "triangles skipped for non-finite positions"),
    "primitives_clipped": ("primitives clipped", "triangles", "triangles the clipper cut"),
    "primitives_clipped_away": ("primitives clipped away", "triangles", "triangles wholly outside the view"),
    "primitives_culled": ("primitives culled", "triangles", "back-facing or zero-area triangles dropped"),
    "primitives_rasterized": ("primitives rasterized", "triangles", "triangles that reached the rasterizer"),
    "fragments_rasterized": ("fragments rasterized", "fragments", "fragments the rasterizer produced"),
    "killed_scissor": ("killed by scissor", "fragments", "fragments the scissor test rejected"),
    "killed_alpha": ("killed by alpha test", "fragments", "fragments the alpha test rejected"),
    "killed_stencil": ("killed by stencil test", "fragments", "fragments the stencil test rejected"),
    "killed_depth": ("killed by depth test", "fragments", "fragments the depth test rejected"),
    "fragments_written": ("fragments written", "fragments", "fragments that passed every test and were written"),
    "shader_instructions": (
        "shader instructions",
        "instructions x lanes",
        "instructions executed times active lanes, vertex + geometry shader",
    ),
    "texels_fetched": ("texels fetched", "texel taps", "filter taps times fragments, texture units 0-2"),
    "time_ms": ("replay time", "ms", "replay time of the draw, kernel loading / compiling excluded"),
    "kernels_ms": ("kernel loading", "ms", "time spent loading or compiling numba kernels during the draw"),
}


@dataclass
class FragmentCounter:
    """Per-frame (H, W) counts of one fragment map ``kind`` (``FRAGMENT_MAPS``); ``observe`` is the pipeline's
    fragment observer."""

    kind: str = "depth-complexity"
    frame: int = 0
    maps: dict[int, np.ndarray] = field(default_factory=dict)

    def observe(self, call: DrawCall, fates: FragmentFates) -> None:
        if self.kind == "depth-complexity":
            keep = fates.fate != Fate.SCISSOR
        elif fates.color_written:
            keep = fates.fate == Fate.WRITTEN
        else:
            return
        fb = call.draw_state.need("framebuffer")
        self.add(fates.x[keep], fates.y[keep], fb.width, fb.height)

    def add(self, x: np.ndarray, y: np.ndarray, width: int, height: int) -> None:
        counts = self.maps.get(self.frame)
        if counts is None or counts.shape != (height, width):
            counts = self.maps[self.frame] = np.zeros((height, width), np.uint32)
        row = (height - 1) - y.astype(np.int64)
        keep = (row >= 0) & (row < height) & (x >= 0) & (x < width)
        flat = row[keep] * width + x[keep].astype(np.int64)
        counts += np.bincount(flat, minlength=width * height).reshape(height, width).astype(np.uint32)


class KernelClock:
    """Seconds spent loading or compiling numba kernels while installed: numba takes its compiler lock for both and
    reports it as the "numba:compiler_lock" event (nested acquisitions counted once)."""

    EVENT = "numba:compiler_lock"

    def __init__(self) -> None:
        from numba.core import event

        self._event = event
        self._listener = event.TimingListener()

    def __enter__(self) -> KernelClock:
        self._event.register(self.EVENT, self._listener)
        return self

    def __exit__(self, *exc: object) -> None:
        self._event.unregister(self.EVENT, self._listener)

    @property
    def seconds(self) -> float:
        return self._listener.duration if self._listener.done else 0.0


def book_kernels(stats: dict[str, Any], spent: float) -> None:
    """Move ``spent`` seconds of kernel loading / compiling out of a draw's ``time_s`` into its ``kernels_s``."""
    stats["kernels_s"] = spent
    stats["time_s"] = max(float(stats.get("time_s", 0.0)) - spent, 0.0)


class KernelTimedSink:
    """A pipeline wrapper that moves the kernel loading/compiling time of each draw out of ``time_s`` into
    ``kernels_s`` (see the module docstring). A ``picaemu.draw.CompiledSink`` when its inner sink is one: the
    draws the compiled loop runs are timed by the loop (an equal share of each loop call, which loads no kernel:
    the driver takes their entries before it starts the clock), and the kernel time spent while Python prepared
    the loop goes to the first draw it ran (``kernels``, by draw index: the loop's draw records are its own)."""

    def __init__(self, inner: Any, clock: KernelClock) -> None:
        self.inner, self.clock = inner, clock
        self.kernels: dict[int, float] = {}  # draw index -> kernel seconds, for draws the loop ran
        self._mark = 0.0  # the clock when the last draw was booked

    def draw(self, call: DrawCall) -> None:
        before = self.clock.seconds
        self.inner.draw(call)
        book_kernels(call.stats, self.clock.seconds - before)
        self._mark = self.clock.seconds

    def event(self, kind: Any, state: Any) -> None:
        self.inner.event(kind, state)

    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None:
        self._mark = self.clock.seconds
        return self.inner.compiled_plans(call) if is_compiled_sink(self.inner) else None

    def compiled_allowed(self) -> bool:
        return is_compiled_sink(self.inner) and self.inner.compiled_allowed()

    def compiled_draws(self, draws: CompiledDraws) -> None:
        cast(CompiledSink, self.inner).compiled_draws(draws)  # it offered the plans: a CompiledSink
        now = self.clock.seconds
        self.kernels[draws.first_index] = now - self._mark
        self._mark = now


@dataclass
class Statistics:
    rows: list[dict[str, Any]]
    fragment_maps: dict[int, np.ndarray]
    frames: int


def collect(source: str | os.PathLike[str] | pica.Capture, *, fragment_map: str | None = None) -> Statistics:
    """Replay ``source`` and gather per-draw rows (and a fragment map per frame when asked)."""
    from picaemu.observer import FateWatcher
    from picaemu.pipeline import Pipeline

    if fragment_map not in (None, *FRAGMENT_MAPS):
        raise UnsupportedFeature(f"fragment map {fragment_map!r}")
    capture = source if isinstance(source, pica.Capture) else load_capture(source)
    counter = FragmentCounter(fragment_map or "depth-complexity")
    pipeline = Pipeline(stage_observer=FateWatcher(counter.observe) if fragment_map else None)
    with KernelClock() as clock:
        sink = KernelTimedSink(pipeline, clock)
        replay = Replay(capture, pipeline=sink, checkpoints=False)
        while replay.position < len(replay.events):
            counter.frame = replay.frame
            replay.step()
    rows = []
    for d in replay.draws:
        frame = sum(1 for f in replay.frames if f < d.event)
        counters = {k: v for k, v in d.stats.items() if k not in ("time_s", "kernels_s")}
        kernels = d.stats.get("kernels_s", sink.kernels.get(d.index, 0.0))
        rows.append(
            {
                "frame": frame,
                "draw": d.index,
                "event": d.event,
                "kind": d.kind,
                "route": d.route,
                **counters,
                "time_ms": round(1000.0 * float(d.stats.get("time_s", 0.0)), 3),
                "kernels_ms": round(1000.0 * float(kernels), 3),
            }
        )
    return Statistics(rows, counter.maps, max(len(replay.frames), 1))


def per_frame(rows: list[dict[str, Any]], frames: int) -> list[dict[str, Any]]:
    """Totals per frame (frames without draws get zero counters)."""
    keys = [k for row in rows for k in row if k not in ID_COLUMNS]
    keys = list(dict.fromkeys(keys))
    totals: dict[int, dict[str, Any]] = defaultdict(lambda: dict.fromkeys(keys, 0))
    counts: dict[int, int] = defaultdict(int)
    compiled: dict[int, int] = defaultdict(int)
    for row in rows:
        counts[row["frame"]] += 1
        compiled[row["frame"]] += row.get("route") == ROUTE_COMPILED
        for k in keys:
            totals[row["frame"]][k] += row.get(k, 0)
    out = []
    for f in range(max(frames, max(totals, default=-1) + 1)):
        entry = {"frame": f, "draws": counts[f], "compiled": compiled[f], **totals[f]}
        for key in ("time_ms", "kernels_ms"):
            entry[key] = round(entry.get(key, 0.0), 3)
        out.append(entry)
    return out


def route_summary(rows: list[dict[str, Any]]) -> str:
    """One line counting the per-draw rows' routes: compiled out of all, then each reason a draw took the reference
    route for with the number of draws that name it, the most frequent first (a draw refused by both sides counts
    under both reasons; one whose sink reported no route, under "not reported"), e.g. "route: 412/445 draws
    compiled; reference: fog x33"."""
    reasons: Counter[str] = Counter()
    done = 0
    for row in rows:
        route = row.get("route", "")
        done += route == ROUTE_COMPILED
        if route != ROUTE_COMPILED:
            reasons.update(route_reasons(route) or ["not reported"])
    line = f"route: {done}/{len(rows)} draws compiled"
    if reasons:
        line += "; reference: " + REASON_SEPARATOR.join(f"{reason} \u00d7{n}" for reason, n in reasons.most_common())
    return line


def heatmap(counts: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 picture of a count map (see the module docstring)."""
    return HEAT_COLORS[np.minimum(counts, HEAT_MAX)]
