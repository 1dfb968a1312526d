"""The compiled draw loop (picaemu.fused.loop): draws run without leaving compiled code give the same pixels,
counters, bounds and positions as the same draws handed to Python one by one; the loop leaves to Python every
draw whose state changed, the replay's stop and checkpoint draws, and hostile live fields."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import TEXUNIT_ADDR, CaptureBuilder
from picaemu.errors import MemoryFault
from picaemu.geometry import front_end
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay, ReplayError
from samples.game_scene import SCENES
from tests.test_fused_vertices import clipper_unlinked
from tests.test_pipeline import PerDraw

GAME = Path(__file__).parent / "data" / "games" / "minicraft.pica"


def _replay(capture: pica.Capture, compiled: bool, **kwargs) -> Replay:
    """A whole replay: with the compiled loop (``compiled``), else each draw through the pipeline (``PerDraw``)."""
    replay = Replay(capture, pipeline=Pipeline() if compiled else PerDraw(), **kwargs)
    replay.run()
    return replay


def _facts(replay: Replay) -> list[tuple]:
    return [
        (
            d.index,
            d.event,
            d.offset,
            d.kind,
            d.packet,
            d.frame,
            d.bounds,
            {k: v for k, v in d.stats.items() if k != "time_s"},
        )
        for d in replay.draws
    ]


@contextmanager
def _loop_calls() -> Iterator[list[int]]:
    """A list that gains an item at each call of the compiled loop (``CompiledDriver.run``) inside the block."""
    from picaemu.fused.driver import CompiledDriver

    calls: list[int] = []
    original = CompiledDriver.run

    def counted(self, *args):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(self, *args)

    CompiledDriver.run = counted  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        CompiledDriver.run = original  # type: ignore[method-assign]


@pytest.mark.parametrize(
    "scene", ["game_cubes_300", "game_sprites_1000", "game_lit_300", "game_objects_300", "game_textured_300"]
)
def test_compiled_draws_match_python_draws(scene: str) -> None:
    capture = SCENES[scene]()
    compiled, staged = _replay(capture, True, checkpoints=False), _replay(capture, False, checkpoints=False)
    assert np.array_equal(compiled.screen(), staged.screen())
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    assert staged.pipeline.compiled_count == 0
    assert compiled.pipeline.compiled_count > len(compiled.draws) // 2


def test_every_cube_runs_compiled_and_states_switch_inside_the_loop() -> None:
    """cubes: texture rebinds are live, the TEV and blend switches (every 10th and 7th draw) go back and forth
    between four states, which the loop's plan table holds after the first time each is seen; clipped cubes at
    the screen edge run compiled too. So every draw is compiled and the loop returns to Python a few times only."""
    with _loop_calls() as calls:
        replay = _replay(SCENES["game_cubes_300"](), True, checkpoints=False)
    assert any(d.stats["primitives_clipped"] for d in replay.draws)
    assert replay.pipeline.compiled_count == len(replay.draws) == 300
    assert len(calls) <= 10  # the first draw of each of the four states, the frame's events: not 68 switches


def test_states_that_differ_in_their_fragment_side_only_share_a_vertex_plan() -> None:
    """objects_300's four states (two TEV setups, two blend modes) share one vertex plan: the loop's plan cache
    keys vertex plans by the registers they depend on (``loop.VERTEX_KEY_IDS``); the flow program's two states,
    whose bool uniform takes the vertex shader down two paths, get one each. Both draw as the staged path does
    (``test_compiled_draws_match_python_draws``, ``test_a_bool_uniform_toggled_between_draws_...``)."""
    from tests.test_front_end import VS_FLOW

    objects = _replay(SCENES["game_objects_300"](), True, checkpoints=False).processor._compiled.table.plans
    assert len(objects) == 4 and len({id(p.vertices) for p in objects}) == 1

    def toggle(b: CaptureBuilder, i: int, addresses: tuple[int, int]) -> None:
        b.list.write("VSH_BOOLUNIFORM", 0x7FFF0000 | (i % 2))

    flow = _replay(_sprites_with(toggle, program=VS_FLOW), True, checkpoints=False).processor._compiled.table.plans
    assert len(flow) == 2 and flow[0].vertices is not flow[1].vertices


def test_plans_of_two_types_share_the_table_so_a_game_alternating_them_stays_in_the_loop() -> None:
    """minicraft (citro2d) alternates sprites with a procedural texture and untextured quads: plans of two numba
    types. Each table slot carries the kernel entries of its own plan types, so both kinds stay in the table and the
    loop runs across the switches (a table of one type, cleared at each switch, made 551 loop calls for its 507
    draws); the pictures and facts are the staged path's."""
    capture = pica.read(GAME)
    with _loop_calls() as calls:
        compiled = _replay(capture, True, checkpoints=False)
    staged = _replay(capture, False, checkpoints=False)
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    table = compiled.processor._compiled.table  # type: ignore[union-attr]
    assert len({repr(kind) for kind in table._kinds}) == 2
    assert len(calls) < len(compiled.draws) // 2


