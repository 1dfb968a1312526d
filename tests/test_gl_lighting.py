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
from picaemu.draw import DrawCall, DrawKind
from picaemu.fragment.framebuffer import FramebufferState, read_color_image
from picaemu.gl.compare import compare
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline
from picaemu.state import GpuState
from tests.test_gl import TARGET_WITHIN, needs_egl
from tests.test_lighting_golden import COLOR_ADDR, VBO, identity_vs, lit_sphere_state, put, sphere_vertices
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


def with_textures(st: GpuState, mem: PhysicalMemory) -> None:
    """Texture units 1 and 2 (the random configuration's bump and shadow units) on one RGBA8 texture of noise,
    read with texcoord1 and texcoord2 from o3."""
    texels = np.random.default_rng(7).integers(0, 256, TEX_SIZE * TEX_SIZE * 4, dtype=np.uint8)
    mem.write(TEX_ADDR, texels.tobytes())
    put(st, "TEXUNIT_CONFIG", unit1_enable=1, unit2_enable=1)
    for unit in (1, 2):
        put(st, f"TEXUNIT{unit}_DIM", width=TEX_SIZE, height=TEX_SIZE)
        put(st, f"TEXUNIT{unit}_ADDR", address=TEX_ADDR >> 3)
        put(st, f"TEXUNIT{unit}_TYPE", format=0)
    put(st, "SH_OUTMAP_TOTAL", count=4)
    put(st, "SH_OUTMAP_O3", x=0x0E, y=0x0F, z=0x16, w=0x17)  # texcoord1 u v, texcoord2 u v
    put(st, "VSH_OUTMAP_MASK", o0=1, o1=1, o2=1, o3=1)


def render(st: GpuState, pipeline: Pipeline, textured: bool = False) -> np.ndarray:
    """The sphere drawn by ``pipeline`` -> (H, W, 4) uint8."""
    vertices = sphere_vertices()
    fb = FramebufferState.from_regs(st.regs)
    mem = PhysicalMemory()
    mem.write(COLOR_ADDR, bytes(fb.width * fb.height * 4))
    mem.write(VBO, np.ascontiguousarray(vertices, np.float32).tobytes())
    if textured:
        with_textures(st, mem)
    put(st, "NUMVERTICES", count=len(vertices))
    put(st, "PRIMITIVE_CONFIG", topology=0)
    pipeline.draw(DrawCall(0, DrawKind.ARRAYS, st, mem))
    if hasattr(pipeline, "sync"):
        pipeline.sync()
    return read_color_image(mem, fb)


def both(st: GpuState, label: str, textured: bool = False) -> None:
    from picaemu.gl.backend import GLPipeline

    vs = textured_vs if textured else identity_vs
    software = render(st, Pipeline(vertex_shader=vs), textured)
    gl_pipe = GLPipeline(vertex_shader=vs)
    gl = render(st, gl_pipe, textured)
    d = compare(software, gl)
    print(f"{label}: {d.line()}")
    assert gl_pipe.gl_draws == 1 and not gl_pipe.fallbacks, gl_pipe.fallbacks
    assert software[:, :, :3].any(), "the scene is black: nothing was compared"
    assert d.within >= TARGET_WITHIN, f"{label}: {d.line()}"


@needs_egl
@pytest.mark.parametrize("seed", range(16))
def test_random_lighting_matches_software(seed: int) -> None:
    both(lit_state(seed), f"lighting seed {seed}")


@needs_egl
@pytest.mark.parametrize(("bump", "shadow"), [(1, 0), (2, 0), (0, 1), (1, 1)])
def test_bump_and_shadow_units_match_software(bump: int, shadow: int) -> None:
    for seed in range(3):
        both(lit_state(seed, bump, shadow), f"bump {bump} shadow {shadow} seed {seed}", textured=True)
