"""The rendering pipeline: the only module that knows the stage order (implements ``picaemu.draw.PipelineSink``).

Per draw (``Pipeline.draw(call)``), every stage reads its part of ``call.draw_state`` (``picaemu.draw_state``:
decoded once, reused across draws while no register write touches it); no stage reads the register file:

vertex loader -> vertex shader (``picaemu.shader``) -> [geometry shader, when GEOSTAGE_CONFIG.gs_use = 2: it
forms the triangles] -> output map -> primitive assembly -> quaternion alignment
-> clipping -> viewport -> culling -> rasterizer (with scissor) -> fragment color (``color_stages``: shade,
alpha test, blend program) -> stencil test -> depth test -> stencil/depth writes -> destination read -> blend/logic
op -> color write mask -> color write.

Fragment operations keep the hardware's per-pixel order inside a draw (``picaemu.fragment.ops``: compiled passes
over the fragments in rasterization order, with the color stages' ``blend_program``). In shadow-map rendering mode
(COLOR_OPERATION ``fragment_mode``) the shaded fragments go to ``fragment_ops.resolve_shadow`` instead (no alpha,
stencil, depth or blend stage, §15.8). A gas draw (either gas pass) raises ``picaemu.color.gas.GasUnsupported``
before any work (the draw state's ``gas`` part). Writes go straight to emulated memory (framebuffer
flush/invalidate are no-ops). ``call.stats`` receives the counters listed in ``STAT_KEYS`` and ``time_s``, and
``call.route`` the draw's route: ``picaemu.draw.ROUTE_COMPILED`` when both its sides ran compiled (below), else
"reference: <reason>[; <reason>]" naming why each side that did not declined (the vertex side's first): a plan's
refusal (``VertexPlan.of`` / ``FragmentPlan.of``), a run-time decline, an observer, a seam, immediate mode;
``shader_instructions`` (instructions executed x active lanes, VS + GS) and ``texels_fetched`` (texture taps x
fragments) come from the seams that report them (below).

Seams: ``vertex_shader`` / ``geometry_shader`` (defaults: ``picaemu.shader``; called with the draw state, the
inputs and the draw's stats dict, to which they add ``shader_instructions``) and ``color_stages`` (a function of
the draw state; default ``default_color_stages``: ``picaemu.color.shading``; ``PrimaryColorStages`` = interpolated
primary color only; ``shade(frags, memory, counters)`` adds ``texels_fetched``).

Batching (``batch_fragments=True``, ``picaemu.fragment.batch``): the fragment side of consecutive draws with the
same fragment state runs once, at ``flush()`` (every event but the vertex side's, a state change, a hazard); the
draws' counters are complete after it. The common draw's geometry runs in one compiled call
(``picaemu.geometry.front_end``; ``fused_front_end=False``: stage by stage), and with its vertex loading in one
compiled call when no stage observer watches the vertices (``picaemu.fused.vertices``; ``fused_vertices=False``:
the loader first); so does the fragment side of a draw whose state ``picaemu.fused.fragments`` covers when nothing
observes it (``fused_fragments=False``: stage by stage); such a draw runs at once instead of joining a batch.
Compiled draws (``compiled_draws=True``): a command processor may run the draws after one in its compiled loop
while their state stays, with this pipeline's plans (``picaemu.fused.loop``; ``picaemu.draw.CompiledSink``).

Memory: the first ``Pipeline`` tunes glibc's allocator so that each draw's large arrays reuse heap pages instead
of faulting fresh ones in (``picaemu.allocator``; values unchanged).

Observation: ``pipeline.stage_observer`` (``picaemu.observer.StageObserver``) sees the loader's vertices, the shader
outputs, the geometry shader's inputs and outputs, the triangles before and after clipping, and per shaded
fragment (when it asks: ``fragment_values``) the texture lookups, lighting, every TEV stage and fog and
(``fragment_tests``) the depth and stencil tests' values, as the compiled fragment pass recorded them; without one
the pipeline makes no call and no copy. An observer that asks for fates (``fragment_fates``;
``picaemu.observer.FateWatcher`` wraps a function) gets ``on_fragments(call, FragmentFates)`` once
per draw that reaches the rasterizer (possibly with no fragments), with every rasterized fragment
(scissor-rejected ones included), its ``fragment_ops.Fate``, TEV output and its pixel's color before and after it,
as the compiled pass recorded them (``fragment_ops.FragmentLog``); without an observer none of that is computed
(docs/render.md). Its ``fragment_window`` narrows that to the fragments in a box (a probe of one pixel).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from picaemu import allocator, shader
from picaemu.color import shading
from picaemu.draw import ROUTE_COMPILED, DrawCall, DrawKind, PipelineEventKind, with_reason
from picaemu.draw_state import DrawState, Phase
from picaemu.errors import UnsupportedFeature
from picaemu.fragment import batch as fragment_batch
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.blend import BlendMode, BlendProgram
from picaemu.fragment.ops import Fate, FragmentLog
from picaemu.fused import fragments as fused_frags
from picaemu.fused import loop as fused_loop
from picaemu.fused import vertices
from picaemu.geometry import clipping, front_end
from picaemu.geometry.output_map import map_outputs, slot_registers
from picaemu.geometry.primitive_assembly import Assembler, Topology
from picaemu.geometry.vertex_loader import VertexBatch, load_batch
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.raster.fragments import Fragments
from picaemu.raster.rasterizer import MAX_DRAW_FRAGMENTS, rasterize_chunks, scissor_rejects
from picaemu.regs import id_of
from picaemu.state import GpuState

STAT_KEYS = (
    "vertices",
    "vertices_loaded",
    "vertices_shaded",
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
# why a draw took the reference route (``DrawCall.route``) besides the plans' own refusals and run-time declines
IMMEDIATE_MODE = "immediate mode"
STAGE_OBSERVER = "stage observer attached"
VERTEX_SHADER_SEAM = "vertex shader seam replaced"
COLOR_STAGES_SEAM = "color stages seam replaced"
FUSED_VERTICES_OFF = "fused vertex side off"
FUSED_FRAGMENTS_OFF = "fused fragment side off"
OTHER_BACKEND = "fragments run by another backend"
MID_PRIMITIVE = "assembler holds an earlier draw's vertices"
VERTEX_DECLINED = "vertex side declined at run time (vertex count, unique vertices or a read outside memory)"
# events that concern the vertex side only: a pending fragment batch stays pending across them
VERTEX_SIDE_EVENTS = frozenset({PipelineEventKind.RESTART_PRIMITIVE, PipelineEventKind.VERTEX_CACHE_CLEAR})
# (draw state, (U, K<=16, 4) inputs, the draw's counters) -> (U, 16, 4) outputs; adds ``shader_instructions``
VertexShader = Callable[[DrawState, np.ndarray, dict], np.ndarray]
# (draw state, (N, K, 4) VS output attributes in stream order, variable-mode sizes, counters)
#   -> ((M, 16, 4) outputs, (T, 3) triangles)
GeometryShader = Callable[[DrawState, np.ndarray, tuple[int, ...] | None, dict], tuple[np.ndarray, np.ndarray]]


def run_vertex_shader(ds: DrawState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    """The vertex shader unit of ``picaemu.shader`` on every unique vertex."""
    return shader.run_vertex_shader(ds.vs, attributes, counters=counters)


def run_geometry_shader(
    ds: DrawState, vs_attributes: np.ndarray, primitive_sizes: tuple[int, ...] | None, counters: dict | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The geometry shader unit of ``picaemu.shader``: emitted o0-o15 and triangles (winding flag applied)."""
    geo = shader.run_geometry_shader(ds.gs, vs_attributes, primitive_sizes, counters=counters)
    return geo.vertices, geo.triangles


