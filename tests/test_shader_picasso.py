"""picasso parity: a hand-written corpus covering every directive, each checked against what picasso's rules give
(worked out by hand from its allocation, output-map, descriptor-sharing and padding rules), disassemble ->
assemble round trips (two-DVLE programs and the two real SHBINs shipped in tests/data/shbin), and
``picaemu shader asm --compare``."""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import pytest
from click.testing import CliRunner
from picaemu.formats import shbin

from picaemu.cli import main
from picaemu.numeric import to_f24
from picaemu.shader import isa
from picaemu.shader.asm import assemble
from picaemu.shader.asm_syntax import AssemblyError
from picaemu.shader.compare import differences
from picaemu.shader.disasm_shbin import disassemble_dvle, disassemble_files

DATA = Path(__file__).parent / "data" / "shbin"
ID = isa.IDENTITY_SELECTOR


def _uniforms(d: shbin.Dvle) -> list[tuple[str, int, int]]:
    return [(d.symbol(u.symbol), u.first, u.last) for u in d.uniforms]


def _desc_of(s: shbin.Shbin, pc: int) -> int:
    return s.opdescs[s.code[pc] & 0x7F][0]


def test_uniform_pool_is_shared_and_constants_restart_per_file() -> None:
    a = ".fvec proj[4], tint\n.constf k(1, 2, 3, 4)\n.proc main\n    mov o0, tint\n    end\n.end\n"
    b = ".fvec other, tint\n.constf k2(5, 6, 7, 8)\n.entry m2\n.proc m2\n    mov o0, other\n    end\n.end\n"
    s = assemble([("a.vsh", a), ("b.vsh", b)])
    # proj c0-c3, tint c4 (file a); other takes the next free c5, tint keeps c4; each file's constant is c95
    assert _uniforms(s.dvles[0]) == [("proj", 0x10, 0x13), ("tint", 0x14, 0x14)]
    assert _uniforms(s.dvles[1]) == [("tint", 0x14, 0x14), ("other", 0x15, 0x15)]  # sorted by register
    assert [c.register for d in s.dvles for c in d.constants] == [95, 95]
    assert s.dvles[1].constants[0].data == tuple(int(to_f24(v)) for v in (5, 6, 7, 8))


def test_in_declares_inputs_and_uniform_entries() -> None:
    s = assemble(".in pos\n.in nrm v3\n.in tc\n.proc main\n    add o0, pos, nrm\n    mov o1, tc\n    end\n.end\n")
    d = s.dvles[0]
    assert d.input_mask == 0b1011  # v0, v1 (first free), v3
    assert _uniforms(d) == [("pos", 0, 0), ("tc", 1, 1), ("nrm", 3, 3)]
    add = isa.decode(s.code[0], [0] * 128)
    assert [op.raw for op in add.srcs] == [0, 3]


def test_out_alias_is_the_whole_register_and_masks_go_to_the_map() -> None:
    src = (
        ".out opos position\n.out otc texcoord0.xy\n.out - texcoord0w o1.z\n.proc main\n"
        "    mov opos, v0\n    mov otc.pq, v1\n    end\n.end\n"
    )
    s = assemble(src)
    d = s.dvles[0]
    assert [(o.type, o.register, o.mask) for o in d.outputs] == [(0, 0, 0xF), (3, 1, 0x3), (4, 1, 0x4)]
    assert d.output_mask == 0b11 and d.merge_outmaps == 0
    mov = isa.decode(s.code[1], [d_ for d_, _ in s.opdescs] + [0] * 128)
    assert mov.dst == 1 and mov.components == (2, 3)  # otc.pq writes o1.zw
    with pytest.raises(AssemblyError, match="collides"):
        assemble(".out a texcoord0.xy o1\n.out - texcoord0w o1.y\n.proc main\n    end\n.end\n")


