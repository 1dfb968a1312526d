"""The rendering pipeline: the only module that knows the stage order (implements ``picaemu.draw.PipelineSink``).

Per draw (``Pipeline.draw(call)``), with every stage's state decoded once from ``call.state``:

vertex loader -> vertex shader (``picaemu.shader``) -> [geometry shader, when GEOSTAGE_CONFIG.gs_use = 2: it
forms the triangles] -> output map -> primitive assembly -> quaternion alignment
-> clipping -> viewport -> culling -> rasterizer (with scissor) -> fragment color (``color_stages``: shade,
alpha test, blend) -> stencil test -> depth test -> stencil/depth writes -> destination read -> blend/logic op ->
color write mask -> color write.

Fragment operations keep the hardware's per-pixel order inside a draw: fragments are split into layers in which
each pixel appears once (layer k holds the k-th fragment of every pixel, in rasterization order); layers run one
after the other, each fully vectorized. Writes go straight to emulated memory (framebuffer flush/invalidate are
no-ops). ``call.stats`` receives the counters listed in ``STAT_KEYS`` and ``time_s``.

Seams: ``vertex_shader`` / ``geometry_shader`` (defaults: ``picaemu.shader``) and ``color_stages`` (default:
``default_color_stages``: ``picaemu.shading``; ``PrimaryColorStages`` = interpolated primary color only).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numba
import numpy as np

from picaemu import clipping
from picaemu import framebuffer as fbm
from picaemu.depth_stencil import DepthStencilState, depth_stencil_test
from picaemu.draw import DrawCall, PipelineEventKind
from picaemu.errors import UnsupportedFeature
from picaemu.fragments import Fragments
from picaemu.memory import PhysicalMemory
from picaemu.output_map import QUAT, OutputMapState, map_outputs, slot_registers
from picaemu.primitive_assembly import Assembler, Topology
from picaemu.rasterizer import RasterState, rasterize
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from picaemu.vertex_loader import load_vertices

GS_IN_USE = 2
STAT_KEYS = (
    "vertices", "vertices_loaded", "vertices_shaded", "primitives_assembled", "primitives_invalid",
    "primitives_clipped", "primitives_clipped_away", "primitives_culled", "primitives_rasterized",
    "fragments_rasterized", "killed_scissor", "killed_alpha", "killed_stencil", "killed_depth",
    "fragments_written",
)
VertexShader = Callable[[GpuState, np.ndarray], np.ndarray]  # (state, (U, 16, 4) inputs) -> (U, 16, 4) outputs
# (state, (N, K, 4) VS output attributes in stream order, variable-mode sizes) -> ((M, 16, 4) outputs, (T, 3) tris)
GeometryShader = Callable[[GpuState, np.ndarray, tuple[int, ...] | None], tuple[np.ndarray, np.ndarray]]


def run_vertex_shader(state: GpuState, attributes: np.ndarray) -> np.ndarray:
    """The vertex shader unit of ``picaemu.shader`` on every unique vertex."""
    try:
        from picaemu.shader import ShaderSetup
        from picaemu.shader import run_vertex_shader as run
    except ImportError as err:
        raise UnsupportedFeature(f"vertex shading (picaemu.shader is not available: {err})") from None
    return run(ShaderSetup.from_state(state, "vs"), attributes)


def run_geometry_shader(state: GpuState, vs_attributes: np.ndarray,
                        primitive_sizes: tuple[int, ...] | None) -> tuple[np.ndarray, np.ndarray]:
    """The geometry shader unit of ``picaemu.shader``: emitted o0-o15 and triangles (winding flag applied)."""
    from picaemu.shader import ShaderSetup
    from picaemu.shader import run_geometry_shader as run

    geo = run(ShaderSetup.from_state(state, "gs"), vs_attributes, primitive_sizes)
    return geo.vertices, geo.triangles


class ColorStages(Protocol):
    """Fragment coloring seam: shade -> (F, 4) uint8, alpha test -> (F,) bool, blend(src, dst) -> (F, 4) uint8."""

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray: ...

    def alpha_test(self, color: np.ndarray) -> np.ndarray: ...

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray: ...

    @property
    def reads_destination(self) -> bool: ...


def primary_color_u8(frags: Fragments) -> np.ndarray:
    """The interpolated primary color rounded to 8 bits: (F, 4) uint8."""
    return np.rint(np.clip(np.nan_to_num(frags.color), 0.0, 1.0) * 255.0).astype(np.uint8)


@dataclass(frozen=True)
class PrimaryColorStages:
    """Color = interpolated primary color; no alpha test; the source replaces the destination."""

    def shade(self, frags: Fragments, memory: PhysicalMemory) -> np.ndarray:
        return primary_color_u8(frags)

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        return np.ones(color.shape[0], bool)

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return src

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

    def alpha_test(self, color: np.ndarray) -> np.ndarray:
        from picaemu import shading

        return shading.alpha_test(self.sstate, color)

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        from picaemu import shading

        return shading.blend(self.sstate, src, dst)

    @property
    def reads_destination(self) -> bool:
        return True


def default_color_stages(state: GpuState) -> ColorStages:
    """THE switch for fragment coloring: ``picaemu.shading`` (TEV, alpha test, blend / logic op).
    ``PrimaryColorStages`` (interpolated primary color, no alpha test, no blending) is the fallback the
    pipeline used before the shading module existed; pass it as ``color_stages`` to isolate geometry bugs."""
    from picaemu import shading

    return ShadingColorStages(shading.ShadingState.from_state(state))


@numba.njit(cache=True)
def _layers(x, y, width, height, flipped):  # pragma: no cover - compiled
    """Tiled pixel index of every fragment, and the fragments grouped by layer (layer k = the k-th fragment of
    each pixel, in order): returns (pixels (F,) int64, order (F,) int64, bounds (K + 1,) int64)."""
    n = x.shape[0]
    pixels = np.empty(n, np.int64)
    rank = np.empty(n, np.int64)
    seen = np.zeros(width * height, np.int32)
    layers = 0
    for i in range(n):
        p = fbm.tiled_pixel(x[i], y[i], width, height, flipped)
        pixels[i] = p
        rank[i] = seen[p]
        seen[p] += 1
        layers = max(layers, seen[p])
    bounds = np.zeros(layers + 1, np.int64)
    for i in range(n):
        bounds[rank[i] + 1] += 1
    for k in range(layers):
        bounds[k + 1] += bounds[k]
    fill = bounds[:-1].copy()
    order = np.empty(n, np.int64)
    for i in range(n):
        order[fill[rank[i]]] = i
        fill[rank[i]] += 1
    return pixels, order, bounds


class Pipeline:
    """Runs draws into emulated memory; keeps only the primitive assembler's state between draws."""

    def __init__(self, vertex_shader: VertexShader = run_vertex_shader,
                 color_stages: Callable[[GpuState], ColorStages] = default_color_stages,
                 geometry_shader: GeometryShader = run_geometry_shader) -> None:
        self.vertex_shader = vertex_shader
        self.geometry_shader = geometry_shader
        self.color_stages = color_stages
        self.assembler = Assembler()

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
        gs = access.raw(regs, "GEOSTAGE_CONFIG", "gs_use") == GS_IN_USE
        fb = fbm.FramebufferState.from_regs(regs)
        fb.check_size()
        variable = gs and bool(access.raw(regs, "GEOSTAGE_CONFIG", "variable_primitive"))
        batch = load_vertices(state, call.kind, call.memory, call.immediate_inputs, variable)
        stats.update(vertices=batch.count, vertices_loaded=int(batch.attributes.shape[0]))
        if batch.count == 0:
            return
        outputs = self.vertex_shader(state, batch.attributes)
        stats["vertices_shaded"] = int(outputs.shape[0])
        om_state = OutputMapState.from_regs(regs)
        if gs:
            tris = self._geometry(state, om_state, outputs[batch.inverse], batch.primitive_sizes)
        else:
            verts = map_outputs(om_state, outputs, access.word(regs, "VSH_OUTMAP_MASK"))
            topology = Topology(access.raw(regs, "PRIMITIVE_CONFIG", "topology"))
            tris = self.assembler.assemble(topology, verts[batch.inverse])
        stats["primitives_assembled"] = int(tris.shape[0])
        if QUAT.start in om_state.mapped_columns():
            clipping.align_quaternions(tris)
        tris, src, counts = clipping.clip_triangles(tris, clipping.ClipState.from_regs(regs))
        stats.update(counts)
        vp = clipping.ViewportState.from_regs(regs)
        wt, culled = clipping.cull(clipping.to_window(tris, src, vp), vp.cull_mode)
        stats.update(primitives_culled=culled, primitives_rasterized=len(wt))
        active = np.array([c - 4 for c in om_state.mapped_columns() if c >= 4], np.int64)
        frags, rstats = rasterize(wt, RasterState.from_regs(regs, fb.width, fb.height), active)
        stats.update(rstats)
        if len(frags):
            self._fragment_ops(state, call.memory, fb, frags, stats)

    def _geometry(self, state: GpuState, om_state: OutputMapState, vs_out: np.ndarray,
                  sizes: tuple[int, ...] | None) -> np.ndarray:
        """GS path: VS output attributes (enabled registers, stream order) -> GS -> (T, 3, C) triangles."""
        regs = state.regs
        if Topology(access.raw(regs, "PRIMITIVE_CONFIG", "topology")) is not Topology.GEOMETRY:
            raise UnsupportedFeature("geometry shader with a topology other than 3 (geometry primitives)",
                                     register=id_of("PRIMITIVE_CONFIG"), value=access.word(regs, "PRIMITIVE_CONFIG"))
        attrs = vs_out[:, slot_registers(access.word(regs, "VSH_OUTMAP_MASK"))]
        gs_out, triangles = self.geometry_shader(state, attrs, sizes)
        verts = map_outputs(om_state, gs_out, access.word(regs, "GSH_OUTMAP_MASK"))
        return verts[triangles]

    def _fragment_ops(self, state: GpuState, memory: PhysicalMemory, fb: fbm.FramebufferState,
                      frags: Fragments, stats: dict) -> None:
        stages = self.color_stages(state)
        color = stages.shade(frags, memory)
        alive = stages.alpha_test(color)
        stats["killed_alpha"] = int((~alive).sum())
        if not alive.all():
            frags, color = frags.select(np.nonzero(alive)[0]), color[alive]
        if len(frags) == 0:
            return
        depth = fbm.quantize_depth(frags.depth, fb.depth_format)
        ds = DepthStencilState.from_regs(state.regs)
        pixels, order, bounds = _layers(frags.x, frags.y, fb.width, fb.height, fb.flipped)
        if bounds.shape[0] == 2:
            self._layer(memory, fb, ds, stages, pixels, depth, color, stats)
            return
        for lo, hi in itertools.pairwise(bounds):
            sel = order[lo:hi]
            self._layer(memory, fb, ds, stages, pixels[sel], depth[sel], color[sel], stats)

    def _layer(self, memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorStages,
               pixels: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict) -> None:
        """Depth/stencil and color write of fragments that each hit a different pixel (tiled pixel indices)."""
        if ds.uses_depth_buffer(fb.depth_format):
            buf = fb.depth_bytes(memory)
            stored = fbm.gather_pixels(buf, pixels, fb.depth_bpp)
            if not fb.depth_read:
                stored = np.zeros_like(stored)  # reads disabled: the old value is unknown; 0 (reference §15.7)
            old_depth, old_stencil = fbm.split_depth_word(stored, fb.depth_format)
            res = depth_stencil_test(ds, fb.depth_format, depth, old_depth, old_stencil)
            stats["killed_stencil"] += int((~res.stencil_pass).sum())
            stats["killed_depth"] += int((res.stencil_pass & ~res.depth_pass).sum())
            new_depth = res.new_depth if fb.depth_write else old_depth
            new_stencil = res.new_stencil if fb.stencil_write else old_stencil
            changed = (new_depth != old_depth) | (new_stencil != old_stencil)
            if changed.any():
                word = fbm.join_depth_word(new_depth[changed], new_stencil[changed], fb.depth_format)
                fbm.scatter_pixels(buf, pixels[changed], word, fb.depth_bpp)
            alive = res.alive
            pixels, color = pixels[alive], color[alive]
        if not fb.color_write or pixels.shape[0] == 0:
            return
        self._write_color(memory, fb, ds, stages, pixels, color)
        stats["fragments_written"] += int(pixels.shape[0])

    @staticmethod
    def _write_color(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorStages,
                     pixels: np.ndarray, color: np.ndarray) -> None:
        buf = fb.color_bytes(memory)
        mask = np.array(ds.color_mask)
        need_dst = stages.reads_destination or not mask.all()
        if need_dst:
            dst = fbm.decode_color(fbm.gather_pixels(buf, pixels, fb.color_bpp), fb.color_format)
            if not fb.color_read:
                dst = np.zeros_like(dst)  # reads disabled: old value unknown; 0 (reference §15.7)
            color = np.where(mask, stages.blend(color, dst), dst).astype(np.uint8)
        fbm.scatter_pixels(buf, pixels, fbm.encode_color(color, fb.color_format), fb.color_bpp)
