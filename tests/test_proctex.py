"""Procedural texture unit against hand-computed texels (pica-pipeline.md §11).

Common setup: RGB map entry i = value 32 i, difference +32 (so the map returns x · 4096/4095, clipped to 1);
color table entry k = (k, 255 - k, 2 (k mod 128), 200) with color differences (0, 0, +1, 0); width 128, offset 0.
So a mapping result x selects color-table position ``c = min(x · 4096/4095, 1) · 127``; nearest filtering gives
red = round(c), linear gives red = floor(c) and blue = trunc(2 c).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from picaemu import numeric
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from picaemu.texture.proctex import (
    ProctexState,
    coordinates,
    noise,
    proctex_lod,
    sample_proctex,
    texels,
    texels_level0,
)

SCALE = 4096 / 4095


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] |= np.uint32(access.compose(name, **fields))


def pt_state(**proctex0: int) -> GpuState:
    s = GpuState()
    put(s, "TEXUNIT3_PROCTEX0", **proctex0)
    put(s, "TEXUNIT3_PROCTEX4", width=128, max_lod=6)
    put(s, "TEXUNIT3_PROCTEX5", offset0=0, offset1=0x80, offset2=0xC0, offset3=0xE0)
    i = np.arange(128, dtype=np.uint32)
    s.proctex_luts[2, :128] = (32 * i) | (32 << 12)
    k = np.arange(256, dtype=np.uint32)
    s.proctex_luts[4] = k | ((255 - k) << 8) | ((2 * (k % 128)) << 16) | (200 << 24)
    s.proctex_luts[5] = np.uint32(1 << 16)
    return s


def texel(state: GpuState, u: float, v: float, lod=None) -> list[int]:
    ps = ProctexState.from_state(state)
    out = sample_proctex(ps, np.array([[u, v]], np.float32), None if lod is None else np.array([lod], np.float32))
    assert out.dtype == np.uint8 and out.shape == (1, 4)
    return out[0].tolist()


def position(x: float) -> float:
    return min(x * SCALE, 1.0) * 127


U, V = 0.3, 0.6
MAPPINGS = {
    0: U,
    1: U * U,
    2: V,
    3: V * V,
    4: (U + V) / 2,
    5: (U * U + V * V) / 2,
    6: math.sqrt(U * U + V * V),
    7: min(U, V),
    8: max(U, V),
    9: ((U + V) / 2 + math.sqrt(U * U + V * V)) / 2,
}


@pytest.mark.parametrize("func", sorted(MAPPINGS))
def test_mapping_functions_nearest(func: int):
    c = round(position(MAPPINGS[func]))
    assert texel(pt_state(rgb_func=func, u_clamp=1, v_clamp=1), U, V) == [c, 255 - c, 2 * c, 200]


@pytest.mark.parametrize(
    ("clamp", "u", "expected_pos"),
    [
        (0, 1.3, 0.0),  # clamp to zero
        (0, 0.3, position(0.3)),
        (1, 1.3, 127.0),  # clamp to edge
        (2, 1.3, position(0.3)),  # symmetrical repeat: frac
        (3, 1.3, position(0.7)),  # mirrored repeat, odd integer part: 1 - frac
        (3, 2.3, position(0.3)),
        (4, 0.3, 0.0),  # pulse
        (4, 0.7, 127.0),
    ],
)
def test_clamp_modes(clamp: int, u: float, expected_pos: float):
    assert texel(pt_state(u_clamp=clamp, v_clamp=1), u, 0.0)[0] == round(expected_pos)


@pytest.mark.parametrize(
    ("shift", "clamp", "v", "u_expected"),
    [
        (0, 1, 2.2, 0.25),  # no shift
        (1, 1, 2.2, 0.75),  # odd: 0.5 * ((2 // 2) % 2)
        (1, 1, 1.2, 0.25),  # odd: (1 // 2) % 2 = 0
        (2, 1, 1.2, 0.75),  # even: ((1 + 1) // 2) % 2 = 1
        (2, 1, 2.2, 0.75),  # even: (3 // 2) % 2 = 1
        (1, 3, 2.2, 0.75),  # mirrored repeat shifts by 1.0: 1.25 mirrors to 0.75
    ],
)
def test_u_shift_from_v(shift: int, clamp: int, v: float, u_expected: float):
    assert texel(pt_state(u_shift=shift, u_clamp=clamp, v_clamp=1), 0.25, v)[0] == round(position(u_expected))


def test_negative_coordinates_are_mirrored_by_abs():
    assert texel(pt_state(u_clamp=1, v_clamp=1), -0.3, 0.0) == texel(pt_state(u_clamp=1, v_clamp=1), 0.3, 0.0)


def test_linear_filter_interpolates_with_doubled_difference():
    s = pt_state(u_clamp=1, v_clamp=1)
    put(s, "TEXUNIT3_PROCTEX4", filter=1)
    c = position(0.25)  # 31.76
    assert texel(s, 0.25, 0.0) == [math.floor(c), 255 - math.floor(c), math.trunc(2 * c), 200]


def test_separate_alpha_uses_alpha_map():
    s = pt_state(u_clamp=1, v_clamp=1, separate_alpha=1, alpha_func=2)
    s.proctex_luts[3, :128] = np.arange(128, dtype=np.uint32) * 16  # alpha map: 16 i / 4095, no difference
    c = round(position(0.25))
    assert texel(s, 0.25, 0.5) == [c, 255 - c, 2 * c, math.trunc(16 * 64 / 4095 * 255)]  # v = 0.5: entry 64


# rand2 values worked by hand from the reference's noise tables: (0,0) -> b 2, (1,0) -> 2, (0,1) -> 13, (1,1) -> 3
RAND = {(0, 0): -1 + 2 * 2 / 15, (1, 0): -1 + 2 * 2 / 15, (0, 1): -1 + 13 * 2 / 15, (1, 1): -1 + 3 * 2 / 15}


AMP = 2048 / 4095  # the noise amplitude _noise_state sets


def _noise_state(noise_ramp: bool) -> GpuState:
    s = pt_state(u_clamp=1, v_clamp=1, noise_enable=1)
    put(s, "TEXUNIT3_PROCTEX1", u_amplitude=2048, u_phase=0)  # 2048 / 4095
    put(s, "TEXUNIT3_PROCTEX2", v_amplitude=2048, v_phase=0)
    put(s, "TEXUNIT3_PROCTEX3", u_frequency=numeric.to_f16(1.0), v_frequency=numeric.to_f16(1.0))
    if noise_ramp:
        s.proctex_luts[0, :128] = (32 * np.arange(128, dtype=np.uint32)) | (32 << 12)
    return s


def _expected_noise(fx: float, fy: float, smooth: bool) -> float:
    sx, sy = (fx * SCALE, fy * SCALE) if smooth else (0.0, 0.0)
    g0, g1 = RAND[0, 0] * (fx + fy), RAND[1, 0] * (fx + fy - 1)
    g2, g3 = RAND[0, 1] * (fx + fy - 1), RAND[1, 1] * (fx + fy - 2)
    top, bottom = g0 + (g1 - g0) * sx, g2 + (g3 - g2) * sx
    return top + (bottom - top) * sy


@pytest.mark.parametrize("smooth", [False, True])
def test_noise_value_and_displacement(smooth: bool):
    s = _noise_state(smooth)
    ps = ProctexState.from_state(s)
    n = _expected_noise(0.9, 0.45, smooth)  # X = 9 * 0.1, Y = 9 * 0.05
    got = noise(ps, np.array([0.1], np.float32), np.array([0.05], np.float32))
    assert got[0] == pytest.approx(n, abs=1e-5)
    assert texel(s, 0.1, 0.05)[0] == round(position(abs(0.1 + AMP * n)))
    put(s, "TEXUNIT3_PROCTEX0", rgb_func=2)
    assert texel(s, 0.1, 0.05)[0] == round(position(abs(0.05 + AMP * n)))


def test_noise_amplitude_scale_is_4095():
    """Amplitude 0x0FFF reads exactly 1.0 and 0xF001 (-4095) exactly -1.0: u moves by the whole noise value."""
    s = _noise_state(True)
    put(s, "TEXUNIT3_PROCTEX1", u_amplitude=0x0FFF)
    s.regs[id_of("TEXUNIT3_PROCTEX2")] = access.compose("TEXUNIT3_PROCTEX2", v_amplitude=0xF001)
    ps = ProctexState.from_state(s)
    assert ps.amplitude == (1.0, -1.0)
    uv = np.array([[0.1, 0.05]], np.float32)
    n = float(noise(ps, uv[:, 0], uv[:, 1])[0])
    u, v = coordinates(ps, uv)
    assert (float(u[0]), float(v[0])) == pytest.approx((abs(0.1 + n), abs(0.05 - n)), abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_noise_displacement_matches_scalar_restatement(seed: int):
    """u' = |u + noise * raw_u / 4095| (raw_u the signed 16-bit field), likewise v, for random fields."""
    rng = np.random.default_rng(seed)
    s = _noise_state(True)
    raw_u, raw_v = (int(r) for r in rng.integers(-32768, 32768, 2))
    s.regs[id_of("TEXUNIT3_PROCTEX1")] = access.compose("TEXUNIT3_PROCTEX1", u_amplitude=raw_u & 0xFFFF)
    s.regs[id_of("TEXUNIT3_PROCTEX2")] = access.compose("TEXUNIT3_PROCTEX2", v_amplitude=raw_v & 0xFFFF)
    ps = ProctexState.from_state(s)
    uv = rng.uniform(0, 1, (64, 2)).astype(np.float32)
    n = noise(ps, uv[:, 0], uv[:, 1])
    u, v = coordinates(ps, uv)
    for k in range(64):
        for got, c, raw in ((u[k], uv[k, 0], raw_u), (v[k], uv[k, 1], raw_v)):
            moved = abs(float(c) + float(n[k]) * raw / 4095)
            assert float(got) == pytest.approx(min(moved, 1.0), abs=2e-5)  # clamp to edge