@dataclass(frozen=True)
class FragmentFates:
    """Every rasterized fragment of one draw, in rasterization order: window ``x``, ``y`` (F,) int32 (y up) and
    ``fate`` (F,) uint8 ``fragment_ops.Fate`` codes; ``color_written``: the draw's color writes were enabled (a
    WRITTEN fragment changed the color buffer only then). ``shadow``: the draw rendered a shadow map (every
    fragment reaches the shadow update and is WRITTEN). ``fragments``: the rasterizer's ``Fragments`` (depth,
    primitive, interpolated inputs); ``tev`` (F, 4) uint8 the shaded color (zero for scissor-rejected fragments,
    which are not shaded); ``color_before`` / ``color_after`` (F, 4) uint8 the color buffer's pixel (RGBA8) before
    and after each fragment's turn, from the compiled pass (after = before for a killed fragment; zero in shadow
    mode and when the color buffer is not in mapped memory)."""

    x: np.ndarray
    y: np.ndarray
    fate: np.ndarray
    color_written: bool
    shadow: bool = False
    fragments: Fragments | None = None
    tev: np.ndarray | None = None
    color_before: np.ndarray | None = None
    color_after: np.ndarray | None = None


class Recording(NamedTuple):
    """The observed path's record of one rasterized chunk."""

    chunk: Fragments  # every fragment of the chunk (scissor-rejected ones included)
    tev: np.ndarray  # (F, 4) uint8 TEV output, filled for the shaded fragments
    log: FragmentLog  # what the fragment operations did to each
    kept: np.ndarray  # (S,) int64 indices of the shaded (scissor-passed) fragments in the chunk


