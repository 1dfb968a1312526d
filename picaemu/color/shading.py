"""The fragment color path the pipeline calls: texture units, fragment lighting hand-off, TEV, fog, then the
color half of the per-fragment operations.

Contract with ``picaemu.pipeline``:

- ``ShadingState.from_state(state: GpuState) -> ShadingState``: frozen, decoded once per draw (texture units,
  TEV, fog, alpha test/blend/logic op, lighting and procedural texture states when the TEV reads them).
- ``shade(sstate, frags: Fragments, memory) -> (F, 4) uint8`` RGBA after TEV and fog. Only the inputs TEV reads
  are computed: texture units 0-2 (``texture.sampler``; unit 2 reads texcoord2 or texcoord1 per 0x080), fragment
  lighting (``picaemu.color.lighting.compute_lighting``, given every enabled unit's texels for its bump/shadow inputs),
  the procedural texture (``picaemu.texture.proctex.sample_proctex`` on the texcoord set 0x080 selects, at the LOD
  ``proctex.proctex_lod`` computes from the coordinates' screen-space derivatives when the unit mip-filters). A
  ``counters`` dict, when given, receives ``texels_fetched`` from the texture units. A disabled
  lighting block or unit 3 reads (0, 0, 0, 0). Fog mode "gas" raises ``UnsupportedFeature("gas", register=0x0E0)``.
- ``alpha_test(sstate, color (F, 4) uint8) -> (F,) bool``; blending and the logic op are fragment operations
  (``picaemu.fragment.ops``, from the draw state's ``blend_program``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from picaemu import numba_link
from picaemu.color import fog as fog_mod
from picaemu.color import lighting as lighting_mod
from picaemu.color import tev
from picaemu.color.fog import FogState
from picaemu.color.tev import TevState
from picaemu.fragment import blend as blend_mod
from picaemu.fragment.blend import BlendState
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.raster.fragments import Fragments
from picaemu.regs import access
from picaemu.state import GpuState
from picaemu.texture import lod as lod_mod
from picaemu.texture import proctex as proctex_mod
from picaemu.texture import sampler
from picaemu.texture.state import TextureUnitState, TexturingState

SRC_LIGHTING = frozenset({tev.SRC_LIGHT_PRIMARY, tev.SRC_LIGHT_SECONDARY})
SRC_PROCTEX = tev.SRC_TEXTURES[3]


@dataclass(frozen=True)
class ShadingState:
    """Everything the color path needs for one draw."""

    texturing: TexturingState
    tev: TevState
    fog: FogState
    blend: BlendState
    lighting_enabled: bool
    lighting: lighting_mod.LightingState | None  # when lighting is on and the TEV reads it
    proctex_enabled: bool
    proctex_coords: str
    proctex: proctex_mod.ProctexState | None  # when unit 3 is on and the TEV reads it

    @classmethod
    def from_state(cls, state: GpuState) -> ShadingState:
        regs = state.regs
        tstate = TevState.from_regs(regs)
        return cls.compose(
            state,
            TexturingState.from_regs(regs),
            tstate,
            FogState.from_state(state),
            BlendState.from_regs(regs),
            lighting_state(state, tstate),
            proctex_state(state, tstate),
        )

    @classmethod
    def compose(
        cls,
        state: GpuState,
        texturing: TexturingState,
        tstate: TevState,
        fog: FogState,
        blend: BlendState,
        lighting: lighting_mod.LightingState | None,
        proctex: proctex_mod.ProctexState | None,
    ) -> ShadingState:
        """The shading state from its decoded parts (``picaemu.draw_state`` reuses the parts no write touched);
        reads only the lighting and procedural-texture enables (0x08F, 0x080)."""
        regs = state.regs
        return cls(
            texturing=texturing,
            tev=tstate,
            fog=fog,
            blend=blend,
            lighting_enabled=bool(access.raw(regs, "LIGHTING_ENABLE0", "enable")),
            lighting=lighting,
            proctex_enabled=bool(access.raw(regs, "TEXUNIT_CONFIG", "unit3_enable")),
            proctex_coords=str(access.value(regs, "TEXUNIT_CONFIG", "unit3_coords")),
            proctex=proctex,
        )


def lighting_state(state: GpuState, tstate: TevState) -> lighting_mod.LightingState | None:
    """The lighting state when lighting is on and the TEV reads it, else None."""
    if not access.raw(state.regs, "LIGHTING_ENABLE0", "enable") or not tstate.sources_used() & SRC_LIGHTING:
        return None
    return lighting_mod.LightingState.from_state(state)


def proctex_state(state: GpuState, tstate: TevState) -> proctex_mod.ProctexState | None:
    """The procedural texture state when unit 3 is on and the TEV reads it, else None."""
    if not access.raw(state.regs, "TEXUNIT_CONFIG", "unit3_enable") or SRC_PROCTEX not in tstate.sources_used():
        return None
    return proctex_mod.ProctexState.from_state(state)


def unit_uv(frags: Fragments, coords: str) -> np.ndarray:
    """(F, 2) float32 texcoord set named "texcoord0/1/2"."""
    return getattr(frags, coords)


def sample_unit(
    ustate: TextureUnitState,
    frags: Fragments,
    memory: PhysicalMemory,
    counters: dict | None = None,
    observer: StageObserver | None = None,
) -> np.ndarray:
    """(F, 4) uint8 color of one texture unit, with the per-fragment LOD when the unit's filtering needs it;
    reported to ``observer.on_texture`` when one is given."""
    uv = unit_uv(frags, ustate.coords)
    needs_lod = ustate.enabled and ustate.needs_lod
    if observer is None and not needs_lod:
        return sampler.sample(ustate, uv, frags.texcoord0_w, memory, None, counters)
    _, st, _ = sampler.unit_coords(ustate, uv, frags.texcoord0_w)
    lod = None
    if needs_lod:
        texel = st * np.array([ustate.width, ustate.height], np.float32)
        lod = lod_mod.compute_lod(frags.x, frags.y, frags.primitive, texel, ustate.lod_bias)
    color = sampler.sample(ustate, uv, frags.texcoord0_w, memory, lod, counters)
    if observer is not None:
        observer.on_texture(ustate.unit, st, lod, color)
    return color


def _lighting(sstate: ShadingState, frags: Fragments, textures: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    n = len(frags)
    if not sstate.lighting_enabled:
        zero = np.zeros((n, 4), np.uint8)
        return {tev.SRC_LIGHT_PRIMARY: zero, tev.SRC_LIGHT_SECONDARY: zero}
    if sstate.lighting is None:  # enabled, but the TEV reads no lighting source: nothing to compute
        zero = np.zeros((n, 4), np.uint8)
        return {tev.SRC_LIGHT_PRIMARY: zero, tev.SRC_LIGHT_SECONDARY: zero}
    primary, secondary = lighting_mod.compute_lighting(sstate.lighting, frags, textures)
    return {tev.SRC_LIGHT_PRIMARY: primary, tev.SRC_LIGHT_SECONDARY: secondary}


def _proctex(sstate: ShadingState, frags: Fragments) -> np.ndarray:
    if not sstate.proctex_enabled:
        return np.zeros((len(frags), 4), np.uint8)
    if sstate.proctex is None:  # enabled, but the TEV reads no unit 3: nothing to compute
        return np.zeros((len(frags), 4), np.uint8)
    uv = unit_uv(frags, sstate.proctex_coords)
    lod = None
    if sstate.proctex.mip is not None:  # a mip filter: the LOD from the coordinates' derivatives
        duv_dx, duv_dy = lod_mod.derivatives(frags.x, frags.y, frags.primitive, np.asarray(uv, np.float32))
        lod = proctex_mod.proctex_lod(sstate.proctex, duv_dx, duv_dy)
    return proctex_mod.sample_proctex(sstate.proctex, uv, lod)


ROUND_MAGIC = np.float32(2.0**23)  # x + 2**23 - 2**23 in float32 = rint(x) (ties to even) for 0 <= x < 2**23


@numba_link.compiled_only()
def _round_one(v):  # pragma: no cover - compiled
    """rint(clamp(v, 0, 1) * 255) in float32 (= clamp(rint(v * 255), 0, 255)), NaN -> 0, as uint8; the rounding is
    two float32 additions (no libm call), so that loops over it vectorize."""
    v = v if v > 0 else np.float32(0.0)  # NaN and negatives
    v = v if v < 1 else np.float32(1.0)
    return np.uint8((v * np.float32(255.0) + ROUND_MAGIC) - ROUND_MAGIC)


@numba.njit(cache=True)
def _round_flat(color, out):  # pragma: no cover - compiled
    """``_round_one`` of every value of a contiguous color array (flattened)."""
    for i in range(color.shape[0]):
        out[i] = _round_one(color[i])


@numba.njit(cache=True)
def _round_color(color, out):  # pragma: no cover - compiled
    """``_round_one`` of every value of a strided color array (a view of the interpolated varyings)."""
    for i in range(color.shape[0]):
        for ch in range(color.shape[1]):
            out[i, ch] = _round_one(color[i, ch])


def primary_color(frags: Fragments) -> np.ndarray:
    """(F, 4) uint8: the interpolated vertex color rounded to 8 bits, ``clip(rint(color * 255), 0, 255)``."""
    color = np.asarray(frags.color, np.float32)
    if not color.flags.writeable:  # a broadcast view (color column not mapped)
        color = color.copy()
    out = np.empty(color.shape, np.uint8)
    if color.flags.c_contiguous:
        _round_flat(color.reshape(-1), out.reshape(-1))
    else:
        _round_color(color, out)
    return out


def shade(
    sstate: ShadingState,
    frags: Fragments,
    memory: PhysicalMemory,
    counters: dict | None = None,
    observer: StageObserver | None = None,
) -> np.ndarray:
    """(F, 4) uint8 RGBA of every fragment after the six TEV stages and fog (``counters``: module docstring); an
    ``observer`` receives the fragment hooks of ``picaemu.observer.StageObserver`` (none are made without one)."""
    n = len(frags)
    if observer is not None:
        observer.on_shade_begin(frags)
    used = sstate.tev.sources_used()
    lighting_needed = bool(used & SRC_LIGHTING) and sstate.lighting_enabled
    inputs: dict[int, np.ndarray] = {}
    textures: dict[int, np.ndarray] = {}
    for ustate in sstate.texturing.units:
        code = tev.SRC_TEXTURES[ustate.unit]
        if code in used or (lighting_needed and ustate.enabled):
            textures[ustate.unit] = inputs[code] = sample_unit(ustate, frags, memory, counters, observer)
    if tev.SRC_PRIMARY in used:
        inputs[tev.SRC_PRIMARY] = primary_color(frags)
    if used & SRC_LIGHTING:
        inputs.update(_lighting(sstate, frags, textures))
        if observer is not None:
            observer.on_lighting(inputs[tev.SRC_LIGHT_PRIMARY], inputs[tev.SRC_LIGHT_SECONDARY])
    if SRC_PROCTEX in used:
        inputs[SRC_PROCTEX] = _proctex(sstate, frags)
    color = fog_mod.apply_fog(sstate.fog, tev.combine(sstate.tev, inputs, n, observer), frags.depth)
    if observer is not None:
        fogged = sstate.fog.mode == "fog"
        observer.on_fog(fog_mod.fog_factor(sstate.fog, frags.depth) if fogged else None, color)
    return color


def alpha_test(sstate: ShadingState, color: np.ndarray) -> np.ndarray:
    """(F,) bool pass mask of the alpha test (0x104)."""
    return blend_mod.alpha_test(sstate.blend, color)
