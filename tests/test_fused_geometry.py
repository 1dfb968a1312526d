"""The compiled geometry-shader draw (``picaemu.fused.geometry``) against the staged runner: the invocations kernel
(``run_invocations``) against ``run_geometry_shader`` on generated programs, uniforms and inputs (point / variable
/ fixed modes, permutations, winding, the SETEMIT latch across EMITs and invocations, b15, loops and aL carried
between invocations, output banks, PRIMEMIT before the slots are written), and whole draws through the pipeline,
compiled against staged (memory, counters, bounds, route)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.draw import GEOMETRY_SHADER_SEAM, ROUTE_COMPILED
from picaemu.errors import PicaError
from picaemu.fused.geometry import invocation_args, run_invocations
from picaemu.fused.vertices import VertexPlan
from picaemu.geometry.front_end import shader_entry
from picaemu.pipeline_seams import run_geometry_shader as run_geometry_seam
from picaemu.replay import Replay
from picaemu.shader import ShaderSetup, run_geometry_shader
from picaemu.shader.asm import assemble
from samples._common import SCREEN, VS_COLOR
from samples.gs_sprites import GS_SPRITE
from tests.test_fused_vertices import Recorder, assert_same

# slots 0 / 1 by a bool uniform, a loop reading c[aL] (and a read before it: aL carried from the invocation
# before), b15, a colour written for two of three EMITs (banks), winding on one PRIMEMIT of two
GS_LOOP = """
.gsh point
.fvec table[6]
.ivec count
.bool flag
.out opos position
.out oclr color
.proc main
    mov r1, table[aL]
    ifu b15
        add r1, r1, v0
    .end
    for count
        add r1, r1, table[aL]
    .end
    ifu flag
        setemit 1
    .else
        setemit 0
    .end
    mov opos, r1
    mov oclr, v1
    emit
    ifu flag
        setemit 0
    .else
        setemit 1
    .end
    add opos, v0, r1
    emit
    setemit 2, prim inv
    mul opos, v0, r1
    mov oclr, r1
    emit
    setemit 0, prim
    mad opos, v1, r1, v0
    emit
    end
.end
"""
# slots 0 and 1 written by the first invocation only: later ones continue its strip (b15)
GS_STRIP = """
.gsh point
.out opos position
.out oclr color
.proc main
    ifu b15
        mov oclr, v1
        setemit 2, prim
        mov opos, v0
        emit
    .else
        add opos, v0, v1
        setemit 0
        emit
        mov opos, v0
        mov oclr, v1
        setemit 1
        emit
    .end
    end
.end
"""
GS_FIXED = """
.gsh fixed c8 3
.out opos position
.out oclr color
.proc main
    setemit 0
    mov opos, c8
    mov oclr, c9
    emit
    setemit 1
    mov opos, c10
    emit
    setemit 2, prim
    mov opos, c12
    mov oclr, c13
    emit
    end
.end
"""
GS_VARIABLE = """
.gsh variable 1
.out opos position
.out oclr color
.proc main
    mov r0, c0
    setemit 1
    add opos, c3, r0
    mul oclr, r0, c2
    emit
    setemit 0
    mov oclr, c2
    mov opos, c1
    emit
    setemit 2, prim inv
    mov opos, c4
    emit
    end
.end
"""
GS_DATA_FLOW = """
.gsh point
.out opos position
.constf half(0.5, 0.5, 0.5, 0.5)
.proc main
    cmp v0, lt, lt, half
    ifc cmp.x
        setemit 0
    .end
    mov opos, v0
    emit
    end
.end
"""
PROGRAMS = {name: ShaderSetup.from_dvle(assemble(src), 0) for name, src in
            (("loop", GS_LOOP), ("strip", GS_STRIP), ("sprite", GS_SPRITE), ("fixed", GS_FIXED),
             ("variable", GS_VARIABLE))}  # fmt: skip
ATTRIBUTES = 2  # VS outputs per vertex (position, colour)


def _values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Floats of both signs with a few infinities and NaNs."""
    values = rng.uniform(-4, 4, shape).astype(np.float32)
    special = rng.random(shape) < 0.03
    values[special] = rng.choice(np.array([np.inf, -np.inf, np.nan], np.float32), int(special.sum()))
    return values


