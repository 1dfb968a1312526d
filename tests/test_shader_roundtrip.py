"""disassemble -> assemble gives the same words: the two-DVLE test shaders of tests/data/shader_src (a vertex and
a geometry shader written for these tests, modelled on the devkitPro particles example), the real SHBINs, the
descriptor words picasso's rules give for ``mov`` and ``litp`` (worked out by hand from pica-shader-isa.md's
descriptor layout), and random valid source programs (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import shbin

from picaemu.shader import isa
from picaemu.shader.asm import assemble
from picaemu.shader.disasm_shbin import disassemble_dvle, disassemble_files

SRC = Path(__file__).parent / "data" / "shader_src"
BINS = Path(__file__).parent / "data" / "shbin"
ID = isa.IDENTITY_SELECTOR


def _sparks() -> shbin.Shbin:
    return assemble([(str(SRC / n), (SRC / n).read_text()) for n in ("sparks.vsh", "sparks.gsh")])


def _same_program(a: shbin.Shbin, b: shbin.Shbin) -> None:
    assert list(a.code) == list(b.code)
    assert [d for d, _ in a.opdescs] == [d for d, _ in b.opdescs]


def _desc(s: shbin.Shbin, pc: int) -> int:
    return s.opdescs[s.code[pc] & 0x7F][0]


@pytest.mark.parametrize("index", [0, 1])
def test_each_dvle_of_a_two_dvle_file_assembles_alone_to_the_same_words(index: int) -> None:
    original = _sparks()
    text = disassemble_dvle(original, index)
    _same_program(original, assemble([("d.pica", text)]))


def test_split_two_dvle_file_assembles_back_byte_for_byte() -> None:
    original = _sparks()
    files = disassemble_files(original)
    assert [k for k, _ in files] == [0, 1]
    again = assemble([(f"f{k}.pica", t) for k, t in files])
    assert shbin.build(again) == shbin.build(original)
    gsh = files[1][1]
    assert "jmpc !cmp.x, l_" in gsh and "0x0" not in gsh.split(".proc main1")[1]  # labels, never raw addresses
    assert ".proc main\n" not in gsh and ".entry main1" in gsh


@pytest.mark.parametrize("name", ["vs_color.shbin", "vs_tex.shbin"])
def test_real_picasso_shbins_come_back_byte_for_byte(name: str) -> None:
    data = (BINS / name).read_bytes()
    original = shbin.parse(data)
    assert shbin.build(assemble([(f"f{k}", t) for k, t in disassemble_files(original)])) == data
    _same_program(original, assemble([("d", disassemble_dvle(original, 0))]))


def test_geometry_shader_first_movs_get_picassos_descriptors() -> None:
    """picasso stores the written swizzle in every lane and 0 in the source fields an instruction lacks:
    ``mov r14, seed``: mask xyzw (0xF), src1 xyzw (0x1B), src2 = src3 = 0;
    ``mov r15.w, counts.x``: mask w (0x1), src1 x repeated (xxxx = 0), src2 = src3 = 0. The sparks geometry
    shader starts with these two; alone (a table of its own) they are entries 0 and 1."""
    gsh = (SRC / "sparks.gsh").read_text()
    head = gsh[: gsh.index("again:")] + "    end\n.end\n"
    s = assemble([("first.gsh", head)])
    assert [d for d, _ in s.opdescs] == [isa.encode_desc(0xF, (ID, 0, 0)), isa.encode_desc(0x1, (0, 0, 0))]
    assert [d for d, _ in s.opdescs] == [0x36F, 0x1]
    assert [w & 0x7F for w in s.code[:2]] == [0, 1]
    _same_program(s, assemble(disassemble_dvle(s, 0)))


def test_litp_descriptor_survives_a_round_trip() -> None:
    """litp reads src1 x, y and w; picasso keeps every lane of an instruction it has no rule for. Here the mov
    (reads lane x only) and the litp share one entry, which takes litp's lanes: mask x (0x8), src1 yxww
    (01 00 11 11 = 0x4F), src2 = src3 = 0."""
    src = ".proc main\n    mov r2.x, r3.y\n    litp r0.x, -r1.yxww\n    litp o0, r1.xyzz\n    end\n.end\n"
    s = assemble(src)
    assert _desc(s, 1) == isa.encode_desc(0x8, (0x4F, 0, 0), (True, False, False))
    assert _desc(s, 2) == isa.encode_desc(0xF, (0b00011010, 0, 0))
    _same_program(s, assemble(disassemble_dvle(s, 0)))


# ---------------------------------------------------------------------------------------------- random programs

REG = st.sampled_from([f"r{i}" for i in range(4)] + ["v0", "v1"])
UNIFORM = st.sampled_from(["u0", "u1", "arr[1]", "arr[a0.x]", "arr[aL+1]", "c90"])
SWIZZLE = st.one_of(st.just(""), st.text("xyzw", min_size=1, max_size=4).map(lambda t: "." + t))
MASK = st.sampled_from(["", ".x", ".yz", ".xw", ".xyz", ".w"])
NEG = st.sampled_from(["", "-"])


@st.composite
def _operand(draw, wide: bool) -> str:
    base = draw(st.one_of(REG, UNIFORM) if wide else REG)
    return draw(NEG) + base + draw(SWIZZLE)


@st.composite
def _arith(draw) -> str:
    dst = draw(st.sampled_from(["r0", "r1", "r2", "o0", "o1"])) + draw(MASK)
    kind = draw(st.integers(0, 5))
    if kind == 0:
        mn = draw(st.sampled_from(["add", "mul", "dp3", "dp4", "dph", "dst", "sge", "slt", "max", "min"]))
        a, b = draw(_operand(True)), draw(_operand(False))
        return f"{mn} {dst}, {a}, {b}" if draw(st.booleans()) or mn in ("max", "min") else f"{mn} {dst}, {b}, {a}"
    if kind == 1:
        mn = draw(st.sampled_from(["mov", "flr", "rcp", "rsq", "ex2", "lg2", "litp"]))
        return f"{mn} {dst}, {draw(_operand(True))}"
    if kind == 2:
        return f"mad {dst}, {draw(_operand(False))}, {draw(_operand(True))}, {draw(_operand(False))}"
    if kind == 3:
        ops = draw(st.lists(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]), min_size=2, max_size=2))
        return f"cmp {draw(_operand(True))}, {ops[0]}, {ops[1]}, {draw(_operand(False))}"
    if kind == 4:
        return f"mova {draw(st.sampled_from(['a0.x', 'a0.y', 'a0.xy']))}, {draw(_operand(True))}\n    nop"
    return draw(st.sampled_from(["nop", "callu flag, helper", "call helper", "callc cmp.x, helper"]))


COND = st.sampled_from(["cmp.x", "!cmp.y", "cmp.x && cmp.y", "!cmp.x || cmp.y"])


@st.composite
def _body(draw, depth: int, in_loop: bool) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        choice = draw(st.integers(0, 9 if depth < 2 else 5))
        if choice <= 5:
            lines.append(draw(_arith()))
        elif choice == 6 and in_loop:
            lines.append(f"breakc {draw(COND)}")
        elif choice in (6, 7):
            head = draw(st.sampled_from(["ifu flag", "ifc " + draw(COND)]))
            lines += [head, *draw(_body(depth + 1, in_loop))]
            if draw(st.booleans()):
                lines += [".else", *draw(_body(depth + 1, in_loop))]
            lines.append(".end")
        elif choice == 8:
            lines += ["for count", *draw(_body(depth + 1, True)), ".end"]
        else:
            lines += [f"jmpc {draw(COND)}, @", draw(_arith()), "@:"]  # numbered by _numbered
    return lines


def _numbered(lines: list[str]) -> list[str]:
    """Unique label names: a jump and its label come in pairs with no other jump between them."""
    out, n = [], 0
    for line in lines:
        n += line.startswith("jmpc")
        out.append(line.replace("@", f"l{n}"))
    return out


@st.composite
def _program(draw) -> str:
    decls = ".fvec u0, u1, arr[3]\n.ivec count\n.bool flag\n.constf k(1.0, 0.5, -2.0, 0.0)\n.out - position o0\n"
    helper = [".proc helper", *draw(_body(1, False)), ".end"]
    main = [".proc main", *draw(_body(0, False)), "end", ".end"]
    procs = helper + main if draw(st.booleans()) else main + helper
    return decls + "\n".join(_numbered(procs)) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_program())
def test_random_programs_round_trip(source: str) -> None:
    """disasm o asm is the identity on the words of every assembled program (code and descriptor table)."""
    original = assemble(source)
    _same_program(original, assemble(disassemble_dvle(original, 0)))
    again = assemble([(f"f{k}", t) for k, t in disassemble_files(original)])
    assert shbin.build(again) == shbin.build(original)
