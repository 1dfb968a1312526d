"""Assembler and disassembler: encodings worked by hand in pica-shader-isa.md §14, automatic inverted forms,
disassemble -> assemble round trips, error messages with line and column."""

from __future__ import annotations

import numpy as np
import pytest
from picaemu.formats import shbin

from picaemu.shader import ShaderSetup, run_vertex_shader
from picaemu.shader.asm import assemble
from picaemu.shader.asm_syntax import AssemblyError
from picaemu.shader.disasm import format_instruction, listing
from picaemu.shader.disasm_shbin import disassemble_dvle
from picaemu.shader.isa import decode


def test_worked_encodings_decode() -> None:
    descs = [0] * 128
    descs[5] = 0x0D817C8C
    ins = decode(0x2272A105, descs)
    assert (ins.name, ins.dst, ins.mask, ins.desc_index) == ("mul", 0x13, 0xC, 5)
    assert ins.srcs[0].raw == 0x2A and ins.srcs[0].idx == 2 and ins.srcs[0].swizzle == (3, 2, 1, 0)
    assert ins.srcs[1].negate and ins.srcs[1].swizzle == (0, 0, 1, 1)
    assert format_instruction(ins) == "mul r3.xy, c10[a0.y].wz, -v2.xx"  # only the consumed lanes x, y
    assert decode(0xBD212187, descs).cmp_ops == (5, 1)  # cmp: 6-bit opcode reads 0x2F
    ifc = decode(0xA2408003, descs)
    assert (ifc.name, ifc.refx, ifc.refy, ifc.condop, ifc.target, ifc.num) == ("ifc", 1, 0, 1, 0x20, 3)
    assert decode(0xA4805400, descs).uniform == 2 and decode(0xA4805400, descs).target == 0x15
    assert format_instruction(decode(0xB4C10001, descs)) == "jmpu !b3, 0x040"
    assert format_instruction(decode(0xADC00000, descs)) == "setemit 1, prim inv"


