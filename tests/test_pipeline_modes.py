"""Pipeline fragment modes end to end (CommandBuilder -> CommandProcessor -> Pipeline): gas draws refused by name,
shadow-map rendering (hand-computed depth/intensity texels), a golden "shadowed scene" (a shadow map rendered in
one pass, then sampled as a shadow texture by a second, TEV-modulated draw), and the fragment observer's fates.

The vertex shader is an identity function (o0 = v0 position, o1 = v1 color, o2 = v2 texcoord0 u v w), so the
pictures depend on raster, TEV, shadow update/compare and fragment operations only. Regenerate the golden image on
purpose with ``PICAEMU_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_pipeline_modes.py`` and look at it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from picaemu.color.gas import GasUnsupported
from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor
from picaemu.draw_state import DrawState
from picaemu.errors import UnsupportedFeature
from picaemu.fragment.framebuffer import FramebufferState, read_color_image
from picaemu.fragment.ops import Fate
from picaemu.memory import PhysicalMemory
from picaemu.numeric import to_f24
from picaemu.observer import FateWatcher
from picaemu.pipeline import FragmentFates, Pipeline
from picaemu.state import GpuState

GOLDEN = Path(__file__).parent / "golden"
COLOR_ADDR, DEPTH_ADDR, MAP_ADDR = 0x18000000, 0x18100000, 0x18200000
F16_ONE, F16_MINUS_HALF = 0x3C00, 0xB800
PASS = (0xF, 0, 0)  # TEV source "previous" for slot 0


def identity_vs(ds: DrawState, attributes: np.ndarray, counters: dict | None = None) -> np.ndarray:
    out = np.zeros((attributes.shape[0], 16, 4), np.float32)  # a shader returns all 16 output registers
    k = min(3, attributes.shape[1])
    out[:, :k] = attributes[:, :k]  # the pipeline passes the configured attributes only (may be fewer)
    return out


def target(b: CommandBuilder, address: int, size: int, color_format: int = 0) -> None:
    """Render target of size x size at ``address`` (color), depth D24S8, viewport = window, depth = -z/w."""
    b.write_fields("FRAMEBUFFER_DIM", width=size, height_minus_1=size - 1, orientation=1)
    b.write_fields("COLORBUFFER_LOC", address=address >> 3)
    b.write_fields("DEPTHBUFFER_LOC", address=DEPTH_ADDR >> 3)
    b.write_fields("COLORBUFFER_FORMAT", format=color_format, pixel_size=2 if color_format == 0 else 0)
    b.write_fields("DEPTHBUFFER_FORMAT", format=3)
    b.write_fields("COLORBUFFER_READ", enable=0xF)
    b.write_fields("COLORBUFFER_WRITE", enable=0xF)
    b.write_fields("DEPTH_COLOR_MASK", red=1, green=1, blue=1, alpha=1)
    b.write("VIEWPORT_WIDTH", to_f24(size / 2))
    b.write("VIEWPORT_HEIGHT", to_f24(size / 2))
    b.write("DEPTHMAP_SCALE", to_f24(-1.0))
    b.write_fields("DEPTHMAP_ENABLE", mode=1)


def common(b: CommandBuilder) -> None:
    """Outputs o0 position, o1 color, o2 texcoord0 (u, v, w); three input attributes; TEV stages 1-5 pass."""
    b.write_fields("SH_OUTMAP_TOTAL", count=3)
    b.write_fields("SH_OUTMAP_O0", x=0, y=1, z=2, w=3)
    b.write_fields("SH_OUTMAP_O1", x=8, y=9, z=10, w=11)
    b.write_fields("SH_OUTMAP_O2", x=0xC, y=0xD, z=0x10, w=0x1F)
    b.write_fields("VSH_OUTMAP_MASK", o0=1, o1=1, o2=1)
    b.write_fields("VSH_NUM_ATTR", num_attrs_minus_1=2)
    b.write_fields("PRIMITIVE_CONFIG", topology=0)
    for s in range(1, 6):
        b.write_fields(f"TEXENV{s}_SOURCE", rgb_src0=PASS[0], alpha_src0=PASS[0])


def rect(
    b: CommandBuilder,
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    size: int,
    depth: float,
    colors: list[tuple[float, ...]],
    tex: list[tuple[float, float, float]] | None = None,
) -> None:
    """Two triangles covering window pixels [x0, x1) x [y0, y1); colors (rgb or rgba) / tex per corner (x0y0,
    x1y0, x0y1, x1y1)."""
    corners = [(x0, y0), (x1, y0), (x0, y1), (x1, y1)]
    tex = tex or [(0.0, 0.0, 0.0)] * 4
    rgba = [(*c, 1.0)[:4] for c in colors]
    verts = [
        [(2 * x / size - 1, 2 * y / size - 1, -depth, 1.0), rgba[i], (*tex[i], 0.0)] for i, (x, y) in enumerate(corners)
    ]
    b.immediate_vertices([verts[i] for i in (0, 1, 2, 2, 1, 3)])
    b.write("RESTART_PRIMITIVE", 1)


def run(b: CommandBuilder, mem: PhysicalMemory, observer=None) -> GpuState:
    b.finalize()
    state = GpuState()
    watcher = FateWatcher(observer) if observer is not None else None
    CommandProcessor(mem, Pipeline(identity_vs, stage_observer=watcher), state=state).run(b.words())
    return state


def shadow_texels(mem: PhysicalMemory, address: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(depth, intensity) (size, size) int64 indexed [window y, x] of an RGBA8 shadow map (§10.6 byte order)."""
    st = GpuState()
    b = CommandBuilder()
    target(b, address, size)
    b.finalize()
    CommandProcessor(mem, Pipeline(identity_vs), state=st).run(b.words())
    img = read_color_image(mem, FramebufferState.from_regs(st.regs))[::-1].astype(np.int64)
    return img[..., 3] << 16 | img[..., 2] << 8 | img[..., 1], img[..., 0]


