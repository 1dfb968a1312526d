"""Flow control: uniform and per-vertex (divergent) branches, loops, calls, jumps, stack rules, error cases."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import ShaderError
from picaemu.shader import ShaderSetup, run_vertex_shader
from picaemu.shader.isa import encode, encode_desc
from picaemu.shader.quick import run_source, setup_from_source
from picaemu.shader.reference import run_reference

RAMP = {k: (k, k, k, k) for k in range(96)}  # c_k = (k, k, k, k)


def inputs(*v0x: float) -> np.ndarray:
    a = np.zeros((len(v0x), 16, 4), np.float32)
    a[:, 0, :] = np.array(v0x, np.float32)[:, None]
    return a


NESTED_IF = """
.bool fa, fb
.proc main
    ifu fa
        ifu fb
            mov r0, c1
        .else
            mov r0, c2
        .end
    .else
        mov r0, c3
    .end
    mov o0, r0
    end
.end
"""


@pytest.mark.parametrize("fa, fb, expected", [(True, True, 1), (True, False, 2), (False, True, 3), (False, False, 3)])
def test_nested_uniform_if_else(fa, fb, expected) -> None:
    out = run_source(NESTED_IF, inputs(0), floats=RAMP, bools={0: fa, 1: fb})
    assert out[0, 0, 0] == expected


DIVERGENT_IFC = """
.proc main
    cmp v0, lt, lt, c5
    ifc cmp.x
        add r0, v0, c10
    .else
        mul r0, v0, c2
    .end
    mov o0, r0
    end
