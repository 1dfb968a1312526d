"""The pipeline's fragment half: ``FragmentSide``, which ``picaemu.pipeline.Pipeline`` mixes in, takes a draw's
window triangles to pixels in memory and to its fragment counters.

The draw's route choice (``Pipeline.choose_route``, kept in ``_choice`` while the draw runs) holds its fragment
plan or why not: a covered draw runs in one compiled call (``picaemu.fused.fragments``); otherwise, or when that call
declines at run time, its fragments run stage by stage (``_fragments``: rasterizer chunks -> color stages -> alpha
test -> fragment operations). A draw a stage observer of fates watches is recorded (``_recorded``: ``Recording``,
``FragmentFates``, the depth/stencil test values): with the fused plan's compiled shading when the plan covers it
(``picaemu.fused.observed``; the route stays compiled), else with the staged color stages. ``_decline`` names why a
side took the reference route in ``call.route``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from picaemu.draw import DrawCall, with_reason
from picaemu.draw_state import DrawState, Phase
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.ops import Fate, FragmentLog
from picaemu.fused import fragments as fused_frags
from picaemu.fused import observed
from picaemu.geometry import clipping
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.pipeline_seams import Choice, ColorStages, FragmentFates, Recording
from picaemu.raster.fragments import Fragments
from picaemu.raster.rasterizer import SCISSOR_INCLUDE, rasterize_chunks, scissor_rejects

STAT_KEYS = (
    "vertices",
    "vertices_loaded",
    "vertices_shaded",
    "vertices_nonfinite",
    "primitives_assembled",
    "primitives_invalid",
    "primitives_clipped",
    "primitives_clipped_away",
    "primitives_culled",
    "primitives_rasterized",
    "fragments_rasterized",
    "killed_scissor",
    "killed_alpha",
    "killed_stencil",
    "killed_depth",
    "fragments_written",
    "shader_instructions",
    "texels_fetched",
)


def _add(stats: dict, counters: dict) -> None:
    """Add a chunk's counters to the draw's."""
    for key, value in counters.items():
        stats[key] = stats.get(key, 0) + value


def _report_tests(
    observer: StageObserver, log: FragmentLog, fb: fbm.FramebufferState, x: np.ndarray, y: np.ndarray, depth: np.ndarray
) -> None:
    """``observer.on_depth_stencil`` with the fragments of ``log`` that reached the depth/stencil tests, in order."""
    reached = np.flatnonzero((log.fate == Fate.STENCIL) | (log.fate == Fate.DEPTH) | (log.fate == Fate.WRITTEN))
    fate = log.fate[reached]
    observer.on_depth_stencil(
        fbm.pixel_index(x[reached], y[reached], fb.width, fb.height, fb.flipped),
        fbm.quantize_depth(depth[reached], fb.depth_format),
        log.stored_depth[reached],
        log.stored_stencil[reached],
        fate != Fate.STENCIL,
        fate == Fate.WRITTEN,
    )


class FragmentSide:
    """The fragment half of ``picaemu.pipeline.Pipeline`` (its ``__init__`` sets these attributes)."""

    color_stages: Callable[[DrawState], ColorStages]
    stage_observer: StageObserver | None
    fused_fragment_draws: int
    recorded_fragment_draws: int
    _choice: Choice

    @staticmethod
    def _decline(call: DrawCall, reason: str) -> None:
        """A side declined the draw: ``call.route`` becomes a reference route that names ``reason`` too."""
        call.route = with_reason(call.route, reason)

    def _fragment_side(self, call: DrawCall, wt: clipping.WindowTriangles) -> None:
        """The draw's fragment side, on the route its choice names (the reason joins ``call.route`` when the
        reference path runs it)."""
        if isinstance(self._choice.fragment, str):
            self._decline(call, self._choice.fragment)
        self._fragments(call, wt, call.stats)

    def _fragments(self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict) -> None:
        """Rasterization and every fragment stage of the draw's window triangles (the seam another backend,
        ``picaemu.gl``, replaces)."""
        ds = call.draw_state
        fb, active, rs = ds.framebuffer, ds.varyings.plan, ds.raster
        observer = self.stage_observer
        if observer is not None and observer.fragment_fates:
            self._observed_fragments(call, wt, stats, observer)
            return
        if self._fused_fragments(call, wt, stats):
            return
        stages = None
        for frags, rstats in rasterize_chunks(wt, rs, active):  # in order: bounded memory for any draw
            _add(stats, rstats)
            if len(frags):
                stages = stages or self._stages(ds)
                self._fragment_ops(ds, stages, call.memory, fb, frags, stats, None)

    def _observed_fragments(
        self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict, observer: StageObserver
    ) -> None:
        """The draw recorded for an observer of fates: on the compiled route when the fused plan covers it
        (``picaemu.fused.observed``), else (or when the compiled shading declines, having written nothing) with
        the staged color stages."""
        plan = self._choice.fragment
        if not isinstance(plan, str):
            before = dict(stats)
            try:
                self._recorded(call, wt, stats, observer, observed.CompiledColorStages.of(plan, call.draw_state))
                self.recorded_fragment_draws += 1
                return
            except observed.Declined as declined:
                stats.clear()
                stats.update(before)
                self._decline(call, declined.reason)
        self._recorded(call, wt, stats, observer, None)

    def _recorded(
        self,
        call: DrawCall,
        wt: clipping.WindowTriangles,
        stats: dict,
        observer: StageObserver,
        stages: observed.CompiledColorStages | None,
    ) -> None:
        """Every rasterized fragment (the scissor applied after rasterization) through ``stages`` (None: the
        staged ones), recorded: ``observer.on_fragments`` gets the draw's ``FragmentFates``."""
        ds = call.draw_state
        fb, columns = ds.framebuffer, ds.varyings.plan
        raster_columns = columns if stages is None else observed.raw_columns(columns)
        # the scissor off (its test is applied after), or the observer's window as an include box: only the window's
        # fragments are emitted, in rasterization order; the scan still counts every fragment of the draw
        window = observer.fragment_window
        rs = dataclasses.replace(ds.raster, scissor_mode=0)
        if window is not None:
            rs = dataclasses.replace(rs, scissor_mode=SCISSOR_INCLUDE, scissor=window)
        parts = []
        for frags, rstats in rasterize_chunks(wt, rs, raster_columns):
            parts.append(self._observed_chunk(ds, call.memory, fb, frags, rstats, stats, stages))
            if raster_columns is not columns:
                observed.normalise(frags, columns)
        frags = Fragments.concat([f for f, _, _ in parts])  # rasterize_chunks yields >= 1 chunk
        tev, fate, before, after = (
            np.concatenate(a) for a in zip(*((t, g.fate, g.before, g.after) for _, t, g in parts), strict=True)
        )
        observer.on_fragments(
            call,
            FragmentFates(frags.x, frags.y, fate, fb.color_write, ds.shadow is not None, frags, tev, before, after),
        )

    def _fused_fragments(self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict) -> bool:
        """The draw's fragment side in one compiled call (False: no plan, or the plan declined the draw — too
        big, a division by zero, a texture outside VRAM/FCRAM — having written nothing; the staged path runs)."""
        plan = self._choice.fragment
        if isinstance(plan, str):
            return False  # ``_fragment_side`` named the reason
        code = fused_frags.attempt(plan, wt, stats)
        if code:
            self._decline(call, fused_frags.DECLINED.get(code, f"fragment side declined (code {code})"))
            return False
        self.fused_fragment_draws += 1
        return True

    def _stages(self, ds: DrawState) -> ColorStages:
        """The draw's color stages, once it has fragments (its fragment-phase state is checked first)."""
        ds.check(Phase.FRAGMENTS)
        return self.color_stages(ds)

    def _observed_chunk(
        self,
        ds: DrawState,
        memory: PhysicalMemory,
        fb: fbm.FramebufferState,
        frags: Fragments,
        rstats: dict,
        stats: dict,
        stages: ColorStages | None = None,
    ) -> tuple[Fragments, np.ndarray, FragmentLog]:
        """Fragments rasterized with the scissor off: the scissor applied here, then the fragment stages (``stages``,
        or the draw's staged ones), recorded; returns (every fragment, (F, 4) uint8 TEV output, the log of the
        fragment operations)."""
        rejected = scissor_rejects(ds.raster, frags.x, frags.y)
        _add(stats, dict(rstats, killed_scissor=int(rejected.sum())))
        log = FragmentLog.start(np.where(rejected, np.uint8(Fate.SCISSOR), np.uint8(Fate.WRITTEN)))
        tev = np.zeros((len(frags), 4), np.uint8)
        kept = np.flatnonzero(~rejected)
        if len(kept):
            self._fragment_ops(
                ds,
                stages or self._stages(ds),
                memory,
                fb,
                frags.select(kept) if len(kept) < len(frags) else frags,
                stats,
                Recording(frags, tev, log, kept),
            )
        return frags, tev, log

    def _fragment_ops(
        self,
        ds: DrawState,
        stages: ColorStages,
        memory: PhysicalMemory,
        fb: fbm.FramebufferState,
        frags: Fragments,
        stats: dict,
        recording: Recording | None = None,
    ) -> None:
        """Shade, then shadow-map write or alpha test + per-fragment operations. With a ``Recording`` (the observed
        path) the operations run over the whole chunk, its log marking what the scissor and alpha test killed. A
        stage observer that asks (``fragment_values`` / ``fragment_tests``) gets the shading hooks, and each
        fragment's depth/stencil test values from the recorded pass (``_report_tests``)."""
        observer = self.stage_observer
        values = observer is not None and observer.fragment_values
        color = stages.shade(frags, memory, stats, observer) if values else stages.shade(frags, memory, stats)
        if recording is not None:
            recording.tev[recording.kept] = color
        if ds.shadow is not None:
            fragment_ops.resolve_shadow(memory, fb, ds.shadow, frags.x, frags.y, frags.depth, color[:, 1], stats)
            return  # fates stay WRITTEN
        alive = stages.alpha_test(color)
        killed = alive.shape[0] - int(np.count_nonzero(alive))
        stats["killed_alpha"] += killed
        x, y, depth, log = frags.x, frags.y, frags.depth, None
        if recording is not None:
            log, color = recording.log, recording.tev
            log.fate[recording.kept[~alive]] = Fate.ALPHA
            x, y, depth = recording.chunk.x, recording.chunk.y, recording.chunk.depth
        elif killed:
            keep = np.nonzero(alive)[0]
            x, y, depth, color = x[keep], y[keep], depth[keep], color[keep]
        if len(x) == 0:
            return
        tester = observer if observer is not None and observer.fragment_tests else None
        tests = tester is not None and ds.depth_stencil.uses_depth_buffer(fb.depth_format)
        if tests and log is None:
            log = FragmentLog.start(np.zeros(len(x), np.uint8))
        prog = stages.blend_program()  # the draw state's plan serves the draw state's own program
        plan = ds.fragment_ops if prog is ds.blend_program else None
        fragment_ops.resolve(memory, fb, ds.depth_stencil, prog, x, y, depth, color, stats, log, plan)
        if tests and tester is not None and log is not None:
            _report_tests(tester, log, fb, x, y, depth)
