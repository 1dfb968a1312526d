"""One capture's work in a batch, as plain data: what travels to a worker and what comes back.

A task is a JSON-able dict: ``name`` (the output folder's name), ``source`` (the capture's path as given),
``timeout`` (seconds, or None) and ``options`` (``screen``: "top" or "bottom"; ``backend``: a
``picaemu.replay.BACKENDS`` name, "software" by default). The capture travels either as its
path (local worker processes share the filesystem) or as its files' bytes (``pack``: {relative path: bytes}, the
one file of a .pica/.ctf, or every file of a c3dcap scene below the scene folder's name), which the worker writes
to a temporary folder.

``render_task`` replays the capture forwards once, without checkpoints, and takes the picture of ``screen`` right
after every FrameEnd (a capture without one: its final state, as frame 0). It returns the result as bytes
(``encode_result``): one line of JSON (``name``, ``source``, ``status`` "ok" | "failed" | "timeout", ``frames``,
``draws``, ``seconds``, ``error``, ``sizes``: the byte size of each frame's PNG) followed by the PNGs. Emulator
objects never leave the worker, and nothing is pickled but dicts of strings and bytes.

The timeout is checked after every draw and every event (``Deadline``); a single draw is not interrupted, so the
local pool (``picaemu.batch.local``) also kills a worker that overruns by ``HARD_KILL_GRACE`` seconds.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from picaemu.draw import is_compiled_sink
from picaemu.errors import FormatError, PicaError

OK, FAILED, TIMEOUT = "ok", "failed", "timeout"
MAX_PACK_BYTES = 2 << 30  # a capture larger than this is not sent over the network
HARD_KILL_GRACE = 10.0
WORKER_DIED = "the worker process died while replaying this capture (killed, out of memory or crashed)"


class CaptureTimeout(Exception):
    """The capture ran past its task's timeout (not a PicaError: the replay does not wrap it)."""


def make_task(name: str, source: str, timeout: float | None, **options: Any) -> dict[str, Any]:
    return {
        "name": name,
        "source": source,
        "timeout": timeout,
        "options": {"screen": "top", "backend": "software", **options},
    }


