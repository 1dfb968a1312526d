"""Binding programs: from register state (as the command processor leaves it) and from SHBIN DVLEs; relative
addressing worked values of pica-shader-isa.md §8; the real citro3d shaders end to end."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import shbin

from picaemu.command.builder import CommandBuilder
from picaemu.command.processor import CommandProcessor
from picaemu.regs import access, id_of
from picaemu.shader import ShaderSetup, run_vertex_shader
from picaemu.shader.quick import run_source
from picaemu.state import GpuState


def test_from_state_reads_every_register_by_name() -> None:
    state = GpuState()
    regs = state.regs
    regs[id_of("VSH_BOOLUNIFORM")] = access.compose("VSH_BOOLUNIFORM", b0=1, b5=1, upper=0x7FFF)
    regs[id_of("VSH_INTUNIFORM_I2")] = access.compose("VSH_INTUNIFORM_I2", x=3, y=1, z=2, w=9)
    regs[id_of("VSH_INPUTBUFFER_CONFIG")] = access.compose("VSH_INPUTBUFFER_CONFIG", num_input_minus_1=2, mode=0xA0)
    regs[id_of("VSH_ENTRYPOINT")] = access.compose("VSH_ENTRYPOINT", entry=0x12, upper=0x7FFF)
    regs[id_of("VSH_ATTRIBUTES_PERMUTATION_LOW")] = 0x76543012  # attr0 -> v2, attr1 -> v1, attr2 -> v0
    regs[id_of("VSH_ATTRIBUTES_PERMUTATION_HIGH")] = 0xFEDCBA98
    regs[id_of("VSH_OUTMAP_MASK")] = 0x0013
    regs[id_of("VSH_OUTMAP_TOTAL1")] = access.compose("VSH_OUTMAP_TOTAL1", count_minus_1=2)
    state.vs.code[:3] = [1, 2, 3]
    state.vs.float_uniforms[4] = (1, 2, 3, 4)
    s = ShaderSetup.from_state(state, "vs")
    assert s.bool_uniforms.tolist() == [i in (0, 5) for i in range(16)]
    assert s.int_uniforms[2].tolist() == [3, 1, 2, 9]
    assert (s.num_inputs, s.entry, s.output_mask, s.num_outputs) == (3, 0x12, 0x13, 3)
    assert s.input_permutation[:4] == (2, 1, 0, 3) and s.input_permutation[15] == 15
    assert s.code[:3].tolist() == [1, 2, 3] and s.float_uniforms[4].tolist() == [1, 2, 3, 4]
    state.vs.code[0] = 99  # the setup is a snapshot
    assert s.code[0] == 1 and not s.code.flags.writeable


def test_from_state_geometry_fields() -> None:
    state = GpuState()
    state.regs[id_of("GSH_MISC0")] = access.compose(
        "GSH_MISC0", mode=2, fixed_vertices_minus_1=2, fixed_stride_minus_1=1, fixed_uniform_start=8, fixed_mode=1
    )
    state.regs[id_of("GSH_INPUTBUFFER_CONFIG")] = access.compose("GSH_INPUTBUFFER_CONFIG", num_input_minus_1=5)
    g = ShaderSetup.from_state(state, "gs")
    assert (g.unit, g.num_inputs, g.code_words) == ("gs", 6, 4096)
    assert (g.geometry.mode, g.geometry.fixed_vertices, g.geometry.fixed_stride, g.geometry.fixed_start) == (2, 3, 2, 8)


def test_end_to_end_through_the_command_processor(captures_dir) -> None:
    """Upload vs_color the way citro3d does; the shader reads what the processor decoded (f24 uniforms)."""
    sb = shbin.parse((captures_dir / "shaders" / "vs_color.shbin").read_bytes())
    b = CommandBuilder()
    b.upload_code("VSH", sb.code)
    b.upload_opdescs("VSH", [d for d, _e in sb.opdescs])
    mvp = [(2, 0, 0, 0), (0, 2, 0, 0), (0, 0, 2, 0), (0, 0, 0, 1)]
    b.upload_float_uniforms("VSH", 0, mvp)
    b.upload_float_uniforms("VSH", 4, [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)], float32=True)
    b.upload_float_uniforms("VSH", 95, [(1, 1, 1, 1)])
    b.write_fields("VSH_INPUTBUFFER_CONFIG", num_input_minus_1=1, mode=0xA0)
    b.write("VSH_ATTRIBUTES_PERMUTATION_LOW", 0x76543210)
    b.write_fields("VSH_OUTMAP_MASK", o0=1, o1=1)
    b.finalize()
    proc = CommandProcessor()
    proc.run(b.words())
    setup = ShaderSetup.from_state(proc.state, "vs")
    attrs = np.zeros((2, 16, 4), np.float32)
    attrs[:, 0] = [(1, 2, 3, 0), (-1, 0.5, 0, 0)]
    attrs[:, 1] = [(1, 0, 0, 1), (0, 0, 1, 1)]
    out = run_vertex_shader(setup, attrs)
    np.testing.assert_array_equal(out[:, 0], [(2, 4, 6, 1), (-2, 1, 0, 1)])  # w forced to c95.w = 1
    np.testing.assert_array_equal(out[:, 1], attrs[:, 1])
    assert not out[:, 2:].any()


def test_from_dvle_applies_constants_as_uploaded(captures_dir) -> None:
    sb = shbin.parse((captures_dir / "shaders" / "vs_tex.shbin").read_bytes())
    s = ShaderSetup.from_dvle(sb, 0)
    assert s.float_uniforms[95].tolist() == [1, 1, 1, 1] and not s.float_uniforms[:95].any()
    assert (s.entry, s.output_mask, s.unit) == (0, 0b111, "vs")
    assert s.names["c8"] == "tint" and s.names["c5"] == "modelView[1]"


def test_permutation_maps_attribute_k_to_register() -> None:
    s = ShaderSetup.from_dvle(shbin.parse(shbin.build(_passthrough())), 0)
    s = ShaderSetup(**{**s.__dict__, "input_permutation": (3, *range(1, 16)), "num_inputs": 1})
    attrs = np.zeros((1, 16, 4), np.float32)
    attrs[0, 0] = (7, 8, 9, 10)
    out = run_vertex_shader(s, attrs)
    assert out[0, 0].tolist() == [7, 8, 9, 10]  # attribute 0 landed in v3, which the program copies


def _passthrough():
    from picaemu.shader.asm import assemble

    return assemble(".out p position\n.proc main\n    mov p, v3\n    end\n.end\n")


@pytest.mark.parametrize(
    "offset, expected",
    [
        (13, 53),
        (60, 1),
        (88, 0),
        (128, 40),
        (-42, 1),
        (-73, 95),
        (-129, 40),
        (0, 40),
    ],
)
def test_relative_addressing_worked_values(offset: int, expected: float) -> None:
    src = ".proc main\n    mova a0.x, v0\n    mov o0, c40[a0.x]\n    end\n.end\n"
    floats = {k: (k, k, k, k) for k in range(96)}
    floats[1] = (7, 7, 7, 7)  # so that "out of range -> (1,1,1,1)" is not confused with c1
    a = np.zeros((1, 16, 4), np.float32)
    a[0, 0] = offset
    assert run_source(src, a, floats=floats)[0, 0, 0] == expected


def test_relative_addressing_per_vertex_palette() -> None:
    """Skinning-style lookup: each vertex picks its own matrix row through a0.x and aL-free offsets."""
    src = """
    .fvec pal[8]
    .proc main
        mova a0.x, v1
        dp4 o0.x, pal[a0.x], v0
        dp4 o0.y, pal[a0.x+1], v0
        end
    .end
    """
    floats = {k: (k, 0, 0, 1) for k in range(8)}
    a = np.zeros((3, 16, 4), np.float32)
    a[:, 0] = (1, 1, 1, 1)
    a[:, 1, 0] = (0, 2, 6)
    out = run_source(src, a, floats=floats)
    np.testing.assert_array_equal(out[:, 0, :2], [(1, 2), (3, 4), (7, 8)])
