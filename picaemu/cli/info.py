"""``picaemu info CAPTURE``: what a capture holds, without rendering it (``picaemu.replay.info``): format and
version, frames, events by kind, draws per frame, memory, shader programs, textures and the screens presented;
``--json`` prints ``CaptureInfo.as_dict()``.

``picaemu trim CAPTURE --frames A-B -o OUT.pica``: frames A..B as a capture of their own (``picaemu.replay.trim``:
the state at the start of frame A becomes the initial state), written atomically; the input is never overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from picaemu.cli.common import compile_notes, compiles_kernels, examples, info, reports_errors

GAME = "tests/data/games/minicraft.pica"


def _runs(counts: list[int]) -> str:
    """``[8, 8, 8, 12]`` -> ``"8 x3, 12"``: equal neighbours counted once."""
    parts: list[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j < len(counts) and counts[j] == counts[i]:
            j += 1
        parts.append(f"{counts[i]} x{j - i}" if j - i > 1 else str(counts[i]))
        i = j
    return ", ".join(parts) or "none"


def _text(d: dict[str, Any]) -> list[str]:
    """The readable form of ``CaptureInfo.as_dict()``."""
    mem = d["memory"]
    lines = [
        f"{d['path']}: {d['format']['kind']} {d['format']['version']}, {d['bytes']} bytes",
        f"frames: {d['frames']}",
        f"events: {sum(d['events'].values())} ("
        + ", ".join(f"{kind} {count}" for kind, count in d["events"].items())
        + ")",
        f"draws: {d['draws']}; per frame: {_runs(d['draws_per_frame'])}"
        + (f"; after the last frame end: {d['draws_after_last_frame']}" if d["draws_after_last_frame"] else ""),
        f"memory: {mem['initial_blocks']} initial blocks ({mem['initial_bytes']} bytes), {mem['writes']} writes "
        f"({mem['write_bytes']} bytes), {mem['distinct_contents']} distinct contents ({mem['distinct_bytes']} bytes)",
        f"shaders: {len(d['shaders'])}",
        *(f"  {row['program']}  {row['draws']} draws ({row['first']}..{row['last']})" for row in d["shaders"]),
        f"textures: {len(d['textures'])}",
        *(
            f"  {row['address']} {row['format']} {row['width']}x{row['height']} {row['type']}  {row['draws']} draws "
            f"({row['first']}..{row['last']})"
            for row in d["textures"]
        ),
        "screens: " + ("none presented" if not d["screens"] else ""),
        *(
            f"  {name}: {row['presents']} presents, {'/'.join(row['formats'])}, framebuffers "
            + " ".join(row["framebuffers"])
            for name, row in d["screens"].items()
        ),
    ]
    return [line.rstrip() for line in lines]


@click.command(
    "info",
    epilog=examples(
        f"picaemu info {GAME}",
        f"picaemu info {GAME} --json",
        "picaemu info tests/data/captures/scene1_triangle",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object (schema 1).")
@reports_errors
def info_command(capture: Path, as_json: bool) -> None:
    """What CAPTURE holds, without rendering it: format and version, frames, events by kind, draws per frame,
    memory blocks and bytes, shader programs (by hash), textures (address, format, size), screens presented."""
    from picaemu.replay.info import capture_info

    answer = capture_info(capture, replaying=compile_notes).as_dict()
    if as_json:
        click.echo(json.dumps(answer))
        return
    for line in _text(answer):
        click.echo(line)


@click.command(
    "trim",
    epilog=examples(
        f"picaemu trim {GAME} --frames 20-22 -o minicraft_20-22.pica",
        "picaemu trim samples/captures/animation.pica --frames 2 -o frame2.pica",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option("--frames", "frames", required=True, metavar="A-B", help="The frames to keep (A-B or A, from 0).")
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The .pica to write."
)
@reports_errors
@compiles_kernels
def trim_command(capture: Path, frames: str, output: Path) -> None:
    """Cut CAPTURE down to frames A..B: a .pica whose replay of those frames gives the original's pictures, the
    GPU state and memory at the start of frame A folded into its initial state."""
    from picaemu.formats import pica
    from picaemu.formats.files import refuse_overwrite
    from picaemu.replay import load_capture
    from picaemu.replay.trim import parse_frames, trim

    if output.suffix.lower() != ".pica":
        raise click.UsageError(f"-o {output}: a trimmed capture is a .pica file")
    first, last = parse_frames(frames)
    refuse_overwrite(output, capture)
    trimmed = trim(load_capture(capture), first, last, source=capture.name)
    pica.write(output, trimmed)
    info(f"{output}: frames {first}-{last} of {capture} as frames 0-{last - first}, {output.stat().st_size} bytes")
