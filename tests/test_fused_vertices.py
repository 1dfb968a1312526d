"""The fused vertex side (``picaemu.fused.vertices``) against the staged loader + stages it stands for: every
bundled sample capture and game scene replayed on the reference route and the compiled one gives the same
memory, per-draw statistics and bounds, and the fused side served the common draws; hand-made draws check the
loaded values against hand-typed bytes (every element format and component count, padding slots, u8 / u16
indices with repeats, fixed attributes changed between draws), the window triangles bit for bit against the staged
path, the fallbacks (memory faults name the same loader or index buffer), and a call from compiled code."""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import ATTRIB_BASE, CaptureBuilder
from picaemu.draw import DrawCall, DrawKind
from picaemu.errors import MemoryFault
from picaemu.fused import vertices
from picaemu.fused.vertices import VERTEX_COUNTERS, VertexPlan, vertex_side
from picaemu.geometry import clipping, front_end
from picaemu.geometry.output_map import COLOR, NUM_COLUMNS, QUAT
from picaemu.geometry.primitive_assembly import Topology
from picaemu.geometry.vertex_loader import VertexLoaderState, load_batch
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline, Route
from picaemu.replay import Replay, ReplayError
from picaemu.state import GpuState
from samples._common import VS_TEX
from samples.game_scene import SCENES
from tests.test_front_end import CAPTURES, SLOW, VS_FLOW, Ways, random_scene, replay_both
from tests.test_pipeline import PerDraw, reference
from tests.test_vertex_loader import BASE, TYPES, configure, loader, set_reg

ROUTES = (Route.REFERENCE, Route.COMPILED)
WAYS: Ways = (reference, PerDraw)  # the oracle, then the compiled route without the loop (its own fused sides)
# the colour and quaternion varying columns of WindowTriangles.varyings (output map columns past the position)
COLOR_VARYING = slice(COLOR.start - 4, COLOR.stop - 4)
QUAT_VARYING = slice(QUAT.start - 4, QUAT.stop - 4)
# VS_TEX with the colour input also written to the quaternion output, which is not clamped as colours are (the
# quaternions of a triangle here are equal: the alignment keeps them)
VS_QUAT = VS_TEX.replace(".out outclr color\n", ".out outclr color\n.out outq normalquat\n").replace(
    "    mov outclr, inclr\n", "    mov outclr, inclr\n    mov outq, inclr\n"
)
assert "mov outq" in VS_QUAT


def assert_same(capture: pica.Capture) -> tuple[int, int]:
    """Both ways give the same memory, per-draw stats and bounds; returns (draws, draws the fused side served)."""
    (mem_a, draws_a, *_), (mem_b, draws_b, _, pipe) = replay_both(capture, WAYS)
    assert len(draws_a) == len(draws_b)
    for i, (one, other) in enumerate(zip(draws_a, draws_b, strict=True)):
        assert one == other, f"draw {i}"
    assert mem_a == mem_b
    return len(draws_a), pipe.fused_vertex_draws


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in CAPTURES], ids=lambda p: p.stem
)
def test_every_sample_is_the_same_with_the_fused_vertex_side(path: Path) -> None:
    draws, fused = assert_same(pica.read(path))
    if path.stem.startswith(("game_cubes", "game_sprites", "game_lit")):
        assert fused == draws  # the common draw these scenes are made of (clipping included)
    if path.stem == "gs_sprites":
        assert fused == draws  # the geometry shader's draw: picaemu.fused.geometry


@pytest.mark.parametrize("name", ["game_cubes_300", "game_lit_300", "game_sprites_1000"])
def test_game_scenes_and_their_merged_twins_are_the_same(name: str) -> None:
    draws, fused = assert_same(SCENES[name]())
    assert fused == draws
    draws, fused = assert_same(SCENES[name](merged=True))
    assert fused == draws == 1  # one draw of thousands of vertices, shaded ``front_end.SHADE_LANES`` at a time


@pytest.mark.parametrize("seed", range(6))
def test_random_scenes_are_the_same(seed: int) -> None:
    """Index buffers with repeats, strips, lists of any length, triangles to clip, NaN positions, flow control."""
    draws, fused = assert_same(random_scene(seed))
    assert 0 < fused < draws


class Recorder(Pipeline):
    """Keeps every draw call and every rasterized draw's window triangles (what the fragment side receives)."""

    def __init__(self, route: Route = Route.COMPILED) -> None:
        super().__init__(route=route)
        self.calls: list[DrawCall] = []
        self.triangles: list[clipping.WindowTriangles] = []

    def draw(self, call: DrawCall) -> None:
        self.calls.append(call)
        super().draw(call)

    def _fragment_side(self, call: DrawCall, wt: clipping.WindowTriangles) -> None:
        self.triangles.append(wt)
        super()._fragment_side(call, wt)