def shadow_pass(b: CommandBuilder, size: int, constant: int, linear: int) -> None:
    target(b, MAP_ADDR, size)
    common(b)
    b.write_fields("COLOR_OPERATION", fragment_mode=3)
    b.write_fields("FRAGOP_SHADOW", constant=constant, linear=linear)


GREEN0, GREEN128 = (0.0, 0.0, 0.0), (0.0, 128 / 255, 0.0)


def test_shadow_map_rendering_hand_computed_texels():
    mem = PhysicalMemory()
    mem.write(MAP_ADDR, b"\xff" * (32 * 32 * 4))  # far and unshadowed
    b = CommandBuilder()
    shadow_pass(b, 32, F16_ONE, F16_MINUS_HALF)  # K = 1, L = -0.5
    b.write_fields("FRAGOP_ALPHA_TEST", enable=1, func=0)  # "never": skipped in shadow mode
    b.write_fields("DEPTH_COLOR_MASK", depth_test=1, depth_func=0, red=1, green=1, blue=1, alpha=1)  # "never"
    rect(b, 0, 0, 16, 32, 32, 0.5, [GREEN0] * 4)  # A: depth only
    rect(b, 8, 0, 24, 32, 32, 0.25, [GREEN128] * 4)  # B: penumbra intensity only
    rect(b, 20, 0, 32, 32, 32, 0.75, [GREEN0] * 4)  # C: depth only
    run(b, mem)
    depth, intensity = shadow_texels(mem, MAP_ADDR, 32)
    d_half, d_3q = 8388607, 12582911  # trunc(0.5 * 0xFFFFFF), trunc(0.75 * 0xFFFFFF)
    # B over A (x 8-15): d = 4194303 < D = 8388607: 128 / (1 - 0.5 * 4194303 / 8388607) = 170.67 -> 170
    # B alone (x 16-23): 128 / (1 - 0.5 * 4194303 / 16777215) = 146.29 -> 146; the depth stays (s != 0)
    # C (x 20-31): s = 0 -> depth 0.75 stored where it is nearer, intensity kept
    want = [
        (range(0, 8), d_half, 255),
        (range(8, 16), d_half, 170),
        (range(16, 20), 0xFFFFFF, 146),
        (range(20, 24), d_3q, 146),
        (range(24, 32), d_3q, 255),
    ]
    for xs, d, s in want:
        assert (depth[:, xs] == d).all() and (intensity[:, xs] == s).all(), (xs, d, s)


