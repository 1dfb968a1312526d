"""The rendering pipeline: the only module that knows the stage order (implements ``picaemu.draw.PipelineSink``).

Per draw (``Pipeline.draw(call)``), with every stage's state decoded once from ``call.state``:

vertex loader -> vertex shader (``picaemu.shader``) -> [geometry shader, when GEOSTAGE_CONFIG.gs_use = 2: it
forms the triangles] -> output map -> primitive assembly -> quaternion alignment
-> clipping -> viewport -> culling -> rasterizer (with scissor) -> fragment color (``color_stages``: shade,
alpha test, blend) -> stencil test -> depth test -> stencil/depth writes -> destination read -> blend/logic op ->
color write mask -> color write.

Fragment operations keep the hardware's per-pixel order inside a draw (``picaemu.fragment_ops``: one compiled
pass over the fragments in rasterization order, or one vectorized pass per overdraw layer for color stages that
only offer ``blend``). In shadow-map rendering mode (COLOR_OPERATION ``fragment_mode``) the shaded fragments go
to ``fragment_ops.resolve_shadow`` instead (no alpha, stencil, depth or blend stage, §15.8). A gas draw (either
gas pass) raises ``picaemu.gas.GasUnsupported`` before any work (``gas.check_gas``, once per draw). Writes go
straight to emulated memory (framebuffer flush/invalidate are no-ops). ``call.stats`` receives the counters listed
in ``STAT_KEYS`` and ``time_s``; ``shader_instructions`` (instructions executed x active lanes, VS + GS) and
``texels_fetched`` (texture taps x fragments) come from the seams that report them (below).

Seams: ``vertex_shader`` / ``geometry_shader`` (defaults: ``picaemu.shader``; a seam with a ``counters`` keyword
parameter receives the draw's stats dict and adds ``shader_instructions``) and ``color_stages`` (default:
``default_color_stages``: ``picaemu.shading``; ``PrimaryColorStages`` = interpolated primary color only; stages
that offer ``shade_counted(frags, memory, counters)`` are called through it and add ``texels_fetched``).

Memory: the first ``Pipeline`` tunes glibc's allocator so that each draw's large arrays reuse heap pages instead
of faulting fresh ones in (``picaemu.allocator``; values unchanged).

Observation: ``Pipeline(fragment_observer=f)`` calls ``f(call, FragmentFates)`` once per draw that reaches the
rasterizer (possibly with no fragments), with the window position of every rasterized fragment (scissor-rejected
ones included) and its ``fragment_ops.Fate``; without an observer none of that is computed (docs/render.md).
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from picaemu import allocator, clipping, fragment_ops
from picaemu import framebuffer as fbm
from picaemu import gas as gas_mod
from picaemu.blend import BlendMode, BlendProgram, blend_program
from picaemu.depth_stencil import DepthStencilState
from picaemu.draw import DrawCall, PipelineEventKind
from picaemu.errors import UnsupportedFeature
from picaemu.fragment_ops import Fate
from picaemu.fragments import Fragments
from picaemu.memory import PhysicalMemory
from picaemu.output_map import QUAT, OutputMapState, map_outputs, slot_registers
from picaemu.primitive_assembly import Assembler, Topology
from picaemu.rasterizer import RasterState, rasterize_chunks, scissor_rejects
from picaemu.regs import access, id_of
from picaemu.shadow import ShadowState
from picaemu.state import GpuState
from picaemu.vertex_loader import load_vertices

GS_IN_USE = 2
STAT_KEYS = (
    "vertices", "vertices_loaded", "vertices_shaded", "primitives_assembled", "primitives_invalid",
    "primitives_clipped", "primitives_clipped_away", "primitives_culled", "primitives_rasterized",
    "fragments_rasterized", "killed_scissor", "killed_alpha", "killed_stencil", "killed_depth",
    "fragments_written", "shader_instructions", "texels_fetched",
)
VertexShader = Callable[[GpuState, np.ndarray], np.ndarray]  # (state, (U, K<=16, 4) inputs) -> (U, 16, 4) outputs
# (state, (N, K, 4) VS output attributes in stream order, variable-mode sizes) -> ((M, 16, 4) outputs, (T, 3) tris)
GeometryShader = Callable[[GpuState, np.ndarray, tuple[int, ...] | None], tuple[np.ndarray, np.ndarray]]


def run_vertex_shader(state: GpuState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    """The vertex shader unit of ``picaemu.shader`` on every unique vertex."""
    try:
        from picaemu.shader import ShaderSetup
        from picaemu.shader import run_vertex_shader as run
    except ImportError as err:
        raise UnsupportedFeature(f"vertex shading (picaemu.shader is not available: {err})") from None
    return run(ShaderSetup.from_state(state, "vs"), attributes, counters=counters)


def run_geometry_shader(state: GpuState, vs_attributes: np.ndarray, primitive_sizes: tuple[int, ...] | None,
                        counters: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The geometry shader unit of ``picaemu.shader``: emitted o0-o15 and triangles (winding flag applied)."""
    from picaemu.shader import ShaderSetup
    from picaemu.shader import run_geometry_shader as run

    geo = run(ShaderSetup.from_state(state, "gs"), vs_attributes, primitive_sizes, counters=counters)
    return geo.vertices, geo.triangles


