"""Adjacent memory ranges merged into runs: how captures with 10,000+ small allocations stay small and fast.

A citro2d game can hold ~12,000 small linear allocations; writing each as its own ``MemoryWrite`` at every GX
command gives millions of events. Two rules, both exact (the replayed memory is byte-for-byte the same):

- ``merge_blocks(spans)``: the blocks one moment loads (c3dcap's allocations at a GX command, in any order) as
  runs of address-contiguous blocks. Blocks that overlap keep their listed order (a later one wins), so the
  merge is done only when no two blocks overlap; ``group`` keeps blocks apart (the importer groups blocks whose
  contents changed since the previous command apart from those that did not, so unchanged runs stay identical
  and the blob store keeps one copy of them).
- ``merge_writes(events, blobs)``: consecutive ``MemoryWrite`` events whose ranges follow each other with no other
  event in between become one (``record`` and the ``.pica`` writer). Nothing runs between two consecutive writes,
  so their order is kept and the result is the same memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Protocol

from picaemu.formats import pica_events as ev

Span = tuple[int, int]  # (physical address, bytes)
MAX_RUN = 64 << 20  # a run ends before it would exceed this many bytes (one blob stays a sane size)


class BlobSource(Protocol):
    """What ``merge_writes`` reads blobs through (``pica.BlobStore``)."""

    def size(self, index: int) -> int: ...

    def __getitem__(self, index: int) -> bytes: ...


def _overlapping(spans: Sequence[Span]) -> bool:
    ordered = sorted(spans)
    return any(a[0] + a[1] > b[0] for a, b in pairwise(ordered))


def merge_blocks(spans: Sequence[Span], group: Sequence[int] | None = None) -> list[list[int]]:
    """Indices of ``spans`` (address, bytes) grouped into runs: each run address-contiguous and in address order,
    the runs in address order; with ``group``, a run holds spans of one group value only. Overlapping spans: one
    run each, in the listed order (see the module docstring). Empty spans are dropped."""
    order = [i for i in range(len(spans)) if spans[i][1] > 0]
    if _overlapping([spans[i] for i in order]):
        return [[i] for i in order]
    order.sort(key=lambda i: spans[i][0])
    runs: list[list[int]] = []
    end = total = -1
    for i in order:
        address, size = spans[i]
        same = group is None or group[i] == group[runs[-1][-1]] if runs else False
        if same and address == end and total + size <= MAX_RUN:
            runs[-1].append(i)
            total += size
        else:
            runs.append([i])
            total = size
        end = address + size
    return runs


def merge_writes(
    events: list[ev.Event], blobs: BlobSource, keep: Callable[[int], int], add: Callable[[bytes], int]
) -> list[ev.Event]:
    """``events`` with every stretch of consecutive, address-contiguous ``MemoryWrite`` events made one. A write
    left alone names blob ``keep(index)``; a merged one names ``add(joined bytes)``. Other events are kept as
    they are."""
    out: list[ev.Event] = []
    i = 0
    while i < len(events):
        event = events[i]
        if not isinstance(event, ev.MemoryWrite):
            out.append(event)
            i += 1
            continue
        end, size = event.address + blobs.size(event.blob), blobs.size(event.blob)
        j = i + 1
        while j < len(events):
            nxt = events[j]
            if not isinstance(nxt, ev.MemoryWrite) or nxt.address != end or size + blobs.size(nxt.blob) > MAX_RUN:
                break
            end, size = end + blobs.size(nxt.blob), size + blobs.size(nxt.blob)
            j += 1
        if j == i + 1:
            out.append(ev.MemoryWrite(event.address, keep(event.blob)))
        else:
            joined = b"".join(blobs[e.blob] for e in events[i:j])  # type: ignore[union-attr]
            out.append(ev.MemoryWrite(event.address, add(joined)))
        i = j
    return out
