"""The pipeline end to end: DrawCalls into tiled memory, and the citro3d triangle capture.

Most tests inject an identity vertex shader (o0 = v0 position, o1 = v1 color), so that geometry, raster and
fragment operations are checked alone against hand-computed pixels; ``test_scene1_triangle_capture`` runs the
real command processor and shader unit.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest

from picaemu.draw import DrawCall, DrawKind, PipelineEventKind
from picaemu.draw_state import DrawState
from picaemu.errors import MemoryFault, UnsupportedFeature
from picaemu.fragment.blend import BlendProgram, blend_program
from picaemu.fragment.framebuffer import FramebufferState, read_color_image, read_depth_image
from picaemu.memory import PhysicalMemory
from picaemu.numeric import to_f24
from picaemu.observer import FateWatcher
from picaemu.pipeline import Pipeline, PrimaryColorStages, Route
from picaemu.regs import access, id_of
from picaemu.state import GpuState

W = H = 32
COLOR_ADDR, DEPTH_ADDR, VBO = 0x18000000, 0x18100000, 0x20000000


class PerDraw(Pipeline):
    """The compiled route without the command processor's compiled loop (a ``Pipeline`` subclass is never offered
    its plans: ``compiled_allowed``): every draw through the pipeline's own compiled sides, which tests count."""


def reference() -> Pipeline:
    """The staged oracle the compiled route is compared against (``Route.REFERENCE``)."""
    return Pipeline(route=Route.REFERENCE)


def identity_vs(ds: DrawState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    out = np.zeros((attributes.shape[0], 16, 4), np.float32)  # a shader returns all 16 output registers
    k = min(2, attributes.shape[1])
    out[:, :k] = attributes[:, :k]  # the pipeline passes the configured attributes only (may be fewer)
    return out


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] = access.compose(name, **fields)


def make_state(color_fmt: int = 0, depth_fmt: int = 3, cull: int = 0) -> GpuState:
    st = GpuState()
    put(st, "FRAMEBUFFER_DIM", width=W, height_minus_1=H - 1, orientation=1)
    put(st, "COLORBUFFER_LOC", address=COLOR_ADDR >> 3)
    put(st, "DEPTHBUFFER_LOC", address=DEPTH_ADDR >> 3)
    put(st, "COLORBUFFER_FORMAT", format=color_fmt)
    put(st, "DEPTHBUFFER_FORMAT", format=depth_fmt)
    put(st, "COLORBUFFER_READ", enable=0xF)
    put(st, "COLORBUFFER_WRITE", enable=0xF)
    put(st, "DEPTHBUFFER_READ", depth=1, stencil=1)
    put(st, "DEPTHBUFFER_WRITE", depth=1, stencil=1)
    put(st, "DEPTH_COLOR_MASK", red=1, green=1, blue=1, alpha=1)
    st.regs[id_of("VIEWPORT_WIDTH")] = to_f24(W / 2)
    st.regs[id_of("VIEWPORT_HEIGHT")] = to_f24(H / 2)
    st.regs[id_of("DEPTHMAP_SCALE")] = to_f24(-1.0)
    put(st, "DEPTHMAP_ENABLE", mode=1)
    put(st, "FACECULLING_CONFIG", mode=cull)
    put(st, "SH_OUTMAP_TOTAL", count=2)
    put(st, "SH_OUTMAP_O0", x=0, y=1, z=2, w=3)
    put(st, "SH_OUTMAP_O1", x=8, y=9, z=10, w=11)
    put(st, "VSH_OUTMAP_MASK", o0=1, o1=1)
    put(st, "ATTRIBBUFFERS_LOC", base=VBO >> 4)
    put(
        st,
        "ATTRIBBUFFERS_FORMAT_LOW",
        attr0_type=3,
        attr0_components_minus_1=3,
        attr1_type=3,
        attr1_components_minus_1=3,
    )
    put(st, "ATTRIBBUFFERS_FORMAT_HIGH", num_attrs_minus_1=1)
    put(st, "ATTRIBBUFFER0_CONFIG1", comp0=0, comp1=1)
    put(st, "ATTRIBBUFFER0_CONFIG2", stride=32, num_components=2)
    return st