@dataclass(frozen=True)
class FragmentFates:
    """Every rasterized fragment of one draw, in rasterization order: window ``x``, ``y`` (F,) int32 (y up) and
    ``fate`` (F,) uint8 ``fragment_ops.Fate`` codes; ``color_written``: the draw's color writes were enabled (a
    WRITTEN fragment changed the color buffer only then). ``shadow``: the draw rendered a shadow map (every
    fragment reaches the shadow update and is WRITTEN)."""

    x: np.ndarray
    y: np.ndarray
    fate: np.ndarray
    color_written: bool
    shadow: bool = False


FragmentObserver = Callable[[DrawCall, FragmentFates], None]


def _takes_counters(fn: Callable) -> bool:
    """Whether a shader seam accepts the ``counters`` keyword."""
    try:
        return "counters" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class ColorStages(Protocol):
    """Fragment coloring seam: shade -> (F, 4) uint8, alpha test -> (F,) bool, blend(src, dst) -> (F, 4) uint8.

    Stages may also offer ``blend_program() -> picaemu.blend.BlendProgram`` (the same blend as data): the pipeline
    then runs the fragment operations in compiled passes (depth/stencil, then color) and never calls ``blend``;
    without it (wrappers that observe every blend), one vectorized pass per overdraw layer calls ``blend``
    (``picaemu.fragment_ops``)."""

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray: ...

    def alpha_test(self, color: np.ndarray) -> np.ndarray: ...

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray: ...

    @property
    def reads_destination(self) -> bool: ...


def primary_color_u8(frags: Fragments) -> np.ndarray:
    """The interpolated primary color rounded to 8 bits: (F, 4) uint8 (``picaemu.shading.primary_color``)."""
    from picaemu import shading

    return shading.primary_color(frags)


@dataclass(frozen=True)
class PrimaryColorStages:
    """Color = interpolated primary color; no alpha test; the source replaces the destination."""

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray:
        return primary_color_u8(frags)

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        return np.ones(color.shape[0], bool)

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return src

    def blend_program(self) -> BlendProgram:
        return BlendProgram.build(BlendMode.REPLACE)

    @property
    def reads_destination(self) -> bool:
        return False


@dataclass(frozen=True)
class ShadingColorStages:
    """Color from ``picaemu.shading``: textures, lighting, TEV, fog; its alpha test and blend / logic op."""

    sstate: object  # picaemu.shading.ShadingState

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray:
        from picaemu import shading

        return shading.shade(self.sstate, frags, memory)

    def shade_counted(self, frags: Fragments, memory: PhysicalMemory, counters: dict) -> np.ndarray:
        """``shade`` that adds ``texels_fetched`` to ``counters``."""
        from picaemu import shading

        return shading.shade(self.sstate, frags, memory, counters=counters)

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        from picaemu import shading

        return shading.alpha_test(self.sstate, color)

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        from picaemu import shading

        return shading.blend(self.sstate, src, dst)

    def blend_program(self) -> BlendProgram:
        return blend_program(self.sstate.blend)

    @property
    def reads_destination(self) -> bool:
        return True


def _add(stats: dict, counters: dict) -> None:
    """Add a chunk's counters to the draw's."""
    for key, value in counters.items():
        stats[key] = stats.get(key, 0) + value


