"""The pipeline's fragment half: ``FragmentSide``, which ``picaemu.pipeline.Pipeline`` mixes in, takes a draw's
window triangles to pixels in memory and to its fragment counters.

A draw the fused fragment side covers (``picaemu.fused.fragments``: one compiled call) runs at once; otherwise its
fragments run stage by stage (``_fragments``: rasterizer chunks -> color stages -> alpha test -> fragment
operations), or join the pending batch of draws with the same fragment state (``batch_fragments``,
``picaemu.fragment.batch``), which ``flush`` runs. A draw a stage observer of fates watches is recorded
(``_recorded``: ``Recording``, ``FragmentFates``, the depth/stencil test values): with the fused plan's compiled
shading when the plan covers it (``picaemu.fused.observed``; the route stays compiled), else with the staged color
stages. ``_decline`` names why a side took the reference route in ``call.route``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from picaemu import draw as draw_mod
from picaemu.draw import (
    COLOR_STAGES_SEAM,
    FUSED_FRAGMENTS_OFF,
    OTHER_BACKEND,
    DrawCall,
    with_reason,
)
from picaemu.draw_state import DrawState, Phase
from picaemu.fragment import batch as fragment_batch
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.ops import Fate, FragmentLog
from picaemu.fused import fragments as fused_frags
from picaemu.fused import observed
from picaemu.geometry import clipping
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.pipeline_seams import ColorStages, FragmentFates, Recording, default_color_stages
from picaemu.raster.fragments import Fragments
from picaemu.raster.rasterizer import MAX_DRAW_FRAGMENTS, SCISSOR_INCLUDE, rasterize_chunks, scissor_rejects

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
    batch_fragments: bool
    batched_draws: int
    fused_fragments: bool
    fused_fragment_draws: int
    recorded_fragment_draws: int
    _fragment_plans: fused_frags.PlanCache
    _batch: list[tuple[DrawCall, clipping.WindowTriangles]]
    _batch_key: tuple | None
    _batch_ids: tuple[int, ...]
    _last_key: tuple | None
    _last_ids: tuple[int, ...]
    _run: int
    _prior_run: int
    _batch_targets: tuple[fragment_batch.Range, ...]
    _batch_bound: int

    @staticmethod
    def _decline(call: DrawCall, reason: str) -> None:
        """A side declined the draw: ``call.route`` becomes a reference route that names ``reason`` too."""
        call.route = with_reason(call.route, reason)

    def _fragment_side(self, call: DrawCall, wt: clipping.WindowTriangles) -> None:
        """The draw's fragment side now, or deferred into the pending batch (``picaemu.fragment.batch``). A draw
        the fused fragment side covers runs now (after the pending batch): one compiled call costs less than
        waiting to join a batch (bench/RESULTS.md)."""
        plan = self._fused_plan(call)
        if isinstance(plan, str):
            self._decline(call, plan)
        if not self._may_defer(call) or not isinstance(plan, str):
            self.flush()
            self._fragments(call, wt, call.stats)
            return
        key = fragment_batch.fragment_key(call.draw_state)
        ids = fragment_batch.key_ids(key)
        bound = 0
        if call.bounds is not None:
            x0, y0, x1, y1 = call.bounds
            bound = len(wt) * (x1 - x0 + 1) * (y1 - y0 + 1)
        if (
            self._batch
            and ids == self._batch_ids
            and self._batch_bound + bound <= MAX_DRAW_FRAGMENTS
            and fragment_batch.batchable(call.draw_state, key, ids)
        ):
            self._batch.append((call, wt))
            self._batch_bound += bound
            self._run += 1
            return
        self.flush()
        # a draw waits for the next one when its state repeats or the state before lasted more than one draw: a
        # state that changes at every draw (a sprite per texture) never pays for waiting
        if ids == self._last_ids:
            self._run += 1
        else:
            self._last_key, self._last_ids, self._prior_run, self._run = key, ids, self._run, 1
        if (self._run > 1 or self._prior_run > 1) and bound <= MAX_DRAW_FRAGMENTS and not fragment_batch.refused(ids):
            # may wait for the next draw; holding the key keeps its objects (and so its ids) alive
            self._batch, self._batch_key, self._batch_ids, self._batch_bound = [(call, wt)], key, ids, bound
            self._batch_targets = fragment_batch.target_ranges(call.draw_state.framebuffer)
            return
        self._fragments(call, wt, call.stats)  # alone, as without batching (a hostile draw raises here)

    def _may_defer(self, call: DrawCall) -> bool:
        """Batching is on and nothing watches this draw's fragments or memory at draw end."""
        return (
            self.batch_fragments
            and not call.observed
            and self.stage_observer is None
            and self.color_stages is default_color_stages
            and type(self)._fragments is FragmentSide._fragments
        )

    def flush(self) -> None:
        """Run the pending batch's fragment side: its pixels reach memory and its draws' counters are complete
        (each draw's ``time_s`` gains an equal share of the batch's time)."""
        batch, self._batch = self._batch, []
        if not batch:
            return
        start = draw_mod.clock()
        if len(batch) == 1:
            self._fragments(batch[0][0], batch[0][1], batch[0][0].stats)
        else:
            self._run_batch(batch)
            self.batched_draws += len(batch)
        share = (draw_mod.clock() - start) / len(batch)
        for call, _ in batch:
            call.stats["time_s"] = call.stats.get("time_s", 0.0) + share

    def _run_batch(self, batch: list[tuple[DrawCall, clipping.WindowTriangles]]) -> None:
        """The batch's triangles in draw order as one draw, with the scissor applied after rasterization so that
        every fragment has a fate; each draw's counters from its fragments (primitive numbers are made unique
        across the batch, keeping a clipped triangle's fan under one number)."""
        first = batch[0][0]
        ds = first.draw_state
        wts = [wt for _, wt in batch]
        spans = [int(wt.primitive.max()) + 1 if len(wt) else 0 for wt in wts]
        ends = np.cumsum(spans)
        starts = ends - np.asarray(spans)
        x, y, zndc, inv_w, varyings = (
            np.concatenate(parts) for parts in zip(*((w.x, w.y, w.zndc, w.inv_w, w.varyings) for w in wts), strict=True)
        )
        primitive = np.concatenate([w.primitive + np.int32(b) for w, b in zip(wts, starts.tolist(), strict=True)])
        merged = clipping.WindowTriangles(x, y, zndc, inv_w, varyings, primitive)
        scratch = dict.fromkeys(STAT_KEYS, 0)
        draw_of, fates = [], []
        scissor = ds.raster.scissor_mode != 0  # else no fragment is scissored: the plain pass, with fates
        rs = dataclasses.replace(ds.raster, scissor_mode=0) if scissor else ds.raster
        for frags, rstats in rasterize_chunks(merged, rs, ds.varyings.plan):
            draw_of.append(np.searchsorted(ends, frags.primitive, side="right"))
            if scissor:
                fates.append(self._scissored_fates(ds, first.memory, frags, rstats, scratch))
            else:
                fates.append(np.zeros(len(frags), np.uint8))
                if len(frags):
                    self._fragment_ops(
                        ds, self._stages(ds), first.memory, ds.framebuffer, frags, scratch, fate=fates[-1]
                    )
        counters = fragment_batch.split_counters(
            np.concatenate(draw_of), np.concatenate(fates), len(batch), scratch["texels_fetched"]
        )
        for (call, _), part in zip(batch, counters, strict=True):
            call.stats.update(part)

    def _scissored_fates(
        self, ds: DrawState, memory: PhysicalMemory, frags: Fragments, rstats: dict, stats: dict
    ) -> np.ndarray:
        """A chunk rasterized with the scissor off: the scissor applied here, then the fragment stages on the split
        compiled passes; returns every fragment's ``Fate`` (F,) uint8."""
        rejected = scissor_rejects(ds.raster, frags.x, frags.y)
        _add(stats, dict(rstats, killed_scissor=int(rejected.sum())))
        fate = np.where(rejected, np.uint8(Fate.SCISSOR), np.uint8(Fate.WRITTEN))
        kept = np.flatnonzero(~rejected)
        if len(kept):
            sub = np.zeros(len(kept), np.uint8)
            self._fragment_ops(
                ds,
                self._stages(ds),
                memory,
                ds.framebuffer,
                frags.select(kept) if len(kept) < len(frags) else frags,
                stats,
                fate=sub,
            )
            fate[kept] = sub
        return fate

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
        plan = self._fused_plan(call)
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

    def _fused_plan(self, call: DrawCall) -> fused_frags.FragmentPlan | str:
        """The draw's ``picaemu.fused.fragments`` plan, or why not (a str): not covered, the fused side is off, the
        stage observer watches what the compiled route does not record (``observed.refusal``), the color stages
        seam is set, or ``_fragments`` is replaced (another backend). With an observer of fates the plan serves the
        recorded compiled route (``_observed_fragments``), else one ``fused.fragments`` call."""
        if not self.fused_fragments:
            return FUSED_FRAGMENTS_OFF
        refusal = observed.refusal(self.stage_observer)
        if refusal:
            return refusal
        if self.color_stages is not default_color_stages:
            return COLOR_STAGES_SEAM
        if type(self)._fragments is not FragmentSide._fragments:
            return OTHER_BACKEND
        return self._fragment_plans.get(call.draw_state, call.memory)

    def _fused_fragments(self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict) -> bool:
        """The draw's fragment side in one compiled call (False: no plan, or the plan declined the draw — too
        big, a division by zero, a texture outside VRAM/FCRAM — having written nothing; the staged path runs)."""
        plan = self._fused_plan(call)
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
        fate: np.ndarray | None = None,
    ) -> None:
        """Shade, then shadow-map write or alpha test + per-fragment operations. With a ``Recording`` (the observed
        path) the operations run over the whole chunk, its log marking what the scissor and alpha test killed;
        ``fate`` (F,) uint8 (the fragment batch) receives each fragment's ``Fate`` from the split passes. A
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
            if fate is not None:
                fate[~alive] = Fate.ALPHA
        if len(x) == 0:
            return
        tester = observer if observer is not None and observer.fragment_tests else None
        tests = tester is not None and ds.depth_stencil.uses_depth_buffer(fb.depth_format)
        if tests and log is None:
            log = FragmentLog.start(np.zeros(len(x), np.uint8))
        elif fate is not None and log is None:
            log = FragmentLog.fates_only(len(x))
        prog = stages.blend_program()  # the draw state's plan serves the draw state's own program
        plan = ds.fragment_ops if prog is ds.blend_program else None
        fragment_ops.resolve(memory, fb, ds.depth_stencil, prog, x, y, depth, color, stats, log, plan)
        if tests and tester is not None and log is not None:
            _report_tests(tester, log, fb, x, y, depth)
        if fate is not None and recording is None and log is not None:
            fate[np.nonzero(alive)[0] if killed else slice(None)] = log.fate
