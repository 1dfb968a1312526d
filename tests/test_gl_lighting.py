"""Fragment lighting in generated GLSL (picaemu.gl.lightgen) against the software kernel: the lit-sphere test scene
of tests/test_lighting_golden.py with random lighting configurations (tests/test_lighting_random.py: 1-3 lights,
directional or positional, spot and distance attenuation, two-sided, geometric factors, clamp, Fresnel, every LUT
configuration, signed and unsigned inputs, scales), and a bump-mapped and shadowed variant reading texture units.
Each image is rendered by both pipelines; the GL one must render the draw itself (no fallback) and stay within
2 levels on >= 99.5 % of the pixels (the figures are printed: run with -s). Needs EGL (skips like test_gl.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from picaemu.color import lighting_luts
from picaemu.state import GpuState
from tests.test_gl import needs_egl
from tests.test_gl_proctex import gl_beside_software
from tests.test_lighting_golden import identity_vs, lit_sphere_state, put, sphere_vertices
from tests.test_lighting_random import LUT_ROW, build_state, random_config

TEX_ADDR = 0x18200000
TEX_SIZE = 32


def lit_state(seed: int, bump: int = 0, shadow: int = 0) -> GpuState:
    """The lit sphere's state with the lighting registers and LUTs of random configuration ``seed``; TEV stage 0
    adds the two lighting colors (rgb) and their alphas."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    tables = np.zeros((24, 256), np.uint32)
    for row in [*LUT_ROW.values(), *range(8, 24)]:
        tables[row] = lighting_luts.encode_entries(np.sort(nrng.uniform(0, 1, 256)))
    cfg = random_config(rng)
    cfg.update(bump=bump, shadow=shadow)
    lighting = build_state(cfg, tables)
    st = lit_sphere_state()
    changed = np.flatnonzero(lighting.regs)
    st.regs[changed] = lighting.regs[changed]
    st.lighting_luts[:] = tables
    put(st, "TEXENV0_SOURCE", rgb_src0=1, rgb_src1=2, alpha_src0=1, alpha_src1=2)
    put(st, "TEXENV0_COMBINER", rgb_combine=2, alpha_combine=2)
    return st


def textured_vs(ds: object, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    """``identity_vs`` plus o3 = texture coordinates from the position (x y -> 0..1)."""
    out = identity_vs(ds, attributes, counters)
    uv = attributes[:, 0, :2] * 0.5 + 0.5
    out[:, 3] = np.concatenate([uv, uv[:, ::-1]], axis=1)
    return out


def with_textures(st: GpuState) -> dict[int, bytes]:
    """Texture units 1 and 2 (the random configuration's bump and shadow units) on one RGBA8 texture of noise,
    read with texcoord1 and texcoord2 from o3; returns the texture's bytes by address."""
    texels = np.random.default_rng(7).integers(0, 256, TEX_SIZE * TEX_SIZE * 4, dtype=np.uint8)
    put(st, "TEXUNIT_CONFIG", unit1_enable=1, unit2_enable=1)
    for unit in (1, 2):
        put(st, f"TEXUNIT{unit}_DIM", width=TEX_SIZE, height=TEX_SIZE)
        put(st, f"TEXUNIT{unit}_ADDR", address=TEX_ADDR >> 3)
        put(st, f"TEXUNIT{unit}_TYPE", format=0)
    put(st, "SH_OUTMAP_TOTAL", count=4)
    put(st, "SH_OUTMAP_O3", x=0x0E, y=0x0F, z=0x16, w=0x17)  # texcoord1 u v, texcoord2 u v
    put(st, "VSH_OUTMAP_MASK", o0=1, o1=1, o2=1, o3=1)
    return {TEX_ADDR: texels.tobytes()}


def both(st: GpuState, label: str, textured: bool = False) -> None:
    data = with_textures(st) if textured else None
    software, _ = gl_beside_software(st, sphere_vertices(), label, data, textured_vs if textured else identity_vs)
    assert software[:, :, :3].any(), "the scene is black: nothing was compared"


@needs_egl
@pytest.mark.parametrize("seed", range(16))
def test_random_lighting_matches_software(seed: int) -> None:
    both(lit_state(seed), f"lighting seed {seed}")


@needs_egl
@pytest.mark.parametrize(("bump", "shadow"), [(1, 0), (2, 0), (0, 1), (1, 1)])
def test_bump_and_shadow_units_match_software(bump: int, shadow: int) -> None:
    for seed in range(3):
        both(lit_state(seed, bump, shadow), f"bump {bump} shadow {shadow} seed {seed}", textured=True)