class ColorStages(Protocol):
    """Fragment coloring seam: shade -> (F, 4) uint8 (adding ``texels_fetched`` to ``counters``; reporting to a
    stage ``observer``'s fragment hooks when one is given, and the pipeline passes one only then), alpha test ->
    (F,) bool, and the blend / logic op as data, ``blend_program() -> picaemu.fragment.blend.BlendProgram``, which
    the compiled fragment operations (``picaemu.fragment.ops``) apply."""

    def shade(
        self, frags: Fragments, memory: PhysicalMemory, counters: dict, observer: StageObserver | None = None
    ) -> np.ndarray: ...

    def alpha_test(self, color: np.ndarray) -> np.ndarray: ...

    def blend_program(self) -> BlendProgram: ...


def primary_color_u8(frags: Fragments) -> np.ndarray:
    """The interpolated primary color rounded to 8 bits: (F, 4) uint8 (``picaemu.color.shading.primary_color``)."""
    return shading.primary_color(frags)


@dataclass(frozen=True)
class PrimaryColorStages:
    """Color = interpolated primary color; no alpha test; the source replaces the destination."""

    def shade(
        self,
        frags: Fragments,
        memory: PhysicalMemory,
        counters: dict | None = None,
        observer: StageObserver | None = None,
    ) -> np.ndarray:
        return primary_color_u8(frags)

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        return np.ones(color.shape[0], bool)

    def blend_program(self) -> BlendProgram:
        return BlendProgram.build(BlendMode.REPLACE)


@dataclass(frozen=True)
class ShadingColorStages:
    """Color from ``picaemu.color.shading``: textures, lighting, TEV, fog; its alpha test and blend / logic op (the
    draw state's ``shading`` and ``blend_program``)."""

    sstate: shading.ShadingState
    program: BlendProgram

    def shade(
        self,
        frags: Fragments,
        memory: PhysicalMemory,
        counters: dict | None = None,
        observer: StageObserver | None = None,
    ) -> np.ndarray:
        return shading.shade(self.sstate, frags, memory, counters, observer)

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        return shading.alpha_test(self.sstate, color)

    def blend_program(self) -> BlendProgram:
        return self.program


def _add(stats: dict, counters: dict) -> None:
    """Add a chunk's counters to the draw's."""
    for key, value in counters.items():
        stats[key] = stats.get(key, 0) + value