def test_the_loop_leaves_a_draw_to_clip_to_python_until_the_clipper_is_linked() -> None:
    """Before the clipper is linked, the loop's first draw with a triangle to clip goes back to Python, which links
    it and runs that draw compiled; the pictures and facts are the staged path's."""
    capture = SCENES["game_cubes_300"]()
    with clipper_unlinked() as links:
        compiled = _replay(capture, True, checkpoints=False)
        assert links[front_end.L_CLIP, 0] != 0
    staged = _replay(capture, False, checkpoints=False)
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    pipe = compiled.pipeline
    assert pipe.fused_vertex_draws == 1  # that draw: compiled, through the pipeline's own fused sides
    assert pipe.compiled_count + pipe.fused_vertex_draws == len(compiled.draws) == 300


def test_stop_after_a_draw_and_checkpoints_match() -> None:
    capture = SCENES["game_cubes_300"]()
    for target in (0, 5, 37, 150, 299):
        compiled = Replay(capture, pipeline=Pipeline())
        staged = Replay(capture, pipeline=PerDraw())
        compiled.run_to_draw(target)
        staged.run_to_draw(target)
        assert _facts(compiled) == _facts(staged)
        assert np.array_equal(compiled.color_buffer(), staged.color_buffer()), target
        assert sorted(compiled._checkpoints) == sorted(staged._checkpoints)


def _sprites_with(
    edit: Callable[[CaptureBuilder, int, tuple[int, int]], None], n: int = 12, program: str | None = None
) -> pica.Capture:
    """A run of compiled-eligible textured draws, each binding the first of two textures (a checkerboard, a
    gradient); ``edit(b, i, addresses)`` may change something before draw i; ``program``: the vertex shader
    (``VS_TEX``'s inputs and outputs)."""
    from samples._common import SCREEN, VS_TEX
    from samples.game_scene import _checker

    b = CaptureBuilder(name="edited sprites")
    b.begin_frame(clear=(0, 0, 0, 255), depth=0)
    b.shader(program or VS_TEX)
    b.uniforms(0, SCREEN)
    gradient = np.zeros((16, 16, 4), np.uint8)
    gradient[..., 0], gradient[..., 3] = np.arange(16)[None, :] * 16, 255
    addresses = (b.texture(0, _checker(), "RGBA8"), b.texture(0, gradient, "RGBA8"))
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    quad = np.array(
        [[0, 0, 0, 1], [16, 0, 0, 1], [16, 16, 0, 1], [0, 0, 0, 1], [16, 16, 0, 1], [0, 16, 0, 1]], np.float32
    )
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
    col = np.ones((6, 4), np.float32)
    offsets = np.array([[20 * i, 20, 0, 0] for i in range(n)], np.float32)
    b.vertices([(quad[None] + offsets[:, None]).reshape(-1, 4), np.tile(uv, (n, 1)), np.tile(col, (n, 1))])
    for i in range(n):
        b.set(TEXUNIT_ADDR[0], address=addresses[0])
        edit(b, i, addresses)
        b.draw(6, first=6 * i)
    b.end_frame()
    return b.capture()


def test_a_hostile_live_field_reaches_python_and_its_named_error() -> None:
    """A texture address rebound to unmapped memory: the loop declines the draw (nothing written) and the
    staged path raises its named error, as without the loop."""

    def rebind(b: CaptureBuilder, i: int, addresses: tuple[int, int]) -> None:
        if i == 7:
            b.set(TEXUNIT_ADDR[0], address=0x08000000)

    capture = _sprites_with(rebind)
    errors = []
    for compiled in (True, False):
        with pytest.raises(ReplayError) as err:
            _replay(capture, compiled, checkpoints=False)
        assert isinstance(err.value.cause, MemoryFault)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_live_texture_rebinds_and_draw_ranges_are_read_at_each_draw() -> None:
    def alternate(b: CaptureBuilder, i: int, addresses: tuple[int, int]) -> None:
        b.set(TEXUNIT_ADDR[0], address=addresses[i % 2])

    capture = _sprites_with(alternate)
    compiled, staged = _replay(capture, True, checkpoints=False), _replay(capture, False, checkpoints=False)
    assert compiled.pipeline.compiled_count == 12  # every draw: the first one's plans are made before it runs
    image = compiled.color_buffer()
    assert len(np.unique(image.reshape(-1, 4), axis=0)) > 4  # both textures show
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)


