"""The pipeline's seams, and the record its fate observers receive (``picaemu.pipeline`` re-exports each name).

Seams a caller may replace (``Pipeline(vertex_shader=..., geometry_shader=..., color_stages=...)``): the vertex and
geometry shader units (defaults ``run_vertex_shader`` / ``run_geometry_shader``: ``picaemu.shader``; called with the
draw state, the inputs and the draw's stats dict, to which they add ``shader_instructions``) and the color stages (a
function of the draw state; default ``default_color_stages``: ``picaemu.color.shading``; ``PrimaryColorStages`` =
interpolated primary color only; ``shade(frags, memory, counters)`` adds ``texels_fetched``). ``FragmentFates``: what
an observer that asks for fates gets per draw; ``Recording``: the observed fragment path's record of a chunk.
``Route`` (``Pipeline(route=...)``) and ``Choice`` (what ``Pipeline.choose_route`` answers per draw) are the route
choice's types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from picaemu import shader
from picaemu.color import shading
from picaemu.draw_state import DrawState
from picaemu.errors import PipelineError
from picaemu.fragment.blend import BlendMode, BlendProgram
from picaemu.fragment.ops import FragmentLog
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.raster.fragments import Fragments
from picaemu.regs import id_of

if TYPE_CHECKING:
    from picaemu.fused.fragments import FragmentPlan
    from picaemu.fused.vertices import VertexPlan


class Route(Enum):
    """How a ``picaemu.pipeline.Pipeline`` runs its draws."""

    # production: each side of a draw on its compiled plan (``picaemu.fused``; the command processor's compiled
    # loop runs the draws after one while their state stays) where the plan covers it, else the reference path
    COMPILED = "compiled"
    # the readable staged path for every draw: the oracle the differential tests compare the compiled route against
    REFERENCE = "reference"


class Choice(NamedTuple):
    """One draw's route (``Pipeline.choose_route``): per side, the compiled plan that serves it or (a str) why the
    reference path runs it."""

    vertex: VertexPlan | str  # ``picaemu.fused.vertices``: the draw's loading and geometry in one compiled call
    front_end: bool  # when the loader runs instead: its geometry may go through ``geometry.front_end``'s call
    fragment: FragmentPlan | str  # ``picaemu.fused.fragments`` (or, observed, ``picaemu.fused.observed``)


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
    """The geometry shader unit of ``picaemu.shader``: emitted o0-o15 and triangles (winding flag applied); the
    pipeline calls it for draws whose state has the GS unit in use."""
    if ds.gs is None:
        raise PipelineError(
            "geometry shader run on a draw without the GS unit in use", register=id_of("GEOSTAGE_CONFIG")
        )
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

    def shade(self, frags: Fragments, *_: object) -> np.ndarray:  # memory, counters, observer: not read
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


def default_color_stages(ds: DrawState) -> ColorStages:
    """THE switch for fragment coloring: ``picaemu.color.shading`` (TEV, alpha test, blend / logic op).
    ``PrimaryColorStages`` (interpolated primary color, no alpha test, no blending) is the fallback the
    pipeline used before the shading module existed; pass it as ``color_stages`` to isolate geometry bugs."""
    return ShadingColorStages(ds.shading, ds.blend_program)