def test_set_directives_constfa_tail_and_alias_negation() -> None:
    src = (
        ".setb b0, true\n.setb b1 off\n.seti i2(1, 2, 3, 4)\n.setf c10(0.5, 0, 0, 1)\n"
        ".constfa arr[4]\n.constfa (1, 1, 1, 1)\n.constfa (2, 2, 2, 2)\n.end\n.alias neg -r2.yx\n"
        ".proc main\n    mov r0, arr[1]\n    mov o0, neg\n    end\n.end\n"
    )
    s = assemble(src)
    consts = [(c.type, c.register, c.data) for c in s.dvles[0].constants]
    zero = tuple(int(to_f24(0.0)) for _ in range(4))
    assert consts[:4] == [
        (0, 0, (1, 0, 0, 0)),
        (0, 1, (0, 0, 0, 0)),
        (1, 2, (1 | 2 << 8 | 3 << 16 | 4 << 24, 0, 0, 0)),
        (2, 10, tuple(int(to_f24(v)) for v in (0.5, 0, 0, 1))),
    ]
    assert [(t, r) for t, r, _ in consts[4:]] == [(2, 92), (2, 93), (2, 94), (2, 95)] and consts[6][2] == zero
    descs = [d for d, _ in s.opdescs] + [0] * 128
    assert isa.decode(s.code[0], descs).srcs[0].raw == isa.FIRST_C + 93  # arr = c92
    neg = isa.decode(s.code[1], descs).srcs[0]
    assert neg.negate and neg.raw == isa.FIRST_R + 2 and neg.swizzle == (1, 0, 0, 0)


@pytest.mark.parametrize(("target", "mask"), [("a0", 0x8), ("a1", 0x4), ("a01", 0xC), ("a0.xy", 0xC)])
def test_mova_legacy_destinations(target: str, mask: int) -> None:
    s = assemble(f".proc main\n    mova {target}, v0\n    end\n.end\n")
    assert _desc_of(s, 0) & 0xF == mask


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        (".gsh point c8", (0, 0, 0, 0)),
        (".gsh variable c8 3", (1, 0, 3, 0)),
        (".gsh subdivision c8 5", (1, 0, 5, 0)),
        (".gsh fixed c0 c8 4", (2, 0, 0, 4)),
        (".gsh particle c2 c8 6", (2, 2, 0, 6)),
    ],
)
def test_gsh_modes_and_their_uniform_pool(line: str, fields: tuple[int, int, int, int]) -> None:
    s = assemble(
        f"{line}\n.fvec size\n.out - position\n.out - dummy\n.proc main\n    mov o0, size\n    emit\n    end\n.end\n"
    )
    d = s.dvles[0]
    assert (d.gs_mode, d.gs_fixed_start, d.gs_variable_num, d.gs_fixed_num) == fields
    assert d.shader_type == 1 and _uniforms(d) == [("size", 0x18, 0x18)]  # first free register c8
    assert d.merge_outmaps == 1  # a dummy output in the GS's own pool


def test_bare_gsh_keeps_the_shared_pool_and_no_merge() -> None:
    vsh = ".fvec proj[4]\n.proc main\n    mov o0, proj[0]\n    end\n.end\n"
    gsh = ".gsh\n.fvec size\n.out - position\n.out - dummy\n.entry g\n.proc g\n    emit\n    end\n.end\n"
    s = assemble([("a.vsh", vsh), ("b.gsh", gsh)])
    d = s.dvles[1]
    assert d.shader_type == 1 and d.merge_outmaps == 0 and _uniforms(d) == [("size", 0x14, 0x14)]


def test_nodvle_file_provides_procedures_only() -> None:
    lib = ".nodvle\n.proc helper\n    mov r0, v0\n.end\n"
    vsh = ".proc main\n    call helper\n    mov o0, r0\n    end\n.end\n"
    s = assemble([("lib.vsh", lib), ("main.vsh", vsh)])
    assert len(s.dvles) == 1 and s.dvles[0].main_offset == 1
    call = isa.decode(s.code[1], [0] * 128)
    assert (call.name, call.target, call.num) == ("call", 0, 1)


