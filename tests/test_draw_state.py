"""Per-draw state (picaemu/draw_state.py): the write-group partition, the command kernel's dirty mask, parts that
read only their groups' registers, reuse across draws, deferred failures, and pictures that caching cannot change
(every scene rendered with the cache equals the same scene rebuilt from scratch at every draw)."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu import draw_state as D
from picaemu.builder import TEXUNIT_ADDR, CaptureBuilder
from picaemu.command import kernel as K
from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall, DrawKind
from picaemu.draw_state import ALL, WRITE_GROUPS, DrawStateCache, Group, Phase
from picaemu.errors import UnsupportedFeature
from picaemu.memory import PhysicalMemory
from picaemu.regs import NUM_REGS, access, all_registers, id_of
from picaemu.replay import Replay, load_capture
from picaemu.state import GpuState
from samples.game_scene import SCENES, TEXTURES, _checker
from samples.generate import CAPTURES, SAMPLES

# registers no stage reads: triggers, interrupts, command-buffer jumps, vertex-cache and draw-start controls
UNGROUPED = {
    "FINALIZE",
    "IRQ_CMP",
    "IRQ_MASK",
    "IRQ_AUTOSTOP",
    "EARLYDEPTH_CLEAR",
    "FRAMEBUFFER_INVALIDATE",
    "FRAMEBUFFER_FLUSH",
    "POST_VERTEX_CACHE_NUM",
    "DRAWARRAYS",
    "DRAWELEMENTS",
    "VTX_FUNC",
    "CMDBUF_SIZE0",
    "CMDBUF_SIZE1",
    "CMDBUF_ADDR0",
    "CMDBUF_ADDR1",
    "CMDBUF_JUMP0",
    "CMDBUF_JUMP1",
    "START_DRAW_FUNC0",
    "RESTART_PRIMITIVE",
}


def test_every_register_a_stage_could_read_has_a_group() -> None:
    ungrouped = {r.name.removeprefix("GPUREG_") for r in all_registers() if WRITE_GROUPS[r.id] == 0}
    assert ungrouped == UNGROUPED
    ports = WRITE_GROUPS[NUM_REGS:]
    assert all(ports[p] for p in D.PORT_GROUPS) and ports[0] == 0
    kinds = WRITE_GROUPS & ~int(Group.DATA_UPLOAD)
    assert all(bin(int(g)).count("1") <= 1 for g in kinds)  # a partition: one group per id
    # the upload bit: exactly the ports whose memories plans digest (code, descriptors, fog/proctex/lighting LUTs)
    uploads = {p for p in D.PORT_GROUPS if ports[p] & Group.DATA_UPLOAD}
    assert uploads == {K.P_VS_CODE, K.P_VS_OPDESC, K.P_GS_CODE, K.P_GS_OPDESC, K.P_LIGHTING, K.P_FOG, K.P_PROCTEX}
    assert not (WRITE_GROUPS[:NUM_REGS] & Group.DATA_UPLOAD).any()  # register writes are keyed as registers


class Traced(np.ndarray):
    """A register file that notes every id read (ints, and the ids of an integer index array) and any other read."""

    reads: set | None = None

    def __getitem__(self, key):
        if Traced.reads is not None:
            if isinstance(key, int | np.integer):
                Traced.reads.add(int(key))
            elif isinstance(key, np.ndarray) and key.dtype.kind in "iu":
                Traced.reads.update(int(k) for k in key.ravel())
            else:
                Traced.reads.add(("other", str(key)))
        return np.ndarray.__getitem__(self, key)


def traced_state(name: str) -> GpuState:
    replay = Replay(load_capture(CAPTURES / f"{name}.pica"))
    replay.run()
    state = replay.state.copy()
    state.regs = state.regs.view(Traced)
    return state


@pytest.mark.parametrize(
    "name",
    ["cube", "lit_sphere", "proctex", "fog", "gs_sprites", "texture_formats", "stencil", "blending", "game_lit_300"],
)
def test_parts_read_only_registers_of_their_groups(name: str) -> None:
    """The precondition of reuse and of the memo: a part's value depends only on the registers of its groups."""
    state, built = traced_state(name), {}
    for part in D.PARTS:
        Traced.reads = set()
        try:
            built[part.name] = part.build(state, built)
        except Exception as err:
            built[part.name] = D.Failed(err)
        reads, Traced.reads = Traced.reads, None
        outside = [r for r in reads if isinstance(r, tuple) or not WRITE_GROUPS[r] & part.groups]
        assert not outside, f"{part.name} reads {outside} outside its groups"


def run_words(cb: CommandBuilder, cp: CommandProcessor | None = None) -> CommandProcessor:
    cp = cp or CommandProcessor()
    cp.take_dirty()
    cp.run(cb.words())
    return cp


