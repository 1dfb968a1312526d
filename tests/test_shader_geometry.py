"""Geometry shader: point / variable-size / fixed-size modes, SETEMIT/EMIT, winding, output banking, b15."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from picaemu.shader import ShaderSetup, run_geometry_shader
from picaemu.shader.asm import assemble
from picaemu.shader.geometry import run_geometry_reference
from picaemu.shader.trace import trace_geometry

TRIANGLE_PER_POINT = """
.gsh point
.out opos position
.constf dx(1, 0, 0, 0)
.constf dy(0, 1, 0, 0)
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


def _setup(src: str, **changes) -> ShaderSetup:
    return replace(ShaderSetup.from_dvle(assemble(src), 0), **changes)


def _both(setup, vertices, sizes=None):
    vec = run_geometry_shader(setup, vertices, sizes)
    ref = run_geometry_reference(setup, vertices, sizes)
    np.testing.assert_array_equal(vec.vertices, ref.vertices)
    np.testing.assert_array_equal(vec.triangles, ref.triangles)
    return vec


def test_point_mode_one_triangle_per_input_vertex() -> None:
    setup = _setup(TRIANGLE_PER_POINT, num_inputs=1)
    assert setup.unit == "gs" and setup.geometry.mode == 0
    pts = np.array([[[10, 20, 0, 1]], [[30, 40, 0, 1]]], np.float32)
    out = _both(setup, pts)
    assert out.triangles.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out.winding.tolist() == [False, False]
    np.testing.assert_array_equal(out.vertices[:3, 0], [(10, 20, 0, 1), (11, 20, 0, 1), (10, 21, 0, 1)])
    np.testing.assert_array_equal(out.vertices[3:, 0], [(30, 40, 0, 1), (31, 40, 0, 1), (30, 41, 0, 1)])
    assert not out.vertices[:, 1:].any()  # outside the output mask


def test_point_mode_concatenates_attributes_across_vertices() -> None:
    """2 inputs per invocation from 1-attribute vertices: invocation k sees vertices 2k and 2k+1 as v0, v1."""
    src = TRIANGLE_PER_POINT.replace("add opos, v0, dy", "mov opos, v1")
    out = _both(_setup(src, num_inputs=2), np.arange(16, dtype=np.float32).reshape(4, 1, 4))
    np.testing.assert_array_equal(out.vertices[2, 0], [4, 5, 6, 7])
    np.testing.assert_array_equal(out.vertices[5, 0], [12, 13, 14, 15])


def test_winding_flag_swaps_first_two_vertices() -> None:
    src = TRIANGLE_PER_POINT.replace("setemit 2, prim", "setemit 2, prim inv")
    out = _both(_setup(src, num_inputs=1), np.zeros((1, 1, 4), np.float32))
    assert out.triangles.tolist() == [[1, 0, 2]] and out.winding.tolist() == [True]


def test_output_banks_alternate_between_emits() -> None:
    """An output not rewritten between two EMITs reads what it held two emits ago (§11.3)."""
    src = """
    .gsh point
    .out opos position
    .proc main
        mov opos, v0
        setemit 0
        emit
        setemit 1
        emit
        setemit 2, prim
        emit
        end
    .end
    """
    out = _both(_setup(src, num_inputs=1), np.array([[[5, 6, 7, 8]]], np.float32))
    np.testing.assert_array_equal(out.vertices[:, 0], [(5, 6, 7, 8), (0, 0, 0, 0), (5, 6, 7, 8)])


def test_emit_buffer_persists_for_strips_and_b15_marks_later_invocations() -> None:
    src = """
    .gsh point
    .out opos position
    .proc main
        ifu b15
            setemit 2, prim
            mov opos, v0
            emit
        .else
            setemit 0
            mov opos, v0
            emit
            setemit 1
            mov opos, v0
            emit
        .end
        end
    .end
    """
    pts = np.array([[[1, 0, 0, 0]], [[2, 0, 0, 0]], [[3, 0, 0, 0]]], np.float32)
    out = _both(_setup(src, num_inputs=1), pts)
    assert out.triangles.tolist() == [[0, 1, 2], [0, 1, 3]]  # slots 0 and 1 kept from invocation 0
    np.testing.assert_array_equal(out.vertices[:, 0, 0], [1, 1, 2, 3])


def test_fixed_size_mode_reads_vertices_from_uniforms() -> None:
    src = """
    .gsh fixed c8 3
    .out opos position
    .proc main
        setemit 0
        mov opos, c8
        emit
        setemit 1
        mov opos, c9
        emit
        setemit 2, prim
        mov opos, c10
        emit
        end
    .end
    """
    setup = _setup(src)
    assert (setup.geometry.mode, setup.geometry.fixed_start, setup.geometry.fixed_vertices) == (2, 8, 3)
    verts = np.arange(24, dtype=np.float32).reshape(6, 1, 4)
    out = _both(setup, verts)
    np.testing.assert_array_equal(out.vertices[:, 0], verts[:, 0])
    assert out.triangles.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_variable_size_mode_layout() -> None:
    """c0 = N; the first main vertex gives all its attributes, the others only their first one."""
    src = """
    .gsh variable 1
    .out opos position
    .out oclr color
    .proc main
        setemit 0
        mov opos, c0
        mov oclr, c2
        emit
        setemit 1
        mov opos, c3
        emit
        setemit 2, prim
        mov opos, c4
        emit
        end
    .end
    """
    setup = _setup(src)
    verts = np.arange(40, dtype=np.float32).reshape(5, 2, 4)  # 5 vertices x 2 attributes
    out = _both(setup, verts, [3, 2])
    np.testing.assert_array_equal(out.vertices[0, 0], [3, 3, 3, 3])
    np.testing.assert_array_equal(out.vertices[0, 1], verts[0, 1])
    np.testing.assert_array_equal(out.vertices[1, 0], verts[1, 0])
    np.testing.assert_array_equal(out.vertices[2, 0], verts[2, 0])
    np.testing.assert_array_equal(out.vertices[3, 0], [2, 2, 2, 2])  # second primitive: N = 2


def test_trace_one_gs_invocation() -> None:
    setup = _setup(TRIANGLE_PER_POINT, num_inputs=1)
    recs = trace_geometry(setup, np.array([[[1, 2, 3, 4]], [[5, 6, 7, 8]]], np.float32), invocation=1)
    assert [r.step.pc for r in recs] == list(range(10))
    assert recs[1].text == "mov out_position, v0" and recs[1].step.sources == [[5, 6, 7, 8]]