def _state(name: str, seed: int) -> tuple[ShaderSetup, np.ndarray, list[int] | None]:
    """A GS setup of program ``name`` with random uniforms and configuration, its inputs and primitive sizes."""
    rng = np.random.default_rng(seed)
    setup = PROGRAMS[name]
    bools = rng.random(16) < 0.5
    ints = np.array(setup.int_uniforms)
    ints[0] = (rng.integers(0, 4), rng.integers(0, 3), rng.choice([0, 1, 2, 255]), 0)  # count - 1, aL start, step
    floats = np.array(setup.float_uniforms)
    floats[:6] = _values(rng, (6, 4))
    if name == "sprite":
        floats[0] = rng.uniform(0, 0.2, 4)
    setup = setup.with_uniforms(floats=floats, ints=ints, bools=bools)
    sizes = None
    if name in ("loop", "strip", "sprite"):
        permutation = tuple(int(v) for v in rng.permutation(16))
        if rng.random() < 0.5:
            permutation = tuple(range(16))
        setup = replace(setup, num_inputs=int(rng.integers(1, 5)), input_permutation=permutation)
    elif name == "fixed":
        setup = replace(setup, geometry=replace(setup.geometry, fixed_stride=2))
    n = int(rng.integers(0, 13))
    if name == "variable":
        sizes = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 5)))]
        n = sum(sizes) - (1 if rng.random() < 0.1 else 0)  # sometimes a primitive runs past the vertices
    return setup, _values(rng, (n, ATTRIBUTES, 4)), sizes


def _compiled(setup: ShaderSetup, inputs: np.ndarray, sizes: list[int] | None) -> tuple:
    gs = invocation_args(setup, inputs.shape[1])
    assert not isinstance(gs, str), gs
    sizes_array = np.array(sizes or [], np.int64)
    firsts = np.concatenate([[0], np.cumsum(sizes_array)[:-1]]).astype(np.int64) if sizes else sizes_array
    return run_invocations(inputs, sizes_array, firsts, setup.float_uniforms, gs, shader_entry())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), seed=st.integers(0, 2**32 - 1))
def test_invocations_run_compiled_as_the_staged_runner(name: str, seed: int) -> None:
    setup, inputs, sizes = _state(name, seed)
    ok, emitted, triangles, executed = _compiled(setup, inputs, sizes)
    counters: dict = {}
    try:
        staged = run_geometry_shader(setup, inputs, sizes, counters=counters)
    except PicaError:
        assert not ok  # the compiled kernel declines what the staged runner raises for
        return
    assert ok
    np.testing.assert_array_equal(emitted.view(np.uint32), staged.vertices.view(np.uint32))  # NaN payloads too
    np.testing.assert_array_equal(triangles, staged.triangles)
    assert executed == counters.get("shader_instructions", 0)


def test_the_generated_states_reach_what_they_test() -> None:
    """Across the seeds the differential test draws from, the states emit, wind, continue strips and fail."""
    runs = [_state(name, seed) for name in sorted(PROGRAMS) for seed in range(40)]
    results = [_compiled(*run) for run in runs]
    assert sum(not ok for ok, *_ in results) > 0  # PRIMEMIT before the slots, or a primitive past the vertices
    assert sum(len(tris) for ok, _, tris, _ in results if ok) > 200


def test_flow_on_lane_data_is_refused_by_name() -> None:
    setup = ShaderSetup.from_dvle(assemble(GS_DATA_FLOW), 0)
    assert (
        invocation_args(setup, 1) == "flow control on data in the geometry shader (ifc / callc / jmpc / breakc reached)"
    )
    too_long = replace(PROGRAMS["fixed"], geometry=replace(PROGRAMS["fixed"].geometry, fixed_stride=1))
    assert "does not fit 2 attributes" in str(invocation_args(too_long, 2))


