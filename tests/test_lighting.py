"""Fragment lighting against hand-computed results (pica-pipeline.md §12).

Expected values come from the reference formulas evaluated here with ``math`` on scalars: dot products of the
chosen vectors, LUT index = floor(256 x) (unsigned) or floor(128 x) (signed), entry value raw / 4095, difference
raw / 2047, output = trunc(255 x). Geometry is chosen so no expected value sits within 0.05 of an integer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from picaemu import numeric
from picaemu.color import lighting_luts
from picaemu.color.lighting import LightingState, compute_lighting
from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.regs.blocks.lighting import LUT_ENTRY
from picaemu.state import GpuState

ALL_LUT_DISABLES = dict(d0_disable=1, d1_disable=1, fr_disable=1, rb_disable=1, rg_disable=1, rr_disable=1)
RAMP = np.array([16 * i for i in range(256)], np.uint32)  # value 16 i / 4095, difference 0


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] |= np.uint32(access.compose(name, **fields))


def color(state: GpuState, name: str, r: int, g: int, b: int) -> None:
    put(state, name, r=r, g=g, b=b)


def lit_state(config: int = 0, **config1: int) -> GpuState:
    """Lighting on, one light (light 0), every LUT, spotlight and distance attenuation off unless re-enabled."""
    s = GpuState()
    put(s, "LIGHTING_ENABLE0", enable=1)
    put(s, "LIGHTING_CONFIG0", config=config, constant_4=4, constant_1=1)
    c1 = {**ALL_LUT_DISABLES, "constant_1": 1, "spot_disable0": 1, "dist_atten_disable0": 1}
    c1.update(config1)
    put(s, "LIGHTING_CONFIG1", **c1)
    return s


def light_dir(state: GpuState, n: int, x: float, y: float, z: float, *, directional: bool = True, **cfg: int) -> None:
    put(state, f"LIGHT{n}_XY", x=numeric.to_f16(x), y=numeric.to_f16(y))
    put(state, f"LIGHT{n}_Z", z=numeric.to_f16(z))
    put(state, f"LIGHT{n}_CONFIG", type=int(directional), **cfg)


def frags(n: int = 1, view=(0.0, 0.0, 1.0), quat=(0.0, 0.0, 0.0, 1.0)) -> Fragments:
    fr = Fragments.empty(n)
    fr.view[:] = view
    fr.quat[:] = quat
    return fr


def run(state: GpuState, fr: Fragments | None = None, textures=None):
    return compute_lighting(LightingState.from_state(state), frags() if fr is None else fr, textures or {})


def t255(x: float) -> int:
    return math.trunc(255 * min(max(x, 0.0), 1.0))


def test_disabled_gives_zero():
    s = lit_state()
    put(s, "LIGHTING_ENABLE1", disable=1)
    p, q = run(s, frags(3))
    assert p.shape == (3, 4) and p.dtype == np.uint8
    assert not p.any() and not q.any()


def test_lut_entry_decoding():
    raw = np.array([0xFFF, (5 << 12) | 100, (1 << 23) | (2047 << 12) | 7], np.uint32)
    value, diff = lighting_luts.decode_entries(raw)
    assert [f.name for f in LUT_ENTRY] == ["value", "diff_magnitude", "diff_negative"]
    np.testing.assert_allclose(value, [1.0, 100 / 4095, 7 / 4095], rtol=1e-6)
    np.testing.assert_allclose(diff, [0.0, 5 / 2047, -1.0], rtol=1e-6)


def test_diffuse_ambient_directional():
    s = lit_state()
    light_dir(s, 0, 4, 0, 3)  # L = (0.8, 0, 0.6); N = V = +z: L.N = 0.6
    color(s, "LIGHT0_DIFFUSE", 201, 101, 51)
    color(s, "LIGHT0_AMBIENT", 20, 0, 0)
    color(s, "LIGHTING_AMBIENT", 10, 0, 3)
    p, q = run(s)
    assert p[0].tolist() == [t255((201 * 0.6 + 30) / 255), t255(101 * 0.6 / 255), t255((51 * 0.6 + 3) / 255), 255]
    assert q[0].tolist() == [0, 0, 0, 255]


def test_positional_light_uses_view_vector():
    s = lit_state()
    light_dir(s, 0, 4, 0, 2, directional=False)  # L = pos + V = (4, 0, 3) -> L.N = 0.6
    color(s, "LIGHT0_DIFFUSE", 201, 0, 0)
    p, _ = run(s)
    assert p[0, 0] == t255(201 * 0.6 / 255) == 120


def test_positional_light_adds_the_raw_view_vector():
    """L = unit(pos + view) with the view as interpolated (length 4 here), its length the attenuation distance;
    only H uses the unit view: V = (0, 0, 1), L = (0.6, 0, 0.8), H = (0.6, 0, 1.8), |H|^2 = 3.6."""
    s = lit_state(dist_atten_disable0=0)
    light_dir(s, 0, 3, 0, 0, directional=False, geometric_factor_0=1)  # pos + view = (3, 0, 4): |.| = 5
    color(s, "LIGHT0_DIFFUSE", 201, 0, 0)
    color(s, "LIGHT0_SPECULAR0", 0, 255, 0)
    put(s, "LIGHT0_ATTENUATION_SCALE", scale=numeric.encode_float(0.125, numeric.FLOAT20))  # 5 / 8 -> entry 160
    s.lighting_luts[16] = RAMP
    atten = 16 * 160 / 4095
    p, q = run(s, frags(view=(0.0, 0.0, 4.0)))
    assert p[0, 0] == t255(201 * 0.8 / 255 * atten) == 100  # normalising the view first gave L.N = 0.316
    assert q[0, 1] == t255(0.8 / 3.6 * atten) == 35


def test_spot_direction_scale_is_2047():
    """A stored spot component of 0x7FF reads exactly 1.0: -L.P = 1 -> entry 255 at delta 1 (value 0,
    difference 2047/2047), so the spot term is 1.0; with a /2048 scale it would be 0.875 (223)."""
    s = lit_state(spot_disable0=0)
    light_dir(s, 0, 0, 0, 1)  # L = +z
    put(s, "LIGHT0_SPOTDIR_Z", z=0x7FF)
    put(s, "LIGHTING_LUTINPUT_SELECT", sp_input=4)
    color(s, "LIGHT0_DIFFUSE", 255, 0, 0)
    s.lighting_luts[8, 255] = 2047 << 12
    p, _ = run(s)
    assert p[0, 0] == 255


# LUT entry 1000 / 4095 whose difference to the next entry is +k / 2047: the end entries extrapolate along it
END_ENTRY = 1000 / 4095


def _end_entry(diff: int) -> int:
    return 1000 | diff << 12


@pytest.mark.parametrize(
    ("spot", "signed", "entry", "diff", "expected"),
    [
        # L = (0, 0.6, 0.8), P = (0, 1, 1): -L.P = 1.4 -> p = 358.4, entry 255 (clamped), f = 103.4 (not clamped)
        (2047, 0, 255, 1, t255(END_ENTRY + 103.4 / 2047)),  # 75; clamping x first gave f = 1: 62
        # signed: p = 179.2 -> entry 127, f = 52.2
        (2047, 1, 127, 2, t255(END_ENTRY + 52.2 * 2 / 2047)),  # 75; clamping gave 62
        # signed, P = (0, -1, -1): -L.P = -1.4 -> p = -179.2, i = -128 (entry 128), f = -51.2
        (-2047, 1, 128, 2, t255(END_ENTRY - 51.2 * 2 / 2047)),  # 49; clamping gave f = 0: 62
    ],
)
def test_spot_input_past_the_table_extrapolates(spot: int, signed: int, entry: int, diff: int, expected: int):
    """A spot direction longer than 1: the index is clamped to the table, the interpolation weight is not
    (pica-pipeline.md §12.2; Azahar's lookup), so the end entry's difference extrapolates."""
    s = lit_state(spot_disable0=0)
    light_dir(s, 0, 0, 3, 4)  # L = (0, 0.6, 0.8)
    raw = spot & 0x1FFF  # 13-bit two's complement, / 2047
    put(s, "LIGHT0_SPOTDIR_XY", x=0, y=raw)
    put(s, "LIGHT0_SPOTDIR_Z", z=raw)
    put(s, "LIGHTING_LUTINPUT_SELECT", sp_input=4)
    put(s, "LIGHTING_LUTINPUT_ABS", sp_abs_disable=signed)
    color(s, "LIGHT0_SPECULAR0", 0, 255, 0)
    s.lighting_luts[8, entry] = _end_entry(diff)  # SP0
    _, q = run(s)
    assert q[0, 1] == expected


def test_bump_normal_without_renormalisation_extrapolates():
    """Normal map texel (255, 255, 255) with z kept: N = (1, 1, 1), L = (0.6, 0, 0.8), so L.N = 1.4 feeds D0:
    entry 255 at f = 103.4."""
    s = lit_state(d0_disable=0)
    put(s, "LIGHTING_CONFIG0", bump_mode=1, bump_unit=2, bump_no_renorm=1)
    put(s, "LIGHTING_LUTINPUT_SELECT", d0_input=3)  # L.N
    light_dir(s, 0, 3, 0, 4)
    color(s, "LIGHT0_SPECULAR0", 255, 0, 0)
    s.lighting_luts[0, 255] = _end_entry(1)
    _, q = run(s, textures={2: np.array([[255, 255, 255, 255]], np.uint8)})
    assert q[0, 0] == t255(END_ENTRY + 103.4 / 2047) == 75


def test_quaternion_rotates_normal():
    s = lit_state()
    light_dir(s, 0, 4, 0, 3)
    color(s, "LIGHT0_DIFFUSE", 201, 0, 0)
    h = math.sqrt(0.5)
    fr = frags(2, quat=(0.0, h, 0.0, h))  # 90 degrees about y: (0,0,1) -> (1,0,0), so L.N = 0.8
    fr.quat[1] *= 3.0  # an unnormalized quaternion gives the same normal
    p, _ = run(s, fr)
    assert p[:, 0].tolist() == [t255(201 * 0.8 / 255)] * 2 == [160, 160]


# Geometry for the input-selector test: N = (0,0,1), V = (0.6,0,0.8), L = (0,0.28,0.96), spot register (0,1,0).
def _selector_inputs() -> dict[int, float]:
    n, v, lv = (0, 0, 1), (0.6, 0, 0.8), (0, 0.28, 0.96)
    h = [a + b for a, b in zip(v, lv, strict=True)]
    hl = math.sqrt(sum(c * c for c in h))
    hn = [c / hl for c in h]
    dot = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
    proj = [hn[i] - n[i] * dot(n, hn) for i in range(3)]
    return {0: dot(n, hn), 1: dot(v, hn), 2: dot(n, v), 3: dot(lv, n), 4: dot(lv, (0, 1, 0)), 5: dot(proj, (1, 0, 0))}


@pytest.mark.parametrize("selector", range(6))
@pytest.mark.parametrize("config", [0, 8])
def test_d0_input_selectors(selector: int, config: int):
    s = lit_state(config, d0_disable=0)
    light_dir(s, 0, 0, 7, 24)
    put(s, "LIGHT0_SPOTDIR_XY", x=0, y=2048)
    color(s, "LIGHT0_SPECULAR0", 255, 0, 0)
    put(s, "LIGHTING_LUTINPUT_SELECT", d0_input=selector)
    s.lighting_luts[0] = RAMP
    x = _selector_inputs()[selector]
    if selector == 5 and config != 8:
        x = 0.0  # cos phi reads 0 outside configuration 7 (all LUTs)
    expected = t255(16 * math.floor(256 * x) / 4095)
    _, q = run(s, frags(view=(0.6, 0.0, 0.8)))
    assert q[0, 0] == expected


@pytest.mark.parametrize(
    ("two_sided", "signed", "ln", "expected"),
    [
        (0, 0, -0.8, 0),  # max(x, 0) = 0 -> entry 0
        (1, 0, -0.8, t255(16 * 204 / 4095 + 0.8 * 100 / 2047)),  # |x|: p = 204.8 -> entry 204, f = 0.8
        (0, 1, -0.8, t255(16 * 153 / 4095 + 0.6 * 100 / 2047)),  # p = -102.4: i = -103 -> entry 153, f = 0.6
        (0, 1, 0.8, t255(16 * 102 / 4095 + 0.4 * 100 / 2047)),  # p = 102.4: entry 102, f = 0.4
    ],
)
def test_abs_and_signed_lookup(two_sided: int, signed: int, ln: float, expected: int):
    s = lit_state(d0_disable=0)
    light_dir(s, 0, 0, 0.6 if ln > 0 else -0.6, ln, two_sided=two_sided)
    color(s, "LIGHT0_SPECULAR0", 255, 0, 0)
    put(s, "LIGHTING_LUTINPUT_SELECT", d0_input=3)  # L.N
    put(s, "LIGHTING_LUTINPUT_ABS", d0_abs_disable=signed)
    s.lighting_luts[0] = RAMP | (100 << 12)
    _, q = run(s)
    assert q[0, 0] == expected


@pytest.mark.parametrize(("scale", "factor"), [(0, 1), (1, 2), (2, 4), (3, 8), (6, 0.25), (7, 0.5)])
def test_lut_scale(scale: int, factor: float):
    s = lit_state(d0_disable=0)
    light_dir(s, 0, 0, 0, 1)
    color(s, "LIGHT0_SPECULAR0", 100, 0, 0)
    put(s, "LIGHTING_LUTINPUT_SCALE", d0_scale=scale)
    s.lighting_luts[0] = 1001  # constant 1001 / 4095
    _, q = run(s)
    assert q[0, 0] == t255(100 / 255 * factor * 1001 / 4095)


def test_distance_attenuation():
    s = lit_state(dist_atten_disable0=0)
    light_dir(s, 0, 0, 0, 2, directional=False)  # |pos + V| = 3
    color(s, "LIGHT0_DIFFUSE", 255, 0, 0)
    put(s, "LIGHT0_ATTENUATION_SCALE", scale=numeric.encode_float(0.25, numeric.FLOAT20))
    put(s, "LIGHT0_ATTENUATION_BIAS", bias=numeric.encode_float(0.125, numeric.FLOAT20))
    s.lighting_luts[16] = RAMP  # DA0: x = 0.875 -> entry 224
    p, _ = run(s)
    assert p[0, 0] == t255(16 * 224 / 4095) == 223


def test_spotlight():
    s = lit_state(spot_disable0=0)
    light_dir(s, 0, 0, 3, 4)  # L = (0, 0.6, 0.8)
    put(s, "LIGHT0_SPOTDIR_Z", z=2048)  # stored (negated) direction (0, 0, 1): -L.P = 0.8
    put(s, "LIGHTING_LUTINPUT_SELECT", sp_input=4)
    color(s, "LIGHT0_DIFFUSE", 255, 0, 0)
    color(s, "LIGHT0_SPECULAR0", 0, 255, 0)
    s.lighting_luts[8] = RAMP  # SP0: entry 204
    p, q = run(s)
    assert p[0, 0] == t255(0.8 * 16 * 204 / 4095) == 162
    assert q[0, 1] == t255(16 * 204 / 4095) == 203


def test_geometric_factor():
    s = lit_state()
    light_dir(s, 0, 0, 3, 4, geometric_factor_0=1)  # H = (0, 0.6, 1.8): G = 0.8 / 3.6
    color(s, "LIGHT0_SPECULAR0", 255, 0, 0)
    color(s, "LIGHT0_SPECULAR1", 0, 255, 0)
    _, q = run(s)
    assert q[0, :3].tolist() == [t255(0.8 / 3.6), 255, 0] == [56, 255, 0]


@pytest.mark.parametrize(("two_sided", "expected"), [(0, 0), (1, t255(201 * 0.8 / 255))])
def test_two_sided_diffuse(two_sided: int, expected: int):
    s = lit_state()
    light_dir(s, 0, 0, -3, -4, two_sided=two_sided)  # L.N = -0.8
    color(s, "LIGHT0_DIFFUSE", 201, 0, 0)
    p, _ = run(s)
    assert p[0, 0] == expected


@pytest.mark.parametrize(("clamp", "expected"), [(0, 200), (1, 0)])
def test_clamp_highlights(clamp: int, expected: int):
    s = lit_state()
    put(s, "LIGHTING_CONFIG0", clamp_highlights=clamp)
    light_dir(s, 0, 0, -3, -4)  # one-sided L.N = -0.8 clamps to 0
    color(s, "LIGHT0_SPECULAR0", 200, 0, 0)
    _, q = run(s)
    assert q[0, 0] == expected


# LUT availability per CONFIG0.config value, transcribed from pica-pipeline.md §12.3
AVAILABLE = {
    0: "D0 SP RR",
    1: "SP FR RR",
    2: "D0 D1 RR",
    3: "D0 D1 FR",
    4: "D0 D1 SP RR RG RB",
    5: "D0 SP FR RR RG RB",
    6: "D0 D1 SP FR RR",
    8: "D0 D1 SP FR RR RG RB",
}
CONST = {
    "D0": (0, 2048),
    "D1": (1, 1024),
    "FR": (3, 1536),
    "RB": (4, 512),
    "RG": (5, 2560),
    "RR": (6, 3584),
    "SP": (8, 3072),
}


@pytest.mark.parametrize("config", sorted(AVAILABLE))
def test_layer_configurations(config: int):
    s = lit_state(
        config, d0_disable=0, d1_disable=0, fr_disable=0, rb_disable=0, rg_disable=0, rr_disable=0, spot_disable0=0
    )
    put(s, "LIGHTING_CONFIG0", fresnel=1)
    light_dir(s, 0, 0, 0, 1)
    color(s, "LIGHT0_SPECULAR0", 100, 0, 0)
    color(s, "LIGHT0_SPECULAR1", 100, 100, 100)
    for lut_id, raw in CONST.values():
        s.lighting_luts[lut_id] = raw
    avail = AVAILABLE[config].split()
    k = {name: (raw / 4095 if name in avail else 1.0) for name, (_, raw) in CONST.items()}
    rg = k["RG"] if "RG" in avail else k["RR"]
    rb = k["RB"] if "RB" in avail else k["RR"]
    p, q = run(s)
    assert q[0, :3].tolist() == [
        t255(100 / 255 * k["SP"] * (k["D0"] + k["D1"] * k["RR"])),
        t255(100 / 255 * k["SP"] * k["D1"] * rg),
        t255(100 / 255 * k["SP"] * k["D1"] * rb),
    ]
    assert p[0, 3] == t255(k["FR"]) and q[0, 3] == 255


@pytest.mark.parametrize("config", [7, 9, 15])
def test_invalid_configuration_raises(config: int):
    s = lit_state(config)
    with pytest.raises(UnsupportedFeature) as info:
        LightingState.from_state(s)
    assert info.value.register == 0x1C3


@pytest.mark.parametrize(("fresnel", "alphas"), [(0, (255, 255)), (1, (127, 255)), (2, (255, 127)), (3, (127, 127))])
def test_fresnel_selector_uses_last_light(fresnel: int, alphas: tuple[int, int]):
    s = lit_state(1, fr_disable=0)
    put(s, "LIGHTING_CONFIG0", fresnel=fresnel)
    put(s, "LIGHTING_NUM_LIGHTS", count_minus_1=1)
    put(s, "LIGHTING_LIGHT_PERMUTATION", slot0=0, slot1=3)
    put(s, "LIGHTING_CONFIG1", spot_disable3=1, dist_atten_disable3=1)
    light_dir(s, 0, 0, 0, 1)
    light_dir(s, 3, 0, 3, 4)  # last slot: L.N = 0.8 -> entry 204
    put(s, "LIGHTING_LUTINPUT_SELECT", fr_input=3)
    s.lighting_luts[3] = np.where(np.arange(256) == 204, 2048, 0).astype(np.uint32)
    p, q = run(s)
    assert (p[0, 3], q[0, 3]) == alphas  # 2048 / 4095 * 255 = 127.5


def test_permutation_and_two_lights_sum():
    s = lit_state()
    put(s, "LIGHTING_NUM_LIGHTS", count_minus_1=1)
    put(s, "LIGHTING_LIGHT_PERMUTATION", slot0=5, slot1=2)
    put(s, "LIGHTING_CONFIG1", spot_disable5=1, dist_atten_disable5=1, spot_disable2=1, dist_atten_disable2=1)
    light_dir(s, 5, 0, 3, 4)
    light_dir(s, 2, 4, 0, 3)
    light_dir(s, 0, 0, 0, 1)
    color(s, "LIGHT0_DIFFUSE", 255, 255, 255)  # not in a slot: ignored
    color(s, "LIGHT5_DIFFUSE", 101, 0, 0)
    color(s, "LIGHT2_DIFFUSE", 51, 0, 0)
    p, _ = run(s)
    assert p[0, :3].tolist() == [t255((101 * 0.8 + 51 * 0.6) / 255), 0, 0] == [111, 0, 0]


def _shadow_state(**config0: int) -> GpuState:
    s = lit_state()
    put(s, "LIGHTING_CONFIG0", shadow_enable=1, shadow_unit=1, fresnel=1, **config0)
    light_dir(s, 0, 0, 0, 1)
    color(s, "LIGHT0_DIFFUSE", 200, 200, 200)
    color(s, "LIGHT0_AMBIENT", 20, 20, 20)
    color(s, "LIGHT0_SPECULAR0", 100, 100, 100)
    return s


SHADOW_TEXEL = {1: np.array([[51, 102, 254, 153]], np.uint8)}


def test_shadow_attenuates_diffuse_not_ambient():
    p, q = run(_shadow_state(shadow_primary=1), textures=SHADOW_TEXEL)
    assert p[0, :3].tolist() == [t255((200 * 0.2 + 20) / 255), t255((200 * 0.4 + 20) / 255), 219]  # 219.2
    assert q[0, :3].tolist() == [100, 100, 100]


def test_shadow_secondary_inverted_and_alpha():
    p, q = run(_shadow_state(shadow_secondary=1, shadow_invert=1, shadow_alpha=1), textures=SHADOW_TEXEL)
    assert q[0, :3].tolist() == [t255(100 / 255 * 0.8), t255(100 / 255 * 0.6), t255(100 / 255 / 255)] == [80, 60, 0]
    assert p[0, 3] == t255(1 - 0.6) and q[0, 3] == 255  # Fresnel selector: primary alpha only


def test_shadow_disabled_per_light():
    s = _shadow_state(shadow_primary=1)
    put(s, "LIGHTING_CONFIG1", shadow_disable0=1)
    p, _ = run(s, textures=SHADOW_TEXEL)
    assert p[0, :3].tolist() == [220, 220, 220]


@pytest.mark.parametrize(
    ("mode", "renorm_off", "expected"),
    [
        (0, 1, t255(201 * 0.6 / 255)),  # no bump: N = +z
        (1, 0, t255(201 * 0.8 / 255)),  # normal map (255, 128, 128): n ~ (1, 0.004, 0) after z recompute
        (1, 1, t255(201 * (0.8 + 0.6 * (2 * 128 / 255 - 1)) / 255)),  # z kept: n = (1, 0.0039, 0.0039)
        (2, 1, t255(201 * 0.6 / 255)),  # tangent map leaves the normal at +z
    ],
)
def test_bump_modes(mode: int, renorm_off: int, expected: int):
    s = lit_state()
    put(s, "LIGHTING_CONFIG0", bump_mode=mode, bump_unit=2, bump_no_renorm=renorm_off)
    light_dir(s, 0, 4, 0, 3)
    color(s, "LIGHT0_DIFFUSE", 201, 0, 0)
    p, _ = run(s, textures={2: np.array([[255, 128, 128, 255]], np.uint8)})
    assert p[0, 0] == expected


def test_tangent_map_drives_cos_phi():
    s = lit_state(8, d0_disable=0)
    put(s, "LIGHTING_CONFIG0", bump_mode=2, bump_unit=0)
    put(s, "LIGHTING_LUTINPUT_SELECT", d0_input=5)
    light_dir(s, 0, 0, 3, 4)  # H = (0, 0.6, 1.8) -> normalized (0, 0.3162, 0.9487)
    color(s, "LIGHT0_SPECULAR0", 255, 0, 0)
    s.lighting_luts[0] = RAMP
    _, q = run(s, textures={0: np.array([[128, 255, 128, 255]], np.uint8)})  # tangent ~ (0.0039, 1, 0.0039)
    x = 0.6 / math.sqrt(3.6) * 1.0 + 0.0 * (2 * 128 / 255 - 1)
    assert q[0, 0] == t255(16 * math.floor(256 * x) / 4095) == 79


def test_missing_bump_texture_is_a_named_error():
    s = lit_state()
    put(s, "LIGHTING_CONFIG0", bump_mode=1, bump_unit=1)
    with pytest.raises(PipelineError):
        run(s, textures={0: np.zeros((1, 4), np.uint8)})


def test_unknown_lut_scale_raises_only_when_used():
    s = lit_state(d0_disable=0)
    put(s, "LIGHTING_LUTINPUT_SCALE", d0_scale=4, d1_scale=5)  # D1 is disabled: no error for it
    with pytest.raises(UnsupportedFeature) as info:
        LightingState.from_state(s)
    assert info.value.register == 0x1D2 and "D0" in str(info.value)


def test_zero_vectors_do_not_make_nan():
    s = lit_state()
    light_dir(s, 0, 0, 0, 0, directional=False)
    color(s, "LIGHT0_DIFFUSE", 255, 0, 0)
    color(s, "LIGHT0_SPECULAR0", 0, 255, 0)
    fr = frags(1, view=(0.0, 0.0, 0.0), quat=(0.0, 0.0, 0.0, 0.0))
    p, q = run(s, fr)
    assert p[0].tolist() == [0, 0, 0, 255] and q[0].tolist() == [0, 255, 0, 255]


def test_register_blocks_cover_the_reference_ids():
    from picaemu import regs

    for n in range(8):
        base = 0x140 + 0x10 * n
        for off in (0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11):
            assert regs.get(base + off).known, hex(base + off)
        for off in (8, 12, 13, 14, 15):
            assert not regs.get(base + off).known, hex(base + off)
    for reg_id in (0x08F, 0x1C0, 0x1C2, 0x1C3, 0x1C4, 0x1C5, 0x1C6, *range(0x1C8, 0x1D3), 0x1D9):
        assert regs.get(reg_id).known, hex(reg_id)
    assert regs.by_name("PICA_REG_FRAG_LIGHT3_TYPE").id == 0x179
    assert regs.by_name("PICA_REG_FRAG_LIGHT_START").id == 0x140


def test_citro3d_initial_config0_decodes():
    from picaemu import regs

    fields = regs.decode_fields(0x1C3, 4 << 8 | 1 << 27 | 1 << 31).as_dict()
    assert fields["constant_4"] == 4 and fields["clamp_highlights"] and fields["constant_1"]
    assert fields["config"] == "config0 (D0 RR SP DA)" and fields["bump_mode"] == "none"
    lut = regs.decode_fields(0x1C5, (16 + 3) << 8 | 0x20).as_dict()
    assert lut == {"index": 0x20, "lut": "DA3"}


def test_lut_encode_round_trip():
    values = np.linspace(0, 1, 256) ** 2
    value, diff = lighting_luts.decode_entries(lighting_luts.encode_entries(values))
    np.testing.assert_allclose(value, values, atol=0.5 / 4095)
    np.testing.assert_allclose(value[:-1] + diff[:-1], values[1:], atol=1.5 / 2047)


def test_empty_batch_and_bad_texture_shape():
    s = lit_state()
    p, q = run(s, frags(0))
    assert p.shape == q.shape == (0, 4)
    put(s, "LIGHTING_CONFIG0", shadow_enable=1, shadow_unit=0)
    with pytest.raises(PipelineError):
        run(s, frags(2), textures={0: np.zeros((3, 4), np.uint8)})


def test_registers_and_luts_through_the_command_processor():
    """The same spotlight case as test_spotlight, written as a citro3d-like command list."""
    from picaemu.command.builder import CommandBuilder
    from picaemu.command.processor import CommandProcessor

    b = CommandBuilder()
    b.write_fields("LIGHTING_ENABLE0", enable=1)
    b.write_fields("LIGHTING_CONFIG0", config=0, constant_4=4, constant_1=1)
    b.write_fields("LIGHTING_CONFIG1", **ALL_LUT_DISABLES, constant_1=1, spot_disable0=0, dist_atten_disable0=1)
    b.write_fields("LIGHTING_LUTINPUT_SELECT", sp_input=4)
    b.write_fields("LIGHT0_XY", x=numeric.to_f16(0), y=numeric.to_f16(3))
    b.write_fields("LIGHT0_Z", z=numeric.to_f16(4))
    b.write_fields("LIGHT0_SPOTDIR_Z", z=2048)
    b.write_fields("LIGHT0_CONFIG", type=1)
    b.write_fields("LIGHT0_DIFFUSE", r=255)
    b.upload_lut("lighting", RAMP[:128].tolist(), table=8, index=0)  # SP0 in two halves
    b.upload_lut("lighting", RAMP[128:].tolist(), table=8, index=128)
    proc = CommandProcessor()
    proc.run(b.words())
    assert proc.state.lighting_luts[8].tolist() == RAMP.tolist()
    p, _ = run(proc.state)
    assert p[0, 0] == t255(0.8 * 16 * 204 / 4095) == 162