def replay_both_ways(capture: pica.Capture) -> tuple[list[clipping.WindowTriangles], Recorder]:
    """Replay on the reference route and the compiled one: the window triangles agree bit for bit (and the stats,
    bounds and memory, ``assert_same``); returns the fused way's triangles and pipeline."""
    assert_same(capture)
    runs = []
    for route in ROUTES:
        pipe = Recorder(route=route)
        Replay(capture, checkpoints=False, pipeline=pipe).run()
        runs.append(pipe)
    staged, fused = runs
    assert len(staged.triangles) == len(fused.triangles)
    for one, other in zip(staged.triangles, fused.triangles, strict=True):
        for a, b in zip(arrays(one), arrays(other), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return fused.triangles, fused


def arrays(wt: clipping.WindowTriangles) -> list[np.ndarray]:
    """The six arrays of ``wt``, in field order."""
    return [getattr(wt, f.name) for f in dataclasses.fields(wt)]


# one small counter-clockwise triangle inside the clip volume (w = 1: varyings are the VS outputs themselves)
TRIANGLE = np.array([[-0.5, -0.5, -0.5, 1], [0.5, -0.5, -0.5, 1], [0, 0.5, -0.5, 1]], np.float32)


def frame() -> CaptureBuilder:
    """A frame with VS_QUAT (position v0, texcoord v1, colour v2) and the identity projection."""
    b = CaptureBuilder(name="fused vertices")
    b.begin_frame(clear=(0, 0, 0, 255))
    b.shader(VS_QUAT)
    b.uniforms(0, np.eye(4, dtype=np.float32))
    return b


def loaded(wt: clipping.WindowTriangles) -> np.ndarray:
    """(3, 4) input v2 of the first triangle's vertices, as the quaternion varyings carry it."""
    return wt.varyings[0, :, QUAT_VARYING]


FORMAT_VALUES = {
    "s8": [-5, 100, -128, 127],
    "u8": [200, 7, 255, 0],
    "s16": [-300, 1000, -32768, 32767],
    "f32": [1.5, -2.25, 1e-3, 3e4],
}


@pytest.mark.parametrize("fmt", list(FORMAT_VALUES))
def test_every_element_format_and_component_count(fmt: str) -> None:
    b = frame()
    for comps in range(1, 5):
        color = np.tile(np.array(FORMAT_VALUES[fmt][:comps], np.float64), (3, 1))
        b.vertices([TRIANGLE, np.zeros((3, 2), np.float32), color], ["f32", "f32", fmt])
        b.draw(3)
    b.end_frame()
    triangles, pipe = replay_both_ways(b.capture())
    assert pipe.fused_vertex_draws == 4
    for comps, wt in enumerate(triangles, start=1):
        expected = np.array(FORMAT_VALUES[fmt][:comps] + [0, 0, 0, 1][comps:], np.float32)
        assert (loaded(wt) == expected).all(), (comps, loaded(wt))


def test_padding_slots_and_mixed_formats() -> None:
    """Loader slots: position f32x4 @0, pad 4 (code 12) -> @20, colour u8x3 @20, pad 8 (code 13) -> @32,
    texcoord s16x2 @32; stride 36 (offsets typed by hand from the alignment rules)."""
    b = frame()
    b.vertices([TRIANGLE, np.zeros((3, 2)), np.zeros((3, 3))], ["f32", "s16", "u8"])
    rows = [
        struct.pack("<4f", *p)
        + b"\xee" * 4
        + bytes((10 * k, 20 + k, 255))
        + b"\xee" * 9
        + struct.pack("<hh", -7 * k, 300)
        for k, p in enumerate(TRIANGLE.tolist())
    ]
    assert all(len(r) == 36 for r in rows)
    address = b.upload(b"".join(rows))
    b.list.write_many(
        "ATTRIBBUFFER0_OFFSET", [address - ATTRIB_BASE, 0 | 12 << 4 | 2 << 8 | 13 << 12 | 1 << 16, 36 << 16 | 5 << 28]
    )
    b.draw(3)
    b.end_frame()
    (wt,), pipe = replay_both_ways(b.capture())
    assert pipe.fused_vertex_draws == 1
    assert loaded(wt).tolist() == [[10 * k, 20 + k, 255, 1] for k in range(3)]
    assert wt.varyings[0, :, 4:6].tolist() == [[-7 * k, 300] for k in range(3)]  # texcoord 0 columns


@pytest.mark.parametrize("index_type", ["u8", "u16"])
def test_indices_with_repeats_shade_each_vertex_once(index_type: str) -> None:
    b = frame()
    quad = np.array(
        [[-0.5, -0.5, -0.5, 1], [0.5, -0.5, -0.5, 1], [0.5, 0.5, -0.5, 1], [-0.5, 0.5, -0.5, 1]], np.float32
    )
    color = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 1, 1]], np.float32)
    b.vertices([quad, np.zeros((4, 2), np.float32), color])
    indices = [2, 0, 1, 0, 2, 3, 3, 0, 2]  # counter-clockwise: the window keeps their vertex order
    b.draw_indexed(indices, index_type=index_type)
    b.end_frame()
    (wt,), pipe = replay_both_ways(b.capture())
    assert pipe.fused_vertex_draws == 1
    replay = Replay(b.capture(), checkpoints=False, pipeline=Pipeline())
    replay.run()
    stats = replay.draws[0].stats
    assert (stats["vertices"], stats["vertices_loaded"], stats["vertices_shaded"]) == (9, 4, 4)
    assert stats["primitives_assembled"] == 3
    kept = wt.primitive.tolist()  # triangles left after culling, each with its submitted vertices' colours
    for k, t in enumerate(kept):
        assert wt.varyings[k, :, COLOR_VARYING].tolist() == color[indices[3 * t : 3 * t + 3]].tolist()


