"""The debugger's answers on the command line, over the same engine the GUI uses (``picaemu.debug.api``):

- ``picaemu history CAPTURE --pixel X,Y [--screen top|bottom] [--eye left|right] [--buffer] [--all-targets]
  [--frame N] [--json]``: every fragment at a pixel of one render target;
- ``picaemu fragment CAPTURE --draw N --pixel X,Y [--screen ...] [--eye ...] [--buffer] [--index K] [--json]``:
  one fragment stage by stage;
- ``picaemu state CAPTURE --draw N [--diff M] [--json] [--shader vs|gs]``: every stage's decoded state, or what
  changed, or the program a unit runs as re-assemblable source (JSON: ``state_views.state_document``, a
  ``"schema"`` number and addresses as hex strings);
- ``picaemu mesh CAPTURE --draw N --stage input|vs|gs|clipped [--csv]``: vertices at a stage (CSV: one row per
  vertex, columns named by the output map's semantics, ``picaemu.debug.mesh_table``);
- ``picaemu trace CAPTURE --draw N --vertex V [--unit vs|gs] [--json]``: one vertex through its shader;
- ``picaemu why CAPTURE --draw N [--frame F] [--json]``: where a draw's work went, stage by stage, and why it
  shows nothing (or ``visible``);
- ``picaemu dump CAPTURE``: every event of a capture, command lists decoded packet by packet (``apitrace dump``),
  and each draw's recorded call site (``record --call-sites``).

``--pixel X,Y`` addresses the screen picture ``picaemu render --screen top|bottom [--eye]`` writes (column, row
from the top; traced back to its render target through the display transfer, ``picaemu.debug.screen_map``);
with ``--buffer`` the color buffer as ``picaemu render --target color`` writes it to PNG (portrait, row 0 at the
top) of the render target the screen shows.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import click

from picaemu.cli.common import compiles_kernels, examples, exclusive, reports_errors
from picaemu.command.listing import UniformUploads, packet_text
from picaemu.debug import replay as drp
from picaemu.debug import state_views
from picaemu.debug.api import STAGES
from picaemu.debug.fragment import report_lines
from picaemu.debug.why import REMOVING
from picaemu.errors import PicaError
from picaemu.gx.lcd import EYES, SCREENS
from picaemu.shader.setup import UNITS

CAPTURE = click.argument("capture", type=click.Path(exists=True, path_type=Path))


def _pixel(text: str) -> tuple[int, int]:
    try:
        x, y = (int(v, 0) for v in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not X,Y") from None
    return x, y


def _pick_options(command):
    """--screen / --eye / --buffer: which picture the --pixel coordinates address."""
    for option in reversed(
        (
            click.option(
                "--screen",
                type=click.Choice(tuple(SCREENS)),
                default="top",
                show_default=True,
                help="The screen picture X,Y address (as `picaemu render --screen` writes it); with --buffer, the "
                "screen whose render target to look at.",
            ),
            click.option("--eye", type=click.Choice(EYES), default="left", show_default=True, help="Stereo eye."),
            click.option(
                "--buffer",
                is_flag=True,
                help="X,Y address the color buffer PNG (`render --target color`: portrait, row 0 = top) instead.",
            ),
        )
    ):
        command = option(command)
    return command


def _pick(screen: str, eye: str, buffer: bool) -> dict[str, str]:
    return {"space": "buffer" if buffer else "screen", "screen": screen, "eye": eye}


def _echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=1))


@click.command(
    "history",
    epilog=examples(
        "picaemu history samples/captures/blending.pica --pixel 200,120 --json",
        "picaemu history samples/captures/blending.pica --buffer --pixel 120,200",
    ),
)
@CAPTURE
@click.option("--pixel", required=True, metavar="X,Y", help="Column and row of the picture (row 0 = top).")
@_pick_options
@click.option("--all-targets", is_flag=True, help="Fragments of every render target of the frame at the pixel.")
@click.option("--frame", type=int, default=None, help="Frame whose draws count (default: the last with draws).")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object: pixel, frame, fragments (each names its target)."
)
@reports_errors
@compiles_kernels
def history(
    capture: Path, pixel: str, screen: str, eye: str, buffer: bool, all_targets: bool, frame: int | None, as_json: bool
) -> None:
    """Pixel history: every fragment that reached pixel X,Y, in draw order, of the render target the picture
    shows, with its fate and the color before and after it.
    """
    x, y = _pixel(pixel)
    replay = drp.open(capture)
    fragments = replay.pixel_history(x, y, frame, all_targets=all_targets, **_pick(screen, eye, buffer))
    chosen = replay.debugger.frame(frame)
    if as_json:
        _echo_json(
            {
                "pixel": [x, y],
                "space": "buffer" if buffer else "screen",
                "screen": screen,
                "eye": eye,
                "frame": chosen,
                "fragments": [f.as_dict() for f in fragments],
            }
        )
        return
    click.echo(f"pixel ({x}, {y}), frame {chosen}: {len(fragments)} fragment(s)")

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.6f}"

    for f in fragments:
        click.echo(
            f"draw {f.draw:5d} prim {f.primitive if f.primitive is not None else '-':>5} depth "
            f"{num(f.depth):>9} {f.fate:<24} tev {f.tev} color {f.color_before} -> {f.color_after} "
            f"depth buffer {num(f.depth_before)} -> {num(f.depth_after)} target {f.target['address']}"
        )


@click.command("state", epilog=examples("picaemu state samples/captures/game_cubes_300.pica --draw 4 --diff 3 --json"))
@CAPTURE
@click.option("--draw", type=int, required=True, help="The draw whose state to show.")
@click.option("--diff", "other", type=int, default=None, help="Show only what differs from the state at draw M.")
@click.option(
    "--external",
    is_flag=True,
    help="The external GPU registers (memory fill, LCD framebuffer, transfer engine) at the draw instead.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='JSON instead of indented text: {"schema": 1, ...}, addresses as "0x1F000000" strings.',
)
@click.option(
    "--shader",
    type=click.Choice(UNITS),
    default=None,
    help="Print the program the unit runs at the draw as picasso source (for render --edit vs.shader=@F).",
)
@reports_errors
@compiles_kernels
def state(capture: Path, draw: int, other: int | None, external: bool, as_json: bool, shader: str | None) -> None:
    """Every stage's decoded state at a draw (vertex input, shaders, raster, textures, TEV, fog, lighting,
    per-fragment operations, render targets), or with --diff what differs from draw M (registers by field,
    uniforms c0..c95 / i0..i3 / b0..b15 by name, textures by binding and content hash, shader programs by
    disassembly, attribute buffers: docs/diff.md), or with --external the external GPU registers decoded by the
    register table.
    """
    exclusive(diff=other, shader=shader, external=external)
    exclusive(json=as_json, shader=shader)
    replay = drp.open(capture)
    if shader is not None:
        click.echo(replay.debugger.shader_source(draw, shader), nl=False)
        return
    if external:
        value = replay.external_registers(draw)
    else:
        value = replay.diff(other, draw) if other is not None else replay.pipeline_state(draw)
    if as_json:
        _echo_json(state_views.state_document(value))
    elif other is not None:
        print_difference(value, 0)
    else:
        _print_tree(value, 0)


def print_difference(diff: dict, depth: int) -> None:
    """A state difference (``picaemu.debug.state_diff``; docs/diff.md) as indented text, one line per register,
    uniform, texture or buffer with its value at A -> its value at B, the register's changed fields under it and
    program diffs line by line."""
    pad = "  " * depth
    for section, body in diff.items():
        click.echo(f"{pad}{section}:")
        for line in _difference_lines(section, body):
            click.echo(f"{pad}  {line}")


def _difference_lines(section: str, body: dict) -> list[str]:
    """The lines of one section of a state difference (``print_difference``)."""
    out: list[str] = []
    if section == "registers":
        for name, reg in body.items():
            out.append(f"{name} ({reg['id']}): {reg['a']} -> {reg['b']}")
            out.extend(f"  {field}: {a} -> {b}" for field, (a, b) in reg.get("fields", {}).items())
    elif section == "uniforms":
        for unit, regs in body.items():
            out.append(f"{unit}:")
            for reg, u in regs.items():
                label = f"{reg} ({u['name']})" if u.get("name") else reg
                out.append(f"  {label}: {u['a']} -> {u['b']}")
    elif section == "textures":
        for unit, tex in body.items():
            changed = tex.get("changed") or sorted(set(tex["a"]) | set(tex["b"]))
            parts = [f"{key} {tex['a'].get(key)} -> {tex['b'].get(key)}" for key in changed]
            out.append(f"unit {unit}: " + "; ".join(parts))
    elif section == "shaders":
        for unit, change in body.items():
            out.append(f"{unit}: {change['a']} -> {change['b']}")
            out.extend(f"  {line}" for line in change["diff"])
    else:  # attribute buffers and any section the schema adds later: {KEY: [a, b]}
        for key, value in body.items():
            pair = isinstance(value, list | tuple) and len(value) == 2
            out.append(f"{key}: {value[0]} -> {value[1]}" if pair else f"{key}: {value}")
    return out


def _print_tree(value: object, depth: int) -> None:
    pad = "  " * depth
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item and not _flat(item):
                click.echo(f"{pad}{key}:")
                _print_tree(item, depth + 1)
            else:
                click.echo(f"{pad}{key}: {item}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            click.echo(f"{pad}[{i}]:")
            _print_tree(item, depth + 1)
    else:
        click.echo(f"{pad}{value}")


def _flat(item: dict | list) -> bool:
    values = item.values() if isinstance(item, dict) else item
    return all(not isinstance(v, dict | list) or (_flat(v) and len(str(v)) < 80) for v in values)


@click.command("mesh", epilog=examples("picaemu mesh samples/captures/cube.pica --draw 0 --stage clipped --csv"))
@CAPTURE
@click.option("--draw", type=int, required=True)
@click.option(
    "--stage",
    type=click.Choice(STAGES),
    default="vs",
    show_default=True,
    help="input: loader output; vs / gs: shader output registers; clipped: clip-space triangles.",
)
@click.option(
    "--csv",
    "as_csv",
    is_flag=True,
    help="CSV instead of JSON: one row per vertex, columns named by semantic (position.x, color.r, texcoord0.u...).",
)
@reports_errors
@compiles_kernels
def mesh(capture: Path, draw: int, stage: str, as_csv: bool) -> None:
    """A draw's vertices at one stage of the geometry front end."""
    replay = drp.open(capture)
    if not as_csv:
        data = replay.mesh(draw, stage)
        _echo_json({"draw": draw, "stage": stage, "shape": list(data.shape), "vertices": data.tolist()})
        return
    names, rows = replay.debugger.mesh_table(draw, stage)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names if stage == "clipped" else ["vertex", *names])
    for v, row in enumerate(rows):
        values = [repr(float(c)) for c in row]
        writer.writerow([int(row[0]), int(row[1]), *values[2:]] if stage == "clipped" else [v, *values])
    click.echo(out.getvalue(), nl=False)


