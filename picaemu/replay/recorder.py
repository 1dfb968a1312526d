"""The replay's pipeline wrapper (``Recorder``: records every draw into its ``Replay`` with ``record_draw`` /
``record_compiled``, takes mid-list checkpoints, stops after a requested draw) and the rendering backends a replay
can use (``default_pipeline``)."""

from __future__ import annotations

import bisect
import dataclasses
import weakref
from typing import TYPE_CHECKING, cast

from picaemu.draw import ROUTE_COMPILED, CompiledSink, DrawCall, PipelineEventKind, PipelineSink, is_compiled_sink
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.replay.checkpoint import VERTEX_WORK, WORK_COUNTERS, draw_work, work_of
from picaemu.replay.records import DrawRecord
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.fused.loop import CompiledDraws, CompiledPlans
    from picaemu.replay import Replay


class StopAfterDraw(Exception):
    """Internal: unwinds the command processor right after the requested draw."""


class Recorder:
    """A PipelineSink wrapper: records every draw (no per-packet cost) and can stop after one. It holds its replay
    weakly, so a ``Replay`` has no reference cycle and is freed as soon as its last reference goes."""

    def __init__(self, inner: PipelineSink, replay: Replay) -> None:
        self.inner = inner
        self._replay = weakref.ref(replay)
        self.stop_after: int | None = None

    def draw(self, call: DrawCall) -> None:
        self.inner.draw(call)
        replay = self._replay()
        if replay is not None:
            record_draw(replay, call)
            replay._checkpoint_after_draw(call.index, call.packet, call.resume, draw_work(call.stats))
        if self.stop_after is not None and call.index == self.stop_after:
            raise StopAfterDraw

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)

    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None:
        """The inner sink's plans (``picaemu.draw.CompiledSink``), limited so that the loop stops after the draw
        to stop after and after the draws that may take a mid-list checkpoint, by their number or by the work
        since the last checkpoint (``compiled_draws`` acts on them)."""
        replay = self._replay()
        plans = self.inner.compiled_plans(call) if is_compiled_sink(self.inner) else None
        if plans is None or replay is None:
            return None
        limit = replay._next_checkpoint_draw(call.index)
        plans = plans.with_limit(limit if self.stop_after is None else min(limit, self.stop_after))
        return plans.with_work(max(1, replay._work_left()), VERTEX_WORK) if replay.checkpoints else plans

    def compiled_allowed(self) -> bool:
        return is_compiled_sink(self.inner) and self.inner.compiled_allowed()

    def compiled_draws(self, draws: CompiledDraws) -> None:
        """Record the loop's draws; the last may be a checkpoint draw or the draw to stop after (the loop stops
        after its plans' limit)."""
        cast(CompiledSink, self.inner).compiled_draws(draws)  # it offered the plans: a CompiledSink
        replay = self._replay()
        index, _kind, _offset, packet, resume, _stats, _bounds = draws.each(len(draws) - 1)[0]
        if replay is not None:
            record_compiled(replay, draws)
            work = work_of(*draws.totals(*WORK_COUNTERS))  # the loop stops at the checkpoint draws: its draws'
            replay._checkpoint_after_draw(index, packet, resume, work)
        if self.stop_after is not None and index == self.stop_after:
            raise StopAfterDraw


BACKENDS = ("software", "gl")  # rendering backends a replay can use; software is the default and the reference


def default_pipeline(backend: str = "software") -> PipelineSink:
    """The rendering pipeline of ``backend``: "software" (``picaemu.pipeline.Pipeline``, the reference) or "gl"
    (``picaemu.gl.GLPipeline``: OpenGL through headless EGL; ``BackendUnavailable`` without it)."""
    if backend == "gl":
        from picaemu.gl import GLPipeline

        return GLPipeline()
    if backend != "software":
        raise PicaError(f"unknown rendering backend {backend!r} (choose from {', '.join(BACKENDS)})")
    from picaemu.pipeline import Pipeline

    return Pipeline()  # the compiled route (``Route.COMPILED``)


def record_draw(replay: Replay, call: DrawCall) -> None:
    """Append ``call``'s ``DrawRecord`` to ``replay.draws`` (once, when the replay records draws)."""
    if replay.record_draws and call.index >= len(replay.draws):
        packet = replay.packet + call.packet if call.packet >= 0 else -1
        # the draw's own counters dict, shared with the call
        replay.draws.append(
            DrawRecord(
                call.index,
                replay._current,
                call.offset,
                call.kind.value,
                call.stats,
                call.bounds,
                packet,
                bisect.bisect_left(replay.frames, replay._current),
                route=call.route,
                call_site=_site(replay.capture.call_sites, call.index, call.offset),
            )
        )


def _site(sites: dict[int, pica.CallSite], index: int, offset: int) -> pica.CallSite | None:
    """The recorded call site of draw ``index`` (``sites``: the capture's) when its trigger offset agrees
    (``pica_calls``)."""
    site = sites.get(index)
    return site if site is not None and site.offset == offset else None


def record_compiled(replay: Replay, draws: CompiledDraws) -> None:
    """``record_draw`` of each draw the command processor's compiled loop ran that the replay has not recorded yet
    (a draw run again after a seek is recorded already: no Python work per draw then), made when first read
    (``DrawRecords.defer``: from a copy of the loop's rows, which the next loop call reuses)."""
    if not replay.record_draws:
        return
    first = draws.first_from(len(replay.draws))
    if first == len(draws):
        return
    share = draws.seconds * (len(draws) - first) / len(draws)  # each draw's ``time_s`` stays the call's share
    kept = dataclasses.replace(draws, rows=draws.rows[first:].copy(), seconds=share, held=draws.held[:0])
    event, packet, frame = replay._current, replay.packet, bisect.bisect_left(replay.frames, replay._current)
    sites = replay.capture.call_sites

    def make() -> list[DrawRecord]:
        return [
            DrawRecord(
                index,
                event,
                offset,
                kind.value,
                stats,
                bounds,
                packet + pk,
                frame,
                route=ROUTE_COMPILED,
                call_site=_site(sites, index, offset),
            )
            for index, kind, offset, pk, _resume, stats, bounds in kept.each()
        ]

    replay.draws.defer(len(kept), make)
