"""Rasterizer: coverage and fill rule, perspective-correct interpolation, depth map, scissor, clamping."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.geometry import output_map as om
from picaemu.geometry.clipping import WindowTriangles
from picaemu.raster.rasterizer import RasterState, rasterize

NV = om.NUM_COLUMNS - 4


def window(tris_px, inv_w=None, zndc=None, varyings=None) -> WindowTriangles:
    """Triangles given in pixels (converted to 12.4 here; the values chosen are exact)."""
    p = np.asarray(tris_px, np.float64)
    t = p.shape[0]
    return WindowTriangles(
        x=np.round(p[:, :, 0] * 16).astype(np.int64),
        y=np.round(p[:, :, 1] * 16).astype(np.int64),
        zndc=np.zeros((t, 3), np.float32) if zndc is None else np.asarray(zndc, np.float32),
        inv_w=np.ones((t, 3), np.float32) if inv_w is None else np.asarray(inv_w, np.float32),
        varyings=np.zeros((t, 3, NV), np.float32) if varyings is None else np.asarray(varyings, np.float32),
        primitive=np.arange(t, dtype=np.int32),
    )


def state(w=16, h=16, scissor_mode=0, box=(0, 0, 0, 0), scale=-1.0, offset=0.0, w_buffer=False) -> RasterState:
    return RasterState(w, h, scissor_mode, box, scale, offset, w_buffer)


def coverage(frags, w=16, h=16) -> np.ndarray:
    img = np.zeros((h, w), int)
    np.add.at(img, (frags.y, frags.x), 1)
    return img


def test_right_triangle_excludes_the_hypotenuse_samples():
    frags, counts = rasterize(window([[(0, 0), (4, 0), (0, 4)]]), state())
    # samples (X + .5, Y + .5) with X + Y + 1 < 4; X + Y + 1 == 4 lies on the right edge -> excluded
    assert sorted(zip(frags.x.tolist(), frags.y.tolist(), strict=True)) == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (2, 0),
    ]
    assert counts["fragments_rasterized"] == 6


def test_flat_top_edge_excluded_flat_bottom_edge_included():
    """The tested reference's rule in y-up window coordinates: a sample on a flat edge belongs to the triangle when
    the triangle lies above that edge (its bottom edge), not when it lies below it (its top edge)."""
    bottom = rasterize(window([[(0, 0.5), (4, 0.5), (0, 4.5)]]), state())[0]
    assert (coverage(bottom)[:, :5].sum(axis=1)[:5]).tolist() == [4, 3, 2, 1, 0]  # row 0 sits on the bottom edge
    top = rasterize(window([[(0, 0), (4, 3.5), (0, 3.5)]]), state())[0]
    assert (coverage(top)[3] > 0).sum() == 0  # samples on y = 3.5 lie on the top edge: excluded


def test_half_pixel_rectangle_covers_rows_from_its_bottom_edge():
    """A sprite from (2.5, 2.5) to (6.5, 5.5): columns 2-5 (left edge in, right out), rows 2-4 (bottom in, top
    out) — 12 pixels, none of them one row up."""
    rect = [[(2.5, 2.5), (6.5, 2.5), (6.5, 5.5)], [(2.5, 2.5), (6.5, 5.5), (2.5, 5.5)]]
    img = coverage(rasterize(window(rect), state())[0])
    expected = np.zeros((16, 16), int)
    expected[2:5, 2:6] = 1
    assert img.tolist() == expected.tolist()


def _covered_scalar(tri: list[tuple[int, int]], px: int, py: int) -> bool:
    """Coverage of pixel (px, py) restated from the reference, one sample, exact integers (12.4 units): the sample
    (16 px + 8, 16 py + 8) is inside when, for each edge, its edge function is positive, or zero on an edge whose
    opposite vertex lies right of it (non-flat edge) or above it (flat edge)."""
    sx, sy = 16 * px + 8, 16 * py + 8
    for i in range(3):
        (ax, ay), (bx, by), (ox, oy) = tri[(i + 1) % 3], tri[(i + 2) % 3], tri[i]
        e = (bx - ax) * (sy - ay) - (by - ay) * (sx - ax)
        if by == ay:
            owned = oy > ay  # the triangle is above this flat edge: it is the bottom edge
        else:  # opposite vertex right of the edge's line at the vertex's height (cross-multiplied, exact)
            owned = (ox - ax) * (by - ay) * (1 if by > ay else -1) > (bx - ax) * (oy - ay) * (1 if by > ay else -1)
        if e < 0 or (e == 0 and not owned):
            return False
    return True


@pytest.mark.parametrize("seed", range(4))
def test_coverage_matches_scalar_restatement(seed: int):
    """Random small counter-clockwise triangles on a coarse sub-pixel grid (so samples often sit exactly on
    edges), every pixel of the framebuffer checked against ``_covered_scalar``."""
    rng = np.random.default_rng(seed)
    tris = []
    while len(tris) < 40:
        t = [tuple(int(c) for c in rng.integers(0, 16 * 12, 2) // 8 * 8) for _ in range(3)]
        area = (t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) - (t[1][1] - t[0][1]) * (t[2][0] - t[0][0])
        if area > 0:
            tris.append(t)
    for t in tris:
        frags = rasterize(window([[(x / 16, y / 16) for x, y in t]]), state())[0]
        got = {(int(x), int(y)) for x, y in zip(frags.x, frags.y, strict=True)}
        want = {(x, y) for x in range(16) for y in range(16) if _covered_scalar(t, x, y)}
        assert got == want, t


def test_shared_edges_cover_every_pixel_once():
    quad = [[(1, 1), (9, 1), (9, 9)], [(1, 1), (9, 9), (1, 9)]]
    img = coverage(rasterize(window(quad), state())[0])
    assert img[1:9, 1:9].tolist() == np.ones((8, 8), int).tolist() and img.sum() == 64


def test_perspective_correct_interpolation_and_depth():
    vary = np.zeros((1, 3, NV), np.float32)
    vary[0, 1, 0] = 1.0 * 0.5  # varying = 1 at vertex 1, premultiplied by its 1/w
    args = dict(inv_w=[[1.0, 0.5, 0.25]], zndc=[[0.0, -1.0, -0.5]], varyings=vary)
    tri = [[(0, 0), (16, 0), (0, 16)]]
    for w_buffer in (False, True):
        frags = rasterize(window(tri, **args), state(w=32, h=32, w_buffer=w_buffer))[0]
        k = int(np.nonzero((frags.x == 3) & (frags.y == 5))[0][0])
        # screen barycentrics at (3.5, 5.5): l0 = 7/16, l1 = 3.5/16, l2 = 5.5/16
        den = (7 * 1.0 + 3.5 * 0.5 + 5.5 * 0.25) / 16  # 10.125 / 16
        assert frags.color[k, 0] == pytest.approx(3.5 / 16 * 0.5 / den, rel=1e-5)
        assert frags.w[k] == pytest.approx(1 / den, rel=1e-5)
        z = (3.5 * -1.0 + 5.5 * -0.5) / 16
        assert frags.depth[k] == pytest.approx(-z * (1 / den if w_buffer else 1.0), rel=1e-5)


def test_quaternion_is_normalised():
    vary = np.zeros((1, 3, NV), np.float32)
    vary[0, :, om.QUAT.start - 4 + 3] = 2.0
    frags = rasterize(window([[(0, 0), (8, 0), (0, 8)]], varyings=vary), state())[0]
    assert np.allclose(frags.quat, [0, 0, 0, 1])


@pytest.mark.parametrize(("mode", "kept"), [(0, 64), (2, 64), (3, 9), (1, 55)])
def test_scissor_modes(mode, kept):
    from picaemu.raster.rasterizer import SCISSOR_KERNEL_MODE

    quad = [[(0, 0), (8, 0), (8, 8)], [(0, 0), (8, 8), (0, 8)]]
    frags, counts = rasterize(window(quad), state(scissor_mode=SCISSOR_KERNEL_MODE[mode], box=(2, 2, 4, 4)))
    assert len(frags) == kept and counts["killed_scissor"] == 64 - kept
    inside = (frags.x >= 2) & (frags.x <= 4) & (frags.y >= 2) & (frags.y <= 4)
    if mode == 3:
        assert inside.all()
    if mode == 1:
        assert not inside.any()


def test_clamped_to_the_framebuffer():
    huge = [[(-100, -100), (300, -100), (-100, 300)]]
    frags = rasterize(window(huge), state(w=8, h=16))[0]
    assert len(frags) == 8 * 16 and frags.x.max() == 7 and frags.y.max() == 15


def test_no_triangles():
    frags, counts = rasterize(window(np.zeros((0, 3, 2))), state())
    assert len(frags) == 0 and counts["fragments_rasterized"] == 0


def test_only_active_varyings_are_interpolated_the_rest_read_one():
    vary = np.full((1, 3, NV), 0.25, np.float32)
    frags = rasterize(window([[(0, 0), (8, 0), (0, 8)]], varyings=vary), state(), active=np.arange(4))[0]
    assert np.allclose(frags.color, 0.25)
    assert (frags.texcoord0 == 1.0).all() and (frags.view == 1.0).all() and (frags.texcoord0_w == 1.0).all()
    assert len(frags.select(np.array([0, 1])).texcoord1) == 2


@pytest.mark.parametrize("scissor_mode", [0, 1, 2])
def test_counting_first_gives_the_same_fragments(monkeypatch, scissor_mode):
    """Small draws write into bounding-box-sized arrays in one walk; large ones count first: same fragments."""
    import picaemu.raster.rasterizer as rz

    rng = np.random.default_rng(scissor_mode)
    tris = rng.uniform(-2, 18, (40, 3, 2))
    (ax, ay), (bx, by) = (tris[:, 1] - tris[:, 0]).T, (tris[:, 2] - tris[:, 0]).T
    ccw = ax * by - ay * bx > 0
    tris[~ccw] = tris[~ccw][:, ::-1]  # the rasterizer receives counter-clockwise triangles only
    wt = window(tris, varyings=rng.uniform(0, 1, (40, 3, NV)))
    rs = state(scissor_mode=scissor_mode, box=(3, 4, 11, 9))
    one_pass, one_counts = rasterize(wt, rs, np.arange(6))
    monkeypatch.setattr(rz, "ONE_PASS_BYTES", 0)
    counted, counted_counts = rasterize(wt, rs, np.arange(6))
    assert one_counts == counted_counts and len(one_pass) > 100
    for name in ("x", "y", "depth", "w", "primitive", "color", "texcoord0"):
        assert np.array_equal(getattr(one_pass, name), getattr(counted, name)), name
