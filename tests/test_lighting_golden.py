"""Golden images through the whole pipeline (raster -> shading -> TEV -> framebuffer): a lit sphere and a
procedural-texture quad, compared pixel for pixel with PNGs under tests/golden/ that were looked at by eye.

The vertex shader is an identity function injected into ``Pipeline`` (the shader unit has its own tests), so the
images depend on interpolation, lighting / proctex and TEV only. Regenerate on purpose with
``PICAEMU_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_lighting_golden.py`` and look at the result.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from picaemu import numeric
from picaemu.color import lighting_luts
from picaemu.draw import DrawCall, DrawKind
from picaemu.draw_state import DrawState
from picaemu.fragment.framebuffer import FramebufferState, read_color_image
from picaemu.memory import PhysicalMemory
from picaemu.numeric import to_f24
from picaemu.pipeline import Pipeline
from picaemu.regs import access, id_of
from picaemu.state import GpuState

GOLDEN = Path(__file__).parent / "golden"
W = H = 64
COLOR_ADDR, DEPTH_ADDR, VBO = 0x18000000, 0x18100000, 0x20000000
UNUSED = 0x1F


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] = access.compose(name, **fields)


def identity_vs(ds: DrawState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    out = np.zeros((attributes.shape[0], 16, 4), np.float32)  # a shader returns all 16 output registers
    k = min(3, attributes.shape[1])
    out[:, :k] = attributes[:, :k]  # the pipeline passes the configured attributes only (may be fewer)
    return out


def base_state(
    outmap1: tuple[int, int, int, int], outmap2: tuple[int, int, int, int] | None, size: tuple[int, int] = (W, H)
) -> GpuState:
    """Framebuffer of ``size`` (width, height), logic op copy, outputs o0 = position, o1/o2 as given, vertex arrays
    of float32 vec4 attributes at VBO, TEV stages 1-5 passing the previous result through."""
    st = GpuState()
    w, h = size
    put(st, "FRAMEBUFFER_DIM", width=w, height_minus_1=h - 1, orientation=1)
    put(st, "COLORBUFFER_LOC", address=COLOR_ADDR >> 3)
    put(st, "DEPTHBUFFER_LOC", address=DEPTH_ADDR >> 3)
    put(st, "COLORBUFFER_FORMAT", format=0)
    put(st, "DEPTHBUFFER_FORMAT", format=3)
    put(st, "COLORBUFFER_READ", enable=0xF)
    put(st, "COLORBUFFER_WRITE", enable=0xF)
    put(st, "DEPTH_COLOR_MASK", red=1, green=1, blue=1, alpha=1)
    put(st, "LOGIC_OP", op=3)  # copy
    st.regs[id_of("VIEWPORT_WIDTH")] = to_f24(w / 2)
    st.regs[id_of("VIEWPORT_HEIGHT")] = to_f24(h / 2)
    st.regs[id_of("DEPTHMAP_SCALE")] = to_f24(-1.0)
    put(st, "DEPTHMAP_ENABLE", mode=1)
    outs = [(0, 1, 2, 3), outmap1] + ([outmap2] if outmap2 else [])
    put(st, "SH_OUTMAP_TOTAL", count=len(outs))
    for k, (x, y, z, w) in enumerate(outs):
        put(st, f"SH_OUTMAP_O{k}", x=x, y=y, z=z, w=w)
    put(st, "VSH_OUTMAP_MASK", **{f"o{k}": 1 for k in range(len(outs))})
    n = len(outs)
    put(st, "ATTRIBBUFFERS_LOC", base=VBO >> 4)
    put(
        st,
        "ATTRIBBUFFERS_FORMAT_LOW",
        **{f: v for k in range(n) for f, v in ((f"attr{k}_type", 3), (f"attr{k}_components_minus_1", 3))},
    )
    put(st, "ATTRIBBUFFERS_FORMAT_HIGH", num_attrs_minus_1=n - 1)
    put(st, "ATTRIBBUFFER0_CONFIG1", **{f"comp{k}": k for k in range(n)})
    put(st, "ATTRIBBUFFER0_CONFIG2", stride=16 * n, num_components=n)
    for s in range(1, 6):
        put(st, f"TEXENV{s}_SOURCE", rgb_src0=0xF, alpha_src0=0xF)
    return st


def render(st: GpuState, vertices: np.ndarray) -> np.ndarray:
    """vertices (V, A, 4) float32 (attribute a of vertex v), a triangle list -> (H, W, 4) uint8, top row first."""
    fb = FramebufferState.from_regs(st.regs)
    mem = PhysicalMemory()
    mem.write(COLOR_ADDR, bytes(fb.width * fb.height * 4))
    mem.write(VBO, np.ascontiguousarray(vertices, np.float32).tobytes())
    put(st, "NUMVERTICES", count=len(vertices))
    put(st, "PRIMITIVE_CONFIG", topology=0)
    Pipeline(vertex_shader=identity_vs).draw(DrawCall(0, DrawKind.ARRAYS, st, mem))
    return read_color_image(mem, fb)


def sphere_vertices(rings: int = 12, sectors: int = 24) -> np.ndarray:
    """Front hemisphere of a unit sphere seen down -z, orthographic: attributes position, quaternion, view."""
    theta = np.linspace(0, np.pi / 2, rings + 1)
    phi = np.linspace(0, 2 * np.pi, sectors + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    normal = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1)
    quat = np.concatenate([-normal[..., 1:2], normal[..., 0:1], np.zeros_like(t)[..., None], 1 + normal[..., 2:3]], -1)
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)  # rotates +z onto the normal
    pos = np.concatenate([0.8 * normal[..., :2], np.full_like(t, -0.5)[..., None], np.ones_like(t)[..., None]], -1)
    view = np.broadcast_to(np.array([0.0, 0.0, 1.0, 0.0]), pos.shape)
    attrs = np.stack([pos, quat, view], axis=-2)  # (rings+1, sectors+1, 3, 4)
    tris = []
    for i in range(rings):
        for j in range(sectors):
            a, b, c, d = attrs[i, j], attrs[i + 1, j], attrs[i + 1, j + 1], attrs[i, j + 1]
            tris += [a, b, c, a, c, d]
    return np.array(tris, np.float32)


def lit_sphere_state(size: tuple[int, int] = (W, H)) -> GpuState:
    st = base_state((4, 5, 6, 7), (0x12, 0x13, 0x14, UNUSED), size)
    put(st, "TEXENV0_SOURCE", rgb_src0=1, rgb_src1=2, alpha_src0=0xE)
    put(st, "TEXENV0_COMBINER", rgb_combine=2, alpha_combine=0)
    put(st, "TEXENV0_COLOR", r=0, g=0, b=0, a=255)
    put(st, "LIGHTING_ENABLE0", enable=1)
    put(st, "LIGHTING_CONFIG0", config=0, constant_4=4, constant_1=1)
    put(
        st,
        "LIGHTING_CONFIG1",
        d1_disable=1,
        fr_disable=1,
        rb_disable=1,
        rg_disable=1,
        rr_disable=1,
        constant_1=1,
        spot_disable0=1,
        spot_disable1=1,
        dist_atten_disable0=1,
        dist_atten_disable1=1,
    )
    put(st, "LIGHTING_NUM_LIGHTS", count_minus_1=1)
    put(st, "LIGHTING_LIGHT_PERMUTATION", slot0=0, slot1=1)
    for n, (pos, diffuse, specular, ambient) in enumerate(
        [
            ((-1.0, 1.0, 1.2), (200, 110, 60), (230, 230, 230), (20, 15, 25)),
            ((0.8, -0.6, 0.4), (30, 60, 140), (0, 0, 0), (0, 0, 0)),
        ]
    ):
        put(st, f"LIGHT{n}_XY", x=numeric.to_f16(pos[0]), y=numeric.to_f16(pos[1]))
        put(st, f"LIGHT{n}_Z", z=numeric.to_f16(pos[2]))
        put(st, f"LIGHT{n}_CONFIG", type=1)
        for reg, rgb in (("DIFFUSE", diffuse), ("SPECULAR0", specular), ("AMBIENT", ambient)):
            put(st, f"LIGHT{n}_{reg}", r=rgb[0], g=rgb[1], b=rgb[2])
    put(st, "LIGHTING_AMBIENT", r=10, g=10, b=16)
    st.lighting_luts[0] = lighting_luts.encode_entries((np.arange(256) / 255.0) ** 24)  # D0 on N.H: highlight
    return st


def proctex_state() -> GpuState:
    st = base_state((0x0C, 0x0D, UNUSED, UNUSED), None)
    put(st, "TEXENV0_SOURCE", rgb_src0=6, alpha_src0=6)
    put(st, "TEXUNIT_CONFIG", unit3_enable=1, unit3_coords=0)
    put(st, "TEXUNIT3_PROCTEX0", u_clamp=3, v_clamp=3, rgb_func=6, noise_enable=1, separate_alpha=1, alpha_func=4)
    put(st, "TEXUNIT3_PROCTEX1", u_amplitude=600, u_phase=numeric.to_f16(0.3))
    put(st, "TEXUNIT3_PROCTEX2", v_amplitude=600, v_phase=numeric.to_f16(0.7))
    put(st, "TEXUNIT3_PROCTEX3", u_frequency=numeric.to_f16(1.5), v_frequency=numeric.to_f16(1.5))
    put(st, "TEXUNIT3_PROCTEX4", filter=1, width=128, max_lod=6)
    i = np.arange(128, dtype=np.uint32)
    ramp = (32 * i) | (32 << 12)
    st.proctex_luts[0, :128] = ramp
    st.proctex_luts[2, :128] = ramp
    st.proctex_luts[3, :128] = 4095 - 16 * i
    k = np.arange(256, dtype=np.int64)
    r, g, b = np.minimum(2 * k, 255), (128 + 127 * np.sin(k / 10)).astype(np.int64), 255 - np.minimum(2 * k, 255)
    st.proctex_luts[4] = (r | (g << 8) | (b << 16) | (255 << 24)).astype(np.uint32)
    nxt = lambda c: (np.append(c[1:], c[-1]) - c) // 2 & 0xFF  # noqa: E731
    st.proctex_luts[5] = (nxt(r) | (nxt(g) << 8) | (nxt(b) << 16)).astype(np.uint32)
    return st


def quad_vertices() -> np.ndarray:
    corners = {(-1, -1): (0.0, 0.0), (1, -1): (1.5, 0.0), (1, 1): (1.5, 1.5), (-1, 1): (0.0, 1.5)}
    attrs = {xy: [(xy[0], xy[1], -0.5, 1.0), (uv[0], uv[1], 0.0, 0.0)] for xy, uv in corners.items()}
    order = [(-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)]
    return np.array([attrs[c] for c in order], np.float32)


@pytest.mark.parametrize(
    ("name", "make", "vertices"),
    [
        ("lit_sphere", lit_sphere_state, sphere_vertices),
        ("proctex_quad", proctex_state, quad_vertices),
    ],
)
def test_golden(name: str, make, vertices):
    img = render(make(), vertices())
    path = GOLDEN / f"{name}.png"
    if os.environ.get("PICAEMU_REGEN_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        Image.fromarray(img, "RGBA").save(path)
    expected = np.asarray(Image.open(path).convert("RGBA"))
    assert img.shape == expected.shape
    diff = np.abs(img.astype(np.int16) - expected.astype(np.int16))
    assert diff.max() <= 1, f"{name}: {np.count_nonzero(diff > 1)} pixels differ from {path.name}"
