"""Mip-mapped texture units in generated GLSL against the software sampler: random filters (nearest/linear for
magnification and minification, nearest/linear between levels), wrap modes, LOD bias and level ranges on the
perspective mesh of tests/test_gl_proctex.py, whose coordinates are not affine in the pixel (the level changes from
pixel to pixel, inside 2x2 quads too); odd seeds clip the mesh into fans at the viewport's edges. GL must render the
draw itself and stay within 2 levels on >= 99.5 % of the pixels (figures printed: run with -s).

Regression cover for four faults the procedural texture work found in the unit code: derivatives from GL's
helper invocations (NaN on every other triangle under llvmpipe), ``textureSize`` with a per-pixel level (llvmpipe
answers with another pixel's level), the mip-linear code that did not compile, and neighbours across a clipped
primitive's fan edges (about 1 % of the pixels over 2 levels before). Needs EGL (skips like
test_gl.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from picaemu.color import tev
from picaemu.state import GpuState
from tests.test_gl import needs_egl
from tests.test_gl_proctex import SIZE, gl_beside_software, mesh
from tests.test_lighting_golden import UNUSED, base_state, put

TEX_ADDR = 0x18200000
TEX_SIZE = 64
WRAPS = (0, 2, 3)  # clamp to edge, repeat, mirrored repeat (border modes sample the border color)


def random_state(seed: int) -> tuple[GpuState, float]:
    """Unit 0 (RGBA8, 64x64, levels up to 3) read by TEV stage 0, with random filters, wraps and LOD settings."""
    rng = random.Random(seed)
    st = base_state((0x0C, 0x0D, UNUSED, UNUSED), None, SIZE)
    put(st, "TEXENV0_SOURCE", rgb_src0=tev.SRC_TEXTURES[0], alpha_src0=tev.SRC_TEXTURES[0])
    put(st, "TEXUNIT_CONFIG", unit0_enable=1)
    put(st, "TEXUNIT0_DIM", width=TEX_SIZE, height=TEX_SIZE)
    put(st, "TEXUNIT0_ADDR1", address=TEX_ADDR >> 3)
    put(st, "TEXUNIT0_TYPE", format=0)
    put(
        st,
        "TEXUNIT0_PARAM",
        mag_filter=rng.randrange(2),
        min_filter=rng.randrange(2),
        mip_filter=rng.randrange(2),
        wrap_s=rng.choice(WRAPS),
        wrap_t=rng.choice(WRAPS),
    )
    min_level = rng.randrange(2)
    bias = round(rng.choice([0.0, 0.75, -0.5, 1.5]) * 256) & 0x1FFF  # fixed 1.4.8, two's complement
    put(st, "TEXUNIT0_LOD", min_level=min_level, max_level=rng.randrange(min_level, 4), bias=bias)
    return st, rng.uniform(1.0, 3.0)


@needs_egl
@pytest.mark.parametrize("seed", range(12))
def test_random_mipmapped_unit_matches_software(seed: int) -> None:
    st, scale = random_state(seed)
    texels = {TEX_ADDR: np.random.default_rng(seed).integers(0, 256, TEX_SIZE * TEX_SIZE * 8, np.uint8).tobytes()}
    software, _ = gl_beside_software(st, mesh(scale, clipped=seed % 2 == 1), f"mip-mapped unit seed {seed}", texels)
    assert len(np.unique(software.reshape(-1, 4), axis=0)) > 1, "one color: nothing was compared"


def test_siblings_by_hand() -> None:
    """Window triangles of one primitive (a clipped fan) are consecutive: first index and count of each run."""
    from picaemu.gl.backend import siblings

    first, count = siblings(np.array([0, 1, 1, 1, 2, 5, 5], np.int32))
    assert first.tolist() == [0, 1, 1, 1, 4, 5, 5] and count.tolist() == [1, 3, 3, 3, 1, 2, 2]
    assert [a.size for a in siblings(np.zeros(0, np.int32))] == [0, 0]
