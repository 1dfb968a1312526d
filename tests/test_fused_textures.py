"""The fused fragment side's texture sampling against the staged path (``picaemu.texture.sampler`` with the LOD of
``shading.sample_unit``): mipmapped textures with a per-fragment LOD (random sizes, bias, min/max levels, min /
mag / mip filters, wrap modes, formats and bytes) and ETC1 / ETC1A4 textures (random bytes: any bytes decode), on
random triangles. Same memory and per-draw counters, every draw served by the fused side (``tests/
test_fused_fragments.py`` has the scene and comparison helpers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picaemu.builder import CaptureBuilder
from picaemu.fused import features, layout
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay
from picaemu.texture import level_cache
from picaemu.texture import lod as lod_mod
from picaemu.texture.formats import BITS_PER_TEXEL, TextureFormat, level_bytes, level_offset
from picaemu.texture.state import CUBE_LOW_MASK
from samples._common import SCREEN
from samples.game_scene import rich
from tests.test_fused_fragments import assert_same, check
from tests.test_fused_loop import _facts
from tests.test_pipeline import reference

FORMATS = sorted(BITS_PER_TEXEL)
FILTERS = ("nearest", "linear")


def random_texture(
    b: CaptureBuilder,
    rng: np.random.Generator,
    fmt: str,
    size: tuple[int, int],
    levels: tuple[int, int],
    filters: tuple[str, str, str],
    bias: float,
    wrap: tuple[int, int],
    unit: int = 0,
) -> int:
    """Bind a texture of random bytes (every level ``levels[1]`` holds) to ``unit``, with these LOD registers and
    (mag, min, mip) filters; returns its address."""
    width, height = size
    tf = TextureFormat[fmt]
    top = levels[1]
    count = level_offset(width, height, tf, top) + level_bytes(width >> top, height >> top, tf)
    address = b.upload(rng.integers(0, 256, count, dtype=np.uint8), vram=True)
    p = f"TEXUNIT{unit}"
    b.set(f"{p}_DIM", width=width, height=height)
    b.set(f"{p}_TYPE", format=TextureFormat[fmt].value)
    b.set(("TEXUNIT0_ADDR1", "TEXUNIT1_ADDR", "TEXUNIT2_ADDR")[unit], address=address)
    mag, minf, mip = filters
    b.set(
        f"{p}_PARAM",
        mag_filter=mag,
        min_filter=minf,
        mip_filter=mip,
        wrap_s=wrap[0],
        wrap_t=wrap[1],
        **({"type": "2D"} if unit == 0 else {}),
    )
    b.set(f"{p}_LOD", bias=bias, min_level=levels[0], max_level=levels[1])
    b.set("TEXUNIT_CONFIG", **{f"unit{unit}_enable": 1}, always1=1, clear_cache=1)
    return address


def max_level(size: tuple[int, int]) -> int:
    return (min(size) // 8).bit_length() - 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fmt=st.sampled_from(FORMATS),
    log2=st.tuples(st.integers(3, 8), st.integers(3, 8)),
    lv=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    filters=st.tuples(*(st.sampled_from(FILTERS) for _ in range(3))),
    bias=st.integers(-4 * 256, 4 * 256),
    wrap=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    seed=st.integers(0, 2**16),
)
def test_mipmaps_match_the_staged_path(fmt, log2, lv, filters, bias, wrap, seed) -> None:
    size = (1 << log2[0], 1 << log2[1])
    top = max_level(size)
    lo, hi = sorted((min(lv[0], top), min(lv[1], top)))
    hi = max(hi, 1) if top >= 1 and filters[1] == filters[0] else hi  # a LOD that matters

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        random_texture(b, rng, fmt, size, (lo, hi), filters, bias / 256, wrap)

    check(setup, seed, texels_fetched=True)


@pytest.mark.parametrize("fmt", ["ETC1", "ETC1A4"])
@pytest.mark.parametrize("filt", FILTERS)
def test_etc1_single_level_matches(fmt: str, filt: str) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        random_texture(b, rng, fmt, (32, 16), (0, 0), (filt, filt, "nearest"), 0.0, (2, 3))

    check(setup, texels_fetched=True)


def test_three_mipmapped_units_share_one_neighbour_search() -> None:
    """Units 0-2 mipmapped at once, each with its own size, levels, filters and bias."""

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        random_texture(b, rng, "ETC1A4", (128, 64), (0, 3), ("linear", "nearest", "linear"), -1.5, (2, 2), 0)
        random_texture(b, rng, "RGB565", (64, 64), (1, 3), ("nearest", "linear", "nearest"), 0.75, (3, 0), 1)
        random_texture(b, rng, "I4", (256, 32), (0, 2), ("linear", "linear", "linear"), 2.0, (1, 4), 2)
        b.set("TEXUNIT_CONFIG", unit0_enable=1, unit1_enable=1, unit2_enable=1, always1=1)
        b.tev(0, rgb=("texture 0", "texture 1", "texture 2"), combine="multiply then add")

    check(setup, 5, texels_fetched=True)


def test_compute_lod_rule() -> None:
    """The compiled LOD: forward difference in x and y, else backward, else 0; per primitive; log2 of the largest
    absolute derivative plus the bias; -inf when nothing varies."""
    x = np.array([0, 1, 2, 0, 5, 0], np.int32)
    y = np.array([0, 0, 0, 1, 5, 0], np.int32)
    prim = np.array([0, 0, 0, 0, 0, 1], np.int32)
    texel = np.array([[0, 0], [2, 0], [3, 0], [0, 8], [7, 7], [1, 1]], np.float32)
    lod = lod_mod.compute_lod(x, y, prim, texel, 0.5)
    expected = [np.log2(8) + 0.5, 0.5, 0.5, np.log2(8) + 0.5, -np.inf, -np.inf]
    np.testing.assert_array_equal(lod, np.array(expected, np.float32))


def numpy_lod(x: np.ndarray, y: np.ndarray, prim: np.ndarray, texel: np.ndarray, bias: float) -> np.ndarray:
    """The rule as whole-array numpy (sorted keys, searchsorted): the reference for the compiled one."""
    keys = (prim.astype(np.int64) << 24) | (y.astype(np.int64) << 12) | x.astype(np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    out = []
    for dx, dy in ((1, 0), (0, 1)):
        d = np.zeros(texel.shape, np.float32)
        for sign in (-1, 1):  # backward first: forward wins where both exist
            want = (prim.astype(np.int64) << 24) | ((y + sign * dy).astype(np.int64) << 12) | (x + sign * dx)
            pos = np.minimum(np.searchsorted(sorted_keys, want), keys.size - 1)
            found = sorted_keys[pos] == want
            other = texel[order[pos]]
            d[found] = (other - texel)[found] if sign > 0 else (texel - other)[found]
        out.append(d)
    rho = np.maximum(np.abs(out[0]).max(axis=1), np.abs(out[1]).max(axis=1))
    with np.errstate(divide="ignore"):
        return np.log2(rho.astype(np.float64)).astype(np.float32) + np.float32(bias)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), bias=st.integers(-4096, 4095))
def test_compiled_lod_matches_the_array_rule(seed: int, n: int, bias: int) -> None:
    """Random fragments (duplicates, several primitives, NaN coordinates) on a small grid."""
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 12, n).astype(np.int32), rng.integers(0, 12, n).astype(np.int32)
    prim = rng.integers(0, 3, n).astype(np.int32)
    texel = (rng.standard_normal((n, 2)) * rng.choice([0.01, 1, 300], (n, 2))).astype(np.float32)
    texel[rng.random((n, 2)) < 0.02] = np.nan
    got = lod_mod.compute_lod(x, y, prim, texel, bias / 256)
    np.testing.assert_array_equal(got, numpy_lod(x, y, prim, texel, bias / 256))


@pytest.mark.parametrize("strips", [False, True])
def test_rich_scene_in_the_compiled_loop_matches_the_staged_path(strips: bool) -> None:
    """``samples.game_scene.rich``: a mipmapped ETC1 atlas in perspective, 200 draws; as triangle lists and as
    strips every draw runs in the command processor's compiled loop. Same picture, draws and counters as the
    reference route."""
    capture = rich(200, strips=strips)
    fast = Replay(capture, checkpoints=False, pipeline=Pipeline())
    slow = Replay(capture, checkpoints=False, pipeline=reference())
    fast.run()
    slow.run()
    assert np.array_equal(fast.color_buffer(), slow.color_buffer())
    assert _facts(fast) == _facts(slow)
    assert fast.pipeline.compiled_count == 200
    assert fast.pipeline.fused_fragment_draws == 0


VS_CUBE = """
.fvec projection[4]
.out outpos position
.out outtc0 texcoord0.xy
.out - texcoord0w o1.z
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outtc0, v1
    mov outclr, v2
    end