def _lod_state(filt: int) -> GpuState:
    s = pt_state(u_clamp=1, v_clamp=1)
    put(s, "TEXUNIT3_PROCTEX4", filter=filt, lod_bias_high=0x3C)  # bias 1.0 = f16 0x3C00
    return s


def test_lod_from_derivatives():
    ps = ProctexState.from_state(_lod_state(2))
    assert ps.lod_bias == 1.0
    duv_dx = np.array([[1 / 256, 0], [1 / 64, 0], [1 / 4096, 0]], np.float32)  # (du/dx, dv/dx)
    duv_dy = np.array([[0, 1 / 256], [0, 0], [0, 0]], np.float32)  # (du/dy, dv/dy)
    # rho = max|du| + max|dv| = 1/128, 1/64, 1/4096: log2(128 * rho) = 0, 1, -5 (clamped to min LOD 0)
    np.testing.assert_allclose(proctex_lod(ps, duv_dx, duv_dy), [0.0, 1.0, 0.0])


def test_mip_nearest_uses_level_offset_and_width():
    c = round(0x80 + 0.25 * SCALE * 63)  # level 1: offset 0x80, width 64
    assert texel(_lod_state(2), 0.25, 0.0, lod=1.2) == [c, 255 - c, 2 * (c % 128), 200]


