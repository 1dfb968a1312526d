"""The GPU's internal state as the command processor builds it: the register file plus the structured memories
that data-port registers fill (shader code, operand descriptors, float uniforms, LUTs, fixed attributes).

Shapes and dtypes (all numpy, owned here, mutated only by ``picaemu.command.processor``):

- ``regs``: (0x300,) uint32 — the last value written to every internal register id (masked writes merged)
- ``ShaderUnitMemory.code``: (4096,) uint32 instruction words (VS uses the first 512)
- ``ShaderUnitMemory.opdescs``: (128,) uint32 operand descriptors
- ``ShaderUnitMemory.float_uniforms``: (96, 4) float32, c0-c95, x y z w (float24 uploads decoded exactly)
- ``lighting_luts``: (24, 256) uint32 raw entries (ids 0-7 common, 8-15 SP0-7, 16-23 DA0-7)
- ``fog_lut``: (128,) uint32 raw; ``proctex_luts``: (6, 256) uint32 raw (noise, -, RGB map, alpha map, color,
  color difference); ``gas_lut``: (16,) uint32 raw
- ``fixed_attribs``: (16, 4) float32 default attribute values (0-11 used)

Int and bool uniforms, entry points, permutations and masks are ordinary registers (read them through
``picaemu.regs.access``). ``copy()`` gives an independent snapshot; ``share_unchanged(state, prev)`` a read-only one
that reuses ``prev``'s arrays where they are equal (per-draw records and checkpoints: a copy costs the register file
plus what changed, not ~70 KiB).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from picaemu.regs import NUM_REGS

VS_CODE_WORDS = 512
GS_CODE_WORDS = 4096
NUM_OPDESCS = 128
NUM_FLOAT_UNIFORMS = 96
NUM_LIGHTING_LUTS = 24
LUT_ENTRIES = 256
FOG_LUT_ENTRIES = 128
NUM_PROCTEX_LUTS = 6
GAS_LUT_ENTRIES = 16
NUM_FIXED_ATTRIBS = 16


@dataclass
class ShaderUnitMemory:
    """The memories of one shader unit (vertex or geometry) that upload ports fill."""

    code: np.ndarray = field(default_factory=lambda: np.zeros(GS_CODE_WORDS, np.uint32))
    opdescs: np.ndarray = field(default_factory=lambda: np.zeros(NUM_OPDESCS, np.uint32))
    float_uniforms: np.ndarray = field(default_factory=lambda: np.zeros((NUM_FLOAT_UNIFORMS, 4), np.float32))

    def copy(self) -> ShaderUnitMemory:
        return ShaderUnitMemory(self.code.copy(), self.opdescs.copy(), self.float_uniforms.copy())


@dataclass
class GpuState:
    """Registers plus structured memories: everything a draw reads besides emulated memory."""

    regs: np.ndarray = field(default_factory=lambda: np.zeros(NUM_REGS, np.uint32))
    vs: ShaderUnitMemory = field(default_factory=ShaderUnitMemory)
    gs: ShaderUnitMemory = field(default_factory=ShaderUnitMemory)
    lighting_luts: np.ndarray = field(default_factory=lambda: np.zeros((NUM_LIGHTING_LUTS, LUT_ENTRIES), np.uint32))
    fog_lut: np.ndarray = field(default_factory=lambda: np.zeros(FOG_LUT_ENTRIES, np.uint32))
    proctex_luts: np.ndarray = field(default_factory=lambda: np.zeros((NUM_PROCTEX_LUTS, LUT_ENTRIES), np.uint32))
    gas_lut: np.ndarray = field(default_factory=lambda: np.zeros(GAS_LUT_ENTRIES, np.uint32))
    fixed_attribs: np.ndarray = field(default_factory=lambda: np.zeros((NUM_FIXED_ATTRIBS, 4), np.float32))

    def copy(self) -> GpuState:
        return GpuState(
            self.regs.copy(),
            self.vs.copy(),
            self.gs.copy(),
            self.lighting_luts.copy(),
            self.fog_lut.copy(),
            self.proctex_luts.copy(),
            self.gas_lut.copy(),
            self.fixed_attribs.copy(),
        )


def frozen_copy(a: np.ndarray, prev: np.ndarray | None) -> np.ndarray:
    """``prev`` (a read-only array) when ``a`` equals it, else a read-only copy of ``a``. Compared as bytes: the
    debugger's index calls this for every array of every draw's state, and ``np.array_equal`` costs ~5 us a call
    beside ~0.5 us for a 3 KiB register file's bytes (equal bytes of equal-shaped arrays of one dtype: equal
    values, as the index needs; a NaN equals itself here, as it should for "unchanged")."""
    if prev is not None and a.shape == prev.shape and a.dtype == prev.dtype and a.tobytes() == prev.tobytes():
        return prev
    out = a.copy()
    out.flags.writeable = False
    return out


def _unit(mem: ShaderUnitMemory, prev: ShaderUnitMemory | None) -> ShaderUnitMemory:
    return ShaderUnitMemory(
        *(
            frozen_copy(getattr(mem, n), getattr(prev, n) if prev else None)
            for n in ("code", "opdescs", "float_uniforms")
        )
    )


def share_unchanged(state: GpuState, prev: GpuState | None) -> GpuState:
    """A read-only copy of ``state`` that reuses ``prev``'s arrays (a read-only copy too) where they are equal."""
    arrays = {
        n: frozen_copy(getattr(state, n), getattr(prev, n) if prev else None)
        for n in ("regs", "lighting_luts", "fog_lut", "proctex_luts", "gas_lut", "fixed_attribs")
    }
    return GpuState(
        vs=_unit(state.vs, prev.vs if prev else None), gs=_unit(state.gs, prev.gs if prev else None), **arrays
    )