def test_fixed_attributes_are_read_live() -> None:
    """Colour (v2) from the fixed store, changed between two draws of one loader layout."""
    b = frame()
    b.vertices([TRIANGLE, np.zeros((3, 2), np.float32), np.zeros((3, 4), np.float32)])
    b.set("ATTRIBBUFFERS_FORMAT_HIGH", 0xF, num_attrs_minus_1=2, fixed2=1)
    b.list.write("ATTRIBBUFFER0_CONFIG2", 40 << 16 | 2 << 28)  # load position and texcoord only (stride kept)
    for value in ((0.5, 0.25, 1.0, 1.0), (2.0, -1.0, 0.0, 0.5)):
        b.list.fixed_attrib(2, value)
        b.draw(3)
    b.end_frame()
    triangles, pipe = replay_both_ways(b.capture())
    assert pipe.fused_vertex_draws == 2
    assert loaded(triangles[0]).tolist() == [[0.5, 0.25, 1.0, 1.0]] * 3
    assert loaded(triangles[1]).tolist() == [[2.0, -1.0, 0.0, 0.5]] * 3


def test_clipping_stays_in_the_call() -> None:
    """One triangle inside, one crossing x = w (clipped into a fan of two), one wholly outside, one with a NaN."""
    b = frame()
    inside = TRIANGLE
    crossing = TRIANGLE + np.array([0.75, 0, 0, 0], np.float32)  # x 0.25, 1.25, 0.75: cut by x = w into a quad
    outside = TRIANGLE + np.array([3.0, 0, 0, 0], np.float32)
    nan = TRIANGLE.copy()
    nan[1, 0] = np.nan
    pos = np.concatenate([inside, crossing, outside, nan])
    b.vertices([pos, np.zeros((12, 2), np.float32), np.ones((12, 4), np.float32)])
    b.draw(12)
    b.end_frame()
    (wt,), pipe = replay_both_ways(b.capture())
    assert pipe.fused_vertex_draws == 1
    stats = pipe.calls[0].stats
    names = (
        "primitives_assembled",
        "primitives_clipped",
        "primitives_clipped_away",
        "primitives_invalid",
        "primitives_culled",
        "primitives_rasterized",
    )
    assert [stats[k] for k in names] == [4, 1, 1, 1, 0, 3]
    assert wt.primitive.tolist() == [0, 1, 1]  # the fan takes its triangle's place
    assert wt.x.max() == (1.0 + 1.0) * 120 * 16  # clipped at x = w: the right edge of the 240-wide viewport


@contextmanager
def clipper_unlinked() -> Iterator[np.ndarray]:
    """The front end's links as before a first draw to clip: no clipper (restored afterwards)."""
    links = front_end.front_end_links()
    kept = links.copy()
    links[front_end.L_CLIP] = 0
    try:
        yield links
    finally:
        links[:] = kept


