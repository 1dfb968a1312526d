"""The fused fragment side's color features (``picaemu.fused.fragments``: the procedural texture and fog) against
the staged path: random proctex and fog states (hypothesis) and real content (Minicraft3DS's citro2d frames, whose
shapes are procedural-texture draws) give the same memory and per-draw statistics with the fused side on and off,
and through the compiled draw loop; a LUT upload that leaves the registers as they were reaches the loop's plans;
a draw whose state fails to decode raises the staged path's error at that draw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, fog_lut
from picaemu.fused import fragments as ff
from picaemu.pipeline import Pipeline
from picaemu.replay import Replay, ReplayError
from tests.test_fused_fragments import Setup, assert_same, first_draw, scene, texture
from tests.test_pipeline import PerDraw, reference

MINICRAFT = Path(__file__).resolve().parent / "data" / "games" / "minicraft.pica"
WORDS = st.integers(0, 2**32 - 1)
TAIL = 64  # fog LUT entries from here on are the same in both LUTs of the LUT-swap test
EXAMPLES = settings(max_examples=12, deadline=None, derandomize=True)


def proctex_setup(fields: dict, raw: list[int], luts: list[list[int]], coords: int, width: int):
    """A setup (``test_fused_fragments.scene``) drawing unit 3 x the primary color with these PROCTEX0 ``fields``,
    raw PROCTEX1-3 words, the five LUTs (noise, RGB map, alpha map, color, color difference)."""

    proctex0 = {k: v for k, v in fields.items() if k != "filter"}

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.set("TEXUNIT_CONFIG", unit3_enable=1, unit3_coords=coords, always1=1, clear_cache=1)
        b.set("TEXUNIT3_PROCTEX0", **proctex0)
        for k, word in enumerate(raw, start=1):
            b.list.write(f"TEXUNIT3_PROCTEX{k}", word, 0xF)
        b.set("TEXUNIT3_PROCTEX4", filter=fields.get("filter", 1), width=width)
        b.set("TEXUNIT3_PROCTEX5", offset0=255 - width + 1)
        for table, entries in zip((0, 2, 3, 4, 5), luts, strict=True):
            b.lut("proctex", entries, table=table)
        b.tev(0, rgb=("texture 3", "primary color"), combine="modulate", alpha=("texture 3",))

    return setup


@st.composite
def proctex_states(draw: st.DrawFn) -> tuple:
    fields = {
        "u_clamp": draw(st.integers(0, 4)),
        "v_clamp": draw(st.integers(0, 4)),
        "rgb_func": draw(st.integers(0, 9)),
        "alpha_func": draw(st.integers(0, 9)),
        "separate_alpha": draw(st.integers(0, 1)),
        "noise_enable": draw(st.integers(0, 1)),
        "u_shift": draw(st.integers(0, 2)),
        "v_shift": draw(st.integers(0, 2)),
        "filter": draw(st.integers(0, 1)),
    }
    raw = draw(st.lists(WORDS, min_size=3, max_size=3))
    luts = [draw(st.lists(WORDS, min_size=n, max_size=n)) for n in (128, 128, 128, 256, 256)]
    return fields, raw, luts, draw(st.integers(0, 2)), draw(st.integers(1, 255))


@EXAMPLES
@given(proctex_states())
def test_random_procedural_textures_match_the_stages(state: tuple) -> None:
    fields, raw, luts, coords, width = state
    stats, pipe = assert_same(scene(proctex_setup(fields, raw, luts, coords, width)))
    assert pipe.fused_fragment_draws == len(stats) == 3


@st.composite
def fog_states(draw: st.DrawFn) -> tuple:
    return (
        draw(st.tuples(*(st.integers(0, 255),) * 3)),
        draw(st.lists(st.integers(0, 2**24 - 1), min_size=128, max_size=128)),
        draw(st.booleans()),
    )


@EXAMPLES
@given(fog_states())
def test_random_fog_matches_the_stages(state: tuple) -> None:
    color, lut, z_flip = state

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA8")
        b.set("TEXENV_UPDATE_BUFFER", 0x5, fog_mode="fog", fog_z_flip=int(z_flip))
        b.set("FOG_COLOR", r=color[0], g=color[1], b=color[2])
        b.lut("fog", lut)

    stats, pipe = assert_same(scene(setup))
    assert pipe.fused_fragment_draws == len(stats) == 3


def test_builder_fog_with_proctex_and_refusals_are_named() -> None:
    """Fog over a procedural texture is covered; a mip-filtered procedural texture is refused by name."""
    rng = np.random.default_rng(5)
    luts = [rng.integers(0, 2**32, n).tolist() for n in (128, 128, 128, 256, 256)]
    fields = {"u_clamp": 3, "v_clamp": 2, "rgb_func": 6, "noise_enable": 1, "u_shift": 1}
    pt = proctex_setup(fields, [0x12345678, 0x9ABCDEF0, 0x3C003C00], luts, 1, 64)

    def fogged(b: CaptureBuilder, r: np.random.Generator) -> None:
        pt(b, r)
        b.fog((200, 100, 0), np.linspace(1, 0, 129), z_flip=True)

    stats, pipe = assert_same(scene(fogged))
    assert pipe.fused_fragment_draws == len(stats) == 3
    mip = proctex_setup({**fields, "filter": 3}, [0, 0, 0], luts, 1, 16)
    call, _ = first_draw(scene(mip))
    assert ff.FragmentPlan.of(call.draw_state, call.memory) == "procedural texture mipmap"


# ------------------------------------------------------------------------------------------------ real content
def _run(capture: pica.Capture, frames: int, pipe: Pipeline) -> tuple[list[tuple], np.ndarray, Pipeline]:
    """(per-draw facts without the time, the color buffer, the pipeline) after ``frames`` frames with ``pipe``."""
    replay = Replay(capture, checkpoints=False, pipeline=pipe)
    replay.run_to_frame(frames - 1)
    facts = [(d.index, d.bounds, {k: v for k, v in d.stats.items() if k != "time_s"}) for d in replay.draws]
    return facts, replay.color_buffer(), pipe


def test_minicraft_procedural_texture_frames_match_the_stages() -> None:
    """citro2d's shapes (unit 3, separate alpha, linear, clamp to edge) run fused. (Its draws go through the
    geometry shader, which the compiled loop's vertex side does not cover: the loop's own run of proctex and fog
    plans is the next test's.)"""
    capture = pica.read(MINICRAFT)
    staged = _run(capture, 2, reference())
    fused = _run(capture, 2, PerDraw())
    assert fused[0] == staged[0] and np.array_equal(fused[1], staged[1])
    assert fused[2].fused_fragment_draws == len(staged[0]) == 16


