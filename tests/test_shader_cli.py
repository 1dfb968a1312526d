"""``picaemu shader disasm | asm | run`` and vertex traces."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner
from picaemu.formats import shbin

from picaemu.cli import main
from picaemu.shader.quick import setup_from_source
from picaemu.shader.trace import format_trace, trace_vertex


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_json_outputs_of_vs_color(captures_dir) -> None:
    path = str(captures_dir / "shaders" / "vs_color.shbin")
    ident = ["--set", "c0=1,0,0,0", "--set", "c1=0,1,0,0", "--set", "c2=0,0,1,0", "--set", "c3=0,0,0,1"]
    scale = ["--set", "c4=2,0,0,0", "--set", "c5=0,2,0,0", "--set", "c6=0,0,2,0", "--set", "c7=0,0,0,1"]
    res = _invoke("shader", "run", path, "--set", "v0=1,2,3,7", "--set", "v1=0.5,0.25,1,1", *ident, *scale, "--json")
    assert res.exit_code == 0
    out = json.loads(res.output)["outputs"]
    assert out["o0"] == [2, 4, 6, 1]  # v0.w replaced by c95.w = 1 (DVLE constant), then scaled by 2
    assert out["o1"] == [0.5, 0.25, 1, 1]
    assert out["o15"] == [0, 0, 0, 0] and len(out) == 16


def test_run_trace_text(captures_dir) -> None:
    res = _invoke("shader", "run", str(captures_dir / "shaders" / "vs_color.shbin"), "--set", "v0=1,2,3,1", "--trace")
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[0].startswith("0x000  mov r0.xyz, v0") and "(1, 2, 3, 1)" in lines[0]
    assert lines[11].startswith("0x00B  end") and lines[12].startswith(" o0 = ")


def test_asm_then_disasm_then_run_geometry(tmp_path) -> None:
    src = tmp_path / "g.gsh"
    src.write_text(
        ".gsh point\n.out p position\n.proc main\n    setemit 0\n    mov p, v0\n    emit\n"
        "    setemit 1\n    mov p, v1\n    emit\n    setemit 2, prim\n    mov p, v2\n    emit\n"
        "    end\n.end\n"
    )
    out = tmp_path / "g.shbin"
    res = _invoke("shader", "asm", str(src), "-o", str(out))
    assert res.exit_code == 0 and "10 instructions" in res.output
    assert shbin.parse(out.read_bytes()).dvles[0].is_geometry
    res = _invoke("shader", "disasm", str(out))
    assert ".gsh point" in res.output and "setemit 2, prim" in res.output
    res = _invoke(
        "shader", "run", str(out), "--set", "v0=1,0,0,1", "--set", "v1=0,1,0,1", "--set", "v2=0,0,1,1", "--json"
    )
    data = json.loads(res.output)
    assert data["triangles"] == [[0, 1, 2]]
    assert [v["o0"] for v in data["vertices"]] == [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]]


def test_errors_are_one_line(tmp_path) -> None:
    bad = tmp_path / "bad.vsh"
    bad.write_text(".proc main\n    mov o0, q1\n.end\n")
    res = CliRunner().invoke(main, ["shader", "asm", str(bad), "-o", str(tmp_path / "x.shbin")])
    assert res.exit_code == 2 and "bad.vsh:2:13: unknown register or alias 'q1'" in res.output
    junk = tmp_path / "junk.shbin"
    junk.write_bytes(b"DVLB\xff\xff\xff\xff")
    res = CliRunner().invoke(main, ["shader", "disasm", str(junk)])
    assert res.exit_code != 0 and "DVLE count" in res.output


def test_trace_vertex_records() -> None:
    setup = setup_from_source(
        """
    .proc main
        cmp v0, lt, ge, v1
        for i0
            add r0, r0, v0
        .end
        mov o0, r0
        end
    .end
    """,
        ints={0: (1, 4, 2, 0)},
    )
    recs = trace_vertex(setup, np.array([[1, 2, 3, 4], [2, 2, 2, 2]], np.float32))
    assert [r.step.pc for r in recs] == [0, 1, 2, 2, 3, 4]  # i0.x + 1 = 2 passes of a one-instruction body
    assert recs[0].step.cmp == (True, True)
    assert recs[2].step.aL == 4 and recs[2].step.loop_remaining == 1 and recs[3].step.aL == 6
    assert recs[3].step.result == [2, 4, 6, 8] and recs[3].step.sources == [[1, 2, 3, 4], [1, 2, 3, 4]]
    assert recs[3].as_dict()["text"] == "add r0, r0, v0"
    assert len(format_trace(recs)) == len(recs)
