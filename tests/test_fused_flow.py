"""Vertex shaders with flow control steered by the bool / int uniforms (``ifu``, ``callu``, ``call``, ``for`` with
aL-relative uniform reads, ``jmpu``) through the compiled vertex side (``front_end.plan_for``'s traced path,
``interpreter.UniformTrace``) and the compiled loop, against the staged interpreter: pixels, every counter (the
shader instructions included), bounds; the uniforms switched between draws (the plans follow them); flow on
vertex data (``ifc``) still goes staged, with its reason."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.fused.vertices import VertexPlan
from picaemu.replay import Replay
from tests.test_fused_topology import _assert_compiled_like_staged
from tests.test_fused_vertices import Recorder, assert_same

VS_HEAD = """
.fvec projection[4]
.fvec tint[4]
.bool dim
.bool flip
.ivec count
.constf half(0.5, 0.5, 0.5, 1.0)
.out outpos position
.out outtc texcoord0
.out outclr color
.alias inpos v0
.alias intc v1
.alias inclr v2
.proc main
    dp4 outpos.x, projection[0], inpos
    dp4 outpos.y, projection[1], inpos
    dp4 outpos.z, projection[2], inpos
    dp4 outpos.w, projection[3], inpos
    mov outtc, intc
    mov r0, inclr
"""
# tints by aL-relative reads in a loop, a uniform call, a uniform jump
VS_UNIFORM_FLOW = (
    VS_HEAD
    + """    for count
        mul r0, r0, tint[aL]
    .end
    callu dim, darken
    jmpu !flip, keep
    mov r0.xy, r0.yx
keep:
    mov outclr, r0
    end
.end
.proc darken
    mul r0, r0, half
    nop
.end
"""
)
# the colour chosen by a per-vertex comparison: flow on vertex data
VS_DATA_FLOW = (
    VS_HEAD
    + """    cmp inclr, lt, lt, half
    ifc cmp.x
        mov outclr, half
    .else
        mov outclr, r0
    .end
    end
.end
"""
)


def flow_scene(seed: int, program: str = VS_UNIFORM_FLOW) -> pica.Capture:
    """Sprites in clip space whose bool and int uniforms change between draws (sometimes nothing else does)."""
    rng = np.random.default_rng(seed)
    b = CaptureBuilder(name=f"uniform flow {seed}")
    b.begin_frame(clear=(0, 0, 0, 255), depth=0)
    b.texture(0, rng.uniform(0, 255, (8, 8, 4)).astype(np.uint8), "RGBA8")
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.passthrough_tev()
    b.shader(program)
    b.uniforms(0, np.eye(4, dtype=np.float32))
    b.uniforms(4, rng.uniform(0.5, 1.2, (4, 4)).astype(np.float32))
    n = 48
    w = rng.uniform(0.5, 1.5, n)
    pos = np.stack([w * rng.uniform(-1.2, 1.2, n), w * rng.uniform(-1, 1, n), -w * rng.uniform(0, 1, n), w], axis=1)
    b.vertices([pos.astype(np.float32), rng.uniform(0, 1, (n, 2)).astype(np.float32), rng.uniform(0, 1, (n, 4))])
    for _ in range(12):
        b.list.write("VSH_BOOLUNIFORM", 0x7FFF0000 | int(rng.integers(4)))
        x, y, z = int(rng.integers(0, 3)), int(rng.integers(0, 2)), 1  # count - 1, aL start, aL step
        b.list.write("VSH_INTUNIFORM_I0", x | y << 8 | z << 16)
        if rng.random() < 0.5:
            b.draw_indexed(rng.integers(0, n, 3 * int(rng.integers(1, 6))), "geometry primitive")
        else:
            b.draw(3 * int(rng.integers(1, 6)), first=int(rng.integers(0, n - 15)))
    b.end_frame()
    return b.capture()


@pytest.mark.parametrize("seed", range(4))
def test_uniform_flow_runs_in_the_fused_vertex_side_like_the_interpreter(seed: int) -> None:
    draws, fused = assert_same(flow_scene(seed))
    assert fused == draws


@pytest.mark.parametrize("seed", range(3))
def test_uniform_flow_runs_in_the_compiled_loop_like_the_interpreter(seed: int) -> None:
    compiled = _assert_compiled_like_staged(flow_scene(10 + seed))
    assert compiled.pipeline.compiled_count == len(compiled.draws)
    assert len({d.stats["shader_instructions"] // d.stats["vertices_shaded"] for d in compiled.draws}) > 1


def test_flow_on_vertex_data_goes_staged_with_its_reason() -> None:
    capture = flow_scene(20, VS_DATA_FLOW)
    draws, fused = assert_same(capture)
    assert fused == 0 < draws
    pipe = Recorder()
    Replay(capture, checkpoints=False, pipeline=pipe).run()
    call = pipe.calls[0]
    reason = VertexPlan.of(call.draw_state, call.memory, call.state.fixed_attribs)
    assert reason == "flow control on vertex data in the vertex shader (or its entry outside the program)"