@click.command("trace", epilog=examples("picaemu trace samples/captures/triangle.pica --draw 0 --vertex 1"))
@CAPTURE
@click.option("--draw", type=int, required=True)
@click.option("--vertex", type=int, required=True, help="Vertex (or GS invocation with --unit gs).")
@click.option("--unit", type=click.Choice(UNITS), default="vs", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per step.")
@click.option(
    "--map",
    "map_path",
    type=click.Path(exists=True, dir_okay=False),
    help="the SHBIN (or its .shbin.map) the draw's shader came from: each step shows its source file:line",
)
@reports_errors
@compiles_kernels
def trace(capture: Path, draw: int, vertex: int, unit: str, as_json: bool, map_path: str | None) -> None:
    """One vertex through its shader, instruction by instruction: source values read, the result written under
    the destination mask (and, with --map, the source line of each instruction).
    """
    from picaemu.shader import linemap

    line_map, messages = linemap.caught(linemap.read, map_path) if map_path else (None, [])
    replay = drp.open(capture)
    steps, more = linemap.caught(replay.shader_trace, draw, vertex, unit, line_map)
    for message in messages + more:
        click.echo(f"warning: {message}", err=True)
    for step in steps:
        if as_json:
            click.echo(json.dumps(step))
        else:
            result = "" if step["result"] is None else f" -> {step['result']}"
            where = f"  ; {step['source']}" if "source" in step else ""
            click.echo(f"{step['pc']:04X}  {step['text']:<40} {step['sources']}{result}{where}")


def _call_sites_json(records: Sequence, draws: Sequence[int]) -> dict[str, object]:
    """{"call_sites": {draw: [frame, ...]}} for the draws of one event that have a recorded call site."""
    sites = {str(d): [vars(f) for f in records[d].call_site.frames] for d in draws if records[d].call_site}
    return {"call_sites": sites} if sites else {}


@click.command("dump", epilog=examples("picaemu dump samples/captures/triangle.pica"))
@CAPTURE
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event.")
@reports_errors
@compiles_kernels
def dump(capture: Path, as_json: bool) -> None:
    """Every event of a capture in order (like apitrace dump): GX commands, memory writes, frame ends, and the
    packets each command list ran, decoded (uniform uploads as vectors).
    """
    replay = drp.open(capture, checkpoints=False)
    from picaemu.debug.session import Session

    session = Session(replay)
    timeline = session.index()
    for event in timeline.events:
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "event": event.index,
                        "frame": event.frame,
                        "text": event.text,
                        "draws": list(event.draws),
                        "packets": len(event.packets),
                        **_call_sites_json(timeline.draws, event.draws),
                    }
                )
            )
            continue
        click.echo(
            f"#{event.index} [frame {event.frame}] {event.text}"
            + (f" draws {event.draws[0]}..{event.draws[-1]}" if event.draws else "")
        )
        uploads = UniformUploads()
        for packet in event.packets:
            for line in packet_text(packet) + uploads.lines(packet):
                click.echo(f"    {line}")
        for draw in event.draws:
            site = timeline.draws[draw].call_site
            if site is not None:
                click.echo(f"    draw {draw} called from {site.text()}")
    if session.fault is not None:
        raise PicaError(str(session.fault))