def test_kernel_marks_the_group_of_each_register_written() -> None:
    cp = CommandProcessor()
    assert cp.take_dirty() == ALL  # a new processor: anything may differ from a previous draw
    assert cp.take_dirty() == 0  # taking clears
    for name, group in (
        ("TEXUNIT0_ADDR1", Group.TEXTURE_ADDRESS),
        ("ATTRIBBUFFERS_LOC", Group.ATTRIBUTE_ADDRESS),
        ("ATTRIBBUFFER7_OFFSET", Group.ATTRIBUTE_ADDRESS),
        ("ATTRIBBUFFER7_CONFIG2", Group.LOADER),
        ("ATTRIBBUFFERS_FORMAT_HIGH", Group.LOADER),
        ("TEXUNIT0_PARAM", Group.TEXTURE0),
        ("TEXENV3_COMBINER", Group.TEV),
        ("TEXENV3_COLOR", Group.TEV_COLOR),
        ("TEXENV_BUFFER_COLOR", Group.TEV_COLOR),
        ("TEXENV5_SCALE", Group.TEV),
        ("BLEND_FUNC", Group.FRAGOP),
        ("NUMVERTICES", Group.DRAW_RANGE),
        ("PRIMITIVE_CONFIG", Group.PRIMITIVE),
        ("LIGHT5_Z", Group.LIGHTING),
        ("FRAMEBUFFER_DIM", Group.FRAMEBUFFER),
        ("VIEWPORT_WIDTH", Group.RASTER),
    ):
        cb = CommandBuilder()
        cb.write(name, 1)
        assert Group(run_words(cb, cp).take_dirty()) == group, name
    cb = CommandBuilder()
    cb.write("IRQ_MASK", 0)  # read by no stage
    assert run_words(cb, cp).take_dirty() == 0


def test_kernel_marks_port_uploads_by_what_they_fill() -> None:
    cp = CommandProcessor()
    cb = CommandBuilder()
    cb.write("VSH_COM_MODE", 1)  # separate GS configuration: no mirroring
    run_words(cb, cp)
    cb = CommandBuilder()
    cb.upload_float_uniforms("VSH", 0, [(1.0, 2.0, 3.0, 4.0)])
    assert Group(run_words(cb, cp).take_dirty()) == Group.VS_UNIFORMS
    cb = CommandBuilder()
    cb.write("VSH_COM_MODE", 0)  # shared: VS uploads land in the GS unit too
    cb.write("GEOSTAGE_CONFIG", 0)
    run_words(cb, cp)
    cb = CommandBuilder()
    cb.upload_float_uniforms("VSH", 4, [(1.0, 2.0, 3.0, 4.0)])
    assert Group(run_words(cb, cp).take_dirty()) == Group.VS_UNIFORMS | Group.GS_UNIFORMS
    for index_reg, data_reg, group in (
        ("FOG_LUT_INDEX", "FOG_LUT_DATA0", Group.FOG | Group.DATA_UPLOAD),
        ("LIGHTING_LUT_INDEX", "LIGHTING_LUT_DATA0", Group.LIGHTING | Group.DATA_UPLOAD),
        ("PROCTEX_LUT", "PROCTEX_LUT_DATA0", Group.PROCTEX | Group.DATA_UPLOAD),
    ):
        cb = CommandBuilder()
        cb.write(index_reg, 0)
        cb.write(data_reg, 0x7FF)
        assert Group(run_words(cb, cp).take_dirty()) == group, data_reg


def test_state_replaced_from_outside_marks_everything() -> None:
    cp = CommandProcessor()
    cp.take_dirty()
    cp.load_state(GpuState())
    assert cp.take_dirty() == ALL
    cp.mark_dirty(int(Group.TEV))
    assert cp.take_dirty() == Group.TEV


def test_unchanged_state_gives_the_same_object_and_shares_untouched_parts() -> None:
    state = traced_state("cube")
    state.regs = np.asarray(state.regs).view(np.ndarray)
    cache = DrawStateCache()
    first = cache.build(state)
    assert cache.build(state) is first
    cache.invalidate(int(Group.VS_UNIFORMS | Group.DRAW_RANGE))
    second = cache.build(state)
    assert second is not first and np.array_equal(second.vs.float_uniforms, first.vs.float_uniforms)
    assert second.tev is first.tev and second.texture0 is first.texture0 and second.loader is first.loader
    assert second.vs is not first.vs and second.vs_program is first.vs_program


def test_memo_returns_the_part_built_for_the_same_registers() -> None:
    state = traced_state("texture_formats")
    state.regs = np.asarray(state.regs).view(np.ndarray)
    cache = DrawStateCache()
    before = cache.build(state).texture0
    addr = access.word(state.regs, "TEXUNIT0_ADDR1")
    state.regs[id_of("TEXUNIT0_ADDR1")] = addr + 0x1000
    cache.invalidate(int(Group.TEXTURE0))
    moved = cache.build(state).texture0
    assert moved.addresses != before.addresses
    state.regs[id_of("TEXUNIT0_ADDR1")] = addr
    cache.invalidate(int(Group.TEXTURE0))
    assert cache.build(state).texture0 is before