def test_shadow_mode_needs_a_32_bit_color_buffer():
    mem = PhysicalMemory()
    b = CommandBuilder()
    shadow_pass(b, 32, F16_ONE, 0)
    b.write_fields("COLORBUFFER_FORMAT", format=3)  # RGB565
    rect(b, 0, 0, 8, 8, 32, 0.5, [GREEN0] * 4)
    with pytest.raises(UnsupportedFeature) as err:
        run(b, mem)
    assert err.value.register == 0x117


def test_gas_accumulation_draw_raises_and_writes_nothing():
    mem = PhysicalMemory()
    b = CommandBuilder()
    target(b, COLOR_ADDR, 32)
    common(b)
    b.write_fields("COLOR_OPERATION", fragment_mode=1)  # gas accumulation
    rect(b, 0, 0, 32, 32, 32, 0.5, [(1.0, 1.0, 1.0)] * 4)
    with pytest.raises(GasUnsupported) as err:
        run(b, mem)
    assert err.value.register == 0x100 and err.value.value & 0x3 == 1
    assert not mem.bytes(COLOR_ADDR, 32 * 32 * 4, "check").any()


# ---------------------------------------------------------------------------------------------- golden scene
SIZE = 64
FLOOR_REF = 0.6  # light-space depth of the floor (texcoord0.w)


def shadowed_scene(mem: PhysicalMemory) -> np.ndarray:
    """Pass 1: a 64x64 shadow map (penumbra square with a green gradient, then an opaque occluder at depth 0.3);
    pass 2: a floor whose color is modulated by the shadow texture (orthographic lookup, shifted by (8, -8)
    pixels), then the occluder in blue. Returns the picture (H, W, 4), top row first."""
    mem.write(MAP_ADDR, b"\xff" * (SIZE * SIZE * 4))
    b = CommandBuilder()
    shadow_pass(b, SIZE, F16_ONE, 0)  # s' = s
    edge, inner = (0.0, 1.0, 0.0), (0.0, 0.25, 0.0)
    rect(b, 12, 20, 44, 52, SIZE, 0.3, [edge, inner, edge, inner])
    rect(b, 20, 28, 36, 44, SIZE, 0.3, [GREEN0] * 4)
    target(b, COLOR_ADDR, SIZE)
    b.write_fields("COLOR_OPERATION", fragment_mode=0, blend_mode=0)
    b.write_fields("LOGIC_OP", op=3)  # copy
    b.write_fields("TEXUNIT_CONFIG", unit0_enable=1, always1=1)
    b.write_fields("TEXUNIT0_DIM", width=SIZE, height=SIZE)
    b.write_fields("TEXUNIT0_ADDR1", address=MAP_ADDR >> 3)
    b.write_fields("TEXUNIT0_PARAM", type=2)  # shadow 2D, nearest, clamp to edge
    b.write_fields("TEXUNIT0_TYPE", format=0)
    b.write_fields("TEXUNIT0_SHADOW", orthographic=1, bias=0)
    b.write_fields("TEXENV0_SOURCE", rgb_src0=0, rgb_src1=3, alpha_src0=0)  # primary x texture 0
    b.write_fields("TEXENV0_COMBINER", rgb_combine=1, alpha_combine=0)
    u = [(-8 / SIZE), (SIZE - 8) / SIZE]
    v = [8 / SIZE, (SIZE + 8) / SIZE]
    floor_tex = [(u[0], v[0], FLOOR_REF), (u[1], v[0], FLOOR_REF), (u[0], v[1], FLOOR_REF), (u[1], v[1], FLOOR_REF)]
    floor_colors = [(1.0, 0.55, 0.2), (0.95, 0.9, 0.3), (0.3, 0.8, 0.45), (0.9, 0.95, 0.9)]
    rect(b, 0, 0, SIZE, SIZE, SIZE, 0.6, floor_colors, floor_tex)
    rect(b, 20, 28, 36, 44, SIZE, 0.3, [(0.2, 0.4, 0.8)] * 4, [(0.01, 0.01, 0.0)] * 4)  # ref 0: always lit
    state = run(b, mem)
    return read_color_image(mem, FramebufferState.from_regs(state.regs))


def test_shadowed_scene_golden():
    img = shadowed_scene(PhysicalMemory())
    path = GOLDEN / "shadowed_scene.png"
    if os.environ.get("PICAEMU_REGEN_GOLDEN"):
        Image.fromarray(img).save(path)
    golden = np.asarray(Image.open(path).convert("RGBA"))
    assert np.abs(img.astype(np.int16) - golden.astype(np.int16)).max() <= 2


