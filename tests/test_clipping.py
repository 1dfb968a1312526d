"""Clipping (frustum, near, w > 0, user plane), quaternion alignment, viewport, culling."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import PipelineError
from picaemu.geometry import clipping
from picaemu.geometry import output_map as om
from picaemu.geometry.clipping import ClipState, ViewportState
from picaemu.numeric import to_f24
from picaemu.regs import access, id_of


def tri(*positions, colors=None) -> np.ndarray:
    t = np.ones((1, 3, om.NUM_COLUMNS), np.float32)
    t[0, :, om.POS] = positions
    if colors is not None:
        t[0, :, om.COLOR] = colors
    return t


def plain_clip() -> ClipState:
    return ClipState.from_regs(np.zeros(0x300, np.uint32))


def test_inside_passes_untouched_outside_dropped():
    inside = tri((0, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0, 0.5, -0.5, 1))
    out, src, counts = clipping.clip_triangles(inside, plain_clip())
    assert np.array_equal(out, inside) and src.tolist() == [0]
    outside = tri((2, 0, -0.5, 1), (3, 0, -0.5, 1), (2, 0.5, -0.5, 1))  # all x > w
    out, src, counts = clipping.clip_triangles(outside, plain_clip())
    assert out.shape[0] == 0 and counts["primitives_clipped_away"] == 1


def test_near_plane_clip_interpolates_every_column():
    # vertex 2 in front of the near plane (z > 0): edges 1-2 and 2-0 are cut halfway
    t = tri((0, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0, 0.5, 0.5, 1), colors=[(1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1)])
    out, src, counts = clipping.clip_triangles(t, plain_clip())
    assert counts["primitives_clipped"] == 1 and out.shape[0] == 2 and src.tolist() == [0, 0]
    pts = {tuple(np.round(v, 6)) for v in out.reshape(-1, om.NUM_COLUMNS)[:, :8].tolist()}
    assert (0.25, 0.25, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0) in pts  # midpoint of 1-2: z = 0, color (0, .5, .5)
    assert (0.0, 0.25, 0.0, 1.0, 0.5, 0.0, 0.5, 1.0) in pts  # midpoint of 2-0
    assert (out[:, :, 2] <= 1e-7).all()


def test_clipped_triangles_keep_submission_order():
    # triangle 0 crosses the near plane (vertex 2 has z > 0), triangle 1 overlaps it wholly inside, triangle 2 is
    # dropped, triangle 3 crosses the near plane again: the fans replace 0 and 3 in place, 1 stays between them
    t0 = tri((-0.5, -0.5, -0.5, 1), (0.5, -0.5, -0.5, 1), (0, 0.5, 0.5, 1), colors=[(1, 0, 0, 1)] * 3)
    t1 = tri((-0.25, -0.5, -0.5, 1), (0.25, -0.5, -0.5, 1), (0, 0, -0.5, 1), colors=[(0, 1, 0, 0.5)] * 3)
    t2 = tri((2, 0, -0.5, 1), (3, 0, -0.5, 1), (2, 0.5, -0.5, 1))  # x > w: outside
    t3 = tri((-0.5, -0.5, 0.5, 1), (0.5, -0.5, -0.5, 1), (0, 0.5, -0.5, 1), colors=[(0, 0, 1, 1)] * 3)
    out, src, counts = clipping.clip_triangles(np.concatenate([t0, t1, t2, t3]), plain_clip())
    assert counts["primitives_clipped"] == 2 and counts["primitives_clipped_away"] == 1
    assert src.tolist() == [0, 0, 1, 3, 3]  # each cut triangle becomes a quad: a fan of two
    assert np.array_equal(out[2], t1[0])
    assert (out[:2, :, om.COLOR] == (1, 0, 0, 1)).all() and (out[3:, :, om.COLOR] == (0, 0, 1, 1)).all()
    # the fan of triangle 0 starts at its first vertex: (-0.5, -0.5), then around the polygon
    assert np.array_equal(out[0, 0, om.POS], t0[0, 0, om.POS]) and np.array_equal(out[0, 2], out[1, 1])


def test_vertex_behind_the_eye_is_clipped_to_positive_w():
    t = tri((0, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0, 0.5, 1.0, -1.0))
    out, _, _ = clipping.clip_triangles(t, plain_clip())
    assert out.shape[0] >= 1
    assert (out[:, :, 3] >= clipping.W_MIN - 1e-7).all() and (out[:, :, 2] <= 1e-7).all()


def test_user_clip_plane():
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("FRAGOP_CLIP")] = 1
    regs[id_of("FRAGOP_CLIP_DATA0")] = to_f24(1.0)  # keep x >= 0
    t = tri((-0.5, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0.5, 0.5, -0.5, 1))
    out, _, _ = clipping.clip_triangles(t, ClipState.from_regs(regs))
    assert (out[:, :, 0] >= -1e-7).all() and out.shape[0] == 2


def test_non_finite_positions_are_dropped_and_counted():
    t = tri((np.nan, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0, 0.5, -0.5, 1))
    out, _, counts = clipping.clip_triangles(t, plain_clip())
    assert out.shape[0] == 0 and counts["primitives_invalid"] == 1


def test_quaternion_alignment():
    t = tri((0, 0, 0, 1), (0, 0, 0, 1), (0, 0, 0, 1))
    t[0, :, om.QUAT] = [(0, 0, 0, 1), (0, 0, 0, -1), (0, 0, 1, 0)]
    clipping.align_quaternions(t)
    assert t[0, :, om.QUAT].tolist() == [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 1, 0]]


@pytest.mark.parametrize("count", [1, 7, 500])
def test_compiled_quaternion_alignment_equals_the_numpy_rule(count):
    """The compiled pass flips exactly what the einsum reference flips, on random scales, near-orthogonal pairs
    (where the summation order decides the sign), zeros, infinities and NaN."""
    rng = np.random.default_rng(count)
    t = rng.standard_normal((count, 3, om.NUM_COLUMNS)) * 10.0 ** rng.integers(-20, 20, (count, 3, 1))
    t = t.astype(np.float32)
    q = t[:, :, om.QUAT]
    near = rng.random(count) < 0.5  # vertex 1 orthogonal to vertex 0 up to rounding
    q0 = q[near, 0].astype(np.float64)
    q1 = q[near, 1].astype(np.float64)
    q[near, 1] = q1 - (np.sum(q1 * q0, axis=1) / np.sum(q0 * q0, axis=1))[:, None] * q0
    specials = rng.random(q.shape) < 0.02
    q[specials] = rng.choice(np.array([0.0, np.inf, -np.inf, np.nan], np.float32), int(specials.sum()))
    t[:, :, om.QUAT] = q
    expect = t.copy()
    clipping.align_quaternions_reference(expect)
    clipping.align_quaternions(t)
    assert np.array_equal(t.view(np.uint32), expect.view(np.uint32))


def viewport_regs(half_w=120.0, half_h=200.0, x=0, y=0, cull=0) -> np.ndarray:
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("VIEWPORT_WIDTH")] = to_f24(half_w)
    regs[id_of("VIEWPORT_HEIGHT")] = to_f24(half_h)
    regs[id_of("VIEWPORT_XY")] = access.compose("VIEWPORT_XY", x=x, y=y)
    regs[id_of("FACECULLING_CONFIG")] = cull
    return regs


def test_viewport_transform_in_12_4():
    vp = ViewportState.from_regs(viewport_regs(x=-4, y=10))
    t = tri((0, 0, -1, 2), (2, 2, 0, 2), (-1, -1, -0.5, 1))
    wt = clipping.to_window(t, np.array([7]), vp)
    # x: (x/w + 1) * 120 - 4 ; y: (y/w + 1) * 200 + 10 ; in 1/16 pixels
    assert wt.x[0].tolist() == [116 * 16, 236 * 16, -4 * 16]
    assert wt.y[0].tolist() == [210 * 16, 410 * 16, 10 * 16]
    assert wt.zndc[0].tolist() == [-0.5, 0.0, -0.5] and wt.inv_w[0].tolist() == [0.5, 0.5, 1.0]
    assert wt.varyings[0, 0, 0] == 0.5 and wt.primitive.tolist() == [7]


def test_bad_viewport_is_a_named_error():
    with pytest.raises(PipelineError, match="VIEWPORT_WIDTH"):
        ViewportState.from_regs(viewport_regs(half_w=float("inf")))


@pytest.mark.parametrize(
    ("mode", "ccw_kept", "cw_kept"), [(0, True, True), (1, False, True), (2, True, False), (3, True, True)]
)
def test_culling_modes(mode, ccw_kept, cw_kept):
    vp = ViewportState.from_regs(viewport_regs(cull=mode))
    ccw = tri((0, 0, -0.5, 1), (0.5, 0, -0.5, 1), (0, 0.5, -0.5, 1))
    cw = ccw[:, [0, 2, 1]]
    for t, expect in ((ccw, ccw_kept), (cw, cw_kept)):
        kept, culled = clipping.cull(clipping.to_window(t, np.array([0]), vp), vp.cull_mode)
        assert (len(kept) == 1) == expect and culled == (0 if expect else 1)
        if expect:
            assert clipping.signed_area(kept)[0] > 0  # reordered counter-clockwise


def test_zero_area_triangles_always_dropped():
    vp = ViewportState.from_regs(viewport_regs())
    flat = tri((0, 0, -0.5, 1), (0.5, 0.5, -0.5, 1), (1, 1, -0.5, 1))
    kept, culled = clipping.cull(clipping.to_window(flat, np.array([0]), vp), 0)
    assert len(kept) == 0 and culled == 1


def _classes_matrix(tris: np.ndarray, clip: ClipState) -> np.ndarray:
    """(T,) int8 classes against the planes of ``clip`` as one float64 matrix product (readable oracle)."""
    pos = tris[:, :, om.POS].astype(np.float64)
    finite = np.isfinite(pos).all(axis=(1, 2))
    with np.errstate(invalid="ignore"):  # inf * 0 in the product (those rows are INVALID anyway)
        inside = (pos @ clip.planes.T + clip.offsets) >= -clipping.INSIDE_EPS  # (T, 3, P)
    rejected = (~inside).all(axis=1).any(axis=1)
    classes = np.where(inside.all(axis=(1, 2)), clipping.KEEP, np.where(rejected, clipping.REJECT, clipping.STRADDLE))
    return np.where(finite, classes, clipping.INVALID).astype(np.int8)


def _boundary_triangles(seed: int) -> np.ndarray:
    """Random (4000, 3, C) triangles, many on the fixed planes' boundaries, some with non-finite positions."""
    rng = np.random.default_rng(seed)
    tris = rng.uniform(-2, 2, (4000, 3, om.NUM_COLUMNS)).astype(np.float32)
    w = tris[:, :, 3]
    tris[:1000, :, 0] = w[:1000] * rng.choice([-1, 1], (1000, 3))  # x = +-w
    tris[1000:2000, :, 2] = rng.choice([0.0, -0.0, -1e-8, 1e-8], (1000, 3))  # on the near plane
    tris[2000:2500, :, 3] = rng.choice([clipping.W_MIN, np.float32(clipping.W_MIN), 0.0], (500, 3))
    tris[2500:2600, 1, rng.integers(0, 4)] = np.nan
    tris[2600:2700, 2, rng.integers(0, 4)] = -np.inf
    return tris


