"""Shadow-map write and shadow-texture compare against hand-computed values (pica-pipeline.md §10.6, §15.8)."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu import numeric
from picaemu.errors import PipelineError
from picaemu.fragment.shadow import (
    ShadowState,
    pack_texels,
    shadow_compare,
    shadow_coords_2d,
    shadow_ref_cube,
    shadow_write,
    unpack_texels,
)
from picaemu.regs import access, id_of
from picaemu.state import GpuState

D_HALF, D_QUARTER, D_EIGHTH = 0x7FFFFF, 0x3FFFFF, 0x1FFFFF  # trunc(x * 0xFFFFFF)


def test_texel_byte_order():
    assert pack_texels(np.array([0x123456]), np.array([0x78])).tolist() == [[0x12, 0x34, 0x56, 0x78]]
    depth, intensity = unpack_texels(np.array([[0xAB, 0xCD, 0xEF, 0x01]], np.uint8))
    assert depth.tolist() == [0xABCDEF] and intensity.tolist() == [1]


def test_state_from_register():
    s = GpuState()
    s.regs[id_of("FRAGOP_SHADOW")] = access.compose(
        "FRAGOP_SHADOW", constant=numeric.to_f16(2.0), linear=numeric.to_f16(-1.0)
    )
    assert ShadowState.from_state(s) == ShadowState(2.0, -1.0)


def _run(frags: list[tuple[int, float, int]], pixels: int = 3) -> list[list[int]]:
    texels = np.full((pixels, 4), 0xFF, np.uint8)
    pix, depth, inten = zip(*frags, strict=True)
    shadow_write(ShadowState(2.0, -1.0), np.array(pix), np.array(depth, np.float32), np.array(inten, np.uint8), texels)
    return [[int(d), int(s)] for d, s in zip(*unpack_texels(texels), strict=True)]


def test_depth_only_write_and_farther_fragments_ignored():
    assert _run([(0, 0.5, 0), (1, 0.25, 0), (1, 0.5, 200)]) == [[D_HALF, 255], [D_QUARTER, 255], [0xFFFFFF, 255]]


def test_penumbra_intensity_keeps_minimum():
    # D = 0x3FFFFF after the first fragment; s' = s / (2 - d / D) with d / D = 0.5 (to 1e-7): 200 -> 133, 250 -> 166
    got = _run([(2, 0.25, 0), (2, 0.125, 200), (2, 0.125, 250)])
    assert got[2] == [D_QUARTER, 133]


def test_fragment_order_matters():
    # intensity first (D = 0xFFFFFF: s' = 200 / (2 - 0.125) = 106.7), then the occluder depth
    assert _run([(0, 0.125, 200), (0, 0.25, 0)])[0] == [D_QUARTER, 106]


def test_write_outside_map_is_a_named_error():
    with pytest.raises(PipelineError):
        _run([(5, 0.5, 0)])


def _rgba(depth: int, intensity: int) -> list[int]:
    return [intensity, depth & 0xFF, (depth >> 8) & 0xFF, depth >> 16]  # R G B A as a texture unit decodes it


@pytest.mark.parametrize(
    ("ref", "bias", "expected"),
    [
        (0.5, 0, 200),  # z = 0x7FFFFF <= 0x800000: lit
        (0.6, 0, 0),  # z = 10066329 > 0x800000: shadowed
        (0.6, 0x200000, 200),  # z = 7969177 after the bias
        (0.6, 0x200001, 200),  # bit 0 (orthographic flag) is not bias
        (0.0, 0x7FFFFE, 200),  # z clamps at 0
    ],
)
def test_compare(ref: float, bias: int, expected: int):
    texels = np.array([_rgba(0x800000, 200)], np.uint8)
    out = shadow_compare(texels, np.array([ref], np.float32), bias)
    assert out.tolist() == [[expected] * 4]


def test_compare_with_filter_weights():
    texels = np.array([[_rgba(0x800000, 200), _rgba(0x100000, 200), _rgba(0x900000, 200), _rgba(0, 90)]], np.uint8)
    out = shadow_compare(texels, np.array([0.5], np.float32), 0, weights=np.full((1, 4), 0.25, np.float32))
    assert out.tolist() == [[100] * 4]  # two of four lit at 200


def test_reference_depths():
    uv, ref = shadow_coords_2d(
        np.array([[0.5, 0.25], [0.5, 0.25]], np.float32), np.array([2.0, 0.5], np.float32), perspective=True
    )
    assert uv.tolist() == [[0.25, 0.125], [1.0, 0.5]] and ref.tolist() == [1.0, 0.5]
    uv, _ = shadow_coords_2d(np.array([[0.5, 0.25]], np.float32), np.array([2.0], np.float32), perspective=False)
    assert uv.tolist() == [[0.5, 0.25]]
    assert shadow_ref_cube(np.array([0.75, 3.0], np.float32)).tolist() == [0.75, 1.0]


def test_shadow_map_feeds_lighting():
    """Occluder written into a 4-pixel map, receivers compared against it, the result as lighting's shadow term."""
    from picaemu.color.lighting import LightingState, compute_lighting
    from picaemu.raster.fragments import Fragments

    texels = np.full((4, 4), 0xFF, np.uint8)
    shadow_write(
        ShadowState(1.0, 0.0), np.array([0, 1]), np.array([0.3, 0.3], np.float32), np.zeros(2, np.uint8), texels
    )  # occluder over pixels 0 and 1
    rgba = texels[:, [3, 2, 1, 0]]  # what a texture unit decodes: R = byte 3 ... A = byte 0
    lit = shadow_compare(rgba, np.full(4, 0.6, np.float32), 0)
    assert lit[:, 0].tolist() == [0, 0, 255, 255]

    s = GpuState()
    for name, fields in (
        ("LIGHTING_ENABLE0", dict(enable=1)),
        ("LIGHTING_CONFIG0", dict(shadow_enable=1, shadow_primary=1, shadow_unit=0)),
        (
            "LIGHTING_CONFIG1",
            dict(
                d0_disable=1,
                d1_disable=1,
                fr_disable=1,
                rb_disable=1,
                rg_disable=1,
                rr_disable=1,
                spot_disable0=1,
                dist_atten_disable0=1,
            ),
        ),
        ("LIGHT0_Z", dict(z=numeric.to_f16(1.0))),
        ("LIGHT0_CONFIG", dict(type=1)),
        ("LIGHT0_DIFFUSE", dict(r=200, g=200, b=200)),
        ("LIGHTING_AMBIENT", dict(r=30, g=30, b=30)),
    ):
        s.regs[id_of(name)] = access.compose(name, **fields)
    frags = Fragments.empty(4)
    frags.quat[:] = (0, 0, 0, 1)
    frags.view[:] = (0, 0, 1)
    primary, _ = compute_lighting(LightingState.from_state(s), frags, {0: lit})
    assert primary[:, 0].tolist() == [30, 30, 230, 230]
