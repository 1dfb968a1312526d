"""The rendering pipeline: the stage order's readable reference and the route choice (``picaemu.draw.PipelineSink``).

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

Route (``Pipeline(route=...)``, ``picaemu.pipeline_seams.Route``): ``Route.COMPILED``, the production route, runs
each side of a draw in one compiled call where its plan covers it: the vertex side by ``picaemu.fused.vertices``
(loading and geometry), else the loader then ``picaemu.geometry.front_end``'s geometry call, else the stages; the
fragment side by ``picaemu.fused.fragments``, else the stages; and it offers a command processor the plans to run
the draws after one in its compiled loop while their state stays (``picaemu.fused.loop``;
``picaemu.draw.CompiledSink``: ``compiled_allowed``, ``compiled_plans``). ``Route.REFERENCE`` runs every draw stage
by stage: the readable oracle the differential tests compare the compiled route against. The choice is made in one
place, ``choose_route`` (per draw: each side's plan, or why the reference path runs it), from the reasons that hold
for every draw (``_standing``: the route, an observer, a seam, another backend), immediate mode and the plans'
refusals; a plan's kernel may still decline a draw at run time (having written nothing), also named.

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
``call.route``. Work is never deferred: each draw's pixels and counters are complete when ``draw`` returns.
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
from picaemu.fragment import framebuffer as fbm
from picaemu.fused import fragments as fused_frags
from picaemu.fused import loop as fused_loop
from picaemu.fused import observed, vertices
from picaemu.geometry import clipping, front_end
from picaemu.geometry.output_map import map_outputs, slot_registers
from picaemu.geometry.primitive_assembly import Assembler, Topology
from picaemu.geometry.vertex_loader import VertexBatch, load_batch
from picaemu.observer import StageObserver, watches_vertices
from picaemu.pipeline_fragments import STAT_KEYS, FragmentSide
from picaemu.pipeline_seams import (
    Choice,
    ColorStages,
    FragmentFates,
    GeometryShader,
    PrimaryColorStages,
    Route,
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
    "Choice",
    "ColorStages",
    "FragmentFates",
    "GeometryShader",
    "Pipeline",
    "PrimaryColorStages",
    "Route",
    "ShadingColorStages",
    "VertexShader",
    "default_color_stages",
    "primary_color_u8",
    "run_geometry_shader",
    "run_vertex_shader",
    "window_bounds",
]


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
        route: Route = Route.COMPILED,
    ) -> None:
        """``route``: ``Route.COMPILED`` (production) or ``Route.REFERENCE`` (every draw stage by stage: the oracle
        the differential tests compare against); ``choose_route`` applies it to each draw."""
        self.vertex_shader = vertex_shader
        self.geometry_shader = geometry_shader
        self.color_stages = color_stages
        self.route = route
        # draws each compiled part served (the tests check they are used): the geometry (``picaemu.fused.vertices``
        # or ``geometry.front_end``), of those the vertex side with its loading, the fragment side, an observed
        # draw's recorded fragment side (``picaemu.fused.observed``), and the command processor's compiled loop
        self.fused_draws = self.fused_vertex_draws = self.fused_fragment_draws = 0
        self.recorded_fragment_draws = self.compiled_count = 0
        self._vertex_plans = vertices.PlanCache()
        self._fragment_plans = fused_frags.PlanCache()
        self._plan_cache = fused_loop.PlanCache()
        self._choice = Choice(FUSED_VERTICES_OFF, False, FUSED_FRAGMENTS_OFF)  # the running draw's
        self.stage_observer = stage_observer  # picaemu.observer.StageObserver: what each stage computed
        self.assembler = Assembler()
        allocator.keep_freed_memory()  # large per-draw arrays reuse heap pages (picaemu.allocator)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        """Restart resets the assembler; cache clear, flush, invalidate, early-depth clear and the replay's own
        events change nothing here (no cross-draw vertex cache, writes go straight to memory, early depth not
        modelled)."""
        if kind is PipelineEventKind.RESTART_PRIMITIVE:
            self.assembler.reset()

    def draw(self, call: DrawCall) -> None:
        start = draw_mod.clock()
        stats = call.stats
        stats.update(dict.fromkeys(STAT_KEYS, 0))
        call.route = ROUTE_COMPILED  # until a side declines (``_decline``)
        try:
            self._draw(call, stats)
        finally:
            stats["time_s"] = draw_mod.clock() - start

    def choose_route(self, call: DrawCall) -> Choice:
        """THE route choice: per side of ``call``, its compiled plan or why the reference path runs it (the reasons
        of the sides that run reach ``call.route``; a plan's kernel may still decline at run time, also named).
        Reasons that hold for every draw come first (``_standing``), then immediate mode, a replaced geometry
        shader seam for a draw that uses it, and the plans' refusals (``VertexPlan.of``, ``FragmentPlan.of``)."""
        vertex, fragment = self._standing()
        ds = call.draw_state
        if call.kind is DrawKind.IMMEDIATE:
            plan: vertices.VertexPlan | str = IMMEDIATE_MODE
        elif not vertex and ds.primitives.gs_in_use and self.geometry_shader is not run_geometry_shader:
            plan = GEOMETRY_SHADER_SEAM
        else:
            plan = vertex or self._vertex_plans.plan_of(ds, call.memory, call.state.fixed_attribs)
        return Choice(plan, not vertex, fragment or self._fragment_plans.get(ds, call.memory))

    def _standing(self) -> tuple[str, str]:
        """The reasons (vertex side, fragment side; "" none) every draw of this pipeline takes the reference path
        for: the reference route chosen, a stage observer that watches the vertices or fragment values the compiled
        route does not record (``observed.refusal``), a seam replaced, another backend's ``_fragments``."""
        if self.route is Route.REFERENCE:
            return FUSED_VERTICES_OFF, FUSED_FRAGMENTS_OFF
        observer = self.stage_observer
        vertex = (
            VERTICES_WATCHED
            if watches_vertices(observer)
            else (VERTEX_SHADER_SEAM if self.vertex_shader is not run_vertex_shader else "")
        )
        fragment = observed.refusal(observer) or (
            COLOR_STAGES_SEAM
            if self.color_stages is not default_color_stages
            else (OTHER_BACKEND if type(self)._fragments is not FragmentSide._fragments else "")
        )
        return vertex, fragment

    def compiled_allowed(self) -> bool:
        """``picaemu.draw.CompiledSink``: the command processor's loop may run draws with this pipeline's plans:
        no standing reason (``_standing``), no observer at all, and a plain ``Pipeline`` (a subclass may change
        any stage or watch each draw)."""
        return type(self) is Pipeline and self.stage_observer is None and self._standing() == ("", "")

    def compiled_plans(self, call: DrawCall) -> fused_loop.CompiledPlans | None:
        """``picaemu.draw.CompiledSink``: the plans of this draw's state (``fused_loop.PlanCache``) when the
        loop is allowed (``compiled_allowed``) and no processor observer watches the draw."""
        if call.observed or not self.compiled_allowed():
            return None
        return self._plan_cache.plans(call, self.assembler)

    def compiled_draws(self, draws: fused_loop.CompiledDraws) -> None:
        """``picaemu.draw.CompiledSink``: the loop ran ``draws`` (each starting with nothing buffered in the
        assembler; ``CompiledDraws.assemble`` leaves the assembler as they and the restarts around them did)."""
        draws.assemble(self.assembler)
        self.compiled_count += len(draws)

    def _draw(self, call: DrawCall, stats: dict) -> None:
        ds = call.draw_state
        ds.check(Phase.SETUP)
        if call.kind is not DrawKind.IMMEDIATE:
            ds.check(Phase.VERTEX_ARRAYS)
        self._choice = choice = self.choose_route(call)
        front = self._fused_vertex_side(call, choice.vertex, stats)
        if isinstance(front, str):
            self._decline(call, front)
            loaded = self._loaded_vertex_side(call, choice.front_end, stats)
            if loaded is None:
                return  # no vertices
            front = loaded
        wt, bounds = front
        if bounds is not None:
            call.bounds = bounds
        self._fragment_side(call, wt)

    def _fused_vertex_side(
        self, call: DrawCall, plan: vertices.VertexPlan | str, stats: dict
    ) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | str:
        """``picaemu.fused.vertices``: the draw's loading and geometry in one compiled call by ``plan``, or why not
        (a str: the route choice's reason, or the kernel's run-time decline)."""
        if isinstance(plan, str):
            return plan
        result = vertices.run(plan, call.draw_state, call.kind, self.assembler, stats)
        if result is None:
            return VERTEX_DECLINED if self.assembler.takes_whole_triangles(Topology.LIST) else MID_PRIMITIVE
        self.fused_draws += 1
        self.fused_vertex_draws += 1
        return result

    def _loaded_vertex_side(
        self, call: DrawCall, compiled_front_end: bool, stats: dict
    ) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | None:
        """The vertex loader, then the geometry: in ``geometry.front_end``'s compiled call when allowed and it covers
        the draw, else stage by stage; None when the draw has no vertices."""
        ds, observer = call.draw_state, self.stage_observer
        arrays = call.kind is not DrawKind.IMMEDIATE
        batch = load_batch(
            ds.vertex_range if arrays else None,
            call.state.fixed_attribs,
            call.kind,
            call.memory,
            call.immediate_inputs,
            ds.primitives.variable_primitives,
            configured_only=True,
        )
        stats.update(vertices=batch.count, vertices_loaded=int(batch.attributes.shape[0]))
        if observer is not None:
            observer.on_vertices(call, batch)
        if batch.count == 0:
            return None
        ds.check(Phase.VERTICES)
        front = front_end.run(ds, batch, self.assembler, stats) if compiled_front_end else None
        if front is not None:
            self.fused_draws += 1
            return front
        wt = self._staged_front_end(call, ds, batch, stats)
        return wt, (window_bounds(wt, ds.framebuffer) if len(wt) else None)

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