def test_fixed_plane_kernel_matches_the_generic_plane_path():
    # the compiled classifier writes the fixed planes out term by term; the generic one sums every plane's terms,
    # the oracle takes a matrix product: they must agree everywhere, on plane boundaries and with non-finite
    # positions too
    tris = _boundary_triangles(5)
    clip = plain_clip()
    kernel = clipping._classes(tris, clip)
    generic = np.empty_like(kernel)
    clipping._classify_planes(tris, clip.planes, clip.offsets, generic)
    assert np.array_equal(kernel, generic)
    assert np.array_equal(kernel, _classes_matrix(tris, clip))
    assert set(np.unique(kernel).tolist()) == {clipping.KEEP, clipping.REJECT, clipping.STRADDLE, clipping.INVALID}


def test_user_plane_classes_match_the_matrix_form():
    """With the user plane (x + y >= 0, exact in float64 for these inputs) the generic classifier agrees with the
    matrix product, boundary vertices included."""
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("FRAGOP_CLIP")] = 1
    regs[id_of("FRAGOP_CLIP_DATA0")] = to_f24(1.0)
    regs[id_of("FRAGOP_CLIP_DATA1")] = to_f24(1.0)
    clip = ClipState.from_regs(regs)
    tris = _boundary_triangles(6)
    tris[3000:3500, :, 1] = -tris[3000:3500, :, 0]  # on the user plane
    kernel = clipping._classes(tris, clip)
    assert np.array_equal(kernel, _classes_matrix(tris, clip))
    assert not np.array_equal(kernel, clipping._classes(tris, plain_clip()))  # the user plane matters


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_compiled_cull_equals_the_numpy_reference(mode: int) -> None:
    """Random triangles (zero-area, clockwise and counter-clockwise among them): the compiled pass keeps, drops and
    reorders exactly as the readable numpy rule does."""
    from picaemu.geometry.clipping import WindowTriangles, cull, cull_reference

    rng = np.random.default_rng(mode)
    t = 500
    x = rng.integers(0, 64, (t, 3)).astype(np.int64) * 16
    y = rng.integers(0, 64, (t, 3)).astype(np.int64) * 16
    x[::17, 1], y[::17, 1] = x[::17, 0], y[::17, 0]  # degenerate triangles
    wt = WindowTriangles(
        x,
        y,
        rng.random((t, 3), dtype=np.float32),
        rng.random((t, 3), dtype=np.float32),
        rng.random((t, 3, 5), dtype=np.float32),
        np.arange(t, dtype=np.int32),
    )
    got, got_culled = cull(wt, mode)
    want, want_culled = cull_reference(wt, mode)
    assert got_culled == want_culled and 0 < len(got) < t
    for field in ("x", "y", "zndc", "inv_w", "varyings", "primitive"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
