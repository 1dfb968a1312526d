"""Cutting a capture down to a range of frames: ``trim(capture, first, last) -> Capture`` (``picaemu trim``).

The capture is replayed (rendering, so that render targets and framebuffers hold what the earlier frames drew)
up to the start of frame ``first``: right after the FrameEnd of frame ``first - 1`` (the initial state for frame
0). Everything the GPU holds there becomes the new capture's initial state (``pica.InitialState``), the same
parts a replay checkpoint holds (``picaemu.replay.checkpoint``):

- the GPU state (``GpuState``: register file, shader code / operand descriptors / float uniforms of both units,
  LUTs, fixed attributes) -> the state arrays of the same names;
- the external GPU and LCD registers -> ``gpu_regs`` / ``lcd_regs``;
- memory -> one initial block per run of consecutive 4 KiB pages that are not all zero (memory starts zeroed,
  so zero pages need no block) and that the kept events do not overwrite whole before anything can read them
  (``overwritten_first``: the memory writes and fills before the first event that reads memory), deduplicated
  like every blob.

The events of frames ``first``..``last`` follow, their memory writes re-pointed at the new blob store; frame
``first`` becomes frame 0. Replaying the result gives, frame for frame, the pictures and memory the original
gives for those frames. A frame start that the .pica initial state cannot express is refused with ``TrimError``:
data-port words or immediate-mode vertices received and not yet consumed (``PendingInput``) — a command list
that ends in the middle of a uniform upload or a vertex, which no real program leaves across a frame end.

Metadata is kept (``initial_state = unknown`` included: the state before the original capture's start is still
a guess) and ``trimmed_from`` (the original's file name) and ``trimmed_frames`` ("A-B", the original's frame
numbers) are added.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence

from picaemu.command import kernel as K
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.memory import PAGE, PhysicalMemory
from picaemu.replay import Replay

META_FROM = "trimmed_from"
META_FRAMES = "trimmed_frames"


class TrimError(PicaError):
    """The frame range is not in the capture, or its first frame starts in a state a capture cannot hold."""


def parse_frames(text: str) -> tuple[int, int]:
    """``"A-B"`` (or ``"A"``) -> (A, B); ``TrimError`` for anything else or B < A."""
    first, sep, last = text.strip().partition("-")
    try:
        a, b = int(first), int(last) if sep else int(first)
    except ValueError:
        raise TrimError(f"frame range {text!r}: expected A-B (frame numbers, e.g. 10-12) or A") from None
    if a < 0 or b < a:
        raise TrimError(f"frame range {text!r}: need 0 <= A <= B")
    return a, b


WRITE_ONLY = (pica.MemoryWrite, pica.MemoryFill, pica.Present, pica.FrameEnd, pica.Marker, pica.FlushCacheRegions)
"""Events that read no emulated memory (a Present only sets LCD registers; any other event may read memory:
command lists, transfers, copies, DMA, register writes that kick an engine or a list)."""

FILL_ENABLE = 1  # FillUnit.control bit 0: the unit runs (``pica_events.FillUnit``)


def overwritten_first(events: list[pica.Event], blobs: pica.BlobStore) -> list[tuple[int, int]]:
    """Merged, sorted [lo, hi) physical ranges that memory writes and fills overwrite before the first event of
    ``events`` that may read memory: what memory held there before ``events`` is never seen."""
    ranges: list[tuple[int, int]] = []
    for event in events:
        if not isinstance(event, WRITE_ONLY):
            break
        if isinstance(event, pica.MemoryWrite):
            ranges.append((event.address, event.address + blobs.size(event.blob)))
        elif isinstance(event, pica.MemoryFill):
            ranges += [(u.start, u.end) for u in event.units if u.control & FILL_ENABLE and u.end > u.start]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _covered(address: int, size: int, ranges: Sequence[tuple[int, int]]) -> bool:
    """[address, address + size) lies inside one of the merged sorted ``ranges``."""
    k = bisect.bisect_right(ranges, (address, 1 << 64)) - 1
    return k >= 0 and ranges[k][1] >= address + size


def memory_blocks(memory: PhysicalMemory, skip: Sequence[tuple[int, int]] = ()) -> list[tuple[int, bytes]]:
    """(physical address, bytes) of every run of consecutive pages holding a non-zero byte and not lying inside
    one of the merged sorted ranges ``skip``, in address order."""
    blocks: list[tuple[int, bytes]] = []
    for region in memory.regions:
        data = memory.region_bytes(region.name)
        used = [
            p
            for p in memory.live_pages(region.name).tolist()
            if data[p * PAGE : (p + 1) * PAGE].any() and not _covered(region.base + p * PAGE, PAGE, skip)
        ]
        run_start = 0
        for i in range(1, len(used) + 1):
            if i == len(used) or used[i] != used[i - 1] + 1:
                lo, hi = used[run_start] * PAGE, min((used[i - 1] + 1) * PAGE, region.size)
                blocks.append((region.base + lo, data[lo:hi].tobytes()))
                run_start = i
    return blocks


def _check_no_pending(replay: Replay, frame: int) -> None:
    pending = replay.processor.pending_input()
    received = pending.counters[K.C_PENDING : K.C_IMM_COUNT + 1]
    if received.any():
        raise TrimError(
            f"frame {frame} starts with input the GPU has received but not consumed (data-port words or "
            "immediate-mode vertices of an unfinished command list): a .pica initial state cannot hold it"
        )


def initial_state(replay: Replay, blobs: pica.BlobStore, skip: Sequence[tuple[int, int]] = ()) -> pica.InitialState:
    """The replay's current position as an initial state, its memory blocks (but those inside ``skip``, see
    ``memory_blocks``) added to ``blobs``."""
    s = replay.state
    return pica.InitialState(
        regs=s.regs.copy(),
        vs_code=s.vs.code.copy(),
        vs_opdescs=s.vs.opdescs.copy(),
        vs_uniforms=s.vs.float_uniforms.copy(),
        gs_code=s.gs.code.copy(),
        gs_opdescs=s.gs.opdescs.copy(),
        gs_uniforms=s.gs.float_uniforms.copy(),
        lighting_luts=s.lighting_luts.copy(),
        fog_lut=s.fog_lut.copy(),
        proctex_luts=s.proctex_luts.copy(),
        gas_lut=s.gas_lut.copy(),
        fixed_attribs=s.fixed_attribs.copy(),
        gpu_regs=replay.gx.gpu.copy(),
        lcd_regs=replay.gx.lcd.copy(),
        memory=[(address, blobs.add(data)) for address, data in memory_blocks(replay.memory, skip)],
    )


def trim(
    capture: pica.Capture, first: int, last: int, *, source: str = "", replay: Replay | None = None
) -> pica.Capture:
    """Frames ``first``..``last`` of ``capture`` as a capture of their own (see the module docstring); ``replay``:
    a fresh replay of ``capture`` to use (default: the software pipeline, no checkpoints)."""
    if replay is None:
        replay = Replay(capture, checkpoints=False, record_draws=False)
    frames = replay.frames
    if not frames:
        raise TrimError("the capture has no frame end: there are no frames to cut")
    if last >= len(frames):
        raise TrimError(f"frame range {first}-{last}: the capture has frames 0..{len(frames) - 1}")
    start = frames[first - 1] + 1 if first else 0
    replay.run_to(start)
    _check_no_pending(replay, first)
    kept = capture.events[start : frames[last] + 1]
    blobs = pica.BlobStore()
    state = initial_state(replay, blobs, overwritten_first(kept, capture.blobs))
    events: list[pica.Event] = []
    for event in kept:
        if isinstance(event, pica.MemoryWrite):
            event = dataclasses.replace(event, blob=blobs.add(capture.blobs[event.blob]))
        events.append(event)
    meta = {**capture.meta, META_FRAMES: f"{first}-{last}"}
    if source:
        meta[META_FROM] = source
    return pica.Capture(meta, state, blobs, events)


__all__ = [
    "META_FRAMES",
    "META_FROM",
    "TrimError",
    "initial_state",
    "memory_blocks",
    "overwritten_first",
    "parse_frames",
    "trim",
]
