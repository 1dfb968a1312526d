"""The one narrow interface through which debuggers, statistics and listings watch the command processor.

Subclass ``Observer`` and override what you need; attach with ``CommandProcessor.attach``. With no observer
attached the compiled loop records nothing and no Python runs per packet, so headless replays pay nothing.
Events arrive in stream order: a packet, then its register writes; a trigger after the write that fired it;
draw begin/end around the pipeline's work. ``buffer`` is the physical address of the command buffer that holds
the packet (0 for a buffer that does not live in emulated memory), ``offset`` the packet's byte offset in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from picaemu.draw import DrawCall
    from picaemu.geometry.vertex_loader import VertexBatch
    from picaemu.pipeline_seams import FragmentFates
    from picaemu.raster.fragments import Fragments


@dataclass(frozen=True)
class PacketEvent:
    buffer: int
    offset: int
    id: int
    mask: int
    consecutive: bool
    params: tuple[int, ...]


@dataclass(frozen=True)
class WriteEvent:
    """One register write: ``value`` is the parameter word as the packet carries it, before the mask."""

    buffer: int
    offset: int
    id: int
    value: int
    mask: int


@dataclass(frozen=True)
class TriggerEvent:
    buffer: int
    offset: int
    id: int
    action: str  # picaemu.regs.Action value (e.g. "draw arrays", "jump channel 0")
    value: int


class Observer:
    """Base class: every hook does nothing."""

    def on_packet(self, event: PacketEvent) -> None:
        return None

    def on_write(self, event: WriteEvent) -> None:
        return None

    def on_trigger(self, event: TriggerEvent) -> None:
        return None

    def on_draw_begin(self, call: DrawCall) -> None:
        return None

    def on_draw_end(self, call: DrawCall) -> None:
        return None


class StageObserver:
    """What the rendering pipeline computed for a draw, stage by stage: attach as ``Pipeline.stage_observer``
    (the debugger does, while it re-runs one draw from a checkpoint). Every hook does nothing; with no observer
    attached the pipeline makes no call and no copy. Arrays are the pipeline's own: copy what you keep.

    - ``on_vertices(call, batch)``: the vertex loader's ``VertexBatch`` (attributes (U, K, 4), stream order);
    - ``on_vertex_outputs(call, outputs)``: vertex shader output registers, (U, 16, 4) float32;
    - ``on_geometry(call, inputs, sizes, outputs, triangles)``: the geometry shader's inputs (N, K, 4) in stream
      order, variable-mode primitive sizes, outputs (M, 16, 4) of every EMIT and triangles (T, 3) into them;
    - ``on_triangles(call, assembled, clipped)``: (T, 3, C) vertices of the assembled triangles (quaternions
      aligned) and (T', 3, C) after clipping, C = the output map's columns (position first).

    Fragment hooks, made only for an observer that asks (``fragment_values = True``; the color path's values are
    per fragment, so an observer that watches vertices does not pay for them). They carry no ``call``: they belong
    to the draw whose ``on_triangles`` came last. Per chunk of shaded fragments, in this order:

    - ``on_shade_begin(frags)``: the ``Fragments`` (F rows) the following shading hooks describe, row for row;
    - ``on_texture(unit, st, lod, texels)``: a texture unit 0-2 the TEV or lighting reads: (F, 2) float32 2D
      coordinates as the sampler uses them (after the projective divide; a cube face's s, t), (F,) float32 level
      of detail (None when the unit's filtering needs none) and (F, 4) uint8 texels;
    - ``on_lighting(primary, secondary)``: fragment lighting's two colors, (F, 4) uint8 each (when the TEV reads
      them);
    - ``on_tev_stage(stage, rgb, alpha, output, buffer)``: TEV stage 0-5 (every stage, pass-through ones
      included): its three RGB operands after the operand modifier (3, F, 3) uint8, its three alpha operands
      (3, F) uint8 (slots the combine op does not read repeat slot 0's value; none for dot3 RGBA: (0, F)), its
      output (F, 4) uint8 and the combiner buffer it reads as "previous buffer" (F, 4) uint8;
    - ``on_fog(factor, color)``: the fog factor (F,) float32 (1 = no fog; None when fog is off) and the color
      after fog (F, 4) uint8 (the color the alpha test sees).

    With ``fragment_fates = True`` the pipeline runs the recorded fragment pass and calls ``on_fragments(call,
    fates)`` once per draw that reaches the rasterizer (possibly with no fragments) with a
    ``picaemu.pipeline_seams.FragmentFates``: every rasterized fragment (scissor-rejected ones included), its
    ``Fate``, TEV output and its pixel's color before and after it, as the pass recorded them.

    Route: an observer of fates (and tests) keeps a covered draw on the compiled route (``picaemu.fused.observed``:
    the fused plan's compiled shading, fates recorded by the compiled passes); one that asks for ``fragment_values``
    sends the draw's fragment side to the staged stages, and one that overrides a vertex hook its vertex side
    (``watches_vertices``), each named in the draw's route.

    With ``fragment_tests = True`` the pipeline runs the recorded fragment pass (fragment by fragment, same
    results) and calls ``on_depth_stencil(pixels, depth, stored_depth, stored_stencil, stencil_pass,
    depth_pass)`` per chunk of a draw that reads the depth/stencil buffer, for the fragments that reached the tests
    in rasterization order: tiled pixel indices (L,) int64 (``picaemu.fragment.framebuffer.pixel_index``), fragment
    depth quantized to the buffer (L,) uint32, the buffer's depth (L,) uint32 and stencil (L,) uint8 each was
    tested against, and the two tests' outcomes (L,) bool.

    ``fragment_window`` (with ``fragment_fates``): None, or a box (x0, y0, x1, y1) of window pixels, inclusive;
    the pipeline then runs the fragment stages only for the rasterized fragments inside it (every hook and
    ``FragmentFates`` see only them) and leaves the draw's other pixels unrendered, for a probe that restores the
    replay afterwards. A fragment's texture LOD reads its neighbours at x +- 1 and y +- 1 (``picaemu.texture.lod``),
    so the box must reach one pixel beyond the pixels watched for their values to be exact.
    """

    fragment_values = False
    fragment_tests = False
    fragment_fates = False
    fragment_window: tuple[int, int, int, int] | None = None

    def on_vertices(self, call: DrawCall, batch: VertexBatch) -> None:
        return None

    def on_vertex_outputs(self, call: DrawCall, outputs: np.ndarray) -> None:
        return None

    def on_geometry(
        self,
        call: DrawCall,
        inputs: np.ndarray,
        sizes: tuple[int, ...] | None,
        outputs: np.ndarray,
        triangles: np.ndarray,
    ) -> None:
        return None

    def on_triangles(self, call: DrawCall, assembled: np.ndarray, clipped: np.ndarray) -> None:
        return None

    def on_shade_begin(self, frags: Fragments) -> None:
        return None

    def on_texture(self, unit: int, st: np.ndarray, lod: np.ndarray | None, texels: np.ndarray) -> None:
        return None

    def on_lighting(self, primary: np.ndarray, secondary: np.ndarray) -> None:
        return None

    def on_tev_stage(
        self, stage: int, rgb: np.ndarray, alpha: np.ndarray, output: np.ndarray, buffer: np.ndarray
    ) -> None:
        return None

    def on_fog(self, factor: np.ndarray | None, color: np.ndarray) -> None:
        return None

    def on_depth_stencil(
        self,
        pixels: np.ndarray,
        depth: np.ndarray,
        stored_depth: np.ndarray,
        stored_stencil: np.ndarray,
        stencil_pass: np.ndarray,
        depth_pass: np.ndarray,
    ) -> None:
        return None

    def on_fragments(self, call: DrawCall, fates: FragmentFates) -> None:
        return None


VERTEX_HOOKS = ("on_vertices", "on_vertex_outputs", "on_geometry", "on_triangles")


def watches_vertices(observer: StageObserver | None) -> bool:
    """``observer`` overrides a vertex hook (``VERTEX_HOOKS``): the pipeline then runs the draw's vertex side
    stage by stage, which makes those calls; an observer of fragments only leaves it on the compiled route."""
    return observer is not None and any(
        getattr(type(observer), name) is not getattr(StageObserver, name) for name in VERTEX_HOOKS
    )


class FateWatcher(StageObserver):
    """A stage observer that asks only for fragment fates and hands each draw's ``FragmentFates`` to
    ``callback(call, fates)`` (statistics' fragment maps, footprints, coverage)."""

    fragment_fates = True

    def __init__(self, callback: Callable[[DrawCall, FragmentFates], None]) -> None:
        self.callback = callback

    def on_fragments(self, call: DrawCall, fates: FragmentFates) -> None:
        self.callback(call, fates)
