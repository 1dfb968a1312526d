"""Fog: blends the TEV output toward the fog color by a LUT indexed by fragment depth (registers 0x0E0, 0x0E1 and
the 128-entry fog LUT filled through 0x0E6/0x0E8-0x0EF).

Receives a ``FogState`` (decoded once per draw), colors (F, 4) uint8 and depths (F,) float32 in [0, 1] (after the
depth map). Returns (F, 4) uint8: ``x = (z_flip ? 1 - d : d) * 128``, ``i = clamp(floor(x), 0, 127)``,
``F = clamp(value[i] + delta[i] * (x - i), 0, 1)``, ``rgb = trunc(F * rgb + (1 - F) * fog_rgb)``; alpha unchanged.
A NaN depth counts as 0 (the reference does not say; it must not become an index); ``x`` is float32, the step
``delta[i] * (x - i)`` and the blend float64. The rule is compiled (``factor``, ``fog_colors``): the staged path
calls it through ``apply_fog`` / ``fog_factor``, the fused fragment kernel (``picaemu.fused.fragment_kernel``)
directly with ``FogState.lut`` and ``FogState.rgb``.

LUT entry layout (stage table): bits 0-12 delta to the next entry, signed 13-bit two's complement / 2047; bits
13-23 value, unsigned 11 bits / 2047, so 0x7FF is exactly 1.0 (the tested reference's scale: citro3d's "no fog"
table, all 0x7FF, leaves colors untouched; citro3d encodes with x 2048 clamped to 0x7FF). Fog mode "gas" (7) and
undefined modes raise ``UnsupportedFeature``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numba
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
            color=access.rgb(regs, "FOG_COLOR"),
            z_flip=bool(access.raw(regs, "TEXENV_UPDATE_BUFFER", "fog_z_flip")),
            values=values,
            deltas=deltas,
        )

    @cached_property
    def lut(self) -> np.ndarray:
        """(2, 128) float32: the values, then the deltas (what the compiled rule reads)."""
        return np.stack([self.values, self.deltas]).astype(np.float32)

    @cached_property
    def rgb(self) -> np.ndarray:
        """(3,) float32 fog color."""
        return np.array(self.color, np.float32)


def decode_lut(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(128,) raw uint32 entries -> (values, deltas), each (128,) float32."""
    raw = raw.astype(np.int64)
    values = ((raw >> LUT_VALUE_SHIFT) & ((1 << LUT_VALUE_BITS) - 1)) / LUT_ONE
    deltas = numeric.signed(raw, LUT_DELTA_BITS) / LUT_ONE  # the low LUT_DELTA_BITS bits, two's complement
    return values.astype(np.float32), deltas.astype(np.float32)


@numba.njit(cache=True)
def factor(lut, z_flip, depth):  # pragma: no cover - compiled
    """The fog factor (float64, in [0, 1]; 1 = no fog) of one fragment depth (float32); ``lut`` (2, 128) float32
    (``FogState.lut``)."""
    d = np.float32(0.0) if depth != depth else np.minimum(np.maximum(depth, np.float32(0.0)), np.float32(1.0))
    x = ((np.float32(1.0) - d) if z_flip else d) * np.float32(FOG_LUT_ENTRIES)
    i = np.int64(np.minimum(np.maximum(np.floor(x), np.float32(0.0)), np.float32(FOG_LUT_ENTRIES - 1)))
    f = lut[0, i] + lut[1, i] * (np.float64(x) - i)  # the step from entry i in float64
    return np.minimum(np.maximum(f, 0.0), 1.0)


@numba.njit(cache=True)
def fog_colors(lut, fog_rgb, z_flip, depth, color):  # pragma: no cover - compiled
    """Fog every fragment's ``color`` (F, 4) uint8 in place (RGB only) by its ``depth`` (F,) float32 toward
    ``fog_rgb`` (3,) float32: ``trunc(F * rgb + (1 - F) * fog_rgb)`` in float64."""
    for i in range(depth.shape[0]):
        f = factor(lut, z_flip, depth[i])
        for ch in range(3):
            color[i, ch] = np.uint8(np.int64(f * color[i, ch] + (1.0 - f) * fog_rgb[ch]))


@numba.njit(cache=True)
def _factors(lut, z_flip, depth, out):  # pragma: no cover - compiled
    for i in range(depth.shape[0]):
        out[i] = factor(lut, z_flip, depth[i])


def fog_factor(fstate: FogState, depth: np.ndarray) -> np.ndarray:
    """(F,) float64 fog factor in [0, 1] (1 = no fog)."""
    out = np.empty(len(depth), np.float64)
    _factors(fstate.lut, fstate.z_flip, np.ascontiguousarray(depth, np.float32), out)
    return out


def apply_fog(fstate: FogState, color: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Fogged colors (F, 4) uint8; the input is returned unchanged when fog is disabled."""
    if fstate.mode == "disabled":
        return color
    if fstate.mode != "fog":
        reg_id = id_of("TEXENV_UPDATE_BUFFER")
        raise UnsupportedFeature(fstate.mode, register=reg_id)
    out = np.ascontiguousarray(color).copy()
    fog_colors(fstate.lut, fstate.rgb, fstate.z_flip, np.ascontiguousarray(depth, np.float32), out)
    return out
