"""Fog: LUT value + delta interpolation, z flip, fog color, alpha untouched; gas and undefined modes refused."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import UnsupportedFeature
from picaemu.fog import FogState, apply_fog
from picaemu.regs import access, id_of
from picaemu.state import GpuState

HALF = 1024  # 0.5 in 0.0.11 (bits 13-23 of an entry)


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
    assert out.tolist() == [[150, 75, 25, 77]]  # 0.5*200 + 0.5*100; 0.5*51 = 25.5 -> 25; alpha unchanged


def test_delta_interpolates_within_an_entry() -> None:
    st = _state()
    st.fog_lut[64] = _entry(HALF, 256)  # 0.5 + 0.125 * frac
    st.fog_lut[10] = _entry(2047, -512)  # 0.99951... - 0.25 * frac
    fs = FogState.from_state(st)
    depth = np.array([64.5 / 128, 10.5 / 128], np.float32)
    out = apply_fog(fs, np.array([[200, 200, 200, 255]] * 2, np.uint8), depth)
    # 200 * 0.5625 = 112.5 -> 112;  200 * (2047/2048 - 0.125) = 174.8 -> 174
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
