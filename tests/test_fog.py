"""Fog: LUT value + delta interpolation, z flip, fog color, alpha untouched; gas and undefined modes refused.

Expectations are worked out by hand with entries read as raw / 2047 (0x7FF = 1.0, the tested reference's scale),
plus a differential test against a scalar restatement of the rule on random tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from picaemu.color.fog import FogState, apply_fog
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.state import GpuState

HALF = 1024  # 1024 / 2047 = 0.50024 (bits 13-23 of an entry)


def _entry(value: int, delta: int) -> int:
    """LUT entry by hand: bits 13-23 value, bits 0-12 delta as 13-bit two's complement."""
    return value << 13 | (delta & 0x1FFF)


def _state(mode: int = 5, flip: int = 0, color=(0, 0, 0)) -> GpuState:
    st = GpuState()
    st.regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose("TEXENV_UPDATE_BUFFER", fog_mode=mode, fog_z_flip=flip)
    st.regs[id_of("FOG_COLOR")] = access.compose("FOG_COLOR", **dict(zip("rgb", color, strict=True)))
    return st


def test_constant_factor_blends_toward_fog_color() -> None:
    st = _state(color=(100, 50, 0))
    st.fog_lut[:] = _entry(HALF, 0)
    out = apply_fog(FogState.from_state(st), np.array([[200, 100, 51, 77]], np.uint8), np.array([0.3], np.float32))
    assert out.tolist() == [[150, 75, 25, 77]]  # 0.50024*200 + 0.49976*100 = 150.02; 0.50024*51 = 25.5; alpha kept


def test_delta_interpolates_within_an_entry() -> None:
    st = _state()
    st.fog_lut[64] = _entry(HALF, 256)  # (1024 + 256 frac) / 2047
    st.fog_lut[10] = _entry(2047, -512)  # 1 - 512 frac / 2047
    fs = FogState.from_state(st)
    depth = np.array([64.5 / 128, 10.5 / 128], np.float32)
    out = apply_fog(fs, np.array([[200, 200, 200, 255]] * 2, np.uint8), depth)
    # 200 * 1152 / 2047 = 112.55 -> 112;  200 * (1 - 256 / 2047) = 174.99 -> 174
    assert out[:, 0].tolist() == [112, 174]


def test_z_flip_uses_one_minus_depth() -> None:
    st = _state(flip=1)
    st.fog_lut[:] = _entry(0, 0)
    st.fog_lut[96] = _entry(HALF, 0)  # reached by depth 0.25 flipped: x = 0.75 * 128 = 96
    out = apply_fog(FogState.from_state(st), np.array([[200, 0, 0, 0]], np.uint8), np.array([0.25], np.float32))
    assert out[0, 0] == 100


def test_depth_one_clamps_to_last_entry() -> None:
    st = _state(color=(10, 10, 10))
    st.fog_lut[127] = _entry(0, 0)
    out = apply_fog(FogState.from_state(st), np.array([[200, 0, 0, 0]], np.uint8), np.array([1.0], np.float32))
    assert out[0, :3].tolist() == [10, 10, 10]


def test_disabled_is_identity() -> None:
    color = np.array([[1, 2, 3, 4]], np.uint8)
    assert apply_fog(FogState.from_state(_state(mode=0)), color, np.zeros(1, np.float32)) is color


def test_gas_and_undefined_modes() -> None:
    with pytest.raises(UnsupportedFeature) as err:
        apply_fog(FogState.from_state(_state(mode=7)), np.zeros((1, 4), np.uint8), np.zeros(1, np.float32))
    assert err.value.feature == "gas" and err.value.register == 0x0E0
    with pytest.raises(UnsupportedFeature):
        FogState.from_state(_state(mode=3))


def test_citro3d_no_fog_table_leaves_colors_untouched() -> None:
    """Every entry 0x7FF with no delta reads exactly 1.0 (a / 2048 scale made 255 -> 254, 201 -> 200)."""
    st = _state(color=(0, 0, 0))
    st.fog_lut[:] = _entry(0x7FF, 0)
    color = np.array([[255, 201, 1, 9], [128, 3, 254, 0]], np.uint8)
    out = apply_fog(FogState.from_state(st), color, np.array([0.0, 0.73], np.float32))
    assert out.tolist() == color.tolist()


def _scalar_fog(raw: list[int], fog_rgb: tuple[int, int, int], flip: bool, rgba: list[int], depth: float) -> list[int]:
    """The fog rule restated for one fragment, in float32 scalars (the precision the stage computes in)."""
    f32 = np.float32
    x = (f32(1.0) - f32(depth) if flip else f32(depth)) * f32(128)
    i = min(max(math.floor(x), 0), 127)
    value = f32((raw[i] >> 13 & 0x7FF) / 2047)
    delta = raw[i] & 0x1FFF
    delta = f32((delta - 0x2000 if delta & 0x1000 else delta) / 2047)
    f = min(max(value + delta * (x - f32(i)), f32(0.0)), f32(1.0))
    return [int(f * f32(c) + (f32(1) - f) * f32(g)) for c, g in zip(rgba[:3], fog_rgb, strict=True)] + [rgba[3]]


@pytest.mark.parametrize("seed", range(6))
def test_fog_matches_scalar_restatement(seed: int) -> None:
    rng = np.random.default_rng(seed)
    fog_rgb = tuple(int(c) for c in rng.integers(0, 256, 3))
    flip = bool(seed & 1)
    st = _state(flip=int(flip), color=fog_rgb)
    st.fog_lut[:] = rng.integers(0, 1 << 24, 128, dtype=np.uint32)
    colors = rng.integers(0, 256, (300, 4), dtype=np.uint8)
    depths = rng.uniform(0, 1, 300).astype(np.float32)
    out = apply_fog(FogState.from_state(st), colors, depths)
    raw = [int(w) for w in st.fog_lut]
    for k in range(300):
        ref = _scalar_fog(raw, fog_rgb, flip, colors[k].tolist(), float(depths[k]))
        assert out[k].tolist() == ref, (k, out[k].tolist(), ref)