@click.command(
    "fragment", epilog=examples("picaemu fragment samples/captures/blending.pica --draw 1 --pixel 100,209 --json")
)
@CAPTURE
@click.option("--draw", type=int, required=True, help="The draw whose fragment to debug.")
@click.option("--pixel", required=True, metavar="X,Y", help="Column and row of the picture (row 0 = top).")
@_pick_options
@click.option(
    "--index",
    type=int,
    default=0,
    show_default=True,
    help="Which of the draw's fragments at the pixel (overlapping triangles), in rasterization order.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object (Debugger.debug_fragment's as_dict()).")
@reports_errors
@compiles_kernels
def fragment(
    capture: Path, draw: int, pixel: str, screen: str, eye: str, buffer: bool, index: int, as_json: bool
) -> None:
    """One fragment stage by stage: texture lookups (s, t, LOD, texel), lighting, each TEV stage's operands,
    output and combiner buffer, fog, every per-fragment test with the values it compared, and the buffers before
    and after.
    """
    x, y = _pixel(pixel)
    frag = drp.open(capture).debug_fragment(draw, x, y, index, **_pick(screen, eye, buffer))
    if as_json:
        _echo_json(frag.as_dict())
        return
    for line in report_lines(frag):
        click.echo(line)


@click.command("why", epilog=examples("picaemu why samples/captures/cube.pica --draw 0 --json"))
@CAPTURE
@click.option("--draw", type=int, required=True, help="The draw (global index; with --frame, its index in the frame).")
@click.option("--frame", type=int, default=None, help="Count --draw within this frame (from 0).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: draw, frame, verdict, stages, detail.")
@reports_errors
@compiles_kernels
def why(capture: Path, draw: int, frame: int | None, as_json: bool) -> None:
    """Where a draw's work went, stage by stage (vertices, triangles assembled, clipped, culled, zero-area,
    fragments rasterized, killed by scissor / alpha / stencil / depth, written, masked, overdrawn later in the
    frame, shown by a display transfer or present), and one verdict: the first stage that removed all of it, or
    visible; the detail names the register that decided it.
    """
    replay = drp.open(capture)  # held: the debugger refers to it weakly
    debugger = replay.debugger
    if frame is not None:
        draw = debugger.draw_of(frame, draw)
    answer = debugger.why(draw)
    if as_json:
        _echo_json(answer.as_dict())
        return
    click.echo(f"draw {answer.draw} (frame {answer.frame}): {answer.verdict}")
    click.echo(f"  {answer.detail}")
    for s in answer.stages:
        lost = f"  -{s.into - s.out}" if s.stage in REMOVING and s.out < s.into else ""
        click.echo(f"  {s.stage:<22} {s.into:>9} -> {s.out:<9} {s.unit}{lost}")
