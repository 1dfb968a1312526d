"""Shadow textures in generated GLSL (``shadow_lookup`` of picaemu.gl.glsl_lib) against the software sampler: unit 0
as shadow 2D (perspective and orthographic) and shadow cube over random shadow maps (random depths and
intensities, so about half the texels are lit), with random wrap modes, depth bias and first level, read by the TEV
and by fragment lighting's shadow term; the format register says RGBA8 or RGB565 (the map is read as RGBA8
either way). Texture coordinates and w vary per vertex of the perspective mesh of
tests/test_gl_proctex.py, so the reference depth min(|w|, 1) and the face change across the picture. GL must
render the draw itself and stay within 2 levels on >= 99.5 % of the pixels (figures printed: run with -s).
Needs EGL (skips like test_gl.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from picaemu import numeric
from picaemu.color import tev
from picaemu.gl.compare import compare
from picaemu.pipeline import Pipeline
from picaemu.regs import access, id_of
from picaemu.regs.blocks.texturing import TEXTURE_TYPES
from picaemu.state import GpuState
from tests.test_gl import needs_egl
from tests.test_gl_proctex import SIZE, gl_beside_software, mesh
from tests.test_lighting_golden import base_state, identity_vs, put

TEX_ADDR = 0x18200000
MAP_SIZE = 32
FACE_BYTES = MAP_SIZE * MAP_SIZE * 4 * 2  # a face with its level 1
TYPE = {name: code for code, name in TEXTURE_TYPES.items()}
CASES = [("shadow 2D", False), ("shadow 2D", True), ("shadow cube", False)]  # (type, orthographic)


def shadow_state(seed: int, ttype: str, ortho: bool, lit: bool) -> GpuState:
    """Unit 0 of type ``ttype`` on texcoord0 (u, v) and its w; TEV stage 0 reads it (``lit``: the fragment
    lighting's primary color with the unit as its shadow term instead)."""
    rng = random.Random(seed)
    st = base_state((0x0C, 0x0D, 0x10, 0x1F), (4, 5, 6, 7) if lit else None, SIZE)  # o1 texcoord0 u v w, o2 quat
    put(st, "TEXUNIT_CONFIG", unit0_enable=1)
    put(st, "TEXUNIT0_DIM", width=MAP_SIZE, height=MAP_SIZE)
    put(st, "TEXUNIT0_ADDR1", address=TEX_ADDR >> 3)
    for face in range(2, 7):
        put(st, f"TEXUNIT0_ADDR{face}", address_low=(TEX_ADDR + (face - 1) * FACE_BYTES) >> 3)
    put(st, "TEXUNIT0_TYPE", format=rng.choice((0, 3)))  # RGBA8, or RGB565: a shadow map is read as RGBA8 anyway
    put(st, "TEXUNIT0_PARAM", type=TYPE[ttype], wrap_s=rng.choice((0, 2, 3)), wrap_t=rng.choice((0, 2, 3)))
    level = rng.randrange(2)
    put(st, "TEXUNIT0_LOD", min_level=level, max_level=1)
    put(st, "TEXUNIT0_SHADOW", orthographic=int(ortho), bias=rng.randrange(0, 1 << 20))
    if not lit:
        put(st, "TEXENV0_SOURCE", rgb_src0=tev.SRC_TEXTURES[0], alpha_src0=tev.SRC_TEXTURES[0])
        return st
    put(st, "TEXENV0_SOURCE", rgb_src0=tev.SRC_LIGHT_PRIMARY, alpha_src0=tev.SRC_CONSTANT)
    put(st, "TEXENV0_COLOR", a=255)
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
        ("LIGHT0_DIFFUSE", dict(r=200, g=150, b=100)),
        ("LIGHTING_AMBIENT", dict(r=30, g=30, b=30)),
    ):
        put(st, name, **fields)
    return st


def vertices(seed: int, cube: bool, lit: bool) -> np.ndarray:
    """The mesh with texcoord0 (u, v) around 0 for cube maps (directions), and w in [0.2, 1.2] per vertex;
    ``lit``: a third attribute, the identity normal quaternion (the normal faces the light)."""
    v = mesh(1.5)
    if lit:
        v = np.concatenate([v, np.broadcast_to(np.float32([0, 0, 0, 1]), (len(v), 1, 4))], axis=1)
    w = np.random.default_rng(seed).uniform(0.2, 1.2, len(v)).astype(np.float32)
    key = np.round(v[:, 0, :2] / v[:, 0, 3:4] * 8).astype(np.int64)  # one w per mesh vertex (shared corners)
    _, first = np.unique(key, axis=0, return_inverse=True)
    v[:, 1, 2] = w[first.ravel()]
    if cube:
        v[:, 1, :2] -= 0.75
    return v