def test_mip_linear_blends_levels():
    c0, c1 = round(0.25 * SCALE * 127), round(0x80 + 0.25 * SCALE * 63)
    assert texel(_lod_state(4), 0.25, 0.0, lod=0.5)[0] == math.trunc((c0 + c1) / 2)


@pytest.mark.parametrize(
    ("reg", "fields"),
    [
        ("TEXUNIT3_PROCTEX0", dict(u_clamp=5)),
        ("TEXUNIT3_PROCTEX0", dict(rgb_func=12)),
        ("TEXUNIT3_PROCTEX0", dict(v_shift=3)),
        ("TEXUNIT3_PROCTEX4", dict(filter=7)),
    ],
)
def test_undefined_codes_raise(reg: str, fields: dict[str, int]):
    s = pt_state()
    put(s, reg, **fields)
    with pytest.raises(UnsupportedFeature) as info:
        ProctexState.from_state(s)
    assert info.value.register == id_of(reg)


def test_unused_alpha_func_code_is_ignored_without_separate_alpha():
    s = pt_state(alpha_func=12)
    assert texel(s, 0.0, 0.0) == [0, 255, 0, 200]


def test_color_table_past_its_end_raises():
    s = pt_state()
    put(s, "TEXUNIT3_PROCTEX5", offset0=200)  # 200 + 128 - 1 > 255
    with pytest.raises(UnsupportedFeature) as info:
        ProctexState.from_state(s)
    assert info.value.register == 0x0AD