def window_bounds(wt: clipping.WindowTriangles, fb: fbm.FramebufferState) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the inclusive window-pixel box around the triangles (12.4 fixed-point vertices), clamped
    to the framebuffer (a pixel centre outside it cannot be covered). One compiled pass: every draw pays it."""
    return clipping.window_box(clipping.extent(wt.x, wt.y), fb.width, fb.height)


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


def default_color_stages(ds: DrawState) -> ColorStages:
    """THE switch for fragment coloring: ``picaemu.color.shading`` (TEV, alpha test, blend / logic op).
    ``PrimaryColorStages`` (interpolated primary color, no alpha test, no blending) is the fallback the
    pipeline used before the shading module existed; pass it as ``color_stages`` to isolate geometry bugs."""
    return ShadingColorStages(ds.shading, ds.blend_program)


class Pipeline:
    """Runs draws into emulated memory; keeps only the primitive assembler's state between draws."""

    def __init__(
        self,
        vertex_shader: VertexShader = run_vertex_shader,
        color_stages: Callable[[DrawState], ColorStages] = default_color_stages,
        geometry_shader: GeometryShader = run_geometry_shader,
        stage_observer: StageObserver | None = None,
        fused_front_end: bool = True,
        batch_fragments: bool = False,
        fused_vertices: bool = True,
        fused_fragments: bool = True,
        compiled_draws: bool = True,
    ) -> None:
        """``fused_front_end``: run the common draw's geometry through ``picaemu.geometry.front_end`` (same results
        as the stages; off: every draw goes stage by stage, as the differential test compares).
        ``fused_vertices`` (with ``fused_front_end``): load the common draw's vertices and run its geometry in one
        compiled call, ``picaemu.fused.vertices`` (same results; off: the loader then the front end).
        ``batch_fragments``: run the fragment side of consecutive draws with the same fragment state at once
        (``picaemu.fragment.batch``); only for owners that send ``PipelineEventKind.MEMORY_SYNC`` (or call
        ``flush``) before reading memory or a draw's counters, as ``picaemu.replay`` does. ``fused_fragments``:
        run a covered, unobserved draw's fragment side in one compiled call (``picaemu.fused.fragments``; same
        results; off: stage by stage, as the differential test compares). ``compiled_draws``: offer a command
        processor the plans to run the draws after one in its compiled loop while their state stays
        (``picaemu.fused.loop``; ``picaemu.draw.CompiledSink``)."""
        self.vertex_shader = vertex_shader
        self.geometry_shader = geometry_shader
        self.color_stages = color_stages
        self.fused_front_end = fused_front_end
        self.fused_draws = 0  # draws the fused front end served (the differential test checks it is used)
        self.fused_vertices = fused_vertices
        self.fused_vertex_draws = 0  # of those, draws the fused vertex side (loading included) served
        self.fused_fragments = fused_fragments
        self.fused_fragment_draws = 0  # draws whose fragment side ``picaemu.fused.fragments`` ran
        self._vertex_plans = vertices.PlanCache()
        self._fragment_plans = fused_frags.PlanCache()
        self.batch_fragments = batch_fragments
        self.compiled = compiled_draws
        self.compiled_count = 0  # draws the command processor's compiled loop ran with this pipeline's plans
        self._plan_cache = fused_loop.PlanCache()
        self.batched_draws = 0  # draws whose fragment side ran in a batch of two or more
        self._batch: list[tuple[DrawCall, clipping.WindowTriangles]] = []
        self._batch_key: tuple | None = None  # the pending batch's ``fragment_batch.fragment_key``, and its ids
        self._batch_ids: tuple[int, ...] = ()
        # the last deferrable draw's fragment key (held: its ids stay unique) and ids, how many draws in a row had
        # it, and how many had the state before it
        self._last_key: tuple | None = None
        self._last_ids: tuple[int, ...] = ()
        self._run = self._prior_run = 0
        self._batch_targets: tuple[fragment_batch.Range, ...] = ()
        self._batch_bound = 0  # sum over the batch's draws of triangles x window-box pixels (>= its fragments)
        self.stage_observer = stage_observer  # picaemu.observer.StageObserver: what each stage computed
        self.assembler = Assembler()
        allocator.keep_freed_memory()  # large per-draw arrays reuse heap pages (picaemu.allocator)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        """Restart resets the assembler; cache clear, flush, invalidate and early-depth clear change nothing
        visible here (no cross-draw vertex cache, writes go straight to memory, early depth not modelled). Every
        event but the vertex side's (restart, vertex cache clear) first runs the pending fragment batch."""
        if kind not in VERTEX_SIDE_EVENTS:
            self.flush()
        if kind is PipelineEventKind.RESTART_PRIMITIVE:
            self.assembler.reset()

    def draw(self, call: DrawCall) -> None:
        start = time.perf_counter()
        stats = call.stats
        stats.update(dict.fromkeys(STAT_KEYS, 0))
        call.route = ROUTE_COMPILED  # until a side declines (``_decline``)
        try:
            self._draw(call, stats)
        except BaseException:
            self.flush()  # the draws before this one finish as they would have without batching
            raise
        finally:
            stats["time_s"] = time.perf_counter() - start

    def _draw(self, call: DrawCall, stats: dict) -> None:
        ds = call.draw_state
        ds.check(Phase.SETUP)
        prim, fb = ds.primitives, ds.framebuffer
        arrays = call.kind is not DrawKind.IMMEDIATE
        if arrays:
            ds.check(Phase.VERTEX_ARRAYS)
        if self._batch and fragment_batch.reads_targets(
            ds.vertex_range if arrays else None, call.kind, self._batch_targets
        ):
            self.flush()  # the pending draws' pixels first: this draw's vertices may lie in their render targets
        fused = self._fused_vertex_side(call, stats) if arrays else IMMEDIATE_MODE
        if isinstance(fused, str):
            self._decline(call, fused)
            batch = load_batch(
                ds.vertex_range if arrays else None,
                call.state.fixed_attribs,
                call.kind,
                call.memory,
                call.immediate_inputs,
                prim.variable_primitives,
                configured_only=True,
            )
            stats.update(vertices=batch.count, vertices_loaded=int(batch.attributes.shape[0]))
            observer = self.stage_observer
            if observer is not None:
                observer.on_vertices(call, batch)
            if batch.count == 0:
                return
            ds.check(Phase.VERTICES)
            front = self._fused_front_end(ds, batch, stats) if observer is None else None
            if front is None:
                wt = self._staged_front_end(call, ds, batch, stats)
                front = wt, (window_bounds(wt, fb) if len(wt) else None)
            fused = front
        wt, bounds = fused
        if bounds is not None:
            call.bounds = bounds
        self._fragment_side(call, wt)

    @staticmethod
    def _decline(call: DrawCall, reason: str) -> None:
        """A side declined the draw: ``call.route`` becomes a reference route that names ``reason`` too."""
        call.route = with_reason(call.route, reason)

    def compiled_plans(self, call: DrawCall) -> fused_loop.CompiledPlans | None:
        """``picaemu.draw.CompiledSink``: the plans of this draw's state (``fused_loop.PlanCache``) when the
        default stages run and nothing watches the draws (a subclass, which may change any stage or watch each
        draw, is offered none); the pending fragment batch runs first."""
        if call.observed or not self.compiled_allowed():
            return None
        plans = self._plan_cache.plans(call, self.assembler)
        if plans is not None:
            self.flush()  # the loop writes pixels at once: the batched draws before it first
        return plans

    def compiled_allowed(self) -> bool:
        """``picaemu.draw.CompiledSink``: compiled draws are on, this is a plain ``Pipeline`` (a subclass may change
        any stage or watch each draw) with its default stages and fused sides, and no observer watches."""
        return (
            self.compiled
            and type(self) is Pipeline
            and self.stage_observer is None
            and self.color_stages is default_color_stages
            and self.vertex_shader is run_vertex_shader
            and self.fused_front_end
            and self.fused_vertices
            and self.fused_fragments
        )

    def compiled_draws(self, draws: fused_loop.CompiledDraws) -> None:
        """``picaemu.draw.CompiledSink``: the loop ran ``draws`` (each starting with nothing buffered in the
        assembler; ``CompiledDraws.assemble`` leaves the assembler as they and the restarts around them did)."""
        draws.assemble(self.assembler)
        self.compiled_count += len(draws)

    def _fused_vertex_side(
        self, call: DrawCall, stats: dict
    ) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | str:
        """``picaemu.fused.vertices``: the common draw's loading and geometry in one compiled call, or why not (a
        str: not the common case, or it is off, or a stage observer watches the vertices, or the vertex shader
        seam replaced)."""
        if not self.fused_vertices or not self.fused_front_end:
            return FUSED_VERTICES_OFF
        if self.stage_observer is not None:
            return STAGE_OBSERVER
        if self.vertex_shader is not run_vertex_shader:
            return VERTEX_SHADER_SEAM
        ds = call.draw_state
        plan = self._vertex_plans.plan_of(ds, call.memory, call.state.fixed_attribs)
        if isinstance(plan, str):
            return plan
        result = vertices.run(plan, ds, call.kind, self.assembler, stats)
        if result is None:
            return VERTEX_DECLINED if self.assembler.takes_whole_triangles(Topology.LIST) else MID_PRIMITIVE
        self.fused_draws += 1
        self.fused_vertex_draws += 1
        return result

    def _fused_front_end(
        self, ds: DrawState, batch: VertexBatch, stats: dict
    ) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | None:
        """``picaemu.geometry.front_end``: the common draw's geometry in one compiled call (None: not the common
        case, or the front end is off or the vertex shader seam replaced)."""
        if not self.fused_front_end or self.vertex_shader is not run_vertex_shader:
            return None
        result = front_end.run(ds, batch, self.assembler, stats)
        self.fused_draws += result is not None
        return result

    def _staged_front_end(
        self, call: DrawCall, ds: DrawState, batch: VertexBatch, stats: dict
    ) -> clipping.WindowTriangles:
        """Vertex shader -> [geometry shader] -> output map -> assembly -> clip -> viewport -> cull, stage by
        stage (the stage observer sees each stage's output)."""
        prim, observer = ds.primitives, self.stage_observer
        outputs = self.vertex_shader(ds, batch.attributes, stats)
        stats["vertices_shaded"] = int(outputs.shape[0])
        if observer is not None:
            observer.on_vertex_outputs(call, outputs)
        if prim.gs_in_use:
            tris = self._geometry(
                call, ds, outputs if batch.identity else outputs[batch.inverse], batch.primitive_sizes, stats
            )
        else:
            verts = map_outputs(ds.output_map, outputs, prim.vs_outmap_mask)
            tris = self.assembler.assemble(prim.topology, verts if batch.identity else verts[batch.inverse])
        stats["primitives_assembled"] = int(tris.shape[0])
        if ds.varyings.quaternions:
            clipping.align_quaternions(tris)
        assembled = tris.copy() if observer is not None else None
        tris, src, counts = clipping.clip_triangles(tris, ds.clip)
        if observer is not None:
            observer.on_triangles(call, assembled, tris)
        stats.update(counts)
        wt, culled = clipping.cull(clipping.to_window(tris, src, ds.viewport), ds.viewport.cull_mode)
        stats.update(primitives_culled=culled, primitives_rasterized=len(wt))
        return wt

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
            and type(self)._fragments is Pipeline._fragments
        )

    def flush(self) -> None:
        """Run the pending batch's fragment side: its pixels reach memory and its draws' counters are complete
        (each draw's ``time_s`` gains an equal share of the batch's time)."""
        batch, self._batch = self._batch, []
        if not batch:
            return
        start = time.perf_counter()
        if len(batch) == 1:
            self._fragments(batch[0][0], batch[0][1], batch[0][0].stats)
        else:
            self._run_batch(batch)
            self.batched_draws += len(batch)
        share = (time.perf_counter() - start) / len(batch)
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
        merged = clipping.WindowTriangles(
            *(
                np.concatenate(parts)
                for parts in zip(*((w.x, w.y, w.zndc, w.inv_w, w.varyings) for w in wts), strict=True)
            ),
            np.concatenate([w.primitive + np.int32(base) for w, base in zip(wts, starts.tolist(), strict=True)]),
        )
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
        if self._fused_fragments(call, wt, stats):
            return
        if observer is None or not observer.fragment_fates:
            stages = None
            for frags, rstats in rasterize_chunks(wt, rs, active):  # in order: bounded memory for any draw
                _add(stats, rstats)
                if len(frags):
                    stages = stages or self._stages(ds)
                    self._fragment_ops(ds, stages, call.memory, fb, frags, stats, None)
            return
        parts = [  # only the fragments in the observer's window, when it names one (``StageObserver``)
            self._observed_chunk(ds, call.memory, fb, frags.within(observer.fragment_window), rstats, stats)
            for frags, rstats in rasterize_chunks(wt, dataclasses.replace(rs, scissor_mode=0), active)
        ]
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
        stage observer or the color stages seam is set, or ``_fragments`` is replaced (another backend)."""
        if not self.fused_fragments:
            return FUSED_FRAGMENTS_OFF
        if self.stage_observer is not None:
            return STAGE_OBSERVER
        if self.color_stages is not default_color_stages:
            return COLOR_STAGES_SEAM
        if type(self)._fragments is not Pipeline._fragments:
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
    ) -> tuple[Fragments, np.ndarray, FragmentLog]:
        """Fragments rasterized with the scissor off: the scissor applied here, then the fragment stages, recorded;
        returns (every fragment, (F, 4) uint8 TEV output, the log of the fragment operations)."""
        rejected = scissor_rejects(ds.raster, frags.x, frags.y)
        _add(stats, dict(rstats, killed_scissor=int(rejected.sum())))
        log = FragmentLog.start(np.where(rejected, np.uint8(Fate.SCISSOR), np.uint8(Fate.WRITTEN)))
        tev = np.zeros((len(frags), 4), np.uint8)
        kept = np.flatnonzero(~rejected)
        if len(kept):
            self._fragment_ops(
                ds,
                self._stages(ds),
                memory,
                fb,
                frags.select(kept) if len(kept) < len(frags) else frags,
                stats,
                Recording(frags, tev, log, kept),
            )
        return frags, tev, log

    def _geometry(
        self, call: DrawCall, ds: DrawState, vs_out: np.ndarray, sizes: tuple[int, ...] | None, stats: dict
    ) -> np.ndarray:
        """GS path: VS output attributes (enabled registers, stream order) -> GS -> (T, 3, C) triangles."""
        prim = ds.primitives
        if prim.topology is not Topology.GEOMETRY:
            raise UnsupportedFeature(
                "geometry shader with a topology other than 3 (geometry primitives)",
                register=id_of("PRIMITIVE_CONFIG"),
                value=prim.topology.value,
            )
        attrs = vs_out[:, slot_registers(prim.vs_outmap_mask)]
        gs_out, triangles = self.geometry_shader(ds, attrs, sizes, stats)
        if self.stage_observer is not None:
            self.stage_observer.on_geometry(call, attrs, sizes, gs_out, triangles)
        verts = map_outputs(ds.output_map, gs_out, prim.gs_outmap_mask)
        return verts[triangles]

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
        tests = observer is not None and observer.fragment_tests and ds.depth_stencil.uses_depth_buffer(fb.depth_format)
        if tests and log is None:
            log = FragmentLog.start(np.zeros(len(x), np.uint8))
        elif fate is not None and log is None:
            log = FragmentLog.fates_only(len(x))
        prog = stages.blend_program()  # the draw state's plan serves the draw state's own program
        plan = ds.fragment_ops if prog is ds.blend_program else None
        fragment_ops.resolve(memory, fb, ds.depth_stencil, prog, x, y, depth, color, stats, log, plan)
        if tests:
            _report_tests(observer, log, fb, x, y, depth)
        if fate is not None and recording is None:
            fate[np.nonzero(alive)[0] if killed else slice(None)] = log.fate
