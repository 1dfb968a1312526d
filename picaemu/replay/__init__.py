"""Replaying captures: ``picaemu.open(path) -> Replay``, the object the CLI, statistics and the GUI build on
(``picaemu.replay.core``; its docstring describes the replay). Capture loading lives in ``picaemu.replay.capture``.

The names here are imported at first use (``picaemu.lazy``): ``picaemu.replay.capture``, ``picaemu.replay.scan`` and
``picaemu.replay.info`` can be imported without the command processor, the engines and the pipeline behind
``Replay`` (``picaemu info`` loads no compiled code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picaemu.lazy import lazy_exports

if TYPE_CHECKING:
    from picaemu.replay.capture import (
        CAPTURE_SUFFIXES,
        CaptureKind,
        NotACapture,
        claims_capture,
        initial_gpu_state,
        is_capture,
        load_capture,
        load_capture_kind,
    )
    from picaemu.replay.core import (
        BACKENDS,
        Checkpoint,
        DrawRecord,
        EventInfo,
        Replay,
        ReplayError,
        default_pipeline,
        describe,
        null_replay,
        open,
    )

__all__ = [
    "BACKENDS",
    "CAPTURE_SUFFIXES",
    "CaptureKind",
    "Checkpoint",
    "DrawRecord",
    "EventInfo",
    "NotACapture",
    "Replay",
    "ReplayError",
    "claims_capture",
    "default_pipeline",
    "describe",
    "initial_gpu_state",
    "is_capture",
    "load_capture",
    "load_capture_kind",
    "null_replay",
    "open",
]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            (
                "CAPTURE_SUFFIXES",
                "CaptureKind",
                "NotACapture",
                "claims_capture",
                "initial_gpu_state",
                "is_capture",
                "load_capture",
                "load_capture_kind",
            ),
            "capture",
        ),
        **dict.fromkeys(
            (
                "BACKENDS",
                "Checkpoint",
                "DrawRecord",
                "EventInfo",
                "Replay",
                "ReplayError",
                "default_pipeline",
                "describe",
                "null_replay",
                "open",
            ),
            "core",
        ),
    },
)
