"""Gas (volumetric fog) rendering: its registers and LUT decoded, and the switch that detects gas use.

The PICA renders gas in two passes (pica-pipeline.md §14.2): an accumulation pass (COLOR_OPERATION
``fragment_mode`` = "gas accumulation") sums density into the color buffer using GAS_DELTAZ_DEPTH (0x126),
GAS_ATTENUATION (0x0E4) and GAS_ACCMAX (0x0E5); a shading pass (TEXENV_UPDATE_BUFFER ``fog_mode`` = "gas")
colors it with GAS_LIGHT_XY/Z/Z_COLOR (0x120-0x122) and the 16-entry gas LUT. The reference gives the registers
and the LUT layout but not the arithmetic of either pass (no public emulator implements it), so picaemu does not
render gas: ``check_gas(state)`` raises ``GasUnsupported`` naming the register that selects it, once per draw.

What is available for inspection and for a future implementation:

- ``GasState.from_state(state)``: every gas register field (floats for the float16 / fixed fields, ints for the
  8-bit intensities, enum names), plus ``lut`` (``GasLut``).
- ``GasLut``: ``colors`` (8,3) uint8 r g b (entries 8-15); the differences (entries 0-7, (8,3)) under both
  encodings the sources name — ``diff_sign_magnitude`` (citro3d: bit 7 sign, bits 0-6 magnitude) and
  ``diff_twos_complement`` (3dbrew: "signed") — which agree wherever ``sign_ambiguous`` (8,3) bool is False.
- ``gas_usage(regs) -> GasUsage(accumulation, shading)``: which gas pass a draw's registers select.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu import numeric
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.regs.blocks.gas import (
    GAS_LUT_COLOR_ENTRIES,
    GAS_LUT_DIFF_ENTRIES,
    GAS_LUT_DIFF_SIGN_BIT,
    GAS_LUT_ENTRY,
)
from picaemu.state import GpuState

FRAGMENT_MODE_GAS = "gas accumulation"  # COLOR_OPERATION.fragment_mode enum name
FOG_MODE_GAS = "gas"  # TEXENV_UPDATE_BUFFER.fog_mode enum name


class GasUnsupported(UnsupportedFeature):
    """A draw uses gas rendering, whose arithmetic the reference does not specify."""


@dataclass(frozen=True)
class GasLut:
    """The 16-entry gas LUT split into colors and differences (see the module docstring)."""

    colors: np.ndarray
    diff_sign_magnitude: np.ndarray
    diff_twos_complement: np.ndarray
    sign_ambiguous: np.ndarray


@dataclass(frozen=True)
class Intensity:
    """A GAS_LIGHT_XY / GAS_LIGHT_Z triple: minimum, maximum intensity and density attenuation (0-255)."""

    min: int
    max: int
    attenuation: int


@dataclass(frozen=True)
class GasState:
    """Decoded gas registers of one draw."""

    attenuation: float  # 0x0E4
    accmax: float  # 0x0E5
    planar: Intensity  # 0x120
    view: Intensity  # 0x121
    line_of_sight_effect: int  # 0x122 bits 0-7
    lut_input: str  # "density" / "light factor"
    delta_z: float  # 0x126, fixed 0.16.8
    depth_func: str
    density_source: str  # TEXENV_UPDATE_BUFFER.gas_density_source
    lut: GasLut

    @classmethod
    def from_state(cls, state: GpuState) -> GasState:
        regs = state.regs

        def intensity(reg: str) -> Intensity:
            return Intensity(*(int(access.raw(regs, reg, k)) for k in ("min", "max", "attenuation")))

        return cls(
            attenuation=float(access.value(regs, "GAS_ATTENUATION", "attenuation")),
            accmax=float(access.value(regs, "GAS_ACCMAX", "accmax")),
            planar=intensity("GAS_LIGHT_XY"),
            view=intensity("GAS_LIGHT_Z"),
            line_of_sight_effect=int(access.raw(regs, "GAS_LIGHT_Z_COLOR", "effect")),
            lut_input=str(access.value(regs, "GAS_LIGHT_Z_COLOR", "lut_input")),
            delta_z=float(access.value(regs, "GAS_DELTAZ_DEPTH", "delta_z")),
            depth_func=str(access.value(regs, "GAS_DELTAZ_DEPTH", "depth_func")),
            density_source=str(access.value(regs, "TEXENV_UPDATE_BUFFER", "gas_density_source")),
            lut=decode_gas_lut(state.gas_lut),
        )


def decode_gas_lut(raw: np.ndarray) -> GasLut:
    """(16,) uint32 raw gas LUT -> ``GasLut``."""
    raw = np.asarray(raw, np.uint32)
    chans = lambda rows: np.stack([fld.extract(raw[rows]) for fld in GAS_LUT_ENTRY], axis=1).astype(np.int64)  # noqa: E731
    colors = chans(list(GAS_LUT_COLOR_ENTRIES)).astype(np.uint8)
    diff = chans(list(GAS_LUT_DIFF_ENTRIES))
    width = GAS_LUT_ENTRY[0].width
    negative = ((diff >> GAS_LUT_DIFF_SIGN_BIT) & 1).astype(bool)
    magnitude = diff & ((1 << GAS_LUT_DIFF_SIGN_BIT) - 1)
    return GasLut(
        colors=colors,
        diff_sign_magnitude=np.where(negative, -magnitude, magnitude).astype(np.int16),
        diff_twos_complement=np.asarray(numeric.signed(diff, width), np.int16),
        sign_ambiguous=negative,
    )


@dataclass(frozen=True)
class GasUsage:
    """Which gas pass a draw selects."""

    accumulation: bool  # COLOR_OPERATION fragment mode "gas accumulation"
    shading: bool  # TEXENV_UPDATE_BUFFER fog mode "gas"

    @property
    def any(self) -> bool:
        return self.accumulation or self.shading


def gas_usage(regs: np.ndarray) -> GasUsage:
    return GasUsage(
        accumulation=access.value(regs, "COLOR_OPERATION", "fragment_mode") == FRAGMENT_MODE_GAS,
        shading=access.value(regs, "TEXENV_UPDATE_BUFFER", "fog_mode") == FOG_MODE_GAS,
    )


def check_gas(state: GpuState) -> None:
    """Raise ``GasUnsupported`` (naming 0x100 or 0x0E0 and its value) when the draw uses a gas pass."""
    usage = gas_usage(state.regs)
    for used, reg, what in (
        (usage.accumulation, "COLOR_OPERATION", "gas density accumulation"),
        (usage.shading, "TEXENV_UPDATE_BUFFER", "gas shading (fog mode gas)"),
    ):
        if used:
            raise GasUnsupported(
                f"{what}: its arithmetic is not publicly known", register=id_of(reg), value=access.word(state.regs, reg)
            )


__all__ = ["GasLut", "GasState", "GasUnsupported", "GasUsage", "check_gas", "decode_gas_lut", "gas_usage"]