@needs_egl
@pytest.mark.parametrize("lit", [False, True], ids=["tev", "lighting"])
@pytest.mark.parametrize(("ttype", "ortho"), CASES, ids=["2d-perspective", "2d-ortho", "cube"])
@pytest.mark.parametrize("seed", range(3))
def test_shadow_texture_matches_software(seed: int, ttype: str, ortho: bool, lit: bool) -> None:
    st = shadow_state(seed, ttype, ortho, lit)
    verts = vertices(seed, ttype == "shadow cube", lit)
    maps = {TEX_ADDR: np.random.default_rng(seed + 100).integers(0, 256, 6 * FACE_BYTES, np.uint8).tobytes()}
    software, _ = gl_beside_software(st, verts, f"{ttype} ortho={ortho} lit={lit} seed {seed}", maps)
    assert len(np.unique(software.reshape(-1, 4), axis=0)) > 2, "too few colors: nothing was compared"


def shadow_pass(seed: int) -> tuple[GpuState, np.ndarray]:
    """Shadow-map rendering into the 32x32 map at TEX_ADDR: a mesh with random depths (0.2-0.8) and random
    intensities per triangle (the vertex color's green; 40 % of the triangles 0: depth-only writes)."""
    rng = np.random.default_rng(seed)
    st = base_state((8, 9, 10, 11), None, (MAP_SIZE, MAP_SIZE))  # o1 = the vertex color
    put(st, "COLORBUFFER_LOC", address=TEX_ADDR >> 3)
    put(st, "COLOR_OPERATION", fragment_mode=3)  # shadow map rendering
    put(st, "FRAGOP_SHADOW", constant=numeric.to_f16(1.2), linear=numeric.to_f16(-0.6))
    put(st, "TEXENV0_SOURCE", rgb_src0=tev.SRC_PRIMARY, alpha_src0=tev.SRC_PRIMARY)
    v = mesh(1.0)[:, :, :].copy()
    depth = rng.uniform(0.2, 0.8, len(v)).astype(np.float32)
    v[:, 0, 2] = -depth * v[:, 0, 3]  # depth = -z / w (DEPTHMAP_SCALE -1)
    green = rng.uniform(0.0, 1.0, len(v) // 3).astype(np.float32)
    green[rng.random(len(green)) < 0.4] = 0.0
    green = np.repeat(green, 3)  # one intensity per triangle
    v[:, 1] = np.stack([np.zeros_like(green), green, np.zeros_like(green), np.ones_like(green)], axis=1)
    return st, v


@needs_egl
@pytest.mark.parametrize("seed", range(2))
def test_shadow_map_rendered_then_read(seed: int, caplog: pytest.LogCaptureFixture) -> None:
    """A shadow pass (shadow-map rendering: the software pipeline, named in the log) then a receiver reading the map
    as a shadow texture (GL): the same pictures and the same map bytes as the software pipeline's."""
    from picaemu.draw import DrawCall, DrawKind
    from picaemu.fragment.framebuffer import FramebufferState, read_color_image
    from picaemu.gl.backend import GLPipeline
    from picaemu.memory import PhysicalMemory
    from tests.test_lighting_golden import COLOR_ADDR, VBO

    pass_state, pass_vertices = shadow_pass(seed)
    receiver = shadow_state(seed, "shadow 2D", True, False)
    receiver.regs[id_of("TEXUNIT0_LOD")] = access.compose("TEXUNIT0_LOD", min_level=0, max_level=1)  # the map's level
    receiver_vertices = vertices(seed, False, False)

    def run(pipeline: Pipeline) -> tuple[np.ndarray, bytes]:
        mem = PhysicalMemory()
        mem.write(TEX_ADDR, b"\xff" * FACE_BYTES)  # a map starts far and unshadowed
        mem.write(COLOR_ADDR, bytes(SIZE[0] * SIZE[1] * 4))
        for index, (st, verts) in enumerate(((pass_state, pass_vertices), (receiver, receiver_vertices))):
            mem.write(VBO, np.ascontiguousarray(verts, np.float32).tobytes())
            put(st, "NUMVERTICES", count=len(verts))
            put(st, "PRIMITIVE_CONFIG", topology=0)
            pipeline.draw(DrawCall(index, DrawKind.ARRAYS, st.copy(), mem))
        if hasattr(pipeline, "sync"):
            pipeline.sync()
        return read_color_image(mem, FramebufferState.from_regs(receiver.regs)), mem.read(TEX_ADDR, FACE_BYTES // 2)

    software, software_map = run(Pipeline(vertex_shader=identity_vs))
    gl_pipe = GLPipeline(vertex_shader=identity_vs)
    gl, gl_map = run(gl_pipe)
    d = compare(software, gl)
    print(f"shadow pass + receiver seed {seed}: {d.line()}; fallbacks {dict(gl_pipe.fallbacks)}")
    assert software_map == gl_map and software_map != b"\xff" * (FACE_BYTES // 2)
    assert gl_pipe.gl_draws == 1 and [r.split(" (")[0] for r in gl_pipe.fallbacks] == ["shadow-map rendering"]
    assert any("shadow-map rendering" in r.getMessage() for r in caplog.records)
    assert 0.05 < (software[..., 0] > 0).mean() < 0.95, "the map shadows nothing or everything"
    assert d.max_error == 0
