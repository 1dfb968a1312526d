"""Light colors are live in the compiled draw loop (``picaemu.fused.live_lights``): a material per draw (each
light's colors and the global ambient written before every draw, as citro3d writes material x light) keeps one
plan, the loop runs every draw, and the pixels and facts are those of the draws handed to the pipeline one by one."""

from __future__ import annotations

import numpy as np
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_perspective
from picaemu.color import lighting
from picaemu.draw_state import WRITE_GROUPS, Group
from picaemu.fused import live_lights
from picaemu.fused.fragments import ARG_LIGHTING, LIGHT_AMBIENT, LIGHT_PARAMS, FragmentPlan
from picaemu.regs import id_of
from samples.game_scene import _lights
from samples.lit_sphere import VS_LIT, sphere
from tests.test_fused_fragments import first_draw
from tests.test_fused_loop import _facts, _loop_calls, _replay

DRAWS = 12


def _materials(draws: int = DRAWS) -> pica.Capture:
    """``draws`` small spheres lit by ``game_scene``'s four lights, each drawn with its own material: every
    light's diffuse, ambient and first specular color and the global ambient change before each draw."""
    b = CaptureBuilder(name="a material per draw")
    b.begin_frame(clear=(40, 40, 56, 255), depth=0)
    b.shader(VS_LIT)
    b.uniforms(0, tilt_perspective(np.radians(50), 400 / 240, 1.0, 16.0))
    b.depth_test(True, "greater")
    _lights(b)
    b.tev(0, rgb=("fragment primary color", "fragment secondary color"), combine="add", alpha=("constant",))
    b.passthrough_tev()
    pos, quat, idx = sphere(stacks=6, slices=8)
    pos = np.round(pos * 256) / 256 * (5 / 16)
    pos[:, 3] = 1
    b.vertices([pos[idx].astype(np.float32), quat[idx]])
    for i in range(draws):
        for n in range(4):
            b.set(f"LIGHT{n}_DIFFUSE", r=(60 + 17 * i) % 256, g=(200 - 13 * i) % 256, b=(40 + 50 * n + 7 * i) % 256)
            b.set(f"LIGHT{n}_AMBIENT", r=(5 * i) % 64, g=(3 * n) % 64, b=(7 * i) % 64)
            b.set(f"LIGHT{n}_SPECULAR0", r=(255 - 9 * i) % 256, g=128, b=(30 * n) % 256)
        b.set("LIGHTING_AMBIENT", r=(11 * i) % 64, g=16, b=(5 * i) % 64)
        mv = np.eye(4, dtype=np.float32)
        mv[:3, 3] = ((i % 4) - 1.5) * 0.75, (i // 4 - 1) * 0.75, -4
        b.uniforms(4, mv)
        b.draw(len(idx))
    b.end_frame()
    return b.capture()


def test_light_colors_form_a_live_group_of_their_own() -> None:
    for n in range(8):
        for name, _ in live_lights.COLORS:
            assert WRITE_GROUPS[id_of(f"LIGHT{n}_{name}")] == Group.LIGHT_COLOR
        assert WRITE_GROUPS[id_of(f"LIGHT{n}_XY")] == Group.LIGHTING  # the rest of a light shapes the plan
    assert WRITE_GROUPS[id_of("LIGHTING_AMBIENT")] == Group.LIGHT_COLOR


def test_a_material_per_draw_stays_in_the_loop_with_the_staged_pixels() -> None:
    capture = _materials()
    with _loop_calls() as calls:
        compiled = _replay(capture, True, checkpoints=False)
    staged = _replay(capture, False, checkpoints=False)
    assert compiled.pipeline.compiled_count == DRAWS
    assert len(calls) <= 3  # one plan: the loop does not come back to Python for each material
    image = compiled.color_buffer()
    assert np.array_equal(image, staged.color_buffer())
    assert _facts(compiled) == _facts(staged)
    lit = image.reshape(-1, 4)[(image.reshape(-1, 4)[:, :3] != (40, 40, 56)).any(axis=1)]
    assert len(np.unique(lit, axis=0)) > 4 * DRAWS  # every sphere shaded in its own colors


def test_a_plan_owns_the_light_arrays_the_loop_writes() -> None:
    """The loop writes light colors into a fragment plan's ``lparams`` and ``ambient``: copies, never the arrays
    ``lighting.kernel_arrays`` keeps on the draw state's lighting part (which other plans and the reference read)."""
    call, _ = first_draw(_materials(1))
    plan = FragmentPlan.of(call.draw_state, call.memory)
    assert isinstance(plan, FragmentPlan)
    kept = lighting.kernel_arrays(call.draw_state.lighting)
    args = plan.args[ARG_LIGHTING]
    for k in (LIGHT_PARAMS, LIGHT_AMBIENT):
        assert np.array_equal(args[k], kept[k])
        assert not np.shares_memory(args[k], kept[k])