def pixel_ndc(px: float, py: float) -> tuple[float, float]:
    """NDC of a window position in pixels."""
    return px / (W / 2) - 1, py / (H / 2) - 1


def draw(
    pipe: Pipeline, st: GpuState, mem: PhysicalMemory, verts, kind=DrawKind.ARRAYS, topology=0, count: int | None = None
) -> dict:
    """verts: rows (px, py, z, w, r, g, b, a) with positions in window pixels (converted to clip space)."""
    v = np.array(verts, np.float32).reshape(-1, 8)
    data = np.zeros((len(v), 8), np.float32)
    for i, (px, py, z, w, *rgba) in enumerate(v):
        nx, ny = pixel_ndc(px, py)
        data[i] = (nx * w, ny * w, z * w, w, *rgba)
    mem.write(VBO, data.tobytes())
    put(st, "NUMVERTICES", count=len(v) if count is None else count)
    put(st, "PRIMITIVE_CONFIG", topology=topology)
    call = DrawCall(0, kind, st, mem)
    pipe.draw(call)
    return call.stats


def image(st: GpuState, mem: PhysicalMemory) -> np.ndarray:
    """(H, W, 4) indexed [window y, x] (y up)."""
    return read_color_image(mem, FramebufferState.from_regs(st.regs))[::-1]


@pytest.fixture
def env():
    return (
        Pipeline(vertex_shader=identity_vs, color_stages=lambda s: PrimaryColorStages()),
        make_state(),
        PhysicalMemory(),
    )


RED, GREEN, BLUE = (1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1)


def test_flat_triangle_exact_pixels_and_stats(env):
    pipe, st, mem = env
    stats = draw(pipe, st, mem, [(4, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED)])
    img = image(st, mem)
    covered = (img[:, :, 0] == 255).sum()
    # samples (X + .5, Y + .5) with X, Y >= 4 and (X - 4) + (Y - 4) + 1 < 8: 7 + 6 + ... + 1 = 28
    assert covered == 28 and stats["fragments_written"] == 28
    assert tuple(img[5, 5]) == (255, 0, 0, 255) and tuple(img[3, 3]) == (0, 0, 0, 0)
    assert stats["vertices"] == 3 and stats["primitives_rasterized"] == 1 and stats["time_s"] > 0


def test_gouraud_interpolates_vertex_colors(env):
    pipe, st, mem = env
    draw(pipe, st, mem, [(0, 0, -0.5, 1, *RED), (32, 0, -0.5, 1, *GREEN), (0, 32, -0.5, 1, *BLUE)])
    img = image(st, mem)
    # pixel (7, 15): sample (7.5, 15.5): green weight 7.5/32, blue 15.5/32, red the rest (9/32)
    assert tuple(img[15, 7]) == (round(255 * 9 / 32), round(255 * 7.5 / 32), round(255 * 15.5 / 32), 255)


@pytest.mark.parametrize(("cull", "drawn_ccw", "drawn_cw"), [(0, True, True), (1, False, True), (2, True, False)])
def test_culling_both_windings(cull, drawn_ccw, drawn_cw):
    for ccw, expect in ((True, drawn_ccw), (False, drawn_cw)):
        pipe, st, mem = Pipeline(identity_vs, lambda s: PrimaryColorStages()), make_state(cull=cull), PhysicalMemory()
        v = [(4, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED)]
        stats = draw(pipe, st, mem, v if ccw else [v[0], v[2], v[1]])
        assert (stats["fragments_written"] == 28) == expect


def test_near_plane_clipping_draws_nothing_beyond_it(env):
    pipe, st, mem = env
    # vertex 2 has z = +1 (in front of the near plane z = 0): edges cross z = 0 a third of the way up
    stats = draw(pipe, st, mem, [(0, 0, -0.5, 1, *RED), (32, 0, -0.5, 1, *RED), (16, 24, 1.0, 1, *RED)])
    ys = np.nonzero(image(st, mem)[:, :, 0])[0]
    assert stats["primitives_clipped"] == 1 and ys.max() == 7  # cut at y = 8: samples up to 7.5
    assert stats["fragments_written"] > 0