def test_the_clipper_is_linked_when_a_draw_first_needs_it() -> None:
    """A draw with a triangle to clip and no clipper linked: the vertex side declines, the clipper is compiled (or
    loaded) and linked for every plan, and the same call runs the draw compiled."""
    b = frame()
    crossing = TRIANGLE + np.array([0.75, 0, 0, 0], np.float32)  # cut by x = w into a quad
    b.vertices([crossing, np.zeros((3, 2), np.float32), np.ones((3, 4), np.float32)])
    b.draw(3)
    b.end_frame()
    with clipper_unlinked() as links:
        (wt,), pipe = replay_both_ways(b.capture())
        assert links[front_end.L_CLIP, 0] != 0 and links[front_end.L_CLIP_WANTED, 0] == 0
    assert pipe.fused_vertex_draws == 1 and pipe.calls[0].stats["primitives_clipped"] == 1
    assert len(wt) == 2  # the quad the cut left, as a fan of two


def faulting(where: str) -> pica.Capture:
    """A draw whose vertex buffer (or index buffer) lies past the end of FCRAM."""
    b = frame()
    b.vertices([TRIANGLE, np.zeros((3, 2), np.float32), np.ones((3, 4), np.float32)])
    if where == "vertices":
        b.list.write("ATTRIBBUFFER0_OFFSET", 0x0FFFFFF0)
        b.draw(3)
    else:
        b.draw_indexed([0, 1, 2])
        b.set("INDEXBUFFER_CONFIG", offset=0x0FFFFFFE, format=1)
        b.list.write("DRAWELEMENTS", 1)
    b.end_frame()
    return b.capture()


@pytest.mark.parametrize("where, who", [("vertices", "loader 0"), ("indices", "index buffer")])
def test_reads_outside_memory_fall_back_to_the_named_fault(where: str, who: str) -> None:
    messages = []
    for make in WAYS:
        with pytest.raises(ReplayError, match=who) as err:
            Replay(faulting(where), checkpoints=False, pipeline=make()).run()
        assert isinstance(err.value.__cause__, MemoryFault)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_plans_name_what_they_do_not_cover() -> None:
    pipe = Recorder()
    Replay(pica.read(Path(CAPTURES[0]).parent / "gs_sprites.pica"), checkpoints=False, pipeline=pipe).run()
    call = pipe.calls[0]
    gs = VertexPlan.of(call.draw_state, call.memory, call.state.fixed_attribs)
    assert isinstance(gs, VertexPlan) and gs.geometry  # picaemu.fused.geometry (tests/test_fused_geometry.py)
    b = frame()
    b.vertices([TRIANGLE, np.zeros((3, 2), np.float32), np.ones((3, 4), np.float32)])
    b.draw(3, "triangle strip")
    b.shader(VS_FLOW)
    b.draw(3)
    b.end_frame()
    pipe = Recorder()
    Replay(b.capture(), checkpoints=False, pipeline=pipe).run()
    strip, flow = (VertexPlan.of(c.draw_state, c.memory, c.state.fixed_attribs) for c in pipe.calls)
    assert isinstance(strip, VertexPlan) and strip.topology is Topology.STRIP  # every topology is covered
    assert isinstance(flow, VertexPlan)  # flow steered by a bool uniform (tests/test_fused_flow.py)


@numba.njit
def _from_compiled(elements, count, index_address, floats, plan, counts, plan_type):
    """``vertex_side`` called from compiled code, as the command loop calls it (u16 indices, first vertex 0; the
    plan where ``VertexPlan.stored`` keeps it)."""
    return vertex_side(elements, count, 0, index_address, True, floats, plan, counts, plan_type)


