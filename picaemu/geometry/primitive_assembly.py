"""Primitive assembly: a vertex stream -> triangles, with the assembler state that survives between draws.

Receives the topology (PRIMITIVE_CONFIG.topology, 0x25E) and the vertices of one draw in submission order as
rows ``(N, C) float32`` (post output-map, see ``picaemu.geometry.output_map``); returns ``(T, 3, C) float32`` — the
three
vertices of every triangle, in the order the hardware assembles them — and updates the ``Assembler``:

- list (0) and geometry primitives (3): (v0 v1 v2), (v3 v4 v5), ...
- strip (1): (v0 v1 v2), (v2 v1 v3), (v2 v3 v4), (v4 v3 v5), ... (odd triangles swap their first two vertices)
- fan (2): (v0 v1 v2), (v0 v2 v3), (v0 v3 v4), ...

Lists return a view of the stream (consecutive triples need no gather): the caller owns the vertices it passes.
Vertices of an incomplete primitive stay buffered in the ``Assembler`` and continue into the next draw, as on
hardware (pica-pipeline.md §5); RESTART_PRIMITIVE (0x25F) and a topology change reset it (``reset()``). Winding
flags of geometry-shader primitives belong to the geometry-shader path and are not handled here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class Topology(Enum):
    LIST = 0
    STRIP = 1
    FAN = 2
    GEOMETRY = 3


def _list_tris(n: int, parity: int) -> np.ndarray:
    t = n // 3
    return np.arange(3 * t, dtype=np.int64).reshape(t, 3)


def _strip_tris(n: int, parity: int) -> np.ndarray:
    i = np.arange(max(n - 2, 0), dtype=np.int64)
    odd = ((i + parity) & 1).astype(bool)
    tris = np.stack([i, i + 1, i + 2], axis=1)
    tris[odd, 0], tris[odd, 1] = i[odd] + 1, i[odd]
    return tris


def _fan_tris(n: int, parity: int) -> np.ndarray:
    i = np.arange(max(n - 2, 0), dtype=np.int64)
    return np.stack([np.zeros_like(i), i + 1, i + 2], axis=1)


# topology -> (triangle index builder, which stream positions to keep for the next draw)
def _keep_list(n: int) -> np.ndarray:
    return np.arange(n - n % 3, n)


def _keep_strip(n: int) -> np.ndarray:
    return np.arange(max(n - 2, 0), n)


def _keep_fan(n: int) -> np.ndarray:
    return np.arange(n) if n <= 2 else np.array([0, n - 1])


ASSEMBLY = {
    Topology.LIST: (_list_tris, _keep_list),
    Topology.STRIP: (_strip_tris, _keep_strip),
    Topology.FAN: (_fan_tris, _keep_fan),
    Topology.GEOMETRY: (_list_tris, _keep_list),
}


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
        build, keep = ASSEMBLY[topology]
        n = stream.shape[0]
        kept = keep(n)
        self.pending = stream[kept].copy() if kept.shape[0] else None
        if topology in (Topology.LIST, Topology.GEOMETRY):  # consecutive triples: a view, no gather
            t = n // 3
            self.parity = (self.parity + t) & 1
            return stream[: 3 * t].reshape(t, 3, stream.shape[1])
        tris = build(n, self.parity)
        self.parity = (self.parity + tris.shape[0]) & 1
        return stream[tris]

    def takes_whole_triangles(self, topology: Topology) -> bool:
        """True when a draw of ``topology`` starts with no vertex pending (its first vertex starts a primitive)."""
        return self.pending is None or topology is not self.topology

    def advance(self, topology: Topology, n: int) -> None:
        """The state ``assemble`` leaves after a triangle list of n vertices, n a multiple of 3, that started with
        no vertex pending (``takes_whole_triangles``): for callers that formed the triangles themselves."""
        self._switch(topology)
        self.parity = (self.parity + n // 3) & 1

    def _switch(self, topology: Topology) -> None:
        """A change of topology drops the pending vertices and the parity."""
        if topology is not self.topology:
            self.reset()
            self.topology = topology
