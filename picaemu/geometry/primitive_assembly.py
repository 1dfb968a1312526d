"""Primitive assembly: a vertex stream -> triangles, with the assembler state that survives between draws.

Receives the topology (PRIMITIVE_CONFIG.topology, 0x25E) and the vertices of one draw in submission order as
rows ``(N, C) float32`` (post output-map, see ``picaemu.geometry.output_map``); returns ``(T, 3, C) float32`` — the
three vertices of every triangle, in the order the hardware assembles them — and updates the ``Assembler``:

- list (0) and geometry primitives (3): (v0 v1 v2), (v3 v4 v5), ...
- strip (1): (v0 v1 v2), (v2 v1 v3), (v2 v3 v4), (v4 v3 v5), ... (odd triangles swap their first two vertices)
- fan (2): (v0 v1 v2), (v0 v2 v3), (v0 v3 v4), ...

Lists return a view of the stream (consecutive triples need no gather): the caller owns the vertices it passes.
Vertices of an incomplete primitive stay buffered in the ``Assembler`` and continue into the next draw, as on
hardware (pica-pipeline.md §5); RESTART_PRIMITIVE (0x25F) and a topology change reset it (``reset()``). Winding
flags of geometry-shader primitives belong to the geometry-shader path and are not handled here.

The rule lives in two compiled functions, ``triangle_positions`` (which stream positions form each triangle) and
``kept_positions`` (which stay buffered), shared by the ``Assembler`` and the compiled vertex side
(``picaemu.fused.vertices``), which forms a draw's triangles itself and hands the ``Assembler`` the state it leaves
(``advance``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from picaemu import numba_link


class Topology(Enum):
    LIST = 0
    STRIP = 1
    FAN = 2
    GEOMETRY = 3


LIST, STRIP, FAN, GEOMETRY = (t.value for t in Topology)  # the codes the compiled functions take
# topologies whose triangles are consecutive triples of the stream (a GS-less "geometry primitive" draw too)
TRIPLES = (LIST, GEOMETRY)


@numba_link.kernel()
def triangle_positions(topology: int, n: int, parity: int) -> np.ndarray:  # pragma: no cover - compiled
    """(T, 3) int64 stream positions of the triangles a stream of ``n`` vertices forms under ``topology``
    (``Topology`` value), ``parity`` the triangles emitted before it since the last restart (strips: a triangle
    of odd parity swaps its first two vertices). The one assembly rule: the staged ``Assembler`` and the compiled
    vertex side (``picaemu.fused.vertices``) both call it."""
    if topology in (STRIP, FAN):
        t = n - 2 if n > 2 else 0
        tris = numba_link.empty((t, 3), np.int64)  # lowered in place (numba compiles np.empty / np.arange apart)
        for i in range(t):
            if topology == FAN:
                tris[i, 0], tris[i, 1], tris[i, 2] = 0, i + 1, i + 2
            elif (i + parity) & 1:
                tris[i, 0], tris[i, 1], tris[i, 2] = i + 1, i, i + 2
            else:
                tris[i, 0], tris[i, 1], tris[i, 2] = i, i + 1, i + 2
        return tris
    return numba_link.indices(3 * (n // 3)).reshape(n // 3, 3)


@numba_link.kernel()
def kept_positions(topology: int, n: int) -> np.ndarray:  # pragma: no cover - compiled
    """(k <= 2,) int64 stream positions of the vertices a stream of ``n`` vertices leaves buffered for the next
    draw: a list's incomplete triangle, a strip's last two, a fan's centre and last."""
    if topology == FAN and n > 2:
        centre_last = numba_link.empty(2, np.int64)
        centre_last[0], centre_last[1] = 0, n - 1
        return centre_last
    first = (n - 2 if n > 2 else 0) if topology == STRIP else 0 if topology == FAN else n - n % 3
    kept = numba_link.indices(n - first)
    for i in range(kept.shape[0]):
        kept[i] += first
    return kept


@dataclass
class Assembler:
    """Vertices buffered between draws and the strip parity (triangles emitted since the last restart)."""

    topology: Topology | None = None
    pending: np.ndarray | None = None  # (k <= 2, C) float32
    parity: int = 0

    def reset(self) -> None:
        self.pending = None
        self.parity = 0

    def assemble(self, topology: Topology, vertices: np.ndarray) -> np.ndarray:
        """(N, C) vertices of one draw -> (T, 3, C) triangle vertices (buffered vertices first)."""
        self._switch(topology)
        stream = vertices if self.pending is None else np.concatenate([self.pending, vertices])
        n = stream.shape[0]
        kept = kept_positions(topology.value, n)
        self.pending = stream[kept].copy() if kept.shape[0] else None
        if topology.value in TRIPLES:  # consecutive triples: a view, no gather
            t = n // 3
            self.parity = (self.parity + t) & 1
            return stream[: 3 * t].reshape(t, 3, stream.shape[1])
        tris = triangle_positions(topology.value, n, self.parity)
        self.parity = (self.parity + tris.shape[0]) & 1
        return stream[tris]

    def takes_whole_triangles(self, topology: Topology) -> bool:
        """True when a draw of ``topology`` starts with no vertex pending (its first vertex starts a primitive;
        a strip's parity is then 0: only a reset or a change of topology empties a strip's buffer)."""
        return self.pending is None or topology is not self.topology

    def advance(self, topology: Topology, triangles: int, held: np.ndarray | None = None) -> None:
        """The state ``assemble`` leaves after a draw of ``topology`` that started with no vertex pending
        (``takes_whole_triangles``) and formed ``triangles`` triangles, ``held`` the (k, C) vertices it left
        buffered (``kept_positions``; None: none): for callers that formed the triangles themselves."""
        self._switch(topology)
        self.parity = (self.parity + triangles) & 1
        self.pending = None if held is None or not held.shape[0] else held.copy()

    def _switch(self, topology: Topology) -> None:
        """A change of topology drops the pending vertices and the parity."""
        if topology is not self.topology:
            self.reset()
            self.topology = topology
