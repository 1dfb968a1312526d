"""What a capture holds, without rendering it: ``capture_info(path) -> CaptureInfo`` (``picaemu info``).

The capture is read (``load_capture_kind``: any format picaemu reads) and scanned (``picaemu.replay.scan``: its
command lists run through a plain-Python walk of the register file, with no engine, no pipeline and no compiled
code, so ``picaemu info`` imports no numba). A capture the scan does not model (register-write events, an engine
writing memory a later command list reads, immediate mode, ...) is replayed instead: run once through the command
processor with a pipeline that renders nothing (``_DrawLog``, a ``NullPipeline``), the engines moving memory as in
a replay; both give the draws, the shader programs bound and the textures sampled of a real replay, while no vertex
is shaded and no pixel drawn (tests/test_walk.py checks they agree). Each draw keeps a read-only copy of its state
that shares every array equal to the previous draw's (``picaemu.state.share_unchanged``); programs are hashed once
per distinct code and textures decoded once per distinct set of texture registers (``picaemu.debug.draw_tables``).

``CaptureInfo.as_dict()`` is the JSON answer (``schema`` 1): ``path``, ``format`` ({"kind", "version"}), ``bytes``
(of the file, or of the scene folder's files), ``frames`` (FrameEnd events), ``events`` (count by event kind),
``draws`` (total), ``draws_per_frame`` (one count per frame, draws after the last frame end apart in
``draws_after_last_frame``), ``memory`` (initial blocks and bytes, memory-write events and bytes, distinct
contents and their bytes), ``shaders`` (``draw_tables.program_table``: "vs HASH@ENTRY[, gs ...]", draws, first, last),
``textures`` (``draw_tables.texture_table``, addresses as "0x..." strings), ``screens`` (per screen: presents, pixel
format names, distinct framebuffer addresses as "0x..." strings).
"""

from __future__ import annotations

import bisect
import contextlib
import os
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picaemu.draw import DrawCall, NullPipeline
from picaemu.formats import pica
from picaemu.regs import access
from picaemu.regs.external import SCREENS, TRANSFER_FORMATS
from picaemu.replay.capture import load_capture_kind
from picaemu.replay.scan import Unmodelled, scan_draws
from picaemu.state import GpuState, share_unchanged

if TYPE_CHECKING:
    from picaemu.replay import Replay

SCHEMA = 1
SCREEN_NAMES = ("top", "bottom")  # Present.screen 0 / 1


class _DrawLog(NullPipeline):
    """Renders nothing; keeps each draw's state (arrays shared with the previous draw's where equal) and the
    event it ran in. A subclass of ``NullPipeline``, so the processor hands it every draw (the decode-only loop
    keeps draws of the plain ``NullPipeline`` to itself)."""

    def __init__(self) -> None:
        super().__init__()
        self.states: list[GpuState] = []
        self.events: list[int] = []
        self.replay: Replay | None = None

    def draw(self, call: DrawCall) -> None:
        self.states.append(share_unchanged(call.state, self.states[-1] if self.states else None))
        self.events.append(self.replay.position if self.replay is not None else 0)


@dataclass
class CaptureInfo:
    """The summary of one capture (see the module docstring for the fields)."""

    path: str
    format: dict[str, str]
    bytes: int
    frames: int
    events: dict[str, int]
    draws_per_frame: list[int]
    draws_after_last_frame: int
    memory: dict[str, int]
    shaders: list[dict[str, Any]] = field(default_factory=list)
    textures: list[dict[str, Any]] = field(default_factory=list)
    screens: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def draws(self) -> int:
        return sum(self.draws_per_frame) + self.draws_after_last_frame

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA, **vars(self), "draws": self.draws}
        out["textures"] = [{**row, "address": f"0x{row['address']:08X}"} for row in self.textures]
        return out


def _file_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def memory_summary(capture: pica.Capture) -> dict[str, int]:
    """Initial memory blocks and their bytes, memory-write events and their bytes, distinct contents (blobs) and
    their bytes."""
    writes = [e for e in capture.events if isinstance(e, pica.MemoryWrite)]
    used = {blob for _, blob in capture.state.memory} | {e.blob for e in writes}
    return {
        "initial_blocks": len(capture.state.memory),
        "initial_bytes": sum(capture.blobs.size(blob) for _, blob in capture.state.memory),
        "writes": len(writes),
        "write_bytes": sum(capture.blobs.size(e.blob) for e in writes),
        "distinct_contents": len(used),
        "distinct_bytes": sum(capture.blobs.size(blob) for blob in used),
    }


def screen_summary(events: list[pica.Event]) -> dict[str, dict[str, Any]]:
    """Per screen presented: presents, pixel formats (by name) and the distinct framebuffer addresses."""
    out: dict[str, dict[str, Any]] = {}
    for e in events:
        if not isinstance(e, pica.Present):
            continue
        pdc = SCREENS[e.screen]
        fmt = access.bits(e.format, f"{pdc}_FORMAT", "pixel_format")
        row = out.setdefault(SCREEN_NAMES[e.screen], {"presents": 0, "formats": [], "framebuffers": []})
        row["presents"] += 1
        name = TRANSFER_FORMATS.get(fmt, f"format {fmt}")
        if name not in row["formats"]:
            row["formats"].append(name)
        for address in (e.left, e.right):
            text = f"0x{address:08X}"
            if address and text not in row["framebuffers"]:
                row["framebuffers"].append(text)
    return out


def _replay_draws(capture: pica.Capture) -> tuple[list[GpuState], list[int]]:
    """``scan_draws``'s answer from a full replay (engines and all) with a pipeline that renders nothing."""
    from picaemu.replay import Replay

    sink = _DrawLog()
    replay = Replay(capture, pipeline=sink, checkpoints=False, record_draws=False)
    sink.replay = replay
    try:
        replay.run()
    finally:
        sink.replay = None
    return sink.states, sink.events


def capture_info(
    path: str | os.PathLike[str], *, replaying: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext
) -> CaptureInfo:
    """The summary of the capture at ``path`` (a ``ReplayError`` when an event fails). A capture the quick scan
    does not model is replayed inside ``replaying()`` (the CLI's note on long kernel compiles)."""
    from picaemu.debug.draw_tables import program_table, texture_table

    capture, kind = load_capture_kind(path)
    try:
        states, draw_events = scan_draws(capture)
    except Unmodelled:
        with replaying():
            states, draw_events = _replay_draws(capture)
    frames = [i for i, e in enumerate(capture.events) if isinstance(e, pica.FrameEnd)]
    per_frame = [0] * (len(frames) + 1)
    for event in draw_events:
        per_frame[bisect.bisect_left(frames, event)] += 1
    return CaptureInfo(
        path=os.fspath(path),
        format={"kind": kind.kind, "version": kind.version},
        bytes=_file_bytes(Path(path)),
        frames=len(frames),
        events=dict(Counter(type(e).__name__ for e in capture.events).most_common()),
        draws_per_frame=per_frame[:-1],
        draws_after_last_frame=per_frame[-1],
        memory=memory_summary(capture),
        shaders=program_table(states),
        textures=texture_table(states),
        screens=screen_summary(capture.events),
    )


__all__ = ["SCHEMA", "CaptureInfo", "capture_info", "memory_summary", "screen_summary"]
