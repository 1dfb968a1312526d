"""The narrow interface between the command processor and the rendering pipeline.

The processor knows nothing of stages: when a trigger fires it hands the pipeline a ``DrawCall`` (or another
``PipelineEvent``) and moves on. ``NullPipeline`` records nothing and renders nothing (``picaemu decode`` uses it);
``picaemu.pipeline.Pipeline`` runs the stages. The pipeline reads ``call.state`` (registers and structured
memories at the trigger, live: copy it if you keep it) and ``call.memory``, and writes the framebuffer in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

import numpy as np

from picaemu.errors import PicaError
from picaemu.geometry.vertex_loader import DrawKind
from picaemu.memory import PhysicalMemory
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.draw_state import DrawState, DrawStateCache
    from picaemu.fused.loop import CompiledDraws, CompiledPlans
    from picaemu.observer import StageObserver


# a draw's route (``DrawCall.route``): both sides compiled (``picaemu.fused``: the fused vertex and fragment sides,
# called from the pipeline or from the command processor's compiled loop), or the reference (staged) path with the
# named reasons of each side that declined, "reference: <reason>[; <reason>]" (a plan's refusal, a run-time
# decline, an observer, immediate mode...)
# the clock draws are timed with (``stats["time_s"]``): wall time; a benchmark on a shared machine may set
# ``time.thread_time`` to count the replaying thread's CPU time instead (``bench/bench_work_model.py --cpu``)
clock: Callable[[], float] = time.perf_counter
ROUTE_COMPILED = "compiled"
REFERENCE_PREFIX = "reference: "
REASON_SEPARATOR = "; "
# why a draw took the reference route besides the plans' own refusals and run-time declines (``picaemu.pipeline``)
IMMEDIATE_MODE = "immediate mode"
VERTICES_WATCHED = "stage observer watches vertices"
# the observed compiled route (``picaemu.fused.observed``) records fates and test values, not per-stage values
FRAGMENT_VALUES_WATCHED = "stage observer watches fragment values (textures, lighting, TEV stages, fog)"
TESTS_WITHOUT_FATES = "stage observer watches depth/stencil tests without fates"
VERTEX_SHADER_SEAM = "vertex shader seam replaced"
GEOMETRY_SHADER_SEAM = "geometry shader seam replaced"
COLOR_STAGES_SEAM = "color stages seam replaced"
FUSED_VERTICES_OFF = "fused vertex side off"
FUSED_FRAGMENTS_OFF = "fused fragment side off"
OTHER_BACKEND = "fragments run by another backend"
MID_PRIMITIVE = "assembler holds an earlier draw's vertices"
VERTEX_DECLINED = "vertex side declined at run time (vertex count or a read outside memory)"


def route_reasons(route: str) -> list[str]:
    """The reasons a reference ``route`` names, in the order the sides gave them ([] for a compiled one)."""
    if not route.startswith(REFERENCE_PREFIX):
        return []
    return route.removeprefix(REFERENCE_PREFIX).split(REASON_SEPARATOR)


def with_reason(route: str, reason: str) -> str:
    """``route`` after a side declined the draw for ``reason``: a reference route naming it (once)."""
    reasons = route_reasons(route)
    if reason in reasons:
        return route
    return REFERENCE_PREFIX + REASON_SEPARATOR.join([*reasons, reason])


@dataclass
class DrawCall:
    """One draw: ``index`` counts draws from the start of the replay.

    For IMMEDIATE draws, ``immediate_inputs`` holds the submitted vertices as (N, 16, 4) float32 shader input
    attributes (attribute k of vertex n at [n, k]); for the other kinds it is None and the vertex loader reads the
    arrays the registers describe.

    ``draw_state`` is the draw's decoded per-stage state (``picaemu.draw_state.DrawState``), built on first use
    from ``states`` (the command processor's cache, which reuses what no write touched since the previous draw)
    or, for a call made by hand (``states`` None), from scratch.
    """

    index: int
    kind: DrawKind
    state: GpuState
    memory: PhysicalMemory
    offset: int = 0  # byte offset of the trigger packet in its command buffer
    immediate_inputs: np.ndarray | None = None
    stats: dict[str, int | float] = field(default_factory=dict)  # filled by the pipeline (counters, time)
    states: DrawStateCache | None = None
    observed: bool = False  # a command-processor observer watches the draw (it may read memory at draw end)
    # where the trigger sits in the command-list chain the processor is running: the index of its packet (packets
    # counted along jumps from where this run started; -1 outside a list) and, when the trigger was its packet's
    # last write, (address, bytes left) where the chain continues (a clean position to checkpoint)
    packet: int = -1
    resume: tuple[int, int] | None = None
    # set by the pipeline: (x0, y0, x1, y1) inclusive window pixels that hold every triangle the draw rasterized
    # (before the scissor), None when it rasterized none; the debugger replays only draws that can touch a pixel
    bounds: tuple[int, int, int, int] | None = None
    # set by the command processor when it asks for compiled plans (``CompiledSink``): the content of every
    # register and program the plans of this draw's state can depend on; equal keys, equal plans
    plan_key: bytes | None = None
    # set by the pipeline: how the draw ran, ``ROUTE_COMPILED`` or a reference route (``with_reason``; "": a sink
    # that does not say, such as ``NullPipeline``); the replay copies it into the draw's ``DrawRecord``
    route: str = ""

    @cached_property
    def draw_state(self) -> DrawState:
        from picaemu.draw_state import DrawStateCache

        return (self.states if self.states is not None else DrawStateCache()).build(self.state)


class PipelineEventKind(Enum):
    VERTEX_CACHE_CLEAR = "vertex cache clear"
    RESTART_PRIMITIVE = "restart primitive"
    EARLYDEPTH_CLEAR = "early depth clear"
    FRAMEBUFFER_FLUSH = "framebuffer flush"
    FRAMEBUFFER_INVALIDATE = "framebuffer invalidate"
    # not a GPU event: memory is about to be read or written outside the pipeline (GX engines, CPU writes,
    # checkpoints, views); a pipeline that holds render targets elsewhere (``picaemu.gl``) writes them back
    MEMORY_SYNC = "memory sync"
    # not a GPU event: the caller is about to read the draws' counters (the replay after each event); a sink
    # that defers work on the draws it was given finishes it (``picaemu.pipeline.Pipeline`` defers none), an output
    # watch (``picaemu.debug.output_watch``) takes its place and pictures at each event's end
    DRAWS_COMPLETE = "draws complete"


class PipelineSink(Protocol):
    """What the command processor calls. Implementations must not keep ``call.state`` without copying it."""

    def draw(self, call: DrawCall) -> None: ...

    def event(self, kind: PipelineEventKind, state: GpuState) -> None: ...


@runtime_checkable
class ObservedSink(PipelineSink, Protocol):
    """A sink that runs the stages: ``stage_observer`` (``picaemu.observer.StageObserver`` or None) is told what
    each stage computed. The debugger attaches its observers there; wrappers that only count or time draws
    (``picaemu.batch.task``, ``picaemu.analysis.stats``) need not offer it."""

    stage_observer: StageObserver | None


def observed_sink(sink: PipelineSink) -> ObservedSink:
    """``sink`` as an ``ObservedSink``, or PicaError naming its type (the debugger needs the stages)."""
    if not isinstance(sink, ObservedSink):
        raise PicaError(f"the pipeline {type(sink).__name__} runs no stages a stage observer could watch")
    return sink


@runtime_checkable
class CompiledSink(Protocol):
    """A sink that lets the command processor run draws in its compiled loop (``picaemu.fused.loop``) instead of
    handing each one to ``draw``: at a draw whose state the loop has no plans for, it may offer that state's plans
    (None: the draw, and the next ones, come through ``draw``); the draws the loop then ran arrive in
    ``compiled_draws``, complete (pixels in memory, counters final). A wrapper that must see every draw
    (per-draw output, per-draw timing) simply does not implement this. The processor asks ``compiled_allowed``
    each time it enters the loop, so that an observer attached between two runs sees every draw after it."""

    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None: ...

    def compiled_draws(self, draws: CompiledDraws) -> None: ...

    def compiled_allowed(self) -> bool:
        """Whether plans offered earlier may run draws now (False once something watches the draws)."""
        ...


_COMPILED_SINK_TYPES: dict[type, bool] = {}


def is_compiled_sink(sink: object) -> TypeGuard[CompiledSink]:
    """``isinstance(sink, CompiledSink)``, remembered per type (a protocol check walks its members: ~2 us)."""
    kind = type(sink)
    known = _COMPILED_SINK_TYPES.get(kind)
    if known is None:
        known = _COMPILED_SINK_TYPES[kind] = isinstance(sink, CompiledSink)
    return known


class NullPipeline:
    """Renders nothing: decoding and state tracking only (a stage observer sees nothing)."""

    def __init__(self) -> None:
        self.stage_observer: StageObserver | None = None

    def draw(self, call: DrawCall) -> None:
        return None

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        return None
