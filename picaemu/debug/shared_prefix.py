"""How many leading events two captures share: ``shared_events(a, b)``, the events from the start up to the first
whose inputs differ (an event of another kind or other fields, a CPU memory write of other bytes), 0 when the
captures start from different initial states (GPU registers, shader memories, LUTs, external registers, memory).

Two replays of the same pipeline that apply equal inputs to equal states reach equal states: ``picaemu diff``
runs side B only from the first differing event on and takes side A's record of everything before it
(``picaemu.debug.capture_diff``).
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from picaemu.formats import pica


def shared_events(a: pica.Capture, b: pica.Capture) -> int:
    """The number of leading events whose inputs are equal in ``a`` and ``b`` (module docstring)."""
    if a is b:
        return len(a.events)
    if not same_initial_state(a, b):
        return 0
    count = 0
    for ea, eb in zip(a.events, b.events, strict=False):
        if not _same_event(a, ea, b, eb):
            break
        count += 1
    return count


def same_initial_state(a: pica.Capture, b: pica.Capture) -> bool:
    """Whether both captures start from the same GPU, external registers and memory."""
    sa, sb = a.state, b.state
    for f in fields(pica.InitialState):
        if f.name != "memory" and not np.array_equal(getattr(sa, f.name), getattr(sb, f.name)):
            return False
    return len(sa.memory) == len(sb.memory) and all(
        at_a == at_b and _same_blob(a, blob_a, b, blob_b)
        for (at_a, blob_a), (at_b, blob_b) in zip(sa.memory, sb.memory, strict=True)
    )


def _same_blob(a: pica.Capture, blob_a: int, b: pica.Capture, blob_b: int) -> bool:
    if a.blobs is b.blobs:  # one store holds each content once
        return blob_a == blob_b
    return a.blobs.size(blob_a) == b.blobs.size(blob_b) and a.blobs[blob_a] == b.blobs[blob_b]


def _same_event(a: pica.Capture, ea: pica.Event, b: pica.Capture, eb: pica.Event) -> bool:
    if isinstance(ea, pica.MemoryWrite) and isinstance(eb, pica.MemoryWrite):  # blob indices are per capture
        return ea.address == eb.address and _same_blob(a, ea.blob, b, eb.blob)
    return type(ea) is type(eb) and ea == eb
