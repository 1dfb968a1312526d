"""Fragment lighting: the fragment primary (diffuse) and secondary (specular) colors that TEV sources 1 and 2 read.

Owns the decoding of the lighting registers (0x08F, 0x140-0x1D9, through ``picaemu.regs.access``) into a frozen
per-draw ``LightingState``, and packs it for the compiled per-fragment loop in ``picaemu.color.lighting_kernel``.

``LightingState.from_state(state: GpuState)`` — decode once per draw (LUTs through ``picaemu.color.lighting_luts``).
Lighting is on when LIGHTING_ENABLE0 is set and LIGHTING_ENABLE1 is clear (citro3d always writes both).
``compute_lighting(lstate, frags, textures) -> (primary, secondary)``:

- ``frags``: ``picaemu.raster.fragments.Fragments``; reads ``quat`` (F,4) f32 (x y z w, normalized here) and ``view``
  (F,3) f32 (from the fragment toward the eye, eye space).
- ``textures``: {unit: (F,4) uint8 RGBA} sampled colors of texture units 0-2; only the bump-map unit and the
  shadow unit of CONFIG0 are read, and only when their feature is on (missing -> ``PipelineError``).
- returns two (F,4) uint8 RGBA arrays, ``trunc(clamp(x, 0, 1) * 255 + 1/1024)``. Lighting off: both all zero.

Equation (pica-pipeline.md §12): per active slot s (light n = PERMUTATION slot s), with L the unit vector toward
the light (``pos`` if directional else ``pos + view`` with the view vector as interpolated, not normalised: the
length of ``pos + view`` is the distance that drives distance attenuation), V the unit view vector, H = V + L:
``diffuse += (diffuse_n * LNc * shadow_p + ambient_n) * DA * SP`` and
``specular += (D0 * spec0_n * G0 + D1 * R * spec1_n * G1) * clampHL * DA * SP * shadow_s``; the Fresnel LUT of the
last slot replaces the selected alpha(s); global ambient is added to the diffuse rgb. Each LUT input (N.H, V.H,
N.V, L.N, -L.P, cos phi) is chosen by 0x1D1, read unsigned (``|x|`` for two-sided lights, else ``max(x, 0)``) or
signed by 0x1D0 (the table index is clamped, the input is not: past the table's end the value extrapolates,
``lighting_luts``), scaled by 0x1D2 (the spot direction P is each stored 13-bit signed field / 2047, so 0x7FF reads
1.0); a LUT that is disabled (0x1C4) or absent from the LUT configuration reads 1.0 (RG/RB read RR instead). Zero-length
vectors normalize to zero (no NaN reaches the output).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from picaemu import numeric
from picaemu.color import lighting_kernel as K
from picaemu.color import lighting_luts as luts_mod
from picaemu.color.lighting_luts import LUT_ID, DecodedLuts
from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.regs.blocks.lighting import INPUT_SLOTS, NUM_LIGHTS
from picaemu.state import GpuState

COLOR_ONE = 255.0  # light color fields: 255 = 1.0
SPOT_ONE = 2047.0  # spot direction fields (13-bit two's complement): 0x7FF = 1.0, as the tested reference scales
U8_MAX = 255

# LUTs each light-environment configuration (CONFIG0.config enum name) makes available; DA always is.
_ALL = frozenset(INPUT_SLOTS)
AVAILABLE_LUTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "config0 (D0 RR SP DA)": frozenset({"d0", "rr", "sp"}),
        "config1 (FR RR SP DA)": frozenset({"fr", "rr", "sp"}),
        "config2 (D0 D1 RR DA)": frozenset({"d0", "d1", "rr"}),
        "config3 (D0 D1 FR DA)": frozenset({"d0", "d1", "fr"}),
        "config4 (all but FR)": _ALL - {"fr"},
        "config5 (all but D1)": _ALL - {"d1"},
        "config6 (all but RB RG)": _ALL - {"rb", "rg"},
        "config7 (all)": _ALL,
    }
)
CP_CONFIGS = frozenset({"config7 (all)"})  # the cos-phi input reads 0 in every other configuration
SCALES = MappingProxyType({"x1": 1.0, "x2": 2.0, "x4": 4.0, "x8": 8.0, "x0.25": 0.25, "x0.5": 0.5})
FRESNEL_TARGETS = MappingProxyType(
    {
        "none": (False, False),
        "primary alpha": (True, False),
        "secondary alpha": (False, True),
        "both alphas": (True, True),
    }
)
GLOBAL_DISABLE = MappingProxyType(
    {
        "d0": "d0_disable",
        "d1": "d1_disable",
        "fr": "fr_disable",
        "rb": "rb_disable",
        "rg": "rg_disable",
        "rr": "rr_disable",
    }
)
COMMON_LUT = MappingProxyType({"d0": "D0", "d1": "D1", "fr": "FR", "rb": "RB", "rg": "RG", "rr": "RR"})

_CONFIG0 = "LIGHTING_CONFIG0"
_CONFIG1 = "LIGHTING_CONFIG1"


@dataclass(frozen=True)
class LutInput:
    """How one LUT slot (d0 d1 sp fr rb rg rr) is read: ``active`` = enabled and available in the config."""

    active: bool
    selector: str  # "N.H", "V.H", "N.V", "L.N", "-L.P", "cos phi"
    signed: bool  # 0x1D0 bit set: signed input, no abs
    scale: float


@dataclass(frozen=True)
class LightState:
    """One light as the draw uses it; colors are (3,) float32 r g b where 1.0 = 255."""

    index: int
    specular0: np.ndarray
    specular1: np.ndarray
    diffuse: np.ndarray
    ambient: np.ndarray
    position: np.ndarray  # (3,) f32 position (positional) or direction toward the light (directional)
    directional: bool
    two_sided: bool
    geometric0: bool
    geometric1: bool
    spot_direction: np.ndarray  # (3,) f32 as stored: the negated spot direction
    spot_enabled: bool
    dist_atten_enabled: bool
    dist_bias: float
    dist_scale: float
    shadowed: bool


@dataclass(frozen=True)
class ShadowConfig:
    """The shadow term: texture ``unit``, where it applies (primary, secondary, alpha), inverted or not."""

    unit: int
    primary: bool
    secondary: bool
    invert: bool
    alpha: bool


@dataclass(frozen=True)
class LightingState:
    """Everything lighting needs for one draw; ``enabled`` False means outputs are all zero."""

    enabled: bool
    lights: tuple[LightState, ...] = ()
    ambient: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    inputs: Mapping[str, LutInput] = field(default_factory=lambda: MappingProxyType({}))
    luts: DecodedLuts | None = None
    fresnel_primary: bool = False
    fresnel_secondary: bool = False
    cp_available: bool = False
    clamp_highlights: bool = False
    shadow: ShadowConfig | None = None
    bump_mode: str = "none"
    bump_unit: int = 0
    bump_renormalize: bool = False

    @classmethod
    def from_state(cls, state: GpuState) -> LightingState:
        return cls.from_regs(state.regs, state.lighting_luts)

    @classmethod
    def from_regs(cls, regs: np.ndarray, raw_luts: np.ndarray) -> LightingState:
        if not access.value(regs, "LIGHTING_ENABLE0", "enable") or access.value(regs, "LIGHTING_ENABLE1", "disable"):
            return cls(enabled=False)
        config = str(access.value(regs, _CONFIG0, "config"))
        if config not in AVAILABLE_LUTS:
            raise UnsupportedFeature(
                f"lighting LUT configuration {config}", register=id_of(_CONFIG0), value=access.word(regs, _CONFIG0)
            )
        inputs = MappingProxyType({name: _lut_input(regs, name, AVAILABLE_LUTS[config]) for name in INPUT_SLOTS})
        count = int(access.raw(regs, "LIGHTING_NUM_LIGHTS", "count_minus_1")) + 1
        lights = tuple(
            _light(regs, int(access.raw(regs, "LIGHTING_LIGHT_PERMUTATION", f"slot{s}"))) for s in range(count)
        )
        fresnel = FRESNEL_TARGETS[str(access.value(regs, _CONFIG0, "fresnel"))]
        bump_mode = str(access.value(regs, _CONFIG0, "bump_mode"))
        return cls(
            enabled=True,
            lights=lights,
            ambient=_color(regs, "LIGHTING_AMBIENT"),
            inputs=inputs,
            luts=luts_mod.decode_luts(raw_luts),
            fresnel_primary=fresnel[0],
            fresnel_secondary=fresnel[1],
            cp_available=config in CP_CONFIGS,
            clamp_highlights=bool(access.value(regs, _CONFIG0, "clamp_highlights")),
            shadow=_shadow_config(regs),
            bump_mode=_checked_bump_mode(regs, bump_mode),
            bump_unit=_unit(regs, "bump_unit") if bump_mode != "none" else 0,
            bump_renormalize=not access.value(regs, _CONFIG0, "bump_no_renorm"),
        )


def _color(regs: np.ndarray, reg_name: str) -> np.ndarray:
    return np.array([access.raw(regs, reg_name, c) for c in "rgb"], np.float32) / np.float32(COLOR_ONE)


def _unit(regs: np.ndarray, field_name: str) -> int:
    unit = int(access.raw(regs, _CONFIG0, field_name))
    if str(access.value(regs, _CONFIG0, field_name)).startswith("invalid"):
        raise UnsupportedFeature(
            f"lighting {field_name} {unit}", register=id_of(_CONFIG0), value=access.word(regs, _CONFIG0)
        )
    return unit


def _checked_bump_mode(regs: np.ndarray, mode: str) -> str:
    if mode.startswith("invalid"):
        raise UnsupportedFeature(
            f"lighting bump mode {mode}", register=id_of(_CONFIG0), value=access.word(regs, _CONFIG0)
        )
    return mode


def _shadow_config(regs: np.ndarray) -> ShadowConfig | None:
    if not access.value(regs, _CONFIG0, "shadow_enable"):
        return None
    flags = (
        bool(access.value(regs, _CONFIG0, k))
        for k in ("shadow_primary", "shadow_secondary", "shadow_invert", "shadow_alpha")
    )
    return ShadowConfig(_unit(regs, "shadow_unit"), *flags)


def _lut_input(regs: np.ndarray, name: str, available: frozenset[str]) -> LutInput:
    enabled = name not in GLOBAL_DISABLE or not access.value(regs, _CONFIG1, GLOBAL_DISABLE[name])
    active = enabled and name in available
    selector = str(access.value(regs, "LIGHTING_LUTINPUT_SELECT", f"{name}_input"))
    scale_name = str(access.value(regs, "LIGHTING_LUTINPUT_SCALE", f"{name}_scale"))
    for reg_name, text, known in (
        ("LIGHTING_LUTINPUT_SELECT", selector, selector in K.INPUT_CODES),
        ("LIGHTING_LUTINPUT_SCALE", scale_name, scale_name in SCALES),
    ):
        if active and not known:
            raise UnsupportedFeature(
                f"lighting LUT {name.upper()} {text}", register=id_of(reg_name), value=access.word(regs, reg_name)
            )
    signed = bool(access.value(regs, "LIGHTING_LUTINPUT_ABS", f"{name}_abs_disable"))
    return LutInput(active, selector, signed, SCALES.get(scale_name, 1.0))


def _spot_direction(regs: np.ndarray, prefix: str) -> np.ndarray:
    """(3,) float32 stored spot direction: each 13-bit field as a signed integer / ``SPOT_ONE``."""
    fields = ((prefix + "SPOTDIR_XY", "x"), (prefix + "SPOTDIR_XY", "y"), (prefix + "SPOTDIR_Z", "z"))
    ints = [numeric.signed(access.raw(regs, name, f), access.locate(name, f)[1].width) for name, f in fields]
    return np.array(ints, np.float32) / np.float32(SPOT_ONE)


def _light(regs: np.ndarray, n: int) -> LightState:
    p = f"LIGHT{n}_"
    config0_shadow = bool(access.value(regs, _CONFIG0, "shadow_enable"))
    return LightState(
        index=n,
        specular0=_color(regs, p + "SPECULAR0"),
        specular1=_color(regs, p + "SPECULAR1"),
        diffuse=_color(regs, p + "DIFFUSE"),
        ambient=_color(regs, p + "AMBIENT"),
        position=np.array(
            [access.value(regs, p + "XY", "x"), access.value(regs, p + "XY", "y"), access.value(regs, p + "Z", "z")],
            np.float32,
        ),
        directional=access.value(regs, p + "CONFIG", "type") == "directional",
        two_sided=bool(access.value(regs, p + "CONFIG", "two_sided")),
        geometric0=bool(access.value(regs, p + "CONFIG", "geometric_factor_0")),
        geometric1=bool(access.value(regs, p + "CONFIG", "geometric_factor_1")),
        spot_direction=_spot_direction(regs, p),
        spot_enabled=not access.value(regs, _CONFIG1, f"spot_disable{n}"),
        dist_atten_enabled=not access.value(regs, _CONFIG1, f"dist_atten_disable{n}"),
        dist_bias=float(access.value(regs, p + "ATTENUATION_BIAS", "bias")),
        dist_scale=float(access.value(regs, p + "ATTENUATION_SCALE", "scale")),
        shadowed=config0_shadow and not access.value(regs, _CONFIG1, f"shadow_disable{n}"),
    )


# --- packing for the compiled kernel (picaemu.color.lighting_kernel) --------------------------------------------------


def kernel_arrays(ls: LightingState) -> tuple[np.ndarray, ...]:
    """The kernel's arrays of a lighting state (``light_fragments``'s ``lparams`` .. ``ambient``), packed on its
    first draw and kept on the (frozen, per-draw-state) object: the draws that share the state share them."""
    packed = ls.__dict__.get("_kernel_arrays")
    if packed is None:
        packed = (*_pack_lights(ls), *_pack_slots(ls), _pack_flags(ls), ls.ambient.astype(np.float32))
        ls.__dict__["_kernel_arrays"] = packed  # a cache beside the fields (as functools.cached_property does)
    return packed


def _pack_lights(ls: LightingState) -> tuple[np.ndarray, np.ndarray]:
    lparams = np.zeros((len(ls.lights), K.LP_COUNT), np.float32)
    lflags = np.zeros((len(ls.lights), K.LF_COUNT), np.int32)
    for k, light in enumerate(ls.lights):
        for col, vec in (
            (K.LP_POS, light.position),
            (K.LP_SPOT, light.spot_direction),
            (K.LP_DIFFUSE, light.diffuse),
            (K.LP_AMBIENT, light.ambient),
            (K.LP_SPEC0, light.specular0),
            (K.LP_SPEC1, light.specular1),
        ):
            lparams[k, col : col + 3] = vec
        lparams[k, K.LP_BIAS] = light.dist_bias
        lparams[k, K.LP_SCALE] = light.dist_scale
        lflags[k, [K.LF_DIRECTIONAL, K.LF_TWO_SIDED, K.LF_GEO0, K.LF_GEO1, K.LF_SPOT, K.LF_DIST, K.LF_SHADOW]] = [
            light.directional,
            light.two_sided,
            light.geometric0,
            light.geometric1,
            light.spot_enabled,
            light.dist_atten_enabled,
            light.shadowed,
        ]
        lflags[k, K.LF_SP_LUT] = LUT_ID[f"SP{light.index}"]
        lflags[k, K.LF_DA_LUT] = LUT_ID[f"DA{light.index}"]
        lflags[k, K.LF_LIGHT] = light.index
    return lparams, lflags


def _pack_slots(ls: LightingState) -> tuple[np.ndarray, np.ndarray]:
    slots = np.zeros((len(K.SLOT_ORDER), K.SL_COUNT), np.int32)
    scale = np.ones(len(K.SLOT_ORDER), np.float32)
    for k, name in enumerate(K.SLOT_ORDER):
        inp = ls.inputs[name]
        slots[k] = [
            inp.active,
            K.INPUT_CODES.get(inp.selector, 0),
            inp.signed,
            LUT_ID[COMMON_LUT[name]] if name in COMMON_LUT else -1,
        ]
        scale[k] = inp.scale
    return slots, scale


def _pack_flags(ls: LightingState) -> np.ndarray:
    g = np.zeros(K.G_COUNT, np.int32)
    sh = ls.shadow
    g[[K.G_FRESNEL_P, K.G_FRESNEL_S, K.G_CLAMP, K.G_CP, K.G_SHADOW, K.G_BUMP, K.G_RENORM]] = [
        ls.fresnel_primary,
        ls.fresnel_secondary,
        ls.clamp_highlights,
        ls.cp_available,
        sh is not None,
        K.BUMP_CODES[ls.bump_mode],
        ls.bump_renormalize,
    ]
    if sh is not None:
        g[[K.G_SHADOW_P, K.G_SHADOW_S, K.G_SHADOW_A]] = [sh.primary, sh.secondary, sh.alpha]
    return g


def _texture(textures: Mapping[int, np.ndarray], unit: int, what: str, count: int) -> np.ndarray:
    """Texture unit colors as (F,4) float32 0..1."""
    if unit not in textures:
        raise PipelineError(
            f"lighting {what} reads texture unit {unit}, which was not sampled", register=id_of(_CONFIG0)
        )
    texels = np.asarray(textures[unit])
    if texels.shape != (count, 4):
        raise PipelineError(
            f"lighting {what}: texture unit {unit} gave {texels.shape} texels for {count} fragments",
            register=id_of(_CONFIG0),
        )
    return texels.astype(np.float32) / np.float32(U8_MAX)


def compute_lighting(
    lstate: LightingState, frags: Fragments, textures: Mapping[int, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Fragment primary and secondary colors, (F,4) uint8 each (see the module docstring)."""
    n = len(frags)
    primary = np.zeros((n, 4), np.uint8)
    secondary = np.zeros((n, 4), np.uint8)
    if not lstate.enabled or n == 0:
        return primary, secondary
    empty = np.zeros((0, 4), np.float32)
    bump = empty if lstate.bump_mode == "none" else _texture(textures, lstate.bump_unit, "bump map", n)
    shadow = empty
    if lstate.shadow is not None:
        shadow = _texture(textures, lstate.shadow.unit, "shadow", n)
        if lstate.shadow.invert:
            shadow = np.float32(1.0) - shadow
    if lstate.luts is None:
        raise ValueError("an enabled LightingState needs its decoded LUTs (LightingState.from_regs decodes them)")
    lparams, lflags, slots, scale, flags, ambient = kernel_arrays(lstate)
    K.light_fragments(
        np.ascontiguousarray(frags.quat, np.float32),
        np.ascontiguousarray(frags.view, np.float32),
        bump,
        shadow,
        lparams,
        lflags,
        slots,
        scale,
        flags,
        ambient,
        lstate.luts.value,
        lstate.luts.diff,
        primary,
        secondary,
    )
    return primary, secondary


__all__ = ["NUM_LIGHTS", "LightState", "LightingState", "LutInput", "ShadowConfig", "compute_lighting", "kernel_arrays"]
