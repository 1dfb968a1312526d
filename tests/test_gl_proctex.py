"""The procedural texture in generated GLSL (picaemu.gl.proctexgen) against the software unit
(picaemu.texture.proctex): random configurations — every clamp mode, mapping function and shift, noise on and off
with random amplitude, phase and frequency, separate alpha, all six filters with random LOD bias and range, random
noise / map / color tables — on a perspective-correct mesh whose coordinates are not affine in the pixel (so the LOD
varies per fragment) and run past [0, 1] on both sides; odd seeds draw the mesh past the viewport, so that clipping
cuts it into fans; half the seeds set a scissor box (exclude or include). Each image is rendered by both pipelines;
GL must render the draw itself (no fallback) and stay within 2 levels on >= 99.5 % of the pixels (the figures are
printed: run with -s). Needs EGL (skips like test_gl.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from picaemu import numeric
from picaemu.color import tev
from picaemu.draw import DrawCall, DrawKind
from picaemu.fragment.framebuffer import FramebufferState, read_color_image
from picaemu.gl.compare import ImageDiff, compare
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline
from picaemu.state import GpuState
from picaemu.texture.proctex import ProctexState
from tests.test_gl import TARGET_WITHIN, needs_egl
from tests.test_lighting_golden import COLOR_ADDR, UNUSED, VBO, base_state, identity_vs, put

SIZE = (96, 96)
GRID = 8  # mesh cells per side
OFFSETS = {32: (0, 32, 48, 56), 64: (0, 64, 96, 112), 128: (0, 128, 192, 224)}  # color-table offsets by width


def mesh(scale: float, clipped: bool = False) -> np.ndarray:
    """(V, 2, 4) float32 triangle list over the viewport: position (x w, y w, -0.5 w, w) with w from 1 (bottom)
    to 3 (top), texture coordinates ``scale`` (p + 0.4 p^2) - 0.3 per axis (per-vertex, so not affine).
    ``clipped``: the mesh runs 35 % past the viewport on every side, so that clipping cuts its border triangles
    into fans (the neighbours a LOD reads then lie in other window triangles of the same primitive)."""
    p = np.linspace(-1.0, 1.0, GRID + 1)
    x, y = np.meshgrid(p, p, indexing="xy")
    w = 2.0 + y
    uv = scale * (np.stack([x, y], -1) + 0.4 * np.stack([x, y], -1) ** 2) - 0.3
    attrs = np.zeros((GRID + 1, GRID + 1, 2, 4), np.float32)
    reach = 1.35 if clipped else 1.0
    attrs[..., 0, :] = np.stack([reach * x * w, reach * y * w, -0.5 * w, w], -1)
    attrs[..., 1, :2] = uv
    tris = []
    for i in range(GRID):
        for j in range(GRID):
            a, b, c, d = attrs[i, j], attrs[i, j + 1], attrs[i + 1, j + 1], attrs[i + 1, j]
            tris += [a, b, c, a, c, d]
    return np.array(tris, np.float32)


def _map_table(rng: np.random.Generator) -> np.ndarray:
    """128 map entries: random values (0..4095) with the 12-bit difference to the next one."""
    value = rng.integers(0, 4096, 129)
    diff = np.clip(value[1:] - value[:-1], -2048, 2047)
    return (value[:128] | ((diff & 0xFFF) << 12)).astype(np.uint32)


def random_state(seed: int) -> tuple[GpuState, float]:
    """A GpuState reading the procedural texture on TEV stage 0 (rgb and alpha), and the mesh's uv scale."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    st = base_state((0x0C, 0x0D, UNUSED, UNUSED), None, SIZE)
    put(st, "TEXENV0_SOURCE", rgb_src0=tev.SRC_TEXTURES[3], alpha_src0=tev.SRC_TEXTURES[3])
    put(st, "TEXUNIT_CONFIG", unit3_enable=1, unit3_coords=0)
    bias = numeric.to_f16(rng.choice([0.0, 0.5, 1.0, 2.5, -1.5]))
    put(
        st,
        "TEXUNIT3_PROCTEX0",
        u_clamp=rng.randrange(5),
        v_clamp=rng.randrange(5),
        rgb_func=rng.randrange(10),
        alpha_func=rng.randrange(10),
        separate_alpha=rng.randrange(2),
        noise_enable=rng.randrange(2),
        u_shift=rng.randrange(3),
        v_shift=rng.randrange(3),
        lod_bias_low=bias & 0xFF,
    )
    put(st, "TEXUNIT3_PROCTEX1", u_amplitude=rng.randrange(-4000, 4000) & 0xFFFF, u_phase=numeric.to_f16(rng.random()))
    put(st, "TEXUNIT3_PROCTEX2", v_amplitude=rng.randrange(-4000, 4000) & 0xFFFF, v_phase=numeric.to_f16(rng.random()))
    put(
        st,
        "TEXUNIT3_PROCTEX3",
        u_frequency=numeric.to_f16(rng.uniform(0.1, 3.0)),
        v_frequency=numeric.to_f16(rng.uniform(0.1, 3.0)),
    )
    width = rng.choice(list(OFFSETS))
    min_lod = rng.randrange(4)
    put(
        st,
        "TEXUNIT3_PROCTEX4",
        filter=rng.randrange(6),
        min_lod=min_lod,
        max_lod=rng.randrange(min_lod, 8),
        width=width,
        lod_bias_high=bias >> 8,
    )
    put(st, "TEXUNIT3_PROCTEX5", **{f"offset{k}": o for k, o in enumerate(OFFSETS[width])})
    for table in (0, 2, 3):
        st.proctex_luts[table, :128] = _map_table(nrng)
    color = nrng.integers(0, 256, (257, 4))
    st.proctex_luts[4] = (color[:256] << np.array([0, 8, 16, 24])).sum(axis=1).astype(np.uint32)
    half = ((color[1:] - color[:-1]) // 2) & 0xFF
    st.proctex_luts[5] = (half << np.array([0, 8, 16, 24])).sum(axis=1).astype(np.uint32)
    if seed % 4 >= 2:  # a scissor box (exclude or include): the LOD's neighbours stop at its edges
        put(st, "SCISSORTEST_MODE", mode=1 if seed % 4 == 2 else 3)
        put(st, "SCISSORTEST_POS", x1=20, y1=30)
        put(st, "SCISSORTEST_DIM", x2=70, y2=61)
    ProctexState.from_state(st)  # a valid configuration (raises on a color table past its end)
    return st, rng.uniform(0.8, 3.0)


def render(st: GpuState, vertices: np.ndarray, pipeline: Pipeline, data: dict[int, bytes] | None = None) -> np.ndarray:
    """One draw of ``vertices`` by ``pipeline`` into a cleared color buffer (``data``: more bytes by address, e.g.
    textures) -> (H, W, 4) uint8."""
    fb = FramebufferState.from_regs(st.regs)
    mem = PhysicalMemory()
    for address, blob in (data or {}).items():
        mem.write(address, blob)
    mem.write(COLOR_ADDR, bytes(fb.width * fb.height * 4))
    mem.write(VBO, np.ascontiguousarray(vertices, np.float32).tobytes())
    put(st, "NUMVERTICES", count=len(vertices))
    put(st, "PRIMITIVE_CONFIG", topology=0)
    pipeline.draw(DrawCall(0, DrawKind.ARRAYS, st, mem))
    if hasattr(pipeline, "sync"):
        pipeline.sync()
    return read_color_image(mem, fb)


def gl_beside_software(
    st: GpuState, vertices: np.ndarray, label: str, data: dict[int, bytes] | None = None, vertex_shader=identity_vs
) -> tuple[np.ndarray, ImageDiff]:
    """One draw by the software pipeline and by the GL backend from copies of ``st``: asserts GL drew it (no
    fallback) and that >= TARGET_WITHIN of the pixels agree within 2 levels; returns the software picture and the
    comparison (each test asserts its picture is not trivially uniform)."""
    from picaemu.gl.backend import GLPipeline

    software = render(st.copy(), vertices, Pipeline(vertex_shader=vertex_shader), data)
    gl_pipe = GLPipeline(vertex_shader=vertex_shader)
    gl = render(st.copy(), vertices, gl_pipe, data)
    d = compare(software, gl)
    print(f"{label}: {d.line()}")
    assert gl_pipe.gl_draws == 1 and not gl_pipe.fallbacks, gl_pipe.fallbacks
    assert d.within >= TARGET_WITHIN, f"{label}: {d.line()}"
    return software, d


@needs_egl
@pytest.mark.parametrize("seed", range(24))
def test_random_proctex_matches_software(seed: int) -> None:
    st, scale = random_state(seed)
    ps = ProctexState.from_state(st)
    label = f"proctex seed {seed} (filter {ps.linear}/{ps.mip}, bias {ps.lod_bias}, noise {ps.noise_enable})"
    software, _ = gl_beside_software(st, mesh(scale, clipped=seed % 2 == 1), label)
    assert len(np.unique(software.reshape(-1, 4), axis=0)) > 1, "one color: nothing was compared"
