"""Fragment-lighting lookup tables: decoding the raw LUT words (and encoding them, for tests and tools).

Owns: the entry format of the 24 lighting LUTs (ids 0-7 common: D0 D1 - FR RB RG RR -; 8-15 SP0-7; 16-23 DA0-7)
and their two sampling schemes.

Receives ``GpuState.lighting_luts``: (24, 256) uint32 raw FIFO words whose layout is
``picaemu.regs.blocks.lighting.LUT_ENTRY`` (12-bit unsigned value, 11-bit difference magnitude, sign bit).
``decode_luts`` returns ``DecodedLuts`` with ``value`` and ``diff``: (24, 256) float32, where an entry's value is
raw / 4095 and its signed difference raw / 2047 (the scale the hardware-tested emulators use, so that 0xFFF is
exactly 1.0; citro3d encodes with 4096/2048 — at most 1/4096 apart). Decoding is cached by table content.

Sampling (done per fragment by ``picaemu.color.lighting_kernel``): an input x gives ``value[i] + diff[i] * f``, where
- unsigned: ``p = 256 x``, ``i = clamp(floor p, 0, 255)``, ``f = p - i``;
- signed:   ``p = 128 x``, ``i = clamp(floor p, -128, 127)``, ``f = p - i``, entry ``i & 0xFF``
  (entries 0-127 cover [0, 1), 128-255 cover [-1, 0)).
Only the index is clamped: x itself is not (pica-pipeline.md §12.2, Azahar's lookup), so an input past the table's
end (-L.P with a spot direction longer than 1, a dot product with a bump normal that was not renormalised) gives
``f`` > 1 (or < 0) and the value extrapolates along the end entry's difference. Distance attenuation clamps its
input to [0, 1] before the lookup (its own rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from picaemu.regs.blocks.lighting import LUT_ENTRY, LUT_IDS

VALUE_ONE = 4095.0  # raw value that reads as 1.0
DIFF_ONE = 2047.0  # raw difference magnitude that reads as 1.0
ENTRIES = 256
UNSIGNED_STEPS = 256  # entries per unit of input, unsigned scheme
SIGNED_STEPS = 128  # entries per unit of input, signed scheme

_FIELDS = {fld.name: fld for fld in LUT_ENTRY}
LUT_ID = {name: lut_id for lut_id, name in LUT_IDS.items()}  # "D0" -> 0, "SP3" -> 11, "DA7" -> 23


@dataclass(frozen=True)
class DecodedLuts:
    """All 24 lighting LUTs as floats: ``value`` and ``diff`` (24, 256) float32 (row = LUT id)."""

    value: np.ndarray
    diff: np.ndarray


def decode_entries(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw LUT words (any shape) -> (value, signed difference), float32 of the same shape."""
    raw = np.asarray(raw, dtype=np.uint32)
    value = _FIELDS["value"].extract(raw).astype(np.float32) / np.float32(VALUE_ONE)
    magnitude = _FIELDS["diff_magnitude"].extract(raw).astype(np.float32) / np.float32(DIFF_ONE)
    negative = _FIELDS["diff_negative"].extract(raw).astype(bool)
    return value, np.where(negative, -magnitude, magnitude).astype(np.float32)


@lru_cache(maxsize=16)
def _decode_cached(blob: bytes) -> DecodedLuts:
    raw = np.frombuffer(blob, dtype=np.uint32).reshape(-1, ENTRIES)
    value, diff = decode_entries(raw)
    value.setflags(write=False)
    diff.setflags(write=False)
    return DecodedLuts(value, diff)


def decode_luts(raw: np.ndarray) -> DecodedLuts:
    """(24, 256) uint32 raw tables -> DecodedLuts (read-only arrays, shared between draws with equal tables)."""
    return _decode_cached(np.ascontiguousarray(raw, dtype=np.uint32).tobytes())


def encode_entries(values: np.ndarray) -> np.ndarray:
    """The inverse of ``decode_entries`` for a whole table: 256 floats in [0, 1] -> 256 raw words whose
    differences point at the next entry (the last entry's difference is 0). For tests and tools."""
    values = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)
    raw_value = np.round(values * VALUE_ONE).astype(np.int64)
    nxt = np.append(values[1:], values[-1])
    delta = np.round((nxt - values) * DIFF_ONE).astype(np.int64)
    magnitude = np.minimum(np.abs(delta), (1 << _FIELDS["diff_magnitude"].width) - 1)
    out = (
        (raw_value << _FIELDS["value"].lo)
        | (magnitude << _FIELDS["diff_magnitude"].lo)
        | ((delta < 0).astype(np.int64) << _FIELDS["diff_negative"].lo)
    )
    return out.astype(np.uint32)
