"""The debugger's answers as ``Replay`` methods (``DebuggerAnswers``, which ``picaemu.replay.Replay`` mixes in):
each forwards to the replay's ``picaemu.debug.api.Debugger``, made and indexed on first use, and may move the
replay."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from picaemu.debug.api import Debugger, PixelFragment
    from picaemu.debug.edit_replay import EditResult
    from picaemu.debug.fragment import FragmentDebug


class DebuggerAnswers:
    """``Replay``'s debugger shortcuts (``Replay.__init__`` sets ``_debugger`` to None)."""

    _debugger: Debugger | None

    @property
    def debugger(self) -> Debugger:
        """The debugger engine over this replay, indexed on first use (one rendering pass; it turns the replay's
        checkpoints on)."""
        if self._debugger is None:
            from picaemu.debug.api import Debugger

            self._debugger = Debugger(weakref.proxy(self))  # no cycle: the replay is freed when unreferenced
        return self._debugger

    def pixel_history(self, x: int, y: int, frame: int | None = None, **pick: Any) -> list[PixelFragment]:
        """Every fragment at pixel (x, y) of one render target in ``frame`` (default: the last frame with draws), in
        draw order; ``pick``: ``space="buffer"|"screen"``, ``screen``, ``eye``, ``all_targets``
        (``Debugger.pixel_history``; see ``picaemu.debug.api.PixelFragment``)."""
        return self.debugger.pixel_history(x, y, frame, **pick)

    def debug_fragment(self, draw: int, x: int, y: int, index: int = 0, **pick: Any) -> FragmentDebug:
        """Fragment ``index`` of ``draw`` at pixel (x, y), stage by stage; ``pick``: ``space``, ``screen``, ``eye``
        (``Debugger.debug_fragment``)."""
        return self.debugger.debug_fragment(draw, x, y, index, **pick)

    def mesh(self, draw: int, stage: str = "vs") -> np.ndarray:
        """Vertices of ``draw`` at ``stage``: "input", "vs", "gs" or "clipped" (``Debugger.mesh``)."""
        return self.debugger.mesh(draw, stage)

    def shader_trace(self, draw: int, vertex: int, unit: str = "vs", line_map=None) -> list[dict]:
        """Vertex ``vertex`` of ``draw`` through its shader, one dict per instruction (``Debugger.shader_trace``)."""
        return self.debugger.shader_trace(draw, vertex, unit, line_map)

    def pipeline_state(self, draw: int) -> dict:
        """Every stage's decoded state at ``draw`` as plain data (``Debugger.pipeline_state``)."""
        return self.debugger.pipeline_state(draw)

    def external_registers(self, draw: int) -> dict:
        """The external GPU registers at ``draw``, decoded (``Debugger.external_registers``)."""
        return self.debugger.external_registers(draw)

    def diff(self, draw_a: int, draw_b: int) -> dict:
        """What differs between the states at two draws (``Debugger.diff``)."""
        return self.debugger.diff(draw_a, draw_b)

    def surface(self, address: int, fmt: str, width: int, height: int, level: int = 0) -> np.ndarray:
        """Any memory decoded as a texture format, any size (``Debugger.surface``)."""
        return self.debugger.surface(address, fmt, width, height, level)

    def edit(self, draw: int, edits: list, scope: str = "from") -> EditResult:
        """The rest of ``draw``'s frame re-rendered with edits made at it, beside the original (``Debugger.edit``)."""
        return self.debugger.edit(draw, edits, scope)