def _words(src: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    s = assemble(src)
    return s.code, tuple(d for d, _e in s.opdescs)


def test_mad_and_madi_words_match_the_reference() -> None:
    code, descs = _words(".proc main\n    mad o1.xyz, r4, c20, -r5\n    end\n.end\n")
    assert code[0] & ~0x1F == 0xE128D2A3 & ~0x1F and descs[code[0] & 0x1F] == 0x0DC6C36E
    code, _ = _words(".proc main\n    mad o1.xyz, r4, r5, c20[aL]\n    end\n.end\n")
    assert code[0] & ~0x1F == 0xC1E95683 & ~0x1F  # MADI chosen automatically


def test_inverted_and_swapped_forms() -> None:
    code, _ = _words(".proc main\n    sge r0, r1, c4\n    dp4 r0, r1, c4\n    cmp r1, lt, ge, c4\n    end\n.end\n")
    assert decode(code[0], [0] * 128).name == "sgei"
    dp4 = decode(code[1], [0] * 128)
    assert dp4.name == "dp4" and dp4.srcs[0].raw == 0x24 and dp4.srcs[1].raw == 0x11
    cmp = decode(code[2], [0] * 128)
    assert cmp.srcs[0].raw == 0x24 and cmp.cmp_ops == (4, 3)  # c4 gt r1, c4 le r1


PROGRAM = """
.fvec m[4], pal[8]
.ivec cnt
.bool flag
.constf half(0.5, 0.5, 0.5, 0.5)
.out opos position
.out oclr color.xyz
.alias tmp r3.yx
.proc main
    mova a0.x, v1
    nop
    mov r0, pal[a0.x+2].wzyx
    mul r1.xy, -tmp, v0.zwxy
    sge r2, v0, half
    mad r4, v0, r1, m[2]
    cmp v0, lt, ge, half
    ifc cmp.x && !cmp.y
        add r0, r0, v0
    .else
        for cnt
            add r0, r0, m[aL]
            breakc cmp.y
        .end
    .end
    ifu flag
        call sub
    .end
    jmpu !flag, skip
    mov r0, -r0
skip:
    dp4 opos.x, m[0], r0
    mov oclr, r0
    end
.end
.proc sub
    rcp r5, v0.w
    rsq r5.yz, v0
.end
"""


def test_disassemble_assemble_reproduces_the_program() -> None:
    first = assemble(PROGRAM)
    text = disassemble_dvle(first)
    again = assemble(text)
    assert again.code == first.code and again.opdescs == first.opdescs
    assert shbin.build(assemble(disassemble_dvle(again))) == shbin.build(again)


def test_safety_nops_are_inserted() -> None:
    text = disassemble_dvle(assemble(PROGRAM))
    # picasso's rules: a loop ending in breakc, an if closed right after a closed loop, a block ending in a call get
    # a NOP; a then-part of one instruction does not (only an empty body does)
    assert "breakc cmp.y\n            nop\n        .end\n        nop\n    .end" in text
    assert "add r0, r0, v0\n    .else" in text
    assert "call proc_016\n        nop\n    .end" in text
    empty = assemble(".bool b\n.proc main\n    ifu b\n    .else\n        mov r0, v0\n    .end\n    end\n.end\n")
    assert [decode(w, [0] * 128).name for w in empty.code] == ["ifu", "nop", "mov", "end"]


def test_real_shbins_disassemble_to_equivalent_programs(captures_dir) -> None:
    for name in ("vs_color", "vs_tex"):
        original = shbin.parse((captures_dir / "shaders" / f"{name}.shbin").read_bytes())
        text = disassemble_dvle(original)
        assert "dp4 r1.x, modelView[0], r0" in text and ".fvec projection[4]" in text
        rebuilt = assemble(text)
        rng = np.random.default_rng(5)
        attrs = rng.normal(size=(8, 16, 4)).astype(np.float32)
        floats = rng.normal(size=(96, 4)).astype(np.float32)
        a = ShaderSetup.from_dvle(original, 0)
        b = ShaderSetup.from_dvle(rebuilt, 0)
        floats[95] = a.float_uniforms[95]
        np.testing.assert_array_equal(
            run_vertex_shader(a.with_uniforms(floats=floats), attrs),
            run_vertex_shader(b.with_uniforms(floats=floats), attrs),
        )
        assert [d.outputs for d in rebuilt.dvles] == [d.outputs for d in original.dvles]


def test_listing_of_live_code() -> None:
    s = assemble(".proc main\n    mov o0, v0\n    end\n.end\n")
    lines = listing(np.array(s.code, np.uint32), np.array([d for d, _ in s.opdescs] + [0] * 127, np.uint32))
    assert lines == ["0x000: 4C000000  mov o0, v0", "0x001: 88000000  end"]


@pytest.mark.parametrize(
    "src, line, column, fragment",
    [
        (".proc main\n    mov o0, v99\n.end\n", 2, 13, "v99 does not exist"),
        (".proc main\n    frob r0, v0\n.end\n", 2, 5, "unknown instruction"),
        (".proc main\n    add r0, c1, c2\n.end\n", 2, 5, "at most one operand"),
        (".proc main\n    max r0, v0, c2\n.end\n", 2, 17, "cannot take a uniform"),
        (".proc main\n    mov r0, v0.xk\n.end\n", 2, 13, "bad swizzle"),
        (".proc main\n    ifu b0\n    nop\n.end\n", 1, 7, "'proc' block is never closed"),
        (".proc main\n    call nowhere\n    end\n.end\n", 2, 10, "unknown procedure"),
        (".proc main\n    jmpc cmp.z, x\n.end\n", 2, 10, "bad condition"),
        ("    mov r0, v0\n", 1, 5, "outside a .proc"),
        (".fvec a[0]\n", 1, 7, "bad array size"),
        (".proc main\n    mov r0, c0[a3]\n.end\n", 2, 13, "bad index"),
        (".proc other\n    end\n.end\n", 1, 1, "entry procedure 'main'"),
    ],
)
def test_errors_name_file_line_and_column(src, line, column, fragment) -> None:
    with pytest.raises(AssemblyError) as err:
        assemble([("shader.vsh", src)])
    assert (err.value.file, err.value.line, err.value.column) == ("shader.vsh", line, column)
    assert fragment in str(err.value) and str(err.value).startswith(f"shader.vsh:{line}:{column}:")


def test_two_files_share_procedures_and_get_one_dvle_each() -> None:
    vsh = ".out p position\n.proc main\n    call common\n    end\n.end\n.proc common\n    mov p, v0\n    nop\n.end\n"
    gsh = (
        ".gsh point\n.out p position\n.entry gmain\n.proc gmain\n    setemit 0, prim\n    call common\n"
        "    emit\n    end\n.end\n"
    )
    s = assemble([("a.vsh", vsh), ("b.gsh", gsh)])
    assert [d.shader_type for d in s.dvles] == [0, 1]
    assert s.dvles[1].main_offset == 4 and s.dvles[0].main_offset == 0
    assert shbin.parse(shbin.build(s)) == s


def test_directives_constants_and_picasso_spellings() -> None:
    src = """
    .fvec first
    .constfa table[]
    .constfa (1, 2, 3, 4)
    .constfa (5, 6, 7, 8)
    .end
    .consti loops(2, 10, 1, 0)
    .setb b3 on
    .alias col r2.bgra
    .out - position o0
    .out otex texcoord0 o3.xy
    .proc main
        mova a0.x, v0
        nop
        mov r1, table[a0]
        for loops
            add r2, r1, table[lcnt+1].xxyy
        .end
        mov o0, col
        mov otex.xy, r1.rg
        end
    .end
    """
    s = assemble(src)
    d = s.dvles[0]
    consts = {(c.type, c.register): c.data for c in d.constants}
    assert consts[(2, 94)] == (0x3F0000, 0x400000, 0x408000, 0x410000)  # 1, 2, 3, 4 as float24
    assert consts[(2, 95)][0] == 0x414000  # 5.0 = 1.25 * 2^2
    assert consts[(1, 3)] == (2 | 10 << 8 | 1 << 16, 0, 0, 0) and consts[(0, 3)] == (1, 0, 0, 0)
    assert [(o.type, o.register, o.mask) for o in d.outputs] == [(0, 0, 0xF), (3, 3, 0x3)]
    assert d.output_mask == 0b1001 and [d.symbol(u.symbol) for u in d.uniforms] == ["first"]
    setup = ShaderSetup.from_dvle(s, 0)
    a = np.zeros((2, 16, 4), np.float32)
    a[:, 0, 0] = (0, 1)
    out = run_vertex_shader(setup, a)
    # vertex 0: r1 = table[0] = c94 = (1,2,3,4); the loop (aL = 10, 11, 12) reads c94+aL+1 >= c96, which is
    # (1, 1, 1, 1), so r2 = r1 + 1 = (2, 3, 4, 5); o0 = col = r2.bgra = r2.zyxw
    np.testing.assert_array_equal(out[0, 0], [4, 3, 2, 5])
    np.testing.assert_array_equal(out[0, 3], [1, 2, 0, 0])  # texcoord0.xy mask
    np.testing.assert_array_equal(out[1, 3], [5, 6, 0, 0])  # a0.x = 1 -> table[1]