.end
"""  # lanes with v0.x < 5 add c10, the others multiply by c2


def test_divergent_ifc_else() -> None:
    out = run_source(DIVERGENT_IFC, inputs(1, 7, 4, 9), floats=RAMP)
    np.testing.assert_array_equal(out[:, 0, 0], [11, 14, 14, 18])  # v<5: v+10, else 2v


def test_loop_steps_al_and_keeps_last_increment() -> None:
    src = """
    .ivec count
    .proc main
        mov r0, c0
        for count
            add r0, r0, c0[aL]
        .end
        mov o0, r0
        mov o1, c0[aL]
        end
    .end
    """
    out = run_source(src, inputs(0), floats=RAMP, ints={0: (3, 2, 3, 0)})
    assert out[0, 0, 0] == 2 + 5 + 8 + 11  # 4 iterations, aL = 2, 5, 8, 11
    assert out[0, 1, 0] == 14  # aL = y + (x+1)*z after the loop


def test_nested_loops_restore_outer_al() -> None:
    src = """
    .proc main
        mov r0, c0
        for i0
            for i1
                add r0, r0, c0[aL]
            .end
            nop
        .end
        mov o0, r0
        mov o1, c0[aL]
        end
    .end
    """
    out = run_source(src, inputs(0), floats=RAMP, ints={0: (1, 0, 1, 0), 1: (2, 10, 1, 0)})
    assert out[0, 0, 0] == 2 * (10 + 11 + 12)
    assert out[0, 1, 0] == 2


def test_divergent_break_in_loop() -> None:
    src = """
    .proc main
        mov r0, c0
        for i0
            add r0, r0, c1
            cmp r0, ge, ge, v0
            breakc cmp.x
        .end
        mov o0, r0
        mov o1, c0[aL]
        end
    .end
    """
    out = run_source(src, inputs(1, 5, 20, 3), floats=RAMP, ints={0: (9, 0, 1, 0)})
    np.testing.assert_array_equal(out[:, 0, 0], [1, 5, 10, 3])  # the loop runs at most 10 times
    np.testing.assert_array_equal(out[:, 1, 0], [1, 5, 10, 3])  # aL += 1 also on the breaking iteration


def test_conditional_calls_and_uniform_calls() -> None:
    src = """
    .bool useb
    .constf hundred(100, 100, 100, 100)
    .proc main
        mov r0, v0
        cmp v0, ge, ge, c3
        callc cmp.x, addhundred
        callu useb, addten
        mov o0, r0
        end
    .end
    .proc addhundred
        add r0, r0, hundred
        nop
    .end
    .proc addten
        add r0, r0, c10
        nop
    .end
    """
    for flag, extra in ((False, 0), (True, 10)):
        out = run_source(src, inputs(1, 3, 5), floats={3: (3, 3, 3, 3), 10: (10, 10, 10, 10)}, bools={0: flag})
        np.testing.assert_array_equal(out[:, 0, 0], [1 + extra, 103 + extra, 105 + extra])


def test_divergent_backward_jump() -> None:
    src = """
    .proc main
        mov r0, c1
    again:
        mul r0, r0, c2
        cmp r0, lt, lt, v0
        jmpc cmp.x, again
        mov o0, r0
        end
    .end
    """
    out = run_source(src, inputs(5, 1, 100, 16), floats=RAMP)
    np.testing.assert_array_equal(out[:, 0, 0], [8, 2, 128, 16])


def test_jmpu_inverted() -> None:
    src = """
    .bool f
    .proc main
        mov r0, c1
        jmpu !f, skip
        mov r0, c2
    skip:
        mov o0, r0
        end
    .end
    """
    assert run_source(src, inputs(0), floats=RAMP, bools={0: False})[0, 0, 0] == 1
    assert run_source(src, inputs(0), floats=RAMP, bools={0: True})[0, 0, 0] == 2


def _raw_setup(words: list[int], descs: list[int], floats=RAMP) -> ShaderSetup:
    code = np.zeros(4096, np.uint32)
    code[: len(words)] = words
    ops = np.zeros(128, np.uint32)
    ops[: len(descs)] = descs
    f = np.zeros((96, 4), np.float32)
    for k, v in floats.items():
        f[k] = v
    return ShaderSetup(
        code=code,
        opdescs=ops,
        float_uniforms=f,
        int_uniforms=np.zeros((4, 4), np.uint8),
        bool_uniforms=np.ones(16, bool),
        output_mask=1,
    )


def test_jump_at_end_of_if_scope_is_not_taken() -> None:
    """§10.2 rule 4: a JMPU that is the last instruction of an IF body loses against the scope exit."""
    mov = lambda dst, src: encode("mov", dst=dst, src1=src, desc=0)  # noqa: E731
    words = [
        encode("ifu", uniform=0, target=3, num=1),  # 0: then = [1, 3), else = [3, 4)
        mov(0x10, 0x21),  # 1: r0 = c1
        encode("jmpu", uniform=0, target=5),  # 2: would jump to 5 - overridden by the IF exit to 4
        mov(0x10, 0x22),  # 3: else part (skipped)
        mov(0x10, 0x23),  # 4: r0 = c3
        mov(0x00, 0x10),  # 5: o0 = r0
        encode("end"),
    ]
    setup = _raw_setup(words, [encode_desc(0xF)])
    for engine in (run_vertex_shader, run_reference):
        assert engine(setup, inputs(0))[0, 0, 0] == 3


def test_call_stack_overflow_drops_oldest() -> None:
    """Five nested calls on a 4-deep stack: the first return is lost, so after the first callee's body ends
    execution falls through to the instruction after it instead of returning to the caller (§10.1)."""
    words = [encode("nop")] * 52
    mov = lambda dst, src: encode("mov", dst=dst, src1=src, desc=0)  # noqa: E731
    words[0], words[1], words[2] = encode("call", target=10, num=2), mov(0, 0x21), encode("end")
    for base in (10, 20, 30, 40):
        words[base] = encode("call", target=base + 10, num=2)
    words[12], words[13] = mov(0, 0x22), encode("end")
    setup = _raw_setup(words, [encode_desc(0xF)])
    for engine in (run_vertex_shader, run_reference):
        assert engine(setup, inputs(0))[0, 0, 0] == 2


def test_runaway_program_hits_step_budget() -> None:
    setup = setup_from_source(".proc main\nl:\n    jmpu b0, l\n    end\n.end\n", bools={0: True})
    with pytest.raises(ShaderError) as err:
        run_vertex_shader(setup, inputs(0), step_budget=1000)
    assert err.value.pc == 0


def test_break_outside_loop_is_an_error() -> None:
    with pytest.raises(ShaderError, match="BREAK outside a loop"):
        run_source(".proc main\n    break\n    end\n.end\n", inputs(0))


def test_invalid_opcode_names_pc() -> None:
    setup = _raw_setup([encode("nop"), 0x10 << 26], [])
    with pytest.raises(ShaderError) as err:
        run_vertex_shader(setup, inputs(0))
    assert err.value.pc == 1


def test_running_off_code_memory_is_an_error() -> None:
    setup = _raw_setup([encode("nop")] * 4, [])
    setup = ShaderSetup(**{**setup.__dict__, "entry": 508})
    with pytest.raises(ShaderError, match="outside code memory"):
        run_vertex_shader(setup, inputs(0))


def test_emit_in_vertex_shader_is_an_error() -> None:
    setup = _raw_setup([encode("emit"), encode("end")], [])
    with pytest.raises(ShaderError, match="EMIT"):
        run_vertex_shader(setup, inputs(0))


def test_instruction_counter_weights_each_instruction_by_its_active_lanes() -> None:
    counters: dict = {}
    run_vertex_shader(setup_from_source(DIVERGENT_IFC, floats=RAMP), inputs(1, 7, 4, 9), counters=counters)
    # one-instruction branches get no padding nop (picasso's rule), so every lane runs cmp, ifc, add or mul, mov,
    # end: 4 lanes x 5 (2 lanes x 1 in each branch, not 4 lanes for both branches)
    assert counters == {"shader_instructions": 20}


@pytest.mark.parametrize("entry", [512, 600, 4095, 4096, 0xFFFF])
def test_entry_point_outside_code_memory_is_named_by_both_engines(entry: int) -> None:
    """VSH_ENTRYPOINT holds 16 bits but the vertex unit has 512 code words: an entry at or past the end is a
    ShaderError naming it (not an index error, nor a stale word of the 4096-word array run as flow control)."""
    setup = ShaderSetup(**{**_raw_setup([encode("end")], []).__dict__, "entry": entry})
    for engine in (run_vertex_shader, run_reference):
        with pytest.raises(ShaderError, match="outside") as err:
            engine(setup, inputs(0))
        assert err.value.pc == entry


@pytest.mark.parametrize("op", ["call", "callu", "jmpu", "ifu"])
@pytest.mark.parametrize("target", [512, 600, 4095])
def test_flow_target_at_or_past_code_end_is_named(op: str, target: int) -> None:
    """Every jump / call / if target at or past the end of code memory ends in ShaderError."""
    fields = {"target": target} | ({"num": 1} if op in ("call", "callu", "ifu") else {})
    setup = _raw_setup([encode(op, **fields), encode("end")], [])
    setup = setup.with_uniforms(bools=np.full(16, op != "ifu"))  # ifu jumps to its target when b is false
    for engine in (run_vertex_shader, run_reference):
        with pytest.raises(ShaderError, match="outside code memory"):
            engine(setup, inputs(0))
