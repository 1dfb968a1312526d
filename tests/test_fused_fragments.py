"""The fused fragment side (``picaemu.fused.fragments``) against the staged path it stands for: every bundled sample
capture, the game scenes and hand-made draws of each covered feature, replayed on the reference route and the
compiled one, give the same memory (every region, byte for byte) and the same per-draw statistics — and
the fused side really served the covered draws (``Pipeline.fused_fragment_draws``) and named why it refused the
others."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numba
import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.fused import fragments as ff
from picaemu.fused.fragment_kernel import DIVISION_BY_ZERO, TEXTURE_FAULT, TOO_MANY_FRAGMENTS
from picaemu.geometry.clipping import WindowTriangles
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline, Route
from picaemu.raster.rasterizer import CHUNK_FRAGMENTS
from picaemu.replay import Replay
from picaemu.texture.formats import PACKED
from samples._common import SCREEN
from samples.game_scene import SCENES
from tests.conftest import memory_digests
from tests.test_pipeline import PerDraw, reference

CAPTURES = sorted((Path(__file__).resolve().parent.parent / "samples" / "captures").glob("*.pica"))
SLOW = {"game_cubes_3000"}


def replay(capture: pica.Capture, pipe: Pipeline) -> tuple[list[str], list[dict], Pipeline]:
    """(memory digests of every region, per-draw statistics without the time, the pipeline) of a whole replay."""
    rep = Replay(capture, checkpoints=False, pipeline=pipe)
    rep.run()
    memory = rep.memory
    digests = memory_digests(memory)
    return digests, [{k: v for k, v in d.stats.items() if k != "time_s"} for d in rep.draws], pipe


def assert_same(capture: pica.Capture, compiled: Pipeline | None = None) -> tuple[list[dict], Pipeline]:
    """The reference route and the compiled one (default: without the compiled loop, each draw through the
    pipeline's own fused sides: ``PerDraw``) agree on memory and every draw's statistics; returns the compiled run's
    stats and pipeline."""
    mem_a, stats_a, _ = replay(capture, reference())
    mem_b, stats_b, pipe = replay(capture, PerDraw() if compiled is None else compiled)
    assert len(stats_a) == len(stats_b)
    for i, (one, other) in enumerate(zip(stats_a, stats_b, strict=True)):
        assert one == other, f"draw {i}"
    assert mem_a == mem_b
    return stats_b, pipe


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in CAPTURES], ids=lambda p: p.stem
)
def test_fused_fragments_match_the_stages_on_every_sample(path: Path) -> None:
    stats, pipe = assert_same(pica.read(path))
    if path.stem != "gs_sprites":
        assert pipe.fused_fragment_draws == len(stats)


@pytest.mark.parametrize("name", ["game_cubes_300", "game_sprites_1000", "game_lit_300"])
@pytest.mark.parametrize("merged", [False, True])
def test_game_scenes_match_on_the_compiled_route(name: str, merged: bool) -> None:
    """The replays' pipeline (the compiled loop on): every draw runs compiled, in the loop or the fused sides."""
    stats, pipe = assert_same(SCENES[name](merged=merged), Pipeline())
    assert sum(s["fragments_written"] for s in stats) > 0
    assert pipe.fused_fragment_draws + pipe.compiled_count == len(stats)


class Keep(Pipeline):
    """Remembers each draw's call and window triangles as they reach the fragment side."""

    def __init__(self, route: Route = Route.COMPILED) -> None:
        super().__init__(route=route)
        self.seen: list = []

    def _fused_fragments(self, call, wt, stats):
        self.seen.append((call, wt))
        return super()._fused_fragments(call, wt, stats)


def first_draw(capture: pica.Capture, last: bool = False) -> tuple:
    """(call, window triangles) of the capture's first (or last) draw, replayed on the reference route."""
    pipe = Keep(Route.REFERENCE)
    Replay(capture, checkpoints=False, pipeline=pipe).run()
    return pipe.seen[-1 if last else 0]


# ---------------------------------------------------------------------------------------------- hand-made draws
VS_UNITS = """
.fvec projection[4]
.out outpos position
.out outtc0 texcoord0
.out outtc1 texcoord1
.out outtc2 texcoord2
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outtc0, v1
    mov outtc1, v2
    mov outtc2, v3
    mov outclr, v4
    end
.end
"""
Setup = Callable[[CaptureBuilder, np.random.Generator], None]


def scene(
    setup: Setup, seed: int = 0, draws: int = 3, before: Sequence[Setup] = (), color: Sequence[float] | None = None
) -> pica.Capture:
    """``draws`` draws of 8 random overlapping triangles (texcoords in -1.5..2.5 for every wrap rule, random colors
    with alpha, or every vertex ``color`` (RGBA 0..1)) after ``setup`` configured the fragment state, ``before[k]``
    run before draw k; TEV default: texture 0 x primary color."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"fused fragments {seed}")
    b.begin_frame(clear=(40, 80, 120, 160), depth=0x400000, stencil=0x35)
    b.shader(VS_UNITS)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    setup(b, rng)
    n = 24
    pos = np.column_stack(
        [rng.uniform(20, 380, n), rng.uniform(20, 220, n), rng.uniform(-0.9, 0.9, n), np.ones(n)]
    ).astype(np.float32)
    attrs = [
        pos,
        *(rng.uniform(-1.5, 2.5, (n, 2)).astype(np.float32) for _ in range(3)),
        rng.uniform(0, 1, (n, 4)).astype(np.float32) if color is None else np.tile(np.float32(color), (n, 1)),
    ]
    b.vertices(attrs)
    for k in range(draws):
        if k < len(before):
            before[k](b, rng)
        b.draw(n)
    b.end_frame()
    return b.capture()


def check(setup: Setup, seed: int = 0, **expect_nonzero: bool) -> list[dict]:
    """Both paths agree on ``scene(setup, seed)`` and the fused side served every draw; each counter named in
    ``expect_nonzero`` is > 0 over the draws (the feature was exercised)."""
    stats, pipe = assert_same(scene(setup, seed))
    assert pipe.fused_fragment_draws == len(stats) == 3
    for key in ("fragments_written", *expect_nonzero):
        assert sum(s[key] for s in stats) > 0, key
    return stats


def texture(rng: np.random.Generator, size: tuple[int, int] = (16, 32)) -> np.ndarray:
    return rng.integers(0, 256, (*size, 4), dtype=np.uint8)


@pytest.mark.parametrize("fmt", sorted(PACKED))
def test_every_packed_format(fmt: str) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), fmt, wrap="repeat")

    stats = check(setup, texels_fetched=True)
    assert all(s["texels_fetched"] == s["fragments_rasterized"] - s["killed_scissor"] for s in stats)  # nearest


@pytest.mark.parametrize("wrap", range(8))
@pytest.mark.parametrize("filt", ["nearest", "linear"])
def test_wrap_modes_border_and_filters(wrap: int, filt: str) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng, (8, 16)), "RGBA5551", filter=filt)
        b.set("TEXUNIT0_PARAM", mag_filter=filt, min_filter=filt, wrap_s=wrap, wrap_t=(wrap + 3) % 8, type="2D")
        b.set("TEXUNIT0_BORDER_COLOR", r=200, g=10, b=99, a=255)

    stats = check(setup, wrap)
    taps = 4 if filt == "linear" else 1
    assert all(s["texels_fetched"] == taps * (s["fragments_rasterized"] - s["killed_scissor"]) for s in stats)


@pytest.mark.parametrize("unit2_coords", [0, 1])
def test_three_units_buffer_constants_and_dot3(unit2_coords: int) -> None:
    """Units 0-2 (unit 2 on texcoord2 or texcoord1), the combiner buffer with its updates, constant colors, dot3
    RGBA / RGB, a disabled unit and lighting read while disabled (both 0)."""

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        for unit, fmt in enumerate(("RGBA8", "IA4", "RGB565")):
            b.texture(
                unit,
                texture(rng, (8 << unit, 8)),
                fmt,
                filter="linear" if unit == 1 else "nearest",
                wrap="mirrored repeat",
            )
        b.set("TEXUNIT_CONFIG", unit0_enable=1, unit1_enable=1, unit2_enable=1, unit2_coords=unit2_coords, always1=1)
        b.tev(0, rgb=("texture 0", "texture 1", "constant"), combine="interpolate", color=(10, 200, 30, 77))
        b.tev(1, rgb=("previous", "texture 2"), combine="dot3 RGBA", rgb_ops=("src.rgb", "1 - src.rgb"))
        b.tev(
            2,
            rgb=("previous buffer", "primary color", "previous"),
            alpha=("texture 1", "constant"),
            combine="multiply then add",
            alpha_combine="add",
            color=(1, 2, 3, 40),
        )
        b.tev(
            3,
            rgb=("previous", "texture 2"),
            combine="dot3 RGB",
            alpha=("previous buffer", "previous"),
            alpha_combine="subtract",
        )
        b.tev(
            4,
            rgb=("previous", "fragment primary color", "texture 3"),
            combine="add then multiply",
            alpha=("previous",),
            alpha_combine="replace",
        )
        b.tev(5, rgb=("previous", "previous buffer"), combine="add signed", alpha=("previous",))
        b.set(
            "TEXENV_UPDATE_BUFFER", fog_mode="disabled", rgb_update0=1, alpha_update1=1, rgb_update2=1, alpha_update3=1
        )
        b.set("TEXENV_BUFFER_COLOR", r=9, g=99, b=199, a=250)

    stats = check(setup, unit2_coords)
    fragments = sum(s["fragments_rasterized"] for s in stats)
    assert sum(s["texels_fetched"] for s in stats) == fragments * (1 + 4 + 1)


@pytest.mark.parametrize("mode", [1, 3])
def test_scissor_modes(mode: int) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA4")
        b.set("SCISSORTEST_MODE", mode=mode)
        b.set("SCISSORTEST_POS", x1=90, y1=60)
        b.set("SCISSORTEST_DIM", x2=250, y2=170)

    check(setup, mode, killed_scissor=True)


@pytest.mark.parametrize("func", ["less", "greater", "equal", "not equal"])
def test_alpha_test(func: str) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "A8")
        b.alpha_test(True, func, 90)

    check(setup, killed_alpha=True)


@pytest.mark.parametrize("depth_format", [0, 2, 3])
def test_stencil_and_depth_formats(depth_format: int) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "I8")
        b.set("DEPTHBUFFER_FORMAT", format=depth_format)
        b.stencil(
            True,
            "not equal",
            0x36,
            mask=0xFE,
            write_mask=0x7F,
            fail="increment saturate",
            depth_fail="invert",
            depth_pass="decrement wrap",
        )
        b.depth_test(True, "greater or equal")

    expect = {"killed_stencil": True} if depth_format == 3 else {}
    check(setup, depth_format, killed_depth=True, **expect)


@pytest.mark.parametrize("color_format", range(5))
@pytest.mark.parametrize("ops", ["blend", "logic", "mask"])
def test_blend_logic_op_and_write_masks_on_every_color_format(color_format: int, ops: str) -> None:
    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "HILO8")
        b.set("COLORBUFFER_FORMAT", format=color_format, pixel_size=2 if color_format == 0 else 0)
        if ops == "blend":
            b.blend("constant color", "one minus dst alpha", "reverse subtract")
            b.set("BLEND_COLOR", r=30, g=60, b=90, a=120)
        elif ops == "logic":
            b.set("COLOR_OPERATION", fragment_mode="default", blend_mode="logic op", constant=0xE4)
            b.set("LOGIC_OP", op="xor")
        else:
            b.set("DEPTH_COLOR_MASK", depth_test=1, depth_func="always", red=1, green=0, blue=1, alpha=0, depth_write=0)

    check(setup, color_format)


def test_refusals_are_named() -> None:
    """Each uncovered state gets its reason (the staged path runs those draws; they still match)."""
    cases: dict[str, Setup] = {
        "shadow cube map": lambda b, rng: b.set("TEXUNIT0_PARAM", type="shadow cube"),
        "shadow texture": lambda b, rng: b.set("TEXUNIT0_PARAM", type="shadow 2D"),
        # the depth buffer over the color buffer: the staged path's interleaved pass (the fused side never compiles it)
        ff.INTERLEAVED_BUFFERS: lambda b, rng: (
            b.set("DEPTHBUFFER_LOC", address=b.color),
            b.depth_test(True, "greater or equal"),
        ),
    }
    for reason, extra in cases.items():

        def setup(b: CaptureBuilder, rng: np.random.Generator, extra: Setup = extra) -> None:
            b.texture(0, texture(rng), "RGBA8")
            extra(b, rng)

        capture = scene(setup)
        call, _ = first_draw(capture)
        assert ff.FragmentPlan.of(call.draw_state, call.memory) == reason
        _, pipe = assert_same(capture)
        assert pipe.fused_fragment_draws == 0


def test_texture_outside_memory_falls_back_having_written_nothing() -> None:
    """A texture address the plan's regions do not hold: ``fragment_side`` returns TEXTURE_FAULT, memory untouched."""
    pipe = Keep()
    Replay(scene(lambda b, rng: b.texture(0, texture(rng), "RGBA8")), checkpoints=False, pipeline=pipe).run()
    call, wt = pipe.seen[0]
    plan = ff.FragmentPlan.of(call.draw_state, call.memory)
    assert isinstance(plan, ff.FragmentPlan)
    before = [call.memory.region_bytes(r.name).copy() for r in call.memory.regions]
    plan.ints[ff.TEXTURE_ADDRESS_SLOT[0]] = 0x10000000  # no region there
    counts = np.zeros(len(ff.FRAGMENT_COUNTERS), np.int64)
    args = (np.ascontiguousarray(wt.x), np.ascontiguousarray(wt.y), wt.zndc, wt.inv_w, wt.varyings, wt.primitive)
    assert ff.fragment_side(*args, *plan.args, counts) == TEXTURE_FAULT
    assert not counts.any()
    assert all(
        np.array_equal(a, call.memory.region_bytes(r.name)) for a, r in zip(before, call.memory.regions, strict=True)
    )


def test_plan_lookup_is_remembered() -> None:
    call, _ = first_draw(scene(lambda b, rng: b.texture(0, texture(rng), "RGBA8")))
    ds, memory = call.draw_state, call.memory
    cache = ff.PlanCache()
    plan = cache.get(ds, memory)
    assert isinstance(plan, ff.FragmentPlan) and cache.get(ds, memory) is plan
    other = cache.get(ds, PhysicalMemory())  # another memory: another plan (its buffers)
    assert isinstance(other, ff.FragmentPlan) and other is not plan and len(cache) == 2


@numba.njit
def _from_compiled(x, y, zndc, inv_w, vary, primitive, args, counts):  # pragma: no cover - compiled
    """The lead's compiled loop calls ``fragment_side`` like this: from compiled code, the plan's args unpacked."""
    return ff.fragment_side(x, y, zndc, inv_w, vary, primitive, *args, counts)


def test_fragment_side_is_callable_from_compiled_code() -> None:
    """Called from another compiled function it draws what the Python entry draws (memory and counters)."""
    pipe = Keep(Route.REFERENCE)
    rep = Replay(
        scene(lambda b, rng: b.texture(0, texture(rng), "RGBA4", filter="linear")), checkpoints=False, pipeline=pipe
    )
    rep.run()
    call, wt = pipe.seen[0]
    memory = call.memory
    plan = ff.FragmentPlan.of(call.draw_state, memory)
    assert isinstance(plan, ff.FragmentPlan)
    fb = call.draw_state.framebuffer
    memory.fill(fb.depth_address, fb.width * fb.height * fb.depth_bpp)  # the frame drew these triangles: pass again
    start = memory.snapshot()
    stats = dict.fromkeys(ff.FRAGMENT_COUNTERS, 0)
    assert ff.run(plan, wt, stats)
    after = memory.snapshot()
    memory.restore(start)
    counts = np.zeros(len(ff.FRAGMENT_COUNTERS), np.int64)
    assert _from_compiled(wt.x, wt.y, wt.zndc, wt.inv_w, wt.varyings, wt.primitive, plan.args, counts) == 0
    assert dict(zip(ff.FRAGMENT_COUNTERS, counts.tolist(), strict=True)) == stats and stats["fragments_written"] > 0
    assert all(np.array_equal(after[name], memory.region_bytes(name)) for name in after)


def test_big_and_dividing_draws_are_declined_having_written_nothing() -> None:
    """More bounding-box pixels than one rasterizer chunk, or a perspective divisor of 0 (the staged path raises
    ZeroDivisionError): ``fragment_side`` returns its code before any write; ``run`` answers False."""
    pipe = Keep(Route.REFERENCE)
    Replay(scene(lambda b, rng: b.texture(0, texture(rng), "RGBA8")), checkpoints=False, pipeline=pipe).run()
    call, wt = pipe.seen[0]
    plan = ff.FragmentPlan.of(call.draw_state, call.memory)
    assert isinstance(plan, ff.FragmentPlan)
    full = np.array([[-16, 16 * 401, -16], [-16, -16, 16 * 241]], np.int64).T[None]  # covers the whole 400x240
    big = CHUNK_FRAGMENTS // (400 * 240) + 1
    dividing = (wt.x, wt.y, wt.zndc, np.zeros_like(wt.inv_w), wt.varyings, wt.primitive)
    huge = (
        np.repeat(full[:, :, 0], big, 0),
        np.repeat(full[:, :, 1], big, 0),
        np.zeros((big, 3), np.float32),
        np.ones((big, 3), np.float32),
        np.zeros((big, 3, wt.varyings.shape[2]), np.float32),
        np.arange(big, dtype=np.int32),
    )
    before = [call.memory.region_bytes(r.name).copy() for r in call.memory.regions]
    for tris, code in ((dividing, DIVISION_BY_ZERO), (huge, TOO_MANY_FRAGMENTS)):
        counts = np.zeros(len(ff.FRAGMENT_COUNTERS), np.int64)
        assert ff.fragment_side(*tris, *plan.args, counts) == code
        assert not counts.any()
        assert not ff.run(plan, WindowTriangles(*tris), {})
    assert all(
        np.array_equal(a, call.memory.region_bytes(r.name)) for a, r in zip(before, call.memory.regions, strict=True)
    )
    with pytest.raises(ZeroDivisionError):
        Pipeline()._fragments(call, WindowTriangles(*dividing), dict.fromkeys(ff.FRAGMENT_COUNTERS, 0))
