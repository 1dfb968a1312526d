"""Fog: blends the TEV output toward the fog color by a LUT indexed by fragment depth (registers 0x0E0, 0x0E1 and
the 128-entry fog LUT filled through 0x0E6/0x0E8-0x0EF).

Receives a ``FogState`` (decoded once per draw), colors (F, 4) uint8 and depths (F,) float32 in [0, 1] (after the
depth map). Returns (F, 4) uint8: ``x = (z_flip ? 1 - d : d) * 128``, ``i = clamp(floor(x), 0, 127)``,
``F = clamp(value[i] + delta[i] * (x - i), 0, 1)``, ``rgb = trunc(F * rgb + (1 - F) * fog_rgb)``; alpha unchanged.
A NaN depth counts as 0 (the reference does not say; it must not become an index).

LUT entry layout (stage table): bits 0-12 delta to the next entry, signed 13-bit two's complement / 2047; bits
13-23 value, unsigned 11 bits / 2047, so 0x7FF is exactly 1.0 (the tested reference's scale: citro3d's "no fog"
table, all 0x7FF, leaves colors untouched; citro3d encodes with x 2048 clamped to 0x7FF). Fog mode "gas" (7) and
undefined modes raise ``UnsupportedFeature``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu import numeric
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.regs.blocks.tev import FOG_MODES
from picaemu.state import FOG_LUT_ENTRIES, GpuState

LUT_DELTA_BITS, LUT_VALUE_SHIFT, LUT_VALUE_BITS = 13, 13, 11
LUT_ONE = 2047.0  # raw value (and delta) that reads as 1.0
MODE_NAMES = {code: name for code, name in FOG_MODES.items()}


@dataclass(frozen=True)
class FogState:
    """Fog mode, color, z flip and the decoded LUT (values, deltas: (128,) float32)."""

    mode: str
    color: tuple[int, int, int]
    z_flip: bool
    values: np.ndarray
    deltas: np.ndarray

    @classmethod
    def from_state(cls, state: GpuState) -> FogState:
        regs = state.regs
        code = access.raw(regs, "TEXENV_UPDATE_BUFFER", "fog_mode")
        if code not in MODE_NAMES:
            reg_id = id_of("TEXENV_UPDATE_BUFFER")
            raise UnsupportedFeature(f"undefined fog mode {code}", register=reg_id, value=int(regs[reg_id]))
        values, deltas = decode_lut(state.fog_lut)
        return cls(
            mode=MODE_NAMES[code],
            color=tuple(access.raw(regs, "FOG_COLOR", ch) for ch in "rgb"),
            z_flip=bool(access.raw(regs, "TEXENV_UPDATE_BUFFER", "fog_z_flip")),
            values=values,
            deltas=deltas,
        )


def decode_lut(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(128,) raw uint32 entries -> (values, deltas), each (128,) float32."""
    raw = raw.astype(np.int64)
    values = ((raw >> LUT_VALUE_SHIFT) & ((1 << LUT_VALUE_BITS) - 1)) / LUT_ONE
    delta = raw & ((1 << LUT_DELTA_BITS) - 1)
    delta = np.where(delta >= 1 << (LUT_DELTA_BITS - 1), delta - (1 << LUT_DELTA_BITS), delta) / LUT_ONE
    return values.astype(np.float32), delta.astype(np.float32)


def fog_factor(fstate: FogState, depth: np.ndarray) -> np.ndarray:
    """(F,) float32 fog factor in [0, 1] (1 = no fog)."""
    d = np.clip(numeric.finite(depth), 0.0, 1.0)  # a NaN depth (NaN depth-map scale) reads entry 0
    x = ((1.0 - d) if fstate.z_flip else d) * np.float32(FOG_LUT_ENTRIES)
    i = np.clip(np.floor(x), 0, FOG_LUT_ENTRIES - 1).astype(np.intp)
    return np.clip(fstate.values[i] + fstate.deltas[i] * (x - i), 0.0, 1.0)


def apply_fog(fstate: FogState, color: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Fogged colors (F, 4) uint8; the input is returned unchanged when fog is disabled."""
    if fstate.mode == "disabled":
        return color
    if fstate.mode != "fog":
        reg_id = id_of("TEXENV_UPDATE_BUFFER")
        raise UnsupportedFeature(fstate.mode, register=reg_id)
    f = fog_factor(fstate, depth)[:, None]
    fog_rgb = np.array(fstate.color, np.float32)
    out = color.copy()
    out[:, :3] = (f * color[:, :3] + (1.0 - f) * fog_rgb).astype(np.uint8)
    return out