@pytest.mark.parametrize("kind", [DrawKind.ARRAYS, DrawKind.ELEMENTS])
def test_vertex_side_is_callable_from_compiled_code(kind: DrawKind) -> None:
    b = frame()
    b.vertices([TRIANGLE, np.zeros((3, 2), np.float32), np.ones((3, 4), np.float32)])
    if kind is DrawKind.ARRAYS:
        b.draw(3)
    else:
        b.draw_indexed([2, 0, 1])
    b.end_frame()
    pipe = Recorder(route=Route.REFERENCE)
    Replay(b.capture(), checkpoints=False, pipeline=pipe).run()
    call = pipe.calls[0]
    ds = call.draw_state
    plans = vertices.PlanCache()
    plan = plans.plan_of(ds, call.memory, call.state.fixed_attribs)
    assert plan is plans.plan_of(ds, call.memory, call.state.fixed_attribs)  # remembered by identity
    assert isinstance(plan, VertexPlan) and len(plan.args) == len(vertices.PLAN_MEMBERS)  # the members' positions
    assert plan.args[vertices.P_TOPOLOGY] == plan.topology.value and plan.args[vertices.P_READS].shape[1] == 7
    assert plan.args[vertices.P_VRAM].size == call.memory.region_bytes("vram").size
    assert plan.args[vertices.P_FCRAM_BASE] == next(r.base for r in call.memory.regions if r.name == "fcram")
    counts = np.zeros(len(VERTEX_COUNTERS), np.int64)
    elements, address = kind is DrawKind.ELEMENTS, ds.vertex_range.index_address
    stored = (plan.stored.address, counts, plan.stored_type)
    ok, result, box, held = _from_compiled(elements, 3, address, ds.vs.float_uniforms, *stored)
    assert ok and box == call.bounds and held.shape == (0, NUM_COLUMNS)  # a whole list leaves nothing buffered
    for mine, staged in zip(result, arrays(pipe.triangles[0]), strict=True):
        assert mine.tobytes() == staged.tobytes()
    stats = {k: call.stats[k] for k in VERTEX_COUNTERS}
    assert dict(zip(VERTEX_COUNTERS, counts.tolist(), strict=True)) == stats
    assert stats["vertices_loaded"] == 3 and stats["primitives_rasterized"] == 1
    before = counts.copy()
    assert not _from_compiled(elements, 4, address, ds.vs.float_uniforms, *stored)[0]  # 4 % 3
    assert (counts == before).all()  # a refusal changes nothing
    assert vertices.run(plan, ds, kind, pipe.assembler, {}) is not None


def random_layout(rng: np.random.Generator, state: GpuState) -> None:
    """Random formats and component counts for 1-12 attributes, spread over 1-3 loaders in random order with
    padding slots between them, some attributes fixed instead, random strides (never less than a vertex)."""
    n = int(rng.integers(1, 13))
    formats = [(str(rng.choice(list(TYPES))), int(rng.integers(1, 5))) for _ in range(n)]
    order = [int(a) for a in rng.permutation(n)]
    fixed = tuple(a for a in order if rng.random() < 0.15)
    loaded = [a for a in order if a not in fixed]
    configure(state, formats, fixed=fixed)
    parts = np.array_split(np.array(loaded, np.int64), int(rng.integers(1, 4)))
    for j, part in enumerate(parts):
        slots: list[int] = []
        for i, a in enumerate(part.tolist()):
            if rng.random() < 0.3 and len(slots) + len(part) - i < 12:  # a padding slot while the 12 slots allow
                slots.append(int(rng.integers(12, 16)))
            slots.append(a)
        stride = 16 * len(slots) + int(rng.integers(0, 9))  # 16 bytes bound each slot, padding included
        loader(state, j, int(rng.integers(0, 64)) * 4 + 0x400 * j, stride, slots)
    state.fixed_attribs[:] = rng.normal(size=(16, 4)).astype(np.float32)


@pytest.mark.parametrize("seed", range(12))
def test_loading_matches_the_loader_bit_for_bit_on_random_layouts_and_bytes(seed: int) -> None:
    """The compiled loading (``_load``) against ``load_batch(configured_only=True)`` over random memory bytes (NaN
    payloads included: compared as bytes), random layouts and a random vertex range."""
    rng = np.random.default_rng(seed)
    state, memory = GpuState(), PhysicalMemory()
    random_layout(rng, state)
    memory.write(BASE, rng.integers(0, 256, 0x4000, np.uint8))
    first, count = int(rng.integers(0, 20)), int(rng.integers(1, 40))
    set_reg(state, "NUMVERTICES", count=count)
    set_reg(state, "VERTEX_OFFSET", offset=first)
    vl = VertexLoaderState.from_regs(state.regs)
    expected = load_batch(vl, state.fixed_attribs, DrawKind.ARRAYS, memory, configured_only=True).attributes
    fcram, vram = (next(r for r in memory.regions if r.name == name) for name in ("fcram", "vram"))
    ok, attrs = vertices._load(
        np.arange(first, first + count),
        vertices.read_table(vl),
        np.array(vl.fixed, np.int64),
        state.fixed_attribs,
        vl.num_attributes,
        memory.region_bytes("vram"),
        vram.base,
        memory.region_bytes("fcram"),
        fcram.base,
    )
    assert ok
    assert attrs.shape == expected.shape and attrs.tobytes() == expected.tobytes()
    assert np.isnan(expected).any() or seed  # random f32 bytes: some seed gives NaNs (seed 0 does)
