"""NaN and Inf never become table indices. Every float -> index conversion of the pipeline (fog LUT, proctex maps,
color table and mip level, lighting LUTs) maps NaN to entry 0 and clamps Inf, instead of indexing at INT64_MIN
(IndexError in numpy, an out-of-bounds read in a compiled kernel). End to end: a NaN depth-map scale renders."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu import numeric
from picaemu.builder import CaptureBuilder
from picaemu.color.fog import FogState, fog_factor
from picaemu.color.lighting_kernel import _lut
from picaemu.regs import id_of
from picaemu.replay import Replay
from picaemu.state import GpuState
from picaemu.texture.proctex import ProctexState, sample_proctex
from samples._common import color_frame, rect, solid
from tests.test_proctex import pt_state

NONFINITE = np.array([np.nan, np.inf, -np.inf], np.float32)


def test_finite_maps_nan_to_zero_and_clamps_inf() -> None:
    out = numeric.finite([np.nan, np.inf, -np.inf, 2.5])
    assert out.dtype == np.float32
    assert out.tolist() == [0.0, float(numeric.FINITE_LIMIT), -float(numeric.FINITE_LIMIT), 2.5]


def test_fog_factor_of_nonfinite_depth() -> None:
    state = GpuState()
    state.fog_lut[:] = (np.arange(128, dtype=np.uint32) * 16) << 13  # value i / 128, delta 0
    fs = FogState.from_state(state)
    got = fog_factor(fs, NONFINITE)
    assert got.tolist() == fog_factor(fs, np.array([0.0, 1.0, 0.0], np.float32)).tolist()


def test_proctex_of_nonfinite_coordinates_and_lod() -> None:
    state = pt_state(u_clamp=1, v_clamp=1, rgb_func=0, alpha_func=0)
    ps = ProctexState.from_state(state)
    uv = np.array([[np.nan, np.nan], [np.inf, 0.25], [-np.inf, np.nan]], np.float32)
    out = sample_proctex(ps, uv, np.array([np.nan, np.inf, -np.inf], np.float32))
    assert out.shape == (3, 4) and out.dtype == np.uint8
    zero = sample_proctex(ps, np.zeros((1, 2), np.float32))
    assert out[0].tolist() == zero[0].tolist()  # NaN coordinates read like (0, 0)


@pytest.mark.parametrize("signed", [False, True])
def test_lighting_lut_of_nan_reads_entry_zero(signed: bool) -> None:
    value = np.arange(2 * 256, dtype=np.float32).reshape(2, 256) / 512
    diff = np.zeros((2, 256), np.float32)
    assert _lut(value, diff, 1, np.nan, signed) == pytest.approx(value[1, 0])


def test_nan_depth_map_scale_renders_end_to_end() -> None:
    """The issue's case: a NaN DEPTHMAP_SCALE reaching the fog LUT index (was IndexError at INT64_MIN)."""
    b = CaptureBuilder(name="nan depth")
    color_frame(b, (0x70, 0x80, 0x98, 0xFF))
    pos = rect(30, 30, 200, 200, 0.5)
    b.vertices([pos, solid(len(pos), (1.0, 0.55, 0.1, 1.0))])
    b.fog((0x70, 0x80, 0x98), np.linspace(0.0, 1.0, 129))
    b.list.write(id_of("DEPTHMAP_SCALE"), 0x7FFFFF)  # float24 NaN: all exponent and mantissa bits set
    b.draw(len(pos))
    b.end_frame()
    replay = Replay(b.capture())
    replay.run()
    assert len(replay.draws) == 1 and replay.draws[0].stats["fragments_rasterized"] > 0