# ---------------------------------------------------------------------------------------------- whole draws
def gs_scene(seed: int) -> pica.Capture:
    """Points through the sprite GS (arrays and indexed, some crossing the clip volume, culling on), then the
    fixed-size and variable-size programs on indexed draws."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"gs scene {seed}")
    b.begin_frame(clear=(0x18, 0x10, 0x20, 0xFF))
    b.shader(VS_COLOR)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    n = 40
    pos = np.stack([rng.uniform(-40, 440, n), rng.uniform(-40, 280, n), rng.uniform(0, 1, n), np.ones(n)], 1)
    b.vertices([pos.astype(np.float32), rng.uniform(0, 1, (n, 4)).astype(np.float32)])
    b.geometry_shader(GS_SPRITE)
    b.set("FACECULLING_CONFIG", mode=seed % 3)  # none, cull counter-clockwise, cull clockwise
    for _ in range(3):
        b.uniforms(0, [rng.uniform(0.01, 0.3, 4)], unit="gs")
        b.draw(int(rng.integers(1, 20)), "geometry primitive", first=int(rng.integers(0, 20)))
        b.draw_indexed(rng.integers(0, n, int(rng.integers(1, 30))), "geometry primitive")
    b.geometry_shader(GS_FIXED)
    b.set(
        "GSH_MISC0",
        mode="fixed-size primitive",
        fixed_vertices_minus_1=2,
        fixed_stride_minus_1=1,
        fixed_uniform_start=8,
        fixed_mode=1,
    )
    b.draw_indexed(rng.integers(0, n, 3 * int(rng.integers(1, 8))), "geometry primitive")
    b.geometry_shader(GS_VARIABLE)
    b.set("GEOSTAGE_CONFIG", 0x8, variable_primitive=1)
    stream: list[int] = []
    for size in rng.integers(1, 5, 6):
        stream += [int(size), *rng.integers(0, n, int(size))]
    b.draw_indexed(stream, "geometry primitive")
    b.end_frame()
    return b.capture()


@pytest.mark.parametrize("seed", range(4))
def test_gs_draws_are_the_same_compiled_and_staged(seed: int) -> None:
    capture = gs_scene(seed)
    draws, fused = assert_same(capture)
    assert fused == draws == 8
    pipe = Recorder()  # a Pipeline subclass: the pipeline runs every draw (the loop leaves GS draws to it anyway)
    Replay(capture, checkpoints=False, pipeline=pipe).run()
    assert {call.route for call in pipe.calls} == {ROUTE_COMPILED}
    assert sum(call.stats["primitives_rasterized"] for call in pipe.calls) > 0


def test_the_gs_sample_runs_compiled() -> None:
    pipe = Recorder()
    Replay(pica.read(Path(__file__).resolve().parent.parent / "samples" / "captures" / "gs_sprites.pica"),
           checkpoints=False, pipeline=pipe).run()  # fmt: skip
    call = pipe.calls[0]
    plan = VertexPlan.of(call.draw_state, call.memory, call.state.fixed_attribs)
    assert isinstance(plan, VertexPlan) and plan.geometry and call.route == ROUTE_COMPILED
    assert call.stats["primitives_rasterized"] == 48 and call.stats["shader_instructions"] == 744


def test_a_replaced_geometry_shader_seam_runs_staged() -> None:
    def seam(ds, attributes, sizes, counters=None):
        return run_geometry_seam(ds, attributes, sizes, counters)

    pipe = Recorder()
    pipe.geometry_shader = seam
    Replay(gs_scene(0), checkpoints=False, pipeline=pipe).run()
    assert {call.route for call in pipe.calls} == {f"reference: {GEOMETRY_SHADER_SEAM}"}
