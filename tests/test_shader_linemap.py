"""Shader line maps (``picaemu.shader.linemap``): ``shader asm`` writes ``X.shbin.map``; ``shader run --trace``,
``shader disasm --listing`` and ``picaemu trace --map`` show the source file:line of each instruction; a bad or
mismatched map is a named warning and the output simply leaves the source out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from picaemu.formats import shbin

from picaemu.cli import main
from picaemu.shader import linemap
from picaemu.shader.asm import assemble_with_map
from picaemu.shader.disasm_shbin import disassemble_files

SRC = Path(__file__).parent / "data" / "shader_src"


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _assembled(tmp_path: Path) -> Path:
    vsh, gsh = tmp_path / "sparks.vsh", tmp_path / "sparks.gsh"
    vsh.write_text((SRC / "sparks.vsh").read_text())
    gsh.write_text((SRC / "sparks.gsh").read_text())
    out = tmp_path / "sparks.shbin"
    code, stdout, _ = _cli("shader", "asm", str(vsh), str(gsh), "-o", str(out))
    assert code == 0 and "line map" in stdout
    return out


def test_map_names_the_line_of_every_word_and_padding_goes_to_its_directive() -> None:
    src = ".proc main\n    mov r0, v0\n    ifu b0\n    .end\n    end\n.end\n"
    s, lm = assemble_with_map([("a.vsh", src)])
    # mov (2), ifu (3), the NOP an empty body needs (inserted by the .end on line 4), end (5)
    assert [lm.at(pc) for pc in range(len(s.code))] == ["a.vsh:2", "a.vsh:3", "a.vsh:4", "a.vsh:5"]
    assert lm.matches(s.code) and not lm.matches([*s.code[:-1], 0])


def test_asm_writes_the_sidecar_and_run_trace_shows_source_lines(tmp_path: Path) -> None:
    out = _assembled(tmp_path)
    data = json.loads((tmp_path / "sparks.shbin.map").read_text())
    assert data["format"] == "picaemu-shader-map" and data["code_words"] == len(shbin.parse(out.read_bytes()).code)
    code, stdout, stderr = _cli("shader", "run", str(out), "--set", "v0=1,2,3,1", "--trace")
    assert code == 0 and stderr == ""
    first = stdout.splitlines()[0]
    assert first.startswith("0x000  mov r0, inPos") and first.endswith(f"; {tmp_path / 'sparks.vsh'}:19")
    code, stdout, _ = _cli("shader", "run", str(out), "--dvle", "1", "--set", "v0=1,2,3,1", "--trace", "--json")
    trace = json.loads(stdout)["trace"]
    assert trace[0]["source"] == f"{tmp_path / 'sparks.gsh'}:24"  # mov r14, seed
    code, stdout, _ = _cli("shader", "disasm", str(out), "--listing")
    assert stdout.splitlines()[0].endswith("sparks.vsh:19")


@pytest.mark.parametrize(
    ("content", "code_name"),
    [("{not json", "line-map-invalid"), ('{"format": "other"}', "line-map-invalid"), (None, "line-map-mismatch")],
)
def test_bad_or_mismatched_map_is_a_named_warning(tmp_path: Path, content: str | None, code_name: str) -> None:
    out = _assembled(tmp_path)
    mp = tmp_path / "sparks.shbin.map"
    if content is None:  # a map of other code: the split files assembled alone give a different program
        _other, lm = assemble_with_map([("x", disassemble_files(shbin.parse(out.read_bytes()))[1][1])])
        mp.write_text(lm.to_json())
    else:
        mp.write_text(content)
    code, stdout, stderr = _cli("shader", "run", str(out), "--set", "v0=1,2,3,1", "--trace")
    assert code == 0 and f"warning: {code_name}:" in stderr and "; " not in stdout.splitlines()[0].split("]")[-1]


def test_capture_trace_with_map(tmp_path: Path, captures_dir: Path) -> None:
    """scene 1 binds vs_color.shbin; its disassembly assembles to the same words, with a map of the text."""
    original = shbin.parse((captures_dir / "shaders" / "vs_color.shbin").read_bytes())
    src = tmp_path / "vs_color.vsh"
    src.write_text(disassemble_files(original)[0][1])
    out = tmp_path / "vs_color.shbin"
    assert _cli("shader", "asm", str(src), "-o", str(out))[0] == 0
    assert out.read_bytes() == (captures_dir / "shaders" / "vs_color.shbin").read_bytes()
    scene = str(captures_dir / "scene1_triangle")
    code, stdout, stderr = _cli("trace", scene, "--draw", "0", "--vertex", "1", "--json", "--map", str(out))
    steps = [json.loads(line) for line in stdout.splitlines()]
    assert code == 0 and stderr == "" and steps
    text = src.read_text().splitlines()
    for step in steps:  # every step names the source line holding its instruction
        path, line = step["source"].rsplit(":", 1)
        assert path == str(src) and text[int(line) - 1].strip().split()[0] == step["text"].split()[0]
    wrong = tmp_path / "wrong.shbin"
    wrong.write_bytes(b"")
    linemap.write(wrong, assemble_with_map(".proc main\n    end\n.end\n")[1])
    code, stdout, stderr = _cli("trace", scene, "--draw", "0", "--vertex", "1", "--map", str(wrong))
    assert code == 0 and "warning: line-map-mismatch:" in stderr and "; " not in stdout