def pack(path: Path) -> dict[str, bytes]:
    """The capture's files as {relative path: bytes} (sizes checked before reading)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    total = sum(p.stat().st_size for p in files)
    if total > MAX_PACK_BYTES:
        raise FormatError(f"capture of {total} bytes is too large to send to a cluster worker", path=str(path))
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {f"{path.name}/{p.relative_to(path).as_posix()}": p.read_bytes() for p in files}


def unpack(files: dict[str, bytes], folder: Path) -> Path:
    """Write packed files below ``folder``; returns the capture's path there (``folder/<its one top name>``)."""
    roots = set()
    for rel, data in files.items():
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
            raise FormatError(f"packed capture names the path {rel!r} outside its folder")
        roots.add(parts[0])
        dest = folder.joinpath(*parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    if len(roots) != 1:
        raise FormatError(f"packed capture has {len(roots)} top-level names, not one")
    return folder / roots.pop()


class Deadline:
    """A pipeline wrapper that raises ``CaptureTimeout`` once ``seconds`` have passed (checked after each draw;
    ``check`` for the caller's own loop). ``seconds`` None: no limit."""

    def __init__(self, inner: Any, seconds: float | None) -> None:
        self.inner = inner
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds

    def check(self) -> None:
        if self.end is not None and time.monotonic() > self.end:
            raise CaptureTimeout(f"timed out: the capture took longer than {self.seconds:g} s")

    def draw(self, call: Any) -> None:
        self.inner.draw(call)
        self.check()

    def event(self, kind: Any, state: Any) -> None:
        self.inner.event(kind, state)

    def compiled_plans(self, call: Any) -> Any:
        """The inner pipeline's plans (``picaemu.draw.CompiledSink``): the deadline is checked after each run of
        compiled draws instead of each draw."""
        return self.inner.compiled_plans(call) if is_compiled_sink(self.inner) else None

    def compiled_allowed(self) -> bool:
        return is_compiled_sink(self.inner) and self.inner.compiled_allowed()

    def compiled_draws(self, draws: Any) -> None:
        self.inner.compiled_draws(draws)
        self.check()


def replay_frames(source: Path, options: dict[str, Any], deadline: Deadline) -> tuple[list[bytes], int]:
    """(PNG of each frame, draws) of one forward replay of ``source`` (see the module docstring)."""
    from picaemu.formats.files import encode_image
    from picaemu.replay import Replay, default_pipeline, load_capture

    deadline.inner = default_pipeline(options.get("backend", "software"))
    replay = Replay(load_capture(source), pipeline=deadline, checkpoints=False, record_draws=False)
    ends = [end + 1 for end in replay.frames] or [len(replay.events)]
    pictures = []
    for end in ends:
        while replay.position < end:
            replay.step()
            deadline.check()
        pictures.append(encode_image(replay.screen(options.get("screen", "top"))))
    return pictures, replay.draw_count


def encode_result(outcome: dict[str, Any], pictures: list[bytes]) -> bytes:
    header = json.dumps({**outcome, "sizes": [len(p) for p in pictures]}).encode("utf-8")
    return header + b"\n" + b"".join(pictures)


def decode_result(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """(outcome, PNG bytes per frame) of ``encode_result``'s bytes; ``FormatError`` when they do not add up."""
    header, sep, body = data.partition(b"\n")
    try:
        outcome = json.loads(header)
        sizes = [int(n) for n in outcome.pop("sizes")]
    except (ValueError, KeyError, TypeError) as err:
        raise FormatError(f"a worker's result is not readable: {err}") from None
    if not sep or sum(sizes) != len(body) or min(sizes, default=0) < 0:
        raise FormatError(f"a worker's result holds {len(body)} picture bytes, its header says {sum(sizes)}")
    offsets = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
    return outcome, [body[offsets[k] : offsets[k + 1]] for k in range(len(sizes))]


def failed_result(task: dict[str, Any], status: str, error: str, seconds: float = 0.0) -> bytes:
    """The result of a task that produced nothing (a dead worker, a cluster error)."""
    return encode_result(
        {
            "name": task["name"],
            "source": task["source"],
            "status": status,
            "frames": 0,
            "draws": 0,
            "seconds": round(seconds, 3),
            "error": error,
        },
        [],
    )


def render_task(task: dict[str, Any], files: dict[str, bytes] | None = None) -> bytes:
    """Run one task (in a worker): any error, even a bug of picaemu's, becomes a failed result naming it, so that
    one bad capture never stops a batch."""
    start = time.perf_counter()
    outcome = {
        "name": task["name"],
        "source": task["source"],
        "status": OK,
        "frames": 0,
        "draws": 0,
        "seconds": 0.0,
        "error": "",
    }
    pictures: list[bytes] = []
    deadline = Deadline(None, task.get("timeout"))
    try:
        with tempfile.TemporaryDirectory(prefix="picaemu-batch-") as tmp:
            source = Path(task["source"]) if files is None else unpack(files, Path(tmp))
            pictures, outcome["draws"] = replay_frames(source, task.get("options", {}), deadline)
        outcome["frames"] = len(pictures)
    except CaptureTimeout as err:
        outcome["status"], outcome["error"] = TIMEOUT, str(err)
    except (PicaError, OSError) as err:
        outcome["status"], outcome["error"] = FAILED, str(err)
    except Exception as err:  # a bug must not take the other captures down; it is reported as such
        outcome["status"], outcome["error"] = FAILED, f"internal error {type(err).__name__}: {err}"
    if outcome["status"] != OK:
        pictures = []
    outcome["seconds"] = round(time.perf_counter() - start, 3)
    return encode_result(outcome, pictures)