class AlphaBlendStages(PrimaryColorStages):
    """Primary color blended src alpha / one minus src alpha (add) by the compiled fragment-ops pass."""

    def __init__(self, ds: DrawState) -> None:
        self.program = blend_program(ds.blend)

    def blend_program(self) -> BlendProgram:
        return self.program


def test_clipped_triangle_is_blended_in_submission_order():
    st, mem = make_state(), PhysicalMemory()
    put(st, "COLOR_OPERATION", blend_mode=1, constant=0xE4)
    put(st, "BLEND_FUNC", rgb_equation=0, alpha_equation=0, rgb_src=6, rgb_dst=7, alpha_src=6, alpha_dst=7)
    pipe = Pipeline(identity_vs, AlphaBlendStages)
    # first: opaque red crossing the near plane (cut at y = 8); second: half-transparent green inside it
    half = 128 / 255
    stats = draw(
        pipe,
        st,
        mem,
        [
            (0, 0, -0.5, 1, *RED),
            (32, 0, -0.5, 1, *RED),
            (16, 24, 1.0, 1, *RED),
            (4, 1, -0.5, 1, 0, 1, 0, half),
            (20, 1, -0.5, 1, 0, 1, 0, half),
            (4, 6, -0.5, 1, 0, 1, 0, half),
        ],
    )
    assert stats["primitives_clipped"] == 1
    img = image(st, mem)
    # green over red: r = 255 * (255 - 128) / 255 = 127, g = 255 * 128 / 255 = 128 (red over green would be red)
    assert tuple(img[2, 6, :3]) == (127, 128, 0)
    assert tuple(img[2, 28]) == (255, 0, 0, 255)  # red alone


def test_depth_order_inside_one_draw_and_across_draws(env):
    pipe, st, mem = env
    put(st, "DEPTH_COLOR_MASK", depth_test=1, depth_func=4, depth_write=1, red=1, green=1, blue=1, alpha=1)
    mem.fill(DEPTH_ADDR, W * H * 4, 0xFF)
    near = [(0, 0, -0.25, 1, *RED), (32, 0, -0.25, 1, *RED), (0, 32, -0.25, 1, *RED)]
    far = [(0, 0, -0.75, 1, *GREEN), (32, 0, -0.75, 1, *GREEN), (0, 32, -0.75, 1, *GREEN)]
    stats = draw(pipe, st, mem, near + far)  # same pixels twice in one draw: the second is farther -> fails
    assert stats["killed_depth"] == stats["fragments_rasterized"] // 2
    assert tuple(image(st, mem)[2, 2]) == (255, 0, 0, 255)
    depth, stencil = read_depth_image(mem, FramebufferState.from_regs(st.regs))
    assert depth[H - 1 - 2, 2] == int(0.25 * 0xFFFFFF) and stencil[H - 1 - 2, 2] == 0xFF
    put(st, "DEPTH_COLOR_MASK", depth_test=0, depth_func=0, red=1, green=1, blue=1, alpha=1)
    draw(pipe, st, mem, far)  # test off: always passes, later fragments overwrite
    assert tuple(image(st, mem)[2, 2]) == (0, 255, 0, 255)


def test_stencil_sequence_masks_a_second_draw(env):
    pipe, st, mem = env
    # draw 1: no color, stencil := 1 where the small triangle covers
    put(st, "STENCIL_TEST", enable=1, func=1, ref=1, write_mask=0xFF, input_mask=0xFF)
    put(st, "STENCIL_OP", depth_pass=2)
    put(st, "DEPTH_COLOR_MASK")
    draw(pipe, st, mem, [(4, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED)])
    assert not image(st, mem).any()
    # draw 2: full-screen blue where stencil == 1
    put(st, "STENCIL_TEST", enable=1, func=2, ref=1, write_mask=0x00, input_mask=0xFF)
    put(st, "DEPTH_COLOR_MASK", red=1, green=1, blue=1, alpha=1)
    stats = draw(pipe, st, mem, [(0, 0, -0.5, 1, *BLUE), (64, 0, -0.5, 1, *BLUE), (0, 64, -0.5, 1, *BLUE)])
    assert stats["fragments_written"] == 28 and stats["killed_stencil"] == W * H - 28


