"""Output mapping: shader output registers -> fixed-function vertex semantics (SH_OUTMAP, 0x04F-0x056).

Receives the shader's outputs ``(N, 16, 4) float32`` (o0-o15), the shader's OUTMAP_MASK (bit n = register on is
enabled; the enabled registers in ascending order fill output-map slots 0, 1, ...) and ``OutputMapState``;
returns the post-transform vertex array ``(N, NUM_COLUMNS) float32`` in the column layout below, which the
clipper, the viewport and the rasterizer share (one interpolation loop over every column).

=========  =======  ==========================================================
columns    name     content
=========  =======  ==========================================================
0-3        POS      clip-space position x y z w
4-7        COLOR    primary color r g b a, made absolute and clamped to [0, 1]
8-9        TC0      texcoord0 u v
10         TC0W     texcoord0.w
11-12      TC1      texcoord1 u v
13-14      TC2      texcoord2 u v
15-18      QUAT     normal quaternion x y z w
19-21      VIEW     view vector x y z
=========  =======  ==========================================================

Rules (pica-pipeline.md §4): a semantic no component maps reads 1.0; when two components map the same semantic
the later slot/component wins; codes 0x11 and 0x15 go nowhere; 0x1F is "unused"; 0x18-0x1E are invalid and
raise ``UnsupportedFeature``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from picaemu import numba_link
from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.regs import access, id_of

POS = slice(0, 4)
COLOR = slice(4, 8)
TC0 = slice(8, 10)
TC0W = 10
TC1 = slice(11, 13)
TC2 = slice(13, 15)
QUAT = slice(15, 19)
VIEW = slice(19, 22)
NUM_COLUMNS = 22
NUM_SLOTS = 7
UNUSED_CODE = 0x1F
# semantic code -> column (None = accepted, stored nowhere)
SEMANTIC_COLUMN: dict[int, int | None] = {
    0x00: 0,
    0x01: 1,
    0x02: 2,
    0x03: 3,
    0x04: 15,
    0x05: 16,
    0x06: 17,
    0x07: 18,
    0x08: 4,
    0x09: 5,
    0x0A: 6,
    0x0B: 7,
    0x0C: 8,
    0x0D: 9,
    0x0E: 11,
    0x0F: 12,
    0x10: 10,
    0x11: None,
    0x12: 19,
    0x13: 20,
    0x14: 21,
    0x15: None,
    0x16: 13,
    0x17: 14,
}
COMPONENTS = ("x", "y", "z", "w")


@dataclass(frozen=True)
class OutputMapState:
    """SH_OUTMAP_TOTAL and the semantic code of each component of each slot, decoded once per draw."""

    count: int
    codes: tuple[tuple[int, int, int, int], ...]  # (count, 4)

    @classmethod
    def from_regs(cls, regs: np.ndarray) -> OutputMapState:
        count = min(access.raw(regs, "SH_OUTMAP_TOTAL", "count"), NUM_SLOTS)
        codes = []
        for i in range(count):
            name = f"SH_OUTMAP_O{i}"
            x, y, z, w = access.raws(regs, name, COMPONENTS)
            row = (x, y, z, w)
            for code in row:
                if code != UNUSED_CODE and code not in SEMANTIC_COLUMN:
                    raise UnsupportedFeature(
                        f"output-map semantic 0x{code:02X} in slot {i}",
                        register=id_of(name),
                        value=access.word(regs, name),
                    )
            codes.append(row)
        return cls(count, tuple(codes))

    def mapped_columns(self) -> list[int]:
        """Sorted vertex columns some component maps (the others hold 1.0 on every vertex)."""
        return sorted({c for row in self.codes for code in row if (c := SEMANTIC_COLUMN.get(code)) is not None})


def slot_registers(outmap_mask: int) -> list[int]:
    """Output registers feeding slots 0, 1, ...: the set bits of OUTMAP_MASK in ascending order."""
    return [r for r in range(16) if outmap_mask >> r & 1]


def map_outputs(om: OutputMapState, outputs: np.ndarray, outmap_mask: int) -> np.ndarray:
    """(N, 16, 4) shader outputs -> (N, NUM_COLUMNS) float32 vertices (see the module docstring)."""
    n = outputs.shape[0]
    source, top = _source_table(om, outmap_mask)
    if outputs.ndim != 3 or outputs.shape[2] != 4 or top >= 4 * outputs.shape[1]:
        raise PipelineError(
            f"shader outputs {outputs.shape} lack a register the output map reads (o{top // 4})",
            register=id_of("SH_OUTMAP_TOTAL"),
        )
    vert = np.empty((n, NUM_COLUMNS), np.float32)
    flat = np.ascontiguousarray(outputs, np.float32).reshape(n, 4 * outputs.shape[1])
    _fill_columns(flat, source, COLOR.start, COLOR.stop, vert)
    return vert


@lru_cache(maxsize=64)
def _source_table(om: OutputMapState, outmap_mask: int) -> tuple[np.ndarray, int]:
    """(NUM_COLUMNS,) int64 column -> register * 4 + component (-1: reads 1.0), and its largest entry: a function
    of the output map and the mask only, remembered (shared: not to be modified)."""
    regs = slot_registers(outmap_mask)
    if len(regs) < om.count:
        raise PipelineError(
            f"SH_OUTMAP_TOTAL = {om.count} slots but OUTMAP_MASK enables {len(regs)} registers",
            register=id_of("SH_OUTMAP_TOTAL"),
        )
    source = np.full(NUM_COLUMNS, -1, np.int64)
    for slot, row in enumerate(om.codes):
        for comp, code in enumerate(row):
            column = SEMANTIC_COLUMN.get(code)
            if column is not None:
                source[column] = regs[slot] * 4 + comp  # a later slot/component overrides
    return source, int(source.max())


@numba_link.kernel()
def _fill_columns(outputs, source, color_lo: int, color_hi: int, vert) -> None:  # pragma: no cover - compiled
    """vert[i, c] = outputs[i, source[c]] (outputs (N, 64): register * 4 + component; 1.0 where source[c] < 0), in
    one pass; the color columns [color_lo, color_hi) made absolute and clamped to 1 (NaN stays NaN)."""
    one = np.float32(1.0)
    for i in range(vert.shape[0]):
        # the copy loop has no per-column branch but the select, the clamp runs on the few color columns only
        # (one branch per column per vertex made this kernel ~2x slower)
        for c in range(vert.shape[1]):
            s = source[c]
            vert[i, c] = outputs[i, s] if s >= 0 else one
        for c in range(color_lo, color_hi):
            v = abs(vert[i, c])
            vert[i, c] = one if one < v else v  # min(v, 1) as numba and Python evaluate it: NaN stays NaN
