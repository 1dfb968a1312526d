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

Seams (``picaemu.pipeline_seams``): ``vertex_shader`` / ``geometry_shader`` (default ``picaemu.shader``) and
``color_stages`` (default ``default_color_stages``: ``picaemu.color.shading``). The fragment half, from the window
triangles on, is ``picaemu.pipeline_fragments.FragmentSide``, which ``Pipeline`` mixes in; this module runs the
vertex half and chooses the route.

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
(docs/render.md). Its ``fragment_window`` narrows that to the fragments in a box (a probe of one pixel). Such a
draw stays on the compiled route (``picaemu.fused.observed``); one whose observer asks for per-fragment values
takes the staged color stages, one whose observer overrides a vertex hook the staged vertex side, each named in
``call.route``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from picaemu import allocator
from picaemu import draw as draw_mod
from picaemu.draw import (
    COLOR_STAGES_SEAM,
    FUSED_FRAGMENTS_OFF,
    FUSED_VERTICES_OFF,
    GEOMETRY_SHADER_SEAM,
    IMMEDIATE_MODE,
    MID_PRIMITIVE,
    OTHER_BACKEND,
    ROUTE_COMPILED,
    VERTEX_DECLINED,
    VERTEX_SHADER_SEAM,
    VERTICES_WATCHED,
    DrawCall,
    DrawKind,
    PipelineEventKind,
)
from picaemu.draw_state import DrawState, Phase
from picaemu.errors import UnsupportedFeature
from picaemu.fragment import batch as fragment_batch
from picaemu.fragment import framebuffer as fbm
from picaemu.fused import fragments as fused_frags
from picaemu.fused import loop as fused_loop
from picaemu.fused import vertices
from picaemu.geometry import clipping, front_end
from picaemu.geometry.output_map import map_outputs, slot_registers
from picaemu.geometry.primitive_assembly import Assembler, Topology
from picaemu.geometry.vertex_loader import VertexBatch, load_batch
from picaemu.observer import StageObserver, watches_vertices
from picaemu.pipeline_fragments import STAT_KEYS, FragmentSide
from picaemu.pipeline_seams import (
    ColorStages,
    FragmentFates,
    GeometryShader,
    PrimaryColorStages,
    ShadingColorStages,
    VertexShader,
    default_color_stages,
    primary_color_u8,
    run_geometry_shader,
    run_vertex_shader,
)
from picaemu.regs import id_of
from picaemu.state import GpuState

__all__ = [  # the seams, records and route reasons live beside, and are this module's API too
    "COLOR_STAGES_SEAM",
    "FUSED_FRAGMENTS_OFF",
    "FUSED_VERTICES_OFF",
    "GEOMETRY_SHADER_SEAM",
    "IMMEDIATE_MODE",
    "MID_PRIMITIVE",
    "OTHER_BACKEND",
    "STAT_KEYS",
    "VERTEX_DECLINED",
    "VERTEX_SHADER_SEAM",
    "VERTICES_WATCHED",
    "ColorStages",
    "FragmentFates",
    "GeometryShader",
    "Pipeline",
    "PrimaryColorStages",
    "ShadingColorStages",
    "VertexShader",
    "default_color_stages",
    "primary_color_u8",
    "run_geometry_shader",
    "run_vertex_shader",
    "window_bounds",
]

# events that concern the vertex side only: a pending fragment batch stays pending across them
VERTEX_SIDE_EVENTS = frozenset({PipelineEventKind.RESTART_PRIMITIVE, PipelineEventKind.VERTEX_CACHE_CLEAR})


def window_bounds(wt: clipping.WindowTriangles, fb: fbm.FramebufferState) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the inclusive window-pixel box around the triangles (12.4 fixed-point vertices), clamped
    to the framebuffer (a pixel centre outside it cannot be covered). One compiled pass: every draw pays it."""
    return clipping.window_box(clipping.extent(wt.x, wt.y), fb.width, fb.height)


class Pipeline(FragmentSide):
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
        self.recorded_fragment_draws = 0  # observed draws whose fates the compiled route recorded (fused.observed)
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
        start = draw_mod.clock()
        stats = call.stats
        stats.update(dict.fromkeys(STAT_KEYS, 0))
        call.route = ROUTE_COMPILED  # until a side declines (``_decline``)
        try:
            self._draw(call, stats)
        except BaseException:
            self.flush()  # the draws before this one finish as they would have without batching
            raise
        finally:
            stats["time_s"] = draw_mod.clock() - start

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
            front = self._fused_front_end(ds, batch, stats) if not watches_vertices(observer) else None
            if front is None:
                wt = self._staged_front_end(call, ds, batch, stats)
                front = wt, (window_bounds(wt, fb) if len(wt) else None)
            fused = front
        wt, bounds = fused
        if bounds is not None:
            call.bounds = bounds
        self._fragment_side(call, wt)

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
        seam, or for a GS draw the geometry shader seam, replaced)."""
        if not self.fused_vertices or not self.fused_front_end:
            return FUSED_VERTICES_OFF
        if watches_vertices(self.stage_observer):
            return VERTICES_WATCHED
        if self.vertex_shader is not run_vertex_shader:
            return VERTEX_SHADER_SEAM
        ds = call.draw_state
        if ds.primitives.gs_in_use and self.geometry_shader is not run_geometry_shader:
            return GEOMETRY_SHADER_SEAM
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
        stats["vertices_nonfinite"] = int(np.count_nonzero(~np.isfinite(outputs).reshape(len(outputs), -1).all(1)))
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
        assembled = tris.copy() if observer is not None else tris
        tris, src, counts = clipping.clip_triangles(tris, ds.clip)
        if observer is not None:
            observer.on_triangles(call, assembled, tris)
        stats.update(counts)
        wt, culled = clipping.cull(clipping.to_window(tris, src, ds.viewport), ds.viewport.cull_mode)
        stats.update(primitives_culled=culled, primitives_rasterized=len(wt))
        return wt

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