def test_color_write_mask_keeps_masked_channels(env):
    pipe, st, mem = env
    mem.fill(COLOR_ADDR, W * H * 4, 0x80)
    put(st, "DEPTH_COLOR_MASK", red=1, alpha=1)
    draw(pipe, st, mem, [(0, 0, -0.5, 1, 1, 1, 1, 1), (64, 0, -0.5, 1, 1, 1, 1, 1), (0, 64, -0.5, 1, 1, 1, 1, 1)])
    assert tuple(image(st, mem)[9, 9]) == (255, 0x80, 0x80, 255)


# color buffer format -> bytes of the first pixel in memory after a full-screen (0x80, 0x40, 0x20, 0xFF) draw
FORMAT_BYTES = {0: [0xFF, 0x20, 0x40, 0x80], 1: [0x20, 0x40, 0x80], 2: [0x09, 0x82], 3: [0x04, 0x82], 4: [0x2F, 0x84]}


@pytest.mark.parametrize("fmt", sorted(FORMAT_BYTES))
def test_each_color_format_written_tiled(fmt):
    pipe, st, mem = Pipeline(identity_vs, lambda s: PrimaryColorStages()), make_state(color_fmt=fmt), PhysicalMemory()
    c = (0x80 / 255, 0x40 / 255, 0x20 / 255, 1.0)
    draw(pipe, st, mem, [(0, 0, -0.5, 1, *c), (64, 0, -0.5, 1, *c), (0, 64, -0.5, 1, *c)])
    expected = FORMAT_BYTES[fmt]
    assert mem.read(COLOR_ADDR, len(expected)) == bytes(expected)


def test_strip_and_fan_and_elements(env):
    pipe, st, mem = env
    quad = [(4, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED), (12, 12, -0.5, 1, *RED)]
    assert draw(pipe, st, mem, quad, topology=1)["fragments_written"] == 64
    pipe.event(PipelineEventKind.RESTART_PRIMITIVE, st)
    fan = [quad[0], quad[1], quad[3], quad[2]]
    assert draw(pipe, st, mem, fan, topology=2)["fragments_written"] == 64
    pipe.event(PipelineEventKind.RESTART_PRIMITIVE, st)
    mem.write(VBO + 0x1000, np.array([0, 1, 2, 2, 1, 3], np.uint16).tobytes())
    put(st, "INDEXBUFFER_CONFIG", offset=0x1000, format=1)
    stats = draw(pipe, st, mem, quad, kind=DrawKind.ELEMENTS, count=6)
    assert stats["fragments_written"] == 64 and stats["vertices"] == 6 and stats["vertices_shaded"] == 4


def test_bad_input_is_skipped_or_named(env):
    pipe, st, mem = env
    nan = [(np.nan, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED)]
    stats = draw(pipe, st, mem, nan)
    assert stats["primitives_invalid"] == 1 and stats["fragments_written"] == 0
    degenerate = [(4, 4, -0.5, 1, *RED), (8, 8, -0.5, 1, *RED), (12, 12, -0.5, 1, *RED)]
    assert draw(pipe, st, mem, degenerate)["fragments_written"] == 0
    put(st, "NUMVERTICES", count=0)
    call = DrawCall(0, DrawKind.ARRAYS, st, mem)
    pipe.draw(call)
    assert call.stats["vertices"] == 0
    put(st, "COLORBUFFER_LOC", address=0x10000000 >> 3)
    with pytest.raises(MemoryFault, match="color buffer"):
        draw(pipe, st, mem, [(4, 4, -0.5, 1, *RED), (12, 4, -0.5, 1, *RED), (4, 12, -0.5, 1, *RED)])
    put(st, "GEOSTAGE_CONFIG", gs_use=2)
    with pytest.raises(UnsupportedFeature, match="topology other than 3"):
        draw(pipe, st, mem, degenerate)