def _own_buffers(n: int = 10, hostile: int | None = None) -> pica.Capture:
    """A vertex buffer per draw, as a citro3d game keeps one per object: each draw writes its layout again (the
    same values) and points loader 0 at its own buffer (``ATTRIBBUFFER0_OFFSET``); odd draws also move the
    attribute base (``ATTRIBBUFFERS_LOC``) down and the offset up by the same amount. ``hostile``: that draw's
    offset points past memory."""
    from picaemu.builder import ATTRIB_BASE
    from samples._common import SCREEN, VS_TEX
    from samples.game_scene import _checker

    b = CaptureBuilder(name="own buffers")
    b.begin_frame(clear=(0, 0, 0, 255), depth=0)
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.texture(0, _checker(), "RGBA8")
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    quad = np.array(
        [[0, 0, 0, 1], [16, 0, 0, 1], [16, 16, 0, 1], [0, 0, 0, 1], [16, 16, 0, 1], [0, 16, 0, 1]], np.float32
    )
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
    for i in range(n):
        shade = np.full((6, 4), 0.3 + 0.07 * i, np.float32)
        b.vertices([quad + np.float32([20 * i, 20 + 3 * i, 0, 0]), uv, shade])
        address = b.cap.events[-1].address  # the buffer's upload
        if i % 2:
            b.set("ATTRIBBUFFERS_LOC", base=ATTRIB_BASE - 0x1000)
            b.set("ATTRIBBUFFER0_OFFSET", offset=address - ATTRIB_BASE + 0x1000)
        if i == hostile:
            b.set("ATTRIBBUFFER0_OFFSET", offset=0x07FFFFF0)
        b.draw(6)
    b.end_frame()
    return b.capture()


def test_a_vertex_buffer_per_draw_stays_in_the_loop() -> None:
    """The attribute base and the loaders' offsets are live (read at each draw into the plan's read table), and
    the layout's registers written again with the same values match the table's key: every draw runs in the
    loop from one plan, with the pixels and facts of the staged path."""
    capture = _own_buffers()
    with _loop_calls() as calls:
        compiled = _replay(capture, True, checkpoints=False)
    staged = _replay(capture, False, checkpoints=False)
    assert compiled.pipeline.compiled_count == len(compiled.draws) == 10
    assert len(calls) <= 3  # not one return to Python per draw
    assert len(np.unique(compiled.color_buffer().reshape(-1, 4), axis=0)) > 10  # every quad shows its own shade
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)


def test_a_hostile_loader_offset_reaches_python_and_its_named_error() -> None:
    errors = []
    for compiled in (True, False):
        with pytest.raises(ReplayError) as err:
            _replay(_own_buffers(hostile=5), compiled, checkpoints=False)
        assert isinstance(err.value.cause, MemoryFault)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_tev_colors_are_live_a_tint_per_draw_stays_in_the_loop() -> None:
    """A material tint per draw (stage 1: previous x constant + the buffer's initial color, both written before
    every draw with new values): the loop reads the colors at each draw, one plan serves every draw, and the
    pixels and facts are the staged path's."""

    def tint(b: CaptureBuilder, i: int, addresses: tuple[int, int]) -> None:
        b.tev(
            1,
            rgb=("previous", "constant", "previous buffer"),
            alpha=("previous",),
            combine="multiply then add",
            alpha_combine="replace",
            color=(255 - 20 * i, 128 + 10 * i, 40 * (i % 6), 255),
        )
        b.set("TEXENV_BUFFER_COLOR", r=3 * i, g=0, b=5 * i, a=255)

    capture = _sprites_with(tint)
    with _loop_calls() as calls:
        compiled = _replay(capture, True, checkpoints=False)
    staged = _replay(capture, False, checkpoints=False)
    assert compiled.pipeline.compiled_count == 12
    assert len(calls) <= 3
    image = compiled.color_buffer()
    assert len(np.unique(image.reshape(-1, 4), axis=0)) >= 2 * 12  # each quad's checkerboard in its own tint
    assert np.array_equal(image, staged.color_buffer())
    assert _facts(compiled) == _facts(staged)


def test_a_bool_uniform_toggled_between_draws_switches_plans_inside_the_loop() -> None:
    """A vertex program whose color depends on a bool uniform (``ifu``), the uniform toggled before every draw:
    the two states' plans sit in the table, and the loop switches between them by the watched register's value
    instead of returning to Python at each draw."""
    from tests.test_front_end import VS_FLOW

    def toggle(b: CaptureBuilder, i: int, addresses: tuple[int, int]) -> None:
        b.list.write("VSH_BOOLUNIFORM", 0x7FFF0000 | (i % 2))

    capture = _sprites_with(toggle, program=VS_FLOW)
    with _loop_calls() as calls:
        compiled = _replay(capture, True, checkpoints=False)
    staged = _replay(capture, False, checkpoints=False)
    assert compiled.pipeline.compiled_count == 12
    assert len(calls) <= 4  # the first draw of each value, not one return a draw
    assert np.array_equal(compiled.color_buffer(), staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