.end
"""


def cube_capture(
    seed: int,
    fmt: str,
    size: int,
    levels: tuple[int, int],
    filters: tuple[str, str, str],
    bias: int,
    ttype: str = "cube",
    w_range: tuple[float, float] = (-1, 1),
):
    """Three draws of 8 random triangles whose (s, t, w) directions sweep every face of a cube map of random
    bytes (six faces, each with its own address; ``size`` x ``size`` texels, ``levels`` min..max); ``ttype``
    "projection": the same as a projection texture (the first face's bytes, s and t divided by w)."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"fused cube {seed}")
    b.begin_frame(clear=(40, 80, 120, 160), depth=0x400000)
    b.shader(VS_CUBE)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    tf = TextureFormat[fmt]
    top = levels[1]
    count = level_offset(size, size, tf, top) + level_bytes(size >> top, size >> top, tf)
    faces = [b.upload(rng.integers(0, 256, count, dtype=np.uint8), vram=True) for _ in range(6)]
    b.set("TEXUNIT0_DIM", width=size, height=size)
    b.set("TEXUNIT0_TYPE", format=tf.value)
    b.set("TEXUNIT0_ADDR1", address=faces[0])
    for i, address in enumerate(faces[1:]):
        b.set(f"TEXUNIT0_ADDR{i + 2}", address_low=address & CUBE_LOW_MASK)
    mag, minf, mip = filters
    b.set("TEXUNIT0_PARAM", mag_filter=mag, min_filter=minf, mip_filter=mip, wrap_s=0, wrap_t=2, type=ttype)
    b.set("TEXUNIT0_LOD", bias=bias / 256, min_level=levels[0], max_level=levels[1])
    b.set("TEXUNIT_CONFIG", unit0_enable=1, always1=1, clear_cache=1)
    n = 24
    pos = np.column_stack(
        [rng.uniform(20, 380, n), rng.uniform(20, 220, n), rng.uniform(-0.9, 0.9, n), np.ones(n)]
    ).astype(np.float32)
    stw = rng.uniform(-1, 1, (n, 3))
    stw[:, 2] = rng.uniform(*w_range, n)
    b.vertices([pos, stw.astype(np.float32), rng.uniform(0, 1, (n, 4)).astype(np.float32)])
    for _ in range(3):
        b.draw(n)
    b.end_frame()
    return b.capture()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fmt=st.sampled_from(FORMATS),
    log2=st.integers(3, 7),
    lv=st.tuples(st.integers(0, 4), st.integers(0, 4)),
    filters=st.tuples(*(st.sampled_from(FILTERS) for _ in range(3))),
    bias=st.integers(-4 * 256, 4 * 256),
    seed=st.integers(0, 2**16),
)
def test_cube_maps_match_the_staged_path(fmt, log2, lv, filters, bias, seed) -> None:
    top = log2 - 3
    lo, hi = sorted((min(lv[0], top), min(lv[1], top)))
    stats, pipe = assert_same(cube_capture(seed, fmt, 1 << log2, (lo, hi), filters, bias))
    assert pipe.fused_fragment_draws == len(stats) == 3
    assert sum(s["fragments_written"] for s in stats) > 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fmt=st.sampled_from(FORMATS),
    log2=st.integers(3, 7),
    top=st.integers(0, 4),
    filters=st.tuples(*(st.sampled_from(FILTERS) for _ in range(3))),
    bias=st.integers(-4 * 256, 4 * 256),
    w_range=st.sampled_from([(-1.0, 1.0), (0.25, 4.0)]),
    seed=st.integers(0, 2**16),
)
def test_projection_textures_match_the_staged_path(fmt, log2, top, filters, bias, w_range, seed) -> None:
    """s / w, t / w per fragment (w crossing 0 included: NaN and infinities as the staged path's nan_to_num)."""
    capture = cube_capture(seed, fmt, 1 << log2, (0, min(top, log2 - 3)), filters, bias, "projection", w_range)
    stats, pipe = assert_same(capture)
    assert pipe.fused_fragment_draws == len(stats) == 3


def test_mipmaps_and_cube_maps_are_linked_only_for_a_plan_using_them() -> None:
    """``features.texture_args`` gives ``_texture`` the entry of ``_levels`` (compiling it) only when a used unit
    has mipmaps or a cube map: a capture of plain 2D textures never compiles the LOD, the level choice or the
    blend."""
    units = np.zeros((3, layout.UNIT_INTS), np.int64)
    units[:, layout.U_FACES] = 1
    units[0, layout.U_USED] = 1
    units[1, layout.U_NEEDS_LOD] = 1  # not used
    units[2, layout.U_FACES] = layout.CUBE_FACES  # not used
    border, cache, memory = np.zeros((3, 4), np.float32), level_cache.new(), np.zeros(64, np.uint8)
    assert not features.texture_args(border, cache, units, memory, memory)[2].any()
    units[1, layout.U_USED] = 1
    assert features.texture_args(border, cache, units, memory, memory)[2][0] != 0
