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

from picaemu.draw import DrawCall

if TYPE_CHECKING:
    import numpy as np

    from picaemu.geometry.vertex_loader import VertexBatch


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
    """

    def on_vertices(self, call: DrawCall, batch: VertexBatch) -> None:
        return None

    def on_vertex_outputs(self, call: DrawCall, outputs: np.ndarray) -> None:
        return None

    def on_geometry(self, call: DrawCall, inputs: np.ndarray, sizes: tuple[int, ...] | None, outputs: np.ndarray,
                    triangles: np.ndarray) -> None:
        return None

    def on_triangles(self, call: DrawCall, assembled: np.ndarray, clipped: np.ndarray) -> None:
        return None