def test_a_lut_upload_that_leaves_the_registers_reaches_the_loop() -> None:
    """Two fog LUTs that differ but end alike leave every register as it was after their upload: the compiled
    loop's plans key on the LUTs' content too (``CommandProcessor.plan_words``), so each draw fogs with its own."""
    one, two = fog_lut(np.linspace(0, 1, 129)), fog_lut(np.linspace(1, 0, 129))
    two[TAIL:] = one[TAIL:]  # the last port writes leave the data registers as the first LUT's did

    def fog(entries: list[int]) -> Setup:
        return lambda b, rng: b.lut("fog", entries)

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA8")
        b.fog((250, 0, 120), np.linspace(0, 1, 129))
        b.depth_test(False)  # every draw writes its fragments

    capture = scene(setup, draws=5, before=[fog(one), fog(one), fog(two), fog(one), fog(two)])
    staged = _run(capture, 1, reference())
    looped = _run(capture, 1, Pipeline())
    assert looped[0] == staged[0] and np.array_equal(looped[1], staged[1])
    assert looped[2].compiled_count > 0


@pytest.mark.parametrize(
    ("reason", "bad"),
    [
        ("undefined fog mode", lambda b: b.list.write("TEXENV_UPDATE_BUFFER", 1, 0x1)),
        ("undefined texture format", lambda b: b.set("TEXUNIT0_TYPE", format=15)),
    ],
)
@pytest.mark.parametrize("compiled", [False, True])
def test_a_state_that_fails_to_decode_raises_the_staged_error_at_its_draw(reason: str, bad, compiled: bool) -> None:
    """A fragment part that does not decode (``draw_state.Failed``): the fused side refuses the draw, and the
    staged path raises its named error at that draw (not an AttributeError of the plan cache)."""

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.texture(0, texture(rng), "RGBA8")

    capture = scene(setup, before=[lambda b, rng: None, lambda b, rng: bad(b)])
    errors = []
    for pipeline in (reference(), Pipeline() if compiled else PerDraw()):
        with pytest.raises(ReplayError) as caught:
            Replay(capture, checkpoints=False, pipeline=pipeline).run()
        errors.append((type(caught.value.cause), str(caught.value)))
    assert errors[0] == errors[1]


