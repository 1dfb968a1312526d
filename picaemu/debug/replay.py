"""``DebugReplay``: a ``picaemu.replay.Replay`` with the debugger's answers as methods, what ``picaemu.open``
returns. Each answer forwards to the replay's ``picaemu.debug.api.Debugger``, made and indexed on first use, and may
move the replay. (The replay layer knows nothing of the debugger built on it: this module adds it from above.)"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

from picaemu.debug.api import Debugger, PixelFragment
from picaemu.debug.edit_replay import EditResult
from picaemu.debug.fragment import FragmentDebug
from picaemu.replay import Replay
from picaemu.replay import open as open_replay


class DebugReplay(Replay):
    """A replay with the debugger's answers (module docstring)."""

    _debugger: Debugger | None = None

    @property
    def debugger(self) -> Debugger:
        """The debugger engine over this replay, indexed on first use (one rendering pass; it turns the replay's
        checkpoints on)."""
        if self._debugger is None:
            self._debugger = Debugger(weakref.proxy(self))  # no cycle: the replay is freed when unreferenced
        return self._debugger

    def texture(self, unit: int, level: int = 0, face: int = 0, *, draw: int | None = None) -> np.ndarray:
        """``Replay.texture``, or with ``draw`` the texture as bound and in memory at that draw
        (``Debugger.texture``)."""
        if draw is not None:
            return self.debugger.texture(draw, unit, level, face)
        return super().texture(unit, level, face)

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


def open(path: str | os.PathLike[str], **options: Any) -> DebugReplay:
    """``picaemu.replay.open(path, **options)`` (pipeline, strict, checkpoints, record_draws, backend) as a
    ``DebugReplay``: what ``picaemu.open`` is."""
    replay = open_replay(path, **options, kind=DebugReplay)
    assert isinstance(replay, DebugReplay)
    return replay