def test_descriptors_are_shared_on_the_bits_both_uses_read() -> None:
    """mov r0.xy reads only src1.xy; dp4 r1.xy reads all of both sources: one entry, holding dp4's src2 lanes.
    The src3 field no use has keeps the 0 (selector xxxx) of the mov that created the entry, as in picasso."""
    s = assemble(".proc main\n    mov r0.xy, v0\n    dp4 r1.xy, v1, v2.xyzx\n    end\n.end\n")
    assert [d for d, _ in s.opdescs] == [isa.encode_desc(0xC, (ID, 0b00011000, 0))]
    assert s.code[0] & 0x7F == s.code[1] & 0x7F == 0


def test_mad_descriptor_is_swapped_below_32() -> None:
    extra = ["xxyy", "yyzz", "zzww", "wwxx", "xxxy", "yyyz", "zzzw", "wwwx", "xyxy"]
    swizzles = ["".join(p) for p in permutations("xyzw")] + extra
    body = "".join(f"    mov r0, v0.{sw}\n" for sw in swizzles)  # 33 different descriptors
    s = assemble(f".proc main\n{body}    mad r1, v0.x, v1, v2.wzyx\n    end\n.end\n")  # matches no mov entry
    assert len(s.opdescs) == 34
    assert s.code[33] & 0x1F == 0 and s.opdescs[0][0] == isa.encode_desc(0xF, (0, ID, 0b11100100))
    assert s.code[0] & 0x7F == 33  # the first mov now points at entry 33


def test_padding_only_where_picasso_pads() -> None:
    src = (
        ".bool b\n.proc empty\n.end\n.proc main\n    ifu b\n        call empty\n    .end\n    for i0\n"
        "        breakc cmp.x\n    .end\n    end\n.end\n"
    )
    names = [isa.decode(w, [0] * 128).name for w in assemble(src).code]
    # empty proc: nop; call closing an if: nop; breakc closing a loop: nop
    assert names == ["nop", "ifu", "call", "nop", "loop", "breakc", "nop", "end"]


VSH = """.fvec proj[4]
.out opos position
.out oclr color
.proc main
    dp4 opos.x, proj[0], v0
    dp4 opos.y, proj[1], v0
    mov opos.zw, v0
    mov oclr, v1
    end
.end
"""
GSH = """.gsh point c4
.fvec size
.out - position
.out - color
.entry gmain
.proc corner
    add o0, v0, size
    mov o1, v1
.end
.proc gmain
    setemit 0
    call corner
    emit
    setemit 1, prim
    call corner
    emit
    end
.end
"""


def test_two_dvle_program_splits_into_files_that_assemble_back() -> None:
    original = assemble([("a.vsh", VSH), ("b.gsh", GSH)])
    files = disassemble_files(original)
    assert [k for k, _ in files] == [0, 1] and ".entry main1" in files[1][1]
    rebuilt = assemble([(f"f{k}", text) for k, text in files])
    assert differences(rebuilt, original) == []


@pytest.mark.parametrize("name", ["vs_color", "vs_tex"])
def test_real_shbin_round_trip_is_equivalent(name: str) -> None:
    original = shbin.parse((DATA / f"{name}.shbin").read_bytes())
    rebuilt = assemble(disassemble_dvle(original))
    assert differences(rebuilt, original) == []
    assert rebuilt.code == original.code  # here even the words are equal


def test_compare_cli(tmp_path: Path) -> None:
    src = tmp_path / "vs.vsh"
    src.write_text(disassemble_dvle(shbin.parse((DATA / "vs_tex.shbin").read_bytes())))
    ok = CliRunner().invoke(main, ["shader", "asm", str(src), "--compare", str(DATA / "vs_tex.shbin")])
    assert ok.exit_code == 0 and "equivalent to" in ok.output
    src.write_text(src.read_text().replace("mov out_color_2, tint", "mov out_color_2, v1"))
    bad = CliRunner().invoke(
        main, ["shader", "asm", str(src), "--compare", str(DATA / "vs_tex.shbin"), "-o", str(tmp_path / "out.shbin")]
    )
    assert bad.exit_code == 1 and "differs: 0x00B: mov" in bad.output and "not equivalent" in bad.output
    assert (tmp_path / "out.shbin").is_file()