def test_luts_through_the_command_processor():
    from picaemu.command.builder import CommandBuilder
    from picaemu.command.processor import CommandProcessor

    ref = pt_state(rgb_func=2, u_clamp=1, v_clamp=1)
    b = CommandBuilder()
    for name in ("TEXUNIT3_PROCTEX0", "TEXUNIT3_PROCTEX4", "TEXUNIT3_PROCTEX5"):
        b.write(name, int(ref.regs[id_of(name)]))
    for table, entries in ((2, 128), (4, 256), (5, 256)):  # map tables hold 128 entries (the index wraps there)
        b.upload_lut("proctex", ref.proctex_luts[table, :entries].tolist(), table=table)
    proc = CommandProcessor()
    proc.run(b.words())
    c = round(position(0.6))
    assert texel(proc.state, 0.3, 0.6) == [c, 255 - c, 2 * c, 200]


@pytest.mark.parametrize("separate", [False, True])
def test_level0_runs_of_equal_coordinates_match_each_texel(separate: bool):
    """``texels_level0`` (u, v read from varying columns, or 1.0) copies the last texel computed for a fragment whose
    (u, v) equal the previous one's: the same texels as every fragment computed on its own (``texels``), across
    runs, sign changes (-0.0 and 0.0, -u and u: the rule takes |u| first) and NaN (equal to nothing), with noise
    on."""
    s = _noise_state(True)
    if separate:
        put(s, "TEXUNIT3_PROCTEX0", separate_alpha=1, alpha_func=3)
    ps = ProctexState.from_state(s)
    rng = np.random.default_rng(4)
    picks = rng.uniform(-1.5, 1.5, (6, 2)).astype(np.float32)
    specials = np.array([[0.0, 0.0], [-0.0, 0.0], [0.0, -0.0], [np.nan, 0.2], [np.nan, 0.2], [0.3, 0.4]], np.float32)
    rows = np.concatenate([picks, specials, -picks[::-1]])
    uv = np.ascontiguousarray(np.repeat(rows, rng.integers(1, 5, len(rows)), axis=0))  # runs of equal pairs
    n = len(uv)
    codes, reals, maps, colors, levels = ps.kernel_args
    vary = np.ascontiguousarray(np.column_stack([rng.uniform(-1, 1, n), uv]), np.float32)  # u, v in columns 1, 2
    for cu, cv in ((1, 2), (1, -1)):  # -1: the coordinate reads 1.0
        run = np.empty((n, 4), np.uint8)
        texels_level0(codes, reals, maps, colors, levels, vary, cu, cv, run)
        each_uv = uv.copy()
        if cv < 0:
            each_uv[:, 1] = 1.0
        each = np.empty((n, 4), np.uint8)
        texels(codes, reals, maps, colors, levels, each_uv, np.zeros(n, np.int64), np.full(n, -1), np.zeros(n), each)
        assert (run == each).all()