def load_scene(root, upto_cmdlist: int):
    """Replay a capture's manifest up to (and including) its command list number ``upto_cmdlist``."""
    from picaemu.command.processor import CommandProcessor

    manifest = json.loads((root / "manifest.json").read_text())
    mem = PhysicalMemory()
    proc = CommandProcessor(mem, Pipeline())
    for ev in manifest["events"]:
        if ev["type"] != "gx":
            continue
        for block in ev["memory"]:
            if block["file"]:
                mem.write(block["paddr"], (root / block["file"]).read_bytes())
        if ev["gx_cmd"] == "MemoryFill":
            for f in ev["fill"]:
                mem.view(f["start_paddr"], (f["end_paddr"] - f["start_paddr"]) // 4, np.uint32)[:] = f["value"]
        elif ev["gx_cmd"] == "ProcessCommandList":
            proc.run_at(ev["cmdlist_paddr"], ev["cmdlist_size_bytes"])
            if ev["cmdlist_index"] == upto_cmdlist:
                break
    return mem, proc


def landscape(img: np.ndarray, x: int, y: int) -> np.ndarray:
    """Pixel at landscape (X, Y from the bottom): window x = Y, y = 400 - X; img rows are top-first."""
    return img[img.shape[0] - 1 - (400 - x), y].astype(int)


@pytest.mark.parametrize("cmdlist", [0, 1])  # list 1 has no shader upload: it relies on list 0's state
def test_scene1_triangle_capture(captures_dir, cmdlist):
    mem, proc = load_scene(captures_dir / "scene1_triangle", cmdlist)
    img = read_color_image(mem, FramebufferState.from_regs(proc.state.regs))
    expected = {
        (200, 205): (255, 0, 0),
        (86, 32): (0, 255, 0),
        (314, 32): (0, 0, 255),
        (200, 90): (85, 85, 85),
        (10, 10): (0x30, 0x30, 0x30),
        (390, 230): (0x30, 0x30, 0x30),
    }
    for (x, y), rgb in expected.items():
        got = landscape(img, x, y)[:3]
        tolerance = 2 if rgb in ((85, 85, 85), (0x30, 0x30, 0x30)) else 12  # near-vertex pixels mix a little
        assert np.abs(got - rgb).max() <= tolerance, ((x, y), got, rgb)


def test_scene2_textured_quad_capture(captures_dir):
    """Draw elements (u16 indices) through the shading module: the checkerboard of the capture README."""
    mem, proc = load_scene(captures_dir / "scene2_textured_quad", 0)
    img = read_color_image(mem, FramebufferState.from_regs(proc.state.regs))
    for cx in range(8):
        for cy in range(8):
            x, y = 100 + 25 * cx + 12, 240 - (20 + 25 * cy + 12)  # cell centre, y from the bottom
            if (cx, cy) == (0, 0):
                rgb = (255, 255, 0)
            elif (cx + cy) % 2 == 0:
                rgb = (255, 255, 128)
            else:
                rgb = (36 * cx, 36 * (7 - cy), 80)
            assert np.abs(landscape(img, x, y)[:3] - rgb).max() <= 2, (cx, cy)
    assert tuple(landscape(img, 50, 120)[:3]) == (0x20, 0x20, 0x20)


def test_immediate_mode_through_the_command_processor():
    from picaemu.command.builder import CommandBuilder
    from picaemu.command.processor import CommandProcessor

    st, mem = make_state(), PhysicalMemory()
    pipe = Pipeline(identity_vs, lambda s: PrimaryColorStages())
    proc = CommandProcessor(mem, pipe, state=st)
    put(st, "VSH_NUM_ATTR", num_attrs_minus_1=1)
    put(st, "PRIMITIVE_CONFIG", topology=0)
    b = CommandBuilder()
    corners = [(4, 4), (12, 4), (4, 12)]
    b.immediate_vertices([[(*pixel_ndc(x, y), -0.5, 1.0), (0.0, 1.0, 0.0, 1.0)] for x, y in corners])
    b.write("RESTART_PRIMITIVE", 1)
    b.finalize()
    proc.run(b.words())
    img = image(st, mem)
    assert (img[:, :, 1] == 255).sum() == 28 and tuple(img[5, 5]) == (0, 255, 0, 255)


RASTER_FUZZ_REGS = (
    "FACECULLING_CONFIG",
    "VIEWPORT_WIDTH",
    "VIEWPORT_HEIGHT",
    "VIEWPORT_XY",
    "DEPTHMAP_SCALE",
    "DEPTHMAP_OFFSET",
    "SCISSORTEST_MODE",
    "SCISSORTEST_POS",
    "SCISSORTEST_DIM",
    "FRAGOP_CLIP",
    "FRAGOP_CLIP_DATA0",
    "STENCIL_TEST",
    "STENCIL_OP",
    "DEPTH_COLOR_MASK",
    "DEPTHBUFFER_FORMAT",
    "COLORBUFFER_FORMAT",
    "FRAMEBUFFER_DIM",
    "SH_OUTMAP_O0",
    "NUMVERTICES",
    "ATTRIBBUFFER0_CONFIG2",
    "PRIMITIVE_CONFIG",
)


@pytest.mark.timeout(60)
@pytest.mark.filterwarnings("error")
def test_hostile_register_values_never_crash():
    from picaemu.errors import PicaError

    rng = np.random.default_rng(7)
    pipe = Pipeline(identity_vs, lambda s: PrimaryColorStages())
    for _ in range(60):
        st, mem = make_state(), PhysicalMemory()
        data = rng.normal(0, 2, (9, 8)).astype(np.float32)
        mem.write(VBO, data.tobytes())
        put(st, "NUMVERTICES", count=9)
        for name in rng.choice(RASTER_FUZZ_REGS, 4, replace=False):
            st.regs[id_of(str(name))] = int(rng.integers(0, 2**32))
        with contextlib.suppress(PicaError):  # a named error is a fine answer; anything else fails the test
            pipe.draw(DrawCall(0, DrawKind.ARRAYS, st, mem))


GS_TRIANGLE_PER_POINT = """
.gsh point
.out opos position
.constf dx(0.5, 0, 0, 0)
.constf dy(0, 0.5, 0, 0)
.proc main
    setemit 0
    mov opos, v0
    emit
    setemit 1
    add opos, v0, dx
    emit
    setemit 2, prim
    add opos, v0, dy
    emit
    end
.end
"""


def use_triangle_per_point_gs(st: GpuState) -> None:
    """Load ``GS_TRIANGLE_PER_POINT`` into the GS unit of ``st`` and route every draw through it (point mode)."""
    from picaemu.shader import ShaderSetup
    from picaemu.shader.asm import assemble

    gs = ShaderSetup.from_dvle(assemble(GS_TRIANGLE_PER_POINT), 0)
    st.gs.code[:] = gs.code
    st.gs.opdescs[:] = gs.opdescs
    st.gs.float_uniforms[:] = gs.float_uniforms
    put(st, "GSH_ENTRYPOINT", entry=gs.entry)
    put(st, "GSH_OUTMAP_MASK", o0=1)
    put(st, "GSH_INPUTBUFFER_CONFIG", num_input_minus_1=1)  # v0 = position, v1 = color of one vertex
    put(st, "GSH_ATTRIBUTES_PERMUTATION_LOW", attr0=0, attr1=1)
    put(st, "GEOSTAGE_CONFIG", gs_use=2)
    put(st, "SH_OUTMAP_TOTAL", count=1)  # the GS writes no color: it reads 1.0 (white)


def test_geometry_shader_point_mode_forms_the_triangles(env):
    """Real GS unit (point mode): each input point becomes a right triangle of 8-pixel legs (28 pixels)."""
    pipe, st, mem = env
    use_triangle_per_point_gs(st)
    stats = draw(pipe, st, mem, [(4, 4, -0.5, 1, *RED), (20, 16, -0.5, 1, *RED)], topology=3)
    img = image(st, mem)
    assert stats["primitives_assembled"] == 2 and stats["fragments_written"] == 56
    assert tuple(img[5, 5]) == (255, 255, 255, 255) and tuple(img[17, 21]) == (255, 255, 255, 255)
    assert tuple(img[3, 3]) == (0, 0, 0, 0)


def _overlapping_triangles(n: int, seed: int) -> list[tuple[float, ...]]:
    """n random depth-tested, overlapping triangles in window pixels (px, py, z, w, r, g, b, a)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        cx, cy, z = rng.uniform(0, W), rng.uniform(0, H), rng.uniform(-0.9, -0.1)
        for k in range(3):
            angle = 2 * np.pi * k / 3 + rng.uniform(0, 0.5)
            rows.append((cx + 9 * np.cos(angle), cy + 9 * np.sin(angle), z, 1.0, *rng.uniform(0, 1, 4)))
    return rows


@pytest.mark.parametrize("observed", [False, True])
def test_draws_in_chunks_of_triangles_give_the_same_pixels_stats_and_fates(monkeypatch, observed):
    """A draw is rasterized and resolved a run of triangles at a time (bounded memory): with runs of a few
    triangles, every pixel, counter and observed fate equals the one-run draw."""
    import picaemu.raster.rasterizer as rz

    put_depth = dict(depth_test=1, depth_func=4, depth_write=1, red=1, green=1, blue=1, alpha=1)  # LESS
    results = []
    for chunk in (rz.CHUNK_FRAGMENTS, 200):
        monkeypatch.setattr(rz, "CHUNK_FRAGMENTS", chunk)
        fates: list = []
        pipe = Pipeline(
            identity_vs,
            lambda s: PrimaryColorStages(),
            stage_observer=FateWatcher(lambda call, f, seen=fates: seen.append(f)) if observed else None,
        )
        st, mem = make_state(), PhysicalMemory()
        put(st, "DEPTH_COLOR_MASK", **put_depth)
        put(st, "SCISSORTEST_MODE", mode=3)
        put(st, "SCISSORTEST_POS", x1=2, y1=3)
        put(st, "SCISSORTEST_DIM", x2=W - 5, y2=H - 4)
        mem.fill(DEPTH_ADDR, W * H * 4, 0xFF)
        stats = draw(pipe, st, mem, _overlapping_triangles(60, 3))
        stats.pop("time_s")
        results.append((image(st, mem), stats, [(f.x.tolist(), f.y.tolist(), f.fate.tolist()) for f in fates]))
    (img, stats, fates), (img_c, stats_c, fates_c) = results
    assert np.array_equal(img, img_c) and stats == stats_c and fates == fates_c
    assert stats["killed_depth"] > 0 and stats["killed_scissor"] > 0 and stats["fragments_written"] > 1000
    assert len(fates) == int(observed)


def test_a_hostile_fragment_count_is_refused_before_any_pixel(env, monkeypatch):
    """Past MAX_DRAW_FRAGMENTS (exact count: long thin triangles' boxes overestimate) a draw raises."""
    import picaemu.raster.rasterizer as rz
    from picaemu.errors import PipelineError

    pipe, st, mem = env
    full = [(0, 0, -0.5, 1, *RED), (2 * W, 0, -0.5, 1, *RED), (0, 2 * H, -0.5, 1, *RED)]
    monkeypatch.setattr(rz, "MAX_DRAW_FRAGMENTS", 3 * W * H - 1)
    with pytest.raises(PipelineError, match=f"draw rasterizes {3 * W * H} fragments, more than the limit"):
        draw(pipe, st, mem, full * 3)
    assert not image(st, mem).any()
    thin = [(0, 0, -0.5, 1, *GREEN), (W, H, -0.5, 1, *GREEN), (W - 6, H, -0.5, 1, *GREEN)]  # box W x H, ~3H px
    assert draw(pipe, st, mem, thin * 4)["fragments_written"] > 0
