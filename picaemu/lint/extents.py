"""The memory a capture defines, as a set of byte ranges: what lint checks reads against.

A capture replays on zeroed memory; a read of bytes no event wrote reads whatever the console held there, which
the capture does not know: garbage on the console. ``Extents`` holds disjoint, sorted, half-open physical ranges
``[start, end)``; the linter adds every range the capture writes (initial memory blocks, CPU memory writes, memory
fills, display-transfer and texture-copy outputs, the render targets draws write) and asks whether a read lies
in one range (``holds``) or how far the range holding an address reaches (``end_of``).
"""

from __future__ import annotations

import bisect


class Extents:
    """Disjoint sorted half-open ranges; adjacent or overlapping additions merge."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def __len__(self) -> int:
        return len(self._starts)

    def add(self, start: int, end: int) -> None:
        """Mark ``[start, end)`` defined (nothing for an empty range)."""
        if end <= start:
            return
        lo = bisect.bisect_left(self._ends, start)  # first range ending at or after ``start``: may merge
        hi = bisect.bisect_right(self._starts, end)  # ranges from ``lo`` up to here touch [start, end)
        if lo < hi:
            start = min(start, self._starts[lo])
            end = max(end, self._ends[hi - 1])
        self._starts[lo:hi] = [start]
        self._ends[lo:hi] = [end]

    def end_of(self, address: int) -> int | None:
        """The end of the range that holds byte ``address``; None when no range does."""
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and address < self._ends[i]:
            return self._ends[i]
        return None

    def holds(self, start: int, size: int) -> bool:
        """Whether one range holds all of ``[start, start + size)`` (an empty read is held)."""
        if size <= 0:
            return True
        end = self.end_of(start)
        return end is not None and start + size <= end

    def ranges(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends, strict=True))