def test_a_bad_fragment_state_fails_only_a_draw_that_reaches_fragments() -> None:
    state = traced_state("triangle")
    state.regs = np.asarray(state.regs).view(np.ndarray)
    state.regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", fragment_mode=2)  # undefined mode
    ds = D.build_draw_state(state)
    ds.check(Phase.SETUP)
    ds.check(Phase.VERTICES)
    with pytest.raises(UnsupportedFeature, match="fragment mode"):
        ds.check(Phase.FRAGMENTS)
    from picaemu.pipeline import Pipeline

    empty = state.copy()
    empty.regs[id_of("NUMVERTICES")] = 0
    Pipeline().draw(DrawCall(0, DrawKind.ARRAYS, empty, PhysicalMemory()))  # no vertices: no error


def distinct_scene(draws: int = 120) -> CaptureBuilder:
    """Draw after draw of differently textured, combined and blended quads: every kind of change a cached part
    could miss shows in the picture."""
    from samples._common import SCREEN, VS_TEX

    b = CaptureBuilder(name="distinct")
    b.begin_frame(clear=(0, 0, 0, 255))
    b.shader(VS_TEX)
    tex = [b.texture(0, _checker(alpha=60 + 24 * k) // (k + 1), "RGBA8") for k in range(TEXTURES)]
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    corners = np.array([[0, 0, 0, 1], [1, 0, 0, 1], [1, 1, 0, 1], [0, 0, 0, 1], [1, 1, 0, 1], [0, 1, 0, 1]], np.float32)
    rng = np.random.default_rng(11)
    quads = []
    for _ in range(draws):
        x, y, s = rng.integers(0, 360), rng.integers(0, 200), rng.integers(16, 48)
        quads.append(corners * np.array([s, s, 1, 1], np.float32) + np.array([x, y, 0, 0], np.float32))
    b.vertices(
        [
            np.concatenate(quads),
            np.tile(corners[:, :2], (draws, 1)),
            np.repeat(rng.uniform(0.3, 1, (draws, 4)).astype(np.float32), 6, axis=0),
        ]
    )
    combines = ("modulate", "replace", "add", "subtract")
    for i in range(draws):
        if i % 3 == 0:
            b.set(TEXUNIT_ADDR[0], address=tex[(i // 3) % TEXTURES])
        if i % 5 == 0:
            b.tev(0, rgb=("texture 0", "primary color"), combine=combines[(i // 5) % 4])
        if i % 4 == 0:
            b.blend()
        elif i % 4 == 2:
            b.blend("one", "one")
        b.uniforms(0, SCREEN * (1 + (i % 7 == 3)))  # some draws twice as large
        b.draw(6, first=6 * i)
    b.end_frame()
    return b


def render(capture, *, cached: bool, monkeypatch: pytest.MonkeyPatch | None = None) -> np.ndarray:
    with pytest.MonkeyPatch.context() as mp:
        if not cached:  # every draw rebuilds every part from scratch
            mp.setattr(CommandProcessor, "take_dirty", lambda self: ALL)
            mp.setattr(DrawStateCache, "_make", lambda self, part, state, built: part.build(state, built))
        replay = Replay(capture)
        replay.run()
        return replay.screen()


@pytest.mark.parametrize("name", ["distinct", *SAMPLES, "game_sprites_1000"])
def test_cached_draw_state_renders_what_a_fresh_one_does(name: str) -> None:
    capture = distinct_scene().capture() if name == "distinct" else load_capture(CAPTURES / f"{name}.pica")
    cached, fresh = render(capture, cached=True), render(capture, cached=False)
    assert fresh.any() and np.array_equal(cached, fresh)


@pytest.mark.parametrize("name", ["game_cubes_300", "game_lit_300", "game_sprites_1000", "game_textured_300"])
def test_game_scene_equals_its_merged_twin(name: str) -> None:
    """Hundreds of draws with state changes give the picture of the same triangles in one draw."""
    frame, merged = render(SCENES[name](), cached=True), render(SCENES[name](merged=True), cached=True)
    assert np.array_equal(frame, merged)
    assert (frame != frame[0, 0]).any(axis=2).mean() > 0.1  # the scene covers a good part of the screen


def test_bundled_game_scenes_are_what_the_module_builds() -> None:
    from picaemu.formats import pica

    for name, make in SCENES.items():  # as the writer stores them: adjacent uploads merged into one write
        assert pica.read(CAPTURES / f"{name}.pica").events == pica.merged(make()).events, name


def test_port_numbers_match_the_kernel() -> None:
    assert set(D.PORT_GROUPS) == set(range(1, K.NUM_PORTS))
