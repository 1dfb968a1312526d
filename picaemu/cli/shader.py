"""``picaemu shader``: disassemble, assemble and run PICA200 shader binaries.

- ``picaemu shader disasm FILE.shbin [--dvle N] [--listing] [--split DIR]`` — picasso-syntax source (or an
  address listing; ``--split``: one file per DVLE, which assemble back, in the printed order, to an equivalent SHBIN)
- ``picaemu shader asm FILE.vsh [FILE.gsh ...] -o OUT.shbin [--compare REF.shbin]`` — one DVLE per source file;
  ``--compare`` says whether the result is equivalent to REF (e.g. picasso's output) and lists the differences
- ``picaemu shader run FILE.shbin [--dvle N] --set v0=x,y,z,w --set c4=… --set i0=x,y,z,w --set b2=1
  [--trace] [--json]`` — one input through the DVLE (its constants applied; unset registers 0, bools false);
  prints o0-o15, or for a geometry DVLE the emitted vertices and triangles. JSON: ``{"outputs": {"o0": [...]}}``
  or ``{"vertices": [{"o0": [...]}, ...], "triangles": [[i, j, k], ...]}`` (plus ``"trace"`` with --trace).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import click
import numpy as np

from picaemu.cli.common import compiles_kernels, examples, fail, reports_errors
from picaemu.errors import FormatError, PicaError
from picaemu.formats import shbin as shbin_format
from picaemu.formats.files import refuse_overwrite, write_atomic, write_text

SET_RE = re.compile(r"^([vcib])(\d+)=(.+)$")
REGISTER_COUNTS = {"v": 16, "c": 96, "i": 4, "b": 16}
MAX_REPORTED = 20  # differences listed by asm --compare


def _load(path: str) -> shbin_format.Shbin:
    try:
        return shbin_format.parse(Path(path).read_bytes())
    except PicaError as err:
        fail(f"{path}: {err}")
        raise  # unreachable: fail() exits


def _source_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise FormatError(f"not a UTF-8 text file: {err.reason}", offset=err.start, path=path) from None


@click.group(
    "shader",
    epilog=examples(
        "picaemu shader disasm tests/data/captures/shaders/vs_tex.shbin",
        "picaemu shader disasm tests/data/captures/shaders/vs_tex.shbin > vs.vsh",
        "picaemu shader asm vs.vsh -o vs.shbin --compare tests/data/captures/shaders/vs_tex.shbin",
        "picaemu shader run tests/data/captures/shaders/vs_color.shbin --set v0=1,2,3,1 --json",
    ),
)
def shader() -> None:
    """Shader binaries: disassemble, assemble, run."""


@shader.command(
    "disasm",
    epilog=examples(
        "picaemu shader disasm tests/data/captures/shaders/vs_tex.shbin > vs.vsh",
        "picaemu shader disasm tests/data/captures/shaders/vs_tex.shbin --listing",
        "picaemu shader disasm tests/data/captures/shaders/vs_color.shbin --split src/",
    ),
)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--dvle", default=0, show_default=True, help="which DVLE (executable) of the file")
@click.option("--listing", is_flag=True, help="address/word listing instead of re-assemblable source")
@click.option(
    "--split",
    "split_dir",
    type=click.Path(file_okay=False),
    help="write one source file per DVLE into this folder (NAME_K.vsh / .gsh, in code order)",
)
@reports_errors
def disasm(file: str, dvle: int, listing: bool, split_dir: str | None) -> None:
    """Disassemble FILE.shbin into picasso syntax."""
    from picaemu.shader.disasm import listing as make_listing
    from picaemu.shader.disasm_shbin import disassemble_dvle, disassemble_files
    from picaemu.shader.setup import dvle_names

    sb = _load(file)
    if split_dir is None and not listing and len(sb.dvles) > 1:
        click.echo(
            f"note: {file} holds {len(sb.dvles)} DVLEs; this text is DVLE {dvle}'s view of the whole program "
            f"(it assembles alone to the same code); --split DIR writes one file per DVLE that assemble back "
            "to this SHBIN",
            err=True,
        )
    if split_dir is not None:
        Path(split_dir).mkdir(parents=True, exist_ok=True)
        for k, text in disassemble_files(sb):
            target = Path(split_dir) / f"{Path(file).stem}_{k}.{'gsh' if sb.dvles[k].is_geometry else 'vsh'}"
            write_text(target, text)
            click.echo(str(target))
        return
    if not 0 <= dvle < len(sb.dvles):
        fail(f"{file} has {len(sb.dvles)} DVLE(s); --dvle {dvle} does not exist")
    if listing:
        ops = np.array([d for d, _e in sb.opdescs] + [0] * (128 - len(sb.opdescs)), np.uint32)
        line_map = _line_map(file, sb.code)
        for pc, line in enumerate(make_listing(np.array(sb.code, np.uint32), ops, names=dvle_names(sb.dvles[dvle]))):
            where = line_map.at(pc) if line_map is not None else None
            click.echo(line + (f"  ; {where}" if where else ""))
        return
    click.echo(disassemble_dvle(sb, dvle), nl=False)


@shader.command(
    "asm",
    epilog=examples(
        "picaemu shader asm vs.vsh -o vs.shbin",
        "picaemu shader asm vs.vsh --compare tests/data/captures/shaders/vs_tex.shbin",
        "picaemu shader asm main.vsh sprite.gsh -o both.shbin",
    ),
)
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="SHBIN file to write")
@click.option(
    "--compare",
    "reference",
    type=click.Path(exists=True, dir_okay=False),
    help="a SHBIN (e.g. picasso's) to check the result against: equivalent or the differences",
)
@reports_errors
def asm(sources: tuple[str, ...], output: str | None, reference: str | None) -> None:
    """Assemble picasso-syntax SOURCES (e.g. a .vsh and a .gsh) into one SHBIN.

    With --compare, report whether the result is equivalent to REFERENCE (same code, output maps, constants and
    uniforms; descriptors equal in every bit the instructions read): exit status 0 when it is, 1 when not."""
    from picaemu.shader import linemap
    from picaemu.shader.asm import assemble_with_map
    from picaemu.shader.compare import differences

    if output is None and reference is None:
        fail("give -o OUT.shbin, --compare REFERENCE.shbin, or both")
    if output is not None:
        refuse_overwrite(output, *sources)
    result, lines = assemble_with_map([(s, _source_text(s)) for s in sources])
    data = shbin_format.build(result)
    if output is not None:
        write_atomic(output, data)
        map_path = linemap.write(output, lines)
        click.echo(
            f"{output}: {len(result.code)} instructions, {len(result.opdescs)} operand descriptors, "
            f"{len(result.dvles)} DVLE(s), {len(data)} bytes; line map {map_path}"
        )
    if reference is not None:
        diffs = differences(result, _load(reference))
        for line in diffs[:MAX_REPORTED]:
            click.echo(f"differs: {line}")
        if len(diffs) > MAX_REPORTED:
            click.echo(f"... and {len(diffs) - MAX_REPORTED} more differences")
        click.echo(f"{'not equivalent to' if diffs else 'equivalent to'} {reference}")
        if diffs:
            raise SystemExit(1)


def _line_map(path: str, code):
    """The matching sidecar line map of a SHBIN (``picaemu.shader.linemap``); its warnings go to stderr."""
    from picaemu.shader import linemap

    line_map, messages = linemap.caught(linemap.load, path, code)
    for message in messages:
        click.echo(f"warning: {message}", err=True)
    return line_map


def _with_source(step: dict, line_map) -> dict:
    """A trace step dict plus ``"source": "file:line"`` when the line map knows its pc."""
    where = line_map.at(step["pc"]) if line_map is not None else None
    return {**step, "source": where} if where else step


def _parse_sets(sets: tuple[str, ...]) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for item in sets:
        m = SET_RE.match(item.replace(" ", ""))
        if not m or int(m.group(2)) >= REGISTER_COUNTS[m.group(1)]:
            raise click.BadParameter(f"'{item}' (expected v0-15, c0-95, i0-3 or b0-15 = values)", param_hint="--set")
        try:
            nums = [float(x) for x in m.group(3).split(",")]
        except ValueError:
            raise click.BadParameter(f"'{item}' has a non-number", param_hint="--set") from None
        want = 1 if m.group(1) == "b" else 4
        if len(nums) != want:
            raise click.BadParameter(f"'{item}' needs {want} value(s)", param_hint="--set")
        values[m.group(1) + m.group(2)] = nums
    return values


def _vec(values) -> list[float]:
    return [float(x) for x in values]


@shader.command(
    "run",
    epilog=examples(
        "picaemu shader run tests/data/captures/shaders/vs_tex.shbin --set v0=1,2,3,1 \\",
        "    --set c0=1,0,0,0 --set c1=0,1,0,0 --set c2=0,0,1,0 --set c3=0,0,0,1 \\",
        "    --set c4=2,0,0,0 --set c5=0,2,0,0 --set c6=0,0,2,0 --set c7=0,0,0,1     # o0 = (2, 4, 6, 1)",
        "picaemu shader run tests/data/captures/shaders/vs_color.shbin --set v0=1,2,3,1 --trace --json",
    ),
)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--dvle", default=0, show_default=True, help="which DVLE (executable) of the file")
@click.option("--set", "sets", multiple=True, help="register=values, e.g. v0=1,2,3,1  c4=0,0,0,1  i0=3,0,1,0  b2=1")
@click.option("--trace", is_flag=True, help="print every executed instruction with its values")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@reports_errors
@compiles_kernels
def run(file: str, dvle: int, sets: tuple[str, ...], trace: bool, as_json: bool) -> None:
    """Run one input through a DVLE of FILE.shbin and print its outputs."""
    from picaemu.shader import run_geometry_shader, run_vertex_shader
    from picaemu.shader.setup import GeometryConfig, ShaderSetup
    from picaemu.shader.trace import format_trace, trace_geometry, trace_vertex

    sb = _load(file)
    if not 0 <= dvle < len(sb.dvles):
        fail(f"{file} has {len(sb.dvles)} DVLE(s); --dvle {dvle} does not exist")
    setup = ShaderSetup.from_dvle(sb, dvle)
    line_map = _line_map(file, sb.code) if trace else None
    values = _parse_sets(sets)
    floats, ints, bools = (np.array(setup.float_uniforms), np.array(setup.int_uniforms), np.array(setup.bool_uniforms))
    v = np.zeros((16, 4), np.float32)
    for name, nums in values.items():
        kind, idx = name[0], int(name[1:])
        if kind == "v":
            v[idx] = nums
        elif kind == "c":
            floats[idx] = nums
        elif kind == "i":
            if any(not 0 <= x <= 255 or x != int(x) for x in nums):
                raise click.BadParameter(f"{name}: integer uniforms are 0-255", param_hint="--set")
            ints[idx] = [int(x) for x in nums]
        else:
            bools[idx] = bool(nums[0])
    setup = setup.with_uniforms(floats=floats, ints=ints, bools=bools)
    report: dict = {}
    if setup.unit == "vs":
        out = run_vertex_shader(setup, v[None])[0]
        report["outputs"] = {f"o{i}": _vec(out[i]) for i in range(16)}
        records = trace_vertex(setup, v) if trace else []
    else:
        setup = replace(setup, geometry=GeometryConfig(mode=0))  # one invocation with the given v registers
        result = run_geometry_shader(setup, v[None])
        regs = [i for i in range(16) if setup.output_mask >> i & 1] or list(range(16))
        report["vertices"] = [{f"o{i}": _vec(vert[i]) for i in regs} for vert in result.vertices]
        report["triangles"] = result.triangles.tolist()
        report["winding"] = result.winding.tolist()
        records = trace_geometry(setup, v[None]) if trace else []
    if as_json:
        if trace:
            report["trace"] = [_with_source(r.as_dict(), line_map) for r in records]
        click.echo(json.dumps(report))
        return
    if trace:
        for line in format_trace(records, line_map):
            click.echo(line)
    if "outputs" in report:
        for name, vec in report["outputs"].items():
            click.echo(f"{name:>3} = ({', '.join(f'{x:.6g}' for x in vec)})")
        return
    for k, vert in enumerate(report["vertices"]):
        click.echo(
            f"vertex {k}: " + "  ".join(f"{n}=({', '.join(f'{x:.6g}' for x in vec)})" for n, vec in vert.items())
        )
    for k, (tri, wind) in enumerate(zip(report["triangles"], report["winding"], strict=True)):
        click.echo(f"triangle {k}: {tri}" + (" (winding inverted)" if wind else ""))