def test_shadowed_scene_hand_checked_pixels():
    """Independent spot checks of the golden scene: umbra black, lit floor = its color, penumbra in between."""
    img = shadowed_scene(PhysicalMemory())[::-1]  # [window y, x]
    # window (40, 24): map texel (32, 32) is inside the occluder (depth 0.3 < 0.6): shadow 0 -> black
    assert tuple(img[24, 40, :3]) == (0, 0, 0)
    # window (4, 60): map texel (-4 -> clamped 0, 68 -> 63): untouched, lit 255 -> the floor color itself
    assert img[60, 4, :3].min() > 0
    # window (22, 16) -> map texel (14, 24): penumbra with green 1 - 0.75 * 2.5 / 32 -> rint(240.06) = 240; floor
    # green at (22.5, 16.5) (lower-left triangle): 0.55 * 0.390625 + 0.9 * 0.3515625 + 0.8 * 0.2578125 = 0.7375
    # -> 188; modulated: 188 * 240 / 255 = 176.9
    assert abs(int(img[16, 22, 1]) - 177) <= 1
    # the blue occluder of pass 2 reads an untouched texel with reference 0: lit, its own color
    assert tuple(img[30, 24, :3]) == (51, 102, 204)  # 0.2, 0.4, 0.8 x 255


# ---------------------------------------------------------------------------------------------- observer
def test_stage_observer_fragment_fates():
    seen: list[FragmentFates] = []
    mem = PhysicalMemory()
    b = CommandBuilder()
    target(b, COLOR_ADDR, 32)
    common(b)
    b.write_fields("COLOR_OPERATION", fragment_mode=0, blend_mode=0)
    b.write_fields("LOGIC_OP", op=3)
    b.write_fields("DEPTHBUFFER_READ", depth=1, stencil=1)
    b.write_fields("DEPTHBUFFER_WRITE", depth=1, stencil=1)
    b.write_fields("DEPTH_COLOR_MASK", depth_test=1, depth_func=4, depth_write=1, red=1, green=1, blue=1, alpha=1)
    b.write_fields("SCISSORTEST_MODE", mode=3)  # keep inside the box
    b.write_fields("SCISSORTEST_POS", x1=0, y1=0)
    b.write_fields("SCISSORTEST_DIM", x2=7, y2=31)
    b.write_fields("FRAGOP_ALPHA_TEST", enable=1, func=6, ref=100)  # alpha > 100
    white, faint = (1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 0.2)
    rect(b, 0, 0, 4, 2, 32, 0.5, [white] * 4)  # 8 fragments; 0.5 < 0 (cleared depth buffer) fails: DEPTH
    b.write_fields("DEPTH_COLOR_MASK", depth_test=0, depth_write=1, red=1, green=1, blue=1, alpha=1)
    rect(b, 0, 0, 4, 2, 32, 0.5, [white] * 4)  # depth test off: written, depth 0.5 stored
    b.write_fields("DEPTH_COLOR_MASK", depth_test=1, depth_func=4, depth_write=1, red=1, green=1, blue=1, alpha=1)
    rect(b, 0, 0, 12, 2, 32, 0.25, [white] * 4)  # x 0-3: 0.25 < 0.5 passes; x 4-7: 0.25 < 0 fails; x 8-11 scissor
    rect(b, 0, 0, 2, 2, 32, 0.1, [faint] * 4)  # alpha 51 > 100 fails: ALPHA
    run(b, mem, observer=lambda call, fates: seen.append(fates))
    assert len(seen) == 4 and all(f.color_written and not f.shadow for f in seen)
    assert (seen[0].fate == Fate.DEPTH).all() and (seen[1].fate == Fate.WRITTEN).all() and len(seen[1].x) == 8
    third = seen[2]
    want = np.where(third.x < 4, Fate.WRITTEN, np.where(third.x < 8, Fate.DEPTH, Fate.SCISSOR))
    assert len(third.x) == 24 and np.array_equal(third.fate, want)
    assert len(seen[3].x) == 4 and (seen[3].fate == Fate.ALPHA).all()
    # the compiled pass's records: the buffer starts zeroed, logic op copy writes the white source
    clear, white8 = [0, 0, 0, 0], [255, 255, 255, 255]
    first, second, _, alpha = seen
    assert (first.color_before == clear).all() and (first.color_after == clear).all() and (first.tev == white8).all()
    assert (second.color_before == clear).all() and (second.color_after == white8).all()
    assert np.allclose(second.fragments.depth, 0.5, atol=1e-3)
    inside = third.x < 4  # found white, wrote white; the rest found the cleared color and left it
    assert (third.color_before[inside] == white8).all() and (third.color_after[inside] == white8).all()
    assert (third.color_before[~inside] == clear).all() and (third.color_after[~inside] == clear).all()
    assert (third.tev[third.x >= 8] == 0).all()  # scissor-rejected: never shaded
    assert (alpha.color_before == white8).all() and (alpha.color_after == white8).all()
    assert (alpha.tev[:, 3] == 51).all()  # 0.2 x 255