# ------------------------------------------------------------------------------------------------ fragment lighting
VS_LIT = """
.fvec projection[4]
.out outpos position
.out outtc0 texcoord0
.out outq normalquat
.out outview view
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outtc0, v1
    mov outq, v4
    mov outview, v2
    mov outclr, v4
    end
.end
"""
LUT_CONFIG_CODES = (0, 1, 2, 3, 4, 5, 6, 8)  # the defined light-environment configurations
SCALE_CODES = (0, 1, 2, 3, 6, 7)


@st.composite
def lighting_states(draw: st.DrawFn) -> tuple:
    lights = draw(st.integers(1, 2))
    words = {
        f"LIGHT{n}_{name}": draw(WORDS)
        for n in range(lights)
        for name in ("SPECULAR0", "SPECULAR1", "DIFFUSE", "AMBIENT", "XY", "Z", "SPOTDIR_XY", "SPOTDIR_Z")
    }
    words |= {f"LIGHT{n}_CONFIG": draw(st.integers(0, 15)) for n in range(lights)}
    words |= {f"LIGHT{n}_ATTENUATION_BIAS": draw(WORDS) for n in range(lights)}
    words |= {f"LIGHT{n}_ATTENUATION_SCALE": draw(WORDS) for n in range(lights)}
    words["LIGHTING_CONFIG1"] = draw(WORDS)
    words["LIGHTING_LUTINPUT_ABS"] = draw(WORDS)
    words["LIGHTING_AMBIENT"] = draw(WORDS)
    config0 = {
        "fresnel": draw(st.integers(0, 3)),
        "config": draw(st.sampled_from(LUT_CONFIG_CODES)),
        "bump_unit": 0,  # unit 0 is the scene's texture
        "bump_mode": draw(st.integers(0, 2)),
        "clamp_highlights": draw(st.integers(0, 1)),
        "bump_no_renorm": draw(st.integers(0, 1)),
    }
    select = {f"{s}_input": draw(st.integers(0, 5)) for s in ("d0", "d1", "sp", "fr", "rb", "rg", "rr")}
    scale = {f"{s}_scale": draw(st.sampled_from(SCALE_CODES)) for s in ("d0", "d1", "sp", "fr", "rb", "rg", "rr")}
    luts = draw(st.lists(st.integers(0, 2**24 - 1), min_size=256, max_size=256))
    return lights, words, config0, select, scale, luts


@EXAMPLES
@given(lighting_states())
def test_random_fragment_lighting_matches_the_stages(state: tuple) -> None:
    """Random lights, LUT inputs, scales, configurations and bump maps (unit 0) through the TEV's lighting
    sources; the staged path's ``lighting.compute_lighting`` and the fused kernel call the same ``light_fragments``."""
    lights, words, config0, select, scale, lut = state

    def setup(b: CaptureBuilder, rng: np.random.Generator) -> None:
        b.shader(VS_LIT)
        b.texture(0, texture(rng), "RGBA8")
        b.set("LIGHTING_ENABLE0", enable=1)
        b.set("LIGHTING_ENABLE1", disable=0)
        b.set("LIGHTING_NUM_LIGHTS", count_minus_1=lights - 1)
        b.set("LIGHTING_LIGHT_PERMUTATION", slot0=0, slot1=1)
        for name, word in words.items():
            b.list.write(name, word, 0xF)
        b.set("LIGHTING_CONFIG0", constant_4=4, constant_1=1, **config0)
        b.set("LIGHTING_LUTINPUT_SELECT", **select)
        b.set("LIGHTING_LUTINPUT_SCALE", **scale)
        for table in (0, 1, 3, 4, 5, 6, 8, 9, 16, 17):
            b.lut("lighting", lut, table=table)
        b.tev(
            0,
            rgb=("fragment primary color", "fragment secondary color", "texture 0"),
            combine="multiply then add",
            alpha=("fragment secondary color", "fragment primary color"),
            alpha_combine="add",
        )

    stats, pipe = assert_same(scene(setup))
    assert pipe.fused_fragment_draws == len(stats) == 3