def default_color_stages(state: GpuState) -> ColorStages:
    """THE switch for fragment coloring: ``picaemu.shading`` (TEV, alpha test, blend / logic op).
    ``PrimaryColorStages`` (interpolated primary color, no alpha test, no blending) is the fallback the
    pipeline used before the shading module existed; pass it as ``color_stages`` to isolate geometry bugs."""
    from picaemu import shading

    return ShadingColorStages(shading.ShadingState.from_state(state))


class Pipeline:
    """Runs draws into emulated memory; keeps only the primitive assembler's state between draws."""

    def __init__(self, vertex_shader: VertexShader = run_vertex_shader,
                 color_stages: Callable[[GpuState], ColorStages] = default_color_stages,
                 geometry_shader: GeometryShader = run_geometry_shader,
                 fragment_observer: FragmentObserver | None = None) -> None:
        self.vertex_shader = vertex_shader
        self.geometry_shader = geometry_shader
        self.color_stages = color_stages
        self.fragment_observer = fragment_observer
        self.assembler = Assembler()
        self._vs_counts = _takes_counters(vertex_shader)
        self._gs_counts = _takes_counters(geometry_shader)
        allocator.keep_freed_memory()  # large per-draw arrays reuse heap pages (picaemu.allocator)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        """Restart resets the assembler; cache clear, flush, invalidate and early-depth clear change nothing
        visible here (no cross-draw vertex cache, writes go straight to memory, early depth not modelled)."""
        if kind is PipelineEventKind.RESTART_PRIMITIVE:
            self.assembler.reset()

    def draw(self, call: DrawCall) -> None:
        start = time.perf_counter()
        stats = call.stats
        stats.update(dict.fromkeys(STAT_KEYS, 0))
        try:
            self._draw(call, stats)
        finally:
            stats["time_s"] = time.perf_counter() - start

    def _draw(self, call: DrawCall, stats: dict) -> None:
        state, regs = call.state, call.state.regs
        gas_mod.check_gas(state)
        gs = access.raw(regs, "GEOSTAGE_CONFIG", "gs_use") == GS_IN_USE
        fb = fbm.FramebufferState.from_regs(regs)
        fb.check_size()
        variable = gs and bool(access.raw(regs, "GEOSTAGE_CONFIG", "variable_primitive"))
        batch = load_vertices(state, call.kind, call.memory, call.immediate_inputs, variable, configured_only=True)
        stats.update(vertices=batch.count, vertices_loaded=int(batch.attributes.shape[0]))
        if batch.count == 0:
            return
        if self._vs_counts:
            outputs = self.vertex_shader(state, batch.attributes, counters=stats)
        else:
            outputs = self.vertex_shader(state, batch.attributes)
        stats["vertices_shaded"] = int(outputs.shape[0])
        om_state = OutputMapState.from_regs(regs)
        if gs:
            vs_out = outputs if batch.identity else outputs[batch.inverse]
            tris = self._geometry(state, om_state, vs_out, batch.primitive_sizes, stats)
        else:
            verts = map_outputs(om_state, outputs, access.word(regs, "VSH_OUTMAP_MASK"))
            topology = Topology(access.raw(regs, "PRIMITIVE_CONFIG", "topology"))
            tris = self.assembler.assemble(topology, verts if batch.identity else verts[batch.inverse])
        stats["primitives_assembled"] = int(tris.shape[0])
        if QUAT.start in om_state.mapped_columns():
            clipping.align_quaternions(tris)
        tris, src, counts = clipping.clip_triangles(tris, clipping.ClipState.from_regs(regs))
        stats.update(counts)
        vp = clipping.ViewportState.from_regs(regs)
        wt, culled = clipping.cull(clipping.to_window(tris, src, vp), vp.cull_mode)
        stats.update(primitives_culled=culled, primitives_rasterized=len(wt))
        active = np.array([c - 4 for c in om_state.mapped_columns() if c >= 4], np.int64)
        rs = RasterState.from_regs(regs, fb.width, fb.height)
        if self.fragment_observer is None:
            for frags, rstats in rasterize_chunks(wt, rs, active):  # in order: bounded memory for any draw
                _add(stats, rstats)
                if len(frags):
                    self._fragment_ops(state, call.memory, fb, frags, stats, None)
            return
        parts = [self._observed_chunk(state, call.memory, fb, rs, frags, rstats, stats)
                 for frags, rstats in rasterize_chunks(wt, dataclasses.replace(rs, scissor_mode=0), active)]
        x, y, fate = (np.concatenate(a) for a in zip(*parts, strict=True))  # rasterize_chunks yields >= 1 chunk
        self.fragment_observer(call, FragmentFates(x, y, fate, fb.color_write, fragment_ops.is_shadow_mode(regs)))

    def _observed_chunk(self, state: GpuState, memory: PhysicalMemory, fb: fbm.FramebufferState, rs: RasterState,
                        frags: Fragments, rstats: dict, stats: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fragments rasterized with the scissor off: the scissor applied here, then the fragment stages; returns
        (x, y, fate) of every fragment."""
        rejected = scissor_rejects(rs, frags.x, frags.y)
        _add(stats, dict(rstats, killed_scissor=int(rejected.sum())))
        fates = np.where(rejected, np.uint8(Fate.SCISSOR), np.uint8(Fate.WRITTEN))
        kept = np.flatnonzero(~rejected)
        if len(kept):
            fate = np.zeros(len(kept), np.uint8)
            self._fragment_ops(state, memory, fb, frags.select(kept) if len(kept) < len(frags) else frags, stats,
                               fate)
            fates[kept] = fate
        return frags.x, frags.y, fates

    def _geometry(self, state: GpuState, om_state: OutputMapState, vs_out: np.ndarray,
                  sizes: tuple[int, ...] | None, stats: dict) -> np.ndarray:
        """GS path: VS output attributes (enabled registers, stream order) -> GS -> (T, 3, C) triangles."""
        regs = state.regs
        if Topology(access.raw(regs, "PRIMITIVE_CONFIG", "topology")) is not Topology.GEOMETRY:
            raise UnsupportedFeature("geometry shader with a topology other than 3 (geometry primitives)",
                                     register=id_of("PRIMITIVE_CONFIG"), value=access.word(regs, "PRIMITIVE_CONFIG"))
        attrs = vs_out[:, slot_registers(access.word(regs, "VSH_OUTMAP_MASK"))]
        if self._gs_counts:
            gs_out, triangles = self.geometry_shader(state, attrs, sizes, counters=stats)
        else:
            gs_out, triangles = self.geometry_shader(state, attrs, sizes)
        verts = map_outputs(om_state, gs_out, access.word(regs, "GSH_OUTMAP_MASK"))
        return verts[triangles]

    def _fragment_ops(self, state: GpuState, memory: PhysicalMemory, fb: fbm.FramebufferState,
                      frags: Fragments, stats: dict, fate: np.ndarray | None) -> None:
        """Shade, then shadow-map write or alpha test + per-fragment operations; ``fate`` (F,) uint8 (or None)
        receives each fragment's ``Fate``."""
        shadow = fragment_ops.is_shadow_mode(state.regs)
        if shadow:
            fragment_ops.check_shadow_target(fb, state.regs)
        stages = self.color_stages(state)
        counted = getattr(stages, "shade_counted", None)
        color = counted(frags, memory, stats) if counted is not None else stages.shade(frags, memory)
        if shadow:
            fragment_ops.resolve_shadow(memory, fb, ShadowState.from_regs(state.regs), frags.x, frags.y, frags.depth,
                                        color[:, 1], stats)
            return  # fates stay WRITTEN
        alive = stages.alpha_test(color)
        stats["killed_alpha"] += int((~alive).sum())
        x, y, depth = frags.x, frags.y, frags.depth
        sub = fate
        if not alive.all():
            keep = np.nonzero(alive)[0]
            x, y, depth, color = x[keep], y[keep], depth[keep], color[keep]
            if fate is not None:
                fate[~alive] = Fate.ALPHA
                sub = np.zeros(len(keep), np.uint8)
        if len(x) == 0:
            return
        ds = DepthStencilState.from_regs(state.regs)
        program = getattr(stages, "blend_program", None)
        if program is not None:
            fragment_ops.resolve(memory, fb, ds, program(), x, y, depth, color, stats, sub)
        else:
            fragment_ops.resolve_layers(memory, fb, ds, stages, x, y, depth, color, stats, sub)
        if sub is not None and sub is not fate:
            fate[keep] = sub