def test_stage_observer_sees_every_shadow_fragment_written():
    seen: list[FragmentFates] = []
    b = CommandBuilder()
    shadow_pass(b, 32, F16_ONE, 0)
    rect(b, 0, 0, 8, 8, 32, 0.5, [GREEN0] * 4)
    run(b, PhysicalMemory(), observer=lambda call, fates: seen.append(fates))
    assert len(seen) == 1 and seen[0].shadow and len(seen[0].x) == 64 and (seen[0].fate == Fate.WRITTEN).all()


@pytest.mark.parametrize("scissor_mode", [0, 1, 3])
def test_observer_changes_neither_pixels_nor_counters(scissor_mode: int):
    def scene(observer):
        mem = PhysicalMemory()
        b = CommandBuilder()
        target(b, COLOR_ADDR, 32)
        common(b)
        b.write_fields("COLOR_OPERATION", fragment_mode=0, blend_mode=0)
        b.write_fields("LOGIC_OP", op=3)
        b.write_fields("SCISSORTEST_MODE", mode=scissor_mode)
        b.write_fields("SCISSORTEST_POS", x1=5, y1=6)
        b.write_fields("SCISSORTEST_DIM", x2=20, y2=25)
        rect(b, 2, 3, 30, 29, 32, 0.5, [(1.0, 0.5, 0.25), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 1.0)])
        b.finalize()
        stats: list[dict] = []
        pipe = Pipeline(identity_vs, stage_observer=FateWatcher(observer) if observer is not None else None)
        draw = pipe.draw
        pipe.draw = lambda call: (draw(call), stats.append(dict(call.stats)))  # type: ignore[method-assign]
        state = GpuState()
        CommandProcessor(mem, pipe, state=state).run(b.words())
        for s in stats:
            s.pop("time_s")
        return read_color_image(mem, FramebufferState.from_regs(state.regs)), stats

    seen: list[FragmentFates] = []
    plain_img, plain_stats = scene(None)
    obs_img, obs_stats = scene(lambda call, fates: seen.append(fates))
    assert np.array_equal(plain_img, obs_img) and plain_stats == obs_stats
    killed = sum(int((f.fate == Fate.SCISSOR).sum()) for f in seen)
    box = 16 * 20  # x 5-20, y 6-25 inside the rectangle's pixels x 2-29, y 3-28
    assert killed == {0: 0, 1: box, 3: 28 * 26 - box}[scissor_mode] == sum(s["killed_scissor"] for s in obs_stats)


def test_geometry_shader_instructions_are_counted():
    from picaemu.pipeline import PrimaryColorStages
    from tests.test_pipeline import RED, draw, make_state, use_triangle_per_point_gs
    from tests.test_pipeline import identity_vs as vs_pos_color

    st, mem = make_state(), PhysicalMemory()
    use_triangle_per_point_gs(st)
    pipe = Pipeline(vs_pos_color, lambda s: PrimaryColorStages())
    stats = draw(pipe, st, mem, [(4, 4, -0.5, 1, *RED), (20, 16, -0.5, 1, *RED)], topology=3)
    # the injected VS reports nothing; the GS runs 10 instructions (3 x setemit + mov/add + emit, end) per point
    assert stats["primitives_assembled"] == 2 and stats["shader_instructions"] == 2 * 10
