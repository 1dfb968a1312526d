"""Capture rendering for ``picaemu render CAPTURE -o OUT.png`` (CAPTURE: .pica, .ctf or a c3dcap directory).

``picaemu.cli.render`` hands over when its argument is a capture (``is_capture``); the options live here
(``capture_options``). Default: what the top screen shows at the end of the capture, 400x240 upright. Options:
``--screen top|bottom``, ``--eye left|right``, ``--target screen|color|depth|stencil`` (color = the render target
the registers name, row 0 = top; depth = depth / format maximum as 8-bit gray; stencil = raw 8-bit gray),
``--frame N`` (state right after FrameEnd N), ``--all-frames`` (one PNG per frame: OUT_0000.png ..., or a name with
``{frame}``), ``--draw N`` (state right after draw N; the target defaults to color then), ``--every-draw`` (the
color buffer after every draw, OUT_draw00000.png ... or a name with ``{draw}``, in one forward pass: apitrace's
dump-images), ``--edit DRAW:EDIT`` (repeatable; edit and replay, ``picaemu.debug.edit_replay``: the color buffer
draw DRAW renders into, at the end of its frame, re-rendered with the edits made at DRAW; ``--edit-scope
from|draw``, ``--original FILE`` and ``--diff FILE`` also write the unedited picture and the diff; a summary goes to
stderr). render's ``--depth FILE``
also writes the final depth buffer; ``--mem``/``--fill``/``--base`` are refused with a capture.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from picaemu import replay as rp
from picaemu.cli.common import is_quiet
from picaemu.debug.edits import SCOPES
from picaemu.draw import DrawCall, PipelineEventKind, PipelineSink
from picaemu.errors import EditError
from picaemu.formats.files import refuse_overwrite, save_image
from picaemu.fragment.framebuffer import depth_max, read_color_image
from picaemu.state import GpuState

TARGETS = ("screen", "color", "depth", "stencil")


def capture_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Click options of capture rendering (added to ``picaemu render``)."""
    options = [
        click.option(
            "--screen",
            type=click.Choice(["top", "bottom"]),
            default="top",
            show_default=True,
            help="Capture: which LCD to show.",
        ),
        click.option("--eye", type=click.Choice(["left", "right"]), default="left", help="Capture: stereo eye."),
        click.option(
            "--target",
            type=click.Choice(TARGETS),
            default=None,
            help="Capture: the screen (default) or the GPU's own color/depth/stencil buffer.",
        ),
        click.option("--frame", type=int, default=None, help="Capture: render the state after frame N."),
        click.option("--all-frames", is_flag=True, help="Capture: one PNG per frame (OUT_0000.png, ...)."),
        click.option(
            "--backend",
            type=click.Choice(rp.BACKENDS),
            default="software",
            show_default=True,
            help="Rendering backend: the software pipeline (the reference) or OpenGL through EGL.",
        ),
        click.option("--draw", type=int, default=None, help="Capture: render the state right after draw N."),
        click.option(
            "--every-draw",
            is_flag=True,
            help="Capture: the color buffer after every draw, one PNG each (OUT_draw00000.png, ...).",
        ),
        click.option(
            "--edit",
            "edits",
            multiple=True,
            metavar="DRAW:EDIT",
            help="Capture: edit and replay at draw DRAW: REG.field=VALUE, REG=WORD, [vs.|gs.]cN=(x,y,z,w) "
            "or vs.shader=@FILE.vsh (repeatable, one draw); OUT is its frame re-rendered.",
        ),
        click.option(
            "--edit-scope",
            type=click.Choice(SCOPES),
            default="from",
            show_default=True,
            help="Edits hold from the draw on, or for the draw only.",
        ),
        click.option(
            "--original",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="With --edit: also write the unedited picture.",
        ),
        click.option(
            "--diff",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="With --edit: also write the diff picture (changed pixels red).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def is_capture(path: Path) -> bool:
    """A capture, or a file named like one (a foreign ``.pica`` fails as ``NotACapture``, not as command words)."""
    return rp.claims_capture(path)


def capture_image(
    replay: rp.Replay, target: str = "screen", screen: str = "top", eye: str = "left", alpha: bool = False
) -> np.ndarray:
    """The picture ``target`` of the replay's current state (uint8, (H, W, 3|4) or (H, W))."""
    if target == "screen":
        return replay.screen(screen, eye)
    if target == "color":
        image = replay.color_buffer()
        return image if alpha else np.ascontiguousarray(image[:, :, :3])
    depth, stencil = replay.depth_buffer()
    if target == "stencil":
        return stencil
    fmt = replay.framebuffer_state().depth_format
    return np.rint(depth.astype(np.float64) * (255.0 / depth_max(fmt))).astype(np.uint8)


def frame_path(output: Path, frame: int) -> Path:
    if "{frame" in output.name:
        return output.with_name(output.name.format(frame=frame))
    return output.with_name(f"{output.stem}_{frame:04d}{output.suffix}")


def draw_path(output: Path, draw: int) -> Path:
    if "{draw" in output.name:
        return output.with_name(output.name.format(draw=draw))
    return output.with_name(f"{output.stem}_draw{draw:05d}{output.suffix}")


class _EveryDraw:
    """A pipeline sink that, after each draw, writes the color buffer the draw rendered into (``draw_path``)."""

    def __init__(self, inner: PipelineSink, output: Path, source: Path, alpha: bool, written: list[Path]) -> None:
        self.inner, self.output, self.source, self.alpha, self.written = inner, output, source, alpha, written

    def draw(self, call: DrawCall) -> None:
        self.inner.draw(call)
        self.inner.event(PipelineEventKind.MEMORY_SYNC, call.state)  # a GL backend writes its targets back
        image = read_color_image(call.memory, call.draw_state.need("framebuffer"))
        dest = draw_path(self.output, call.index)
        refuse_overwrite(dest, self.source)
        save_image(dest, image if self.alpha else np.ascontiguousarray(image[:, :, :3]))
        self.written.append(dest)

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.inner.event(kind, state)


def render_capture(
    path: Path,
    output: Path,
    *,
    screen: str = "top",
    eye: str = "left",
    target: str | None = None,
    frame: int | None = None,
    all_frames: bool = False,
    draw: int | None = None,
    alpha: bool = False,
    verbose: bool = False,
    depth_output: Path | None = None,
    every_draw: bool = False,
    backend: str = "software",
    edits: tuple[str, ...] = (),
    edit_scope: str = "from",
    original: Path | None = None,
    diff: Path | None = None,
) -> list[Path]:
    """Replay ``path`` and write the requested PNG(s); returns the files written. ``depth_output`` (render's
    ``--depth``) also writes the depth buffer of the final state as gray."""
    if edits:
        return render_edited(path, output, edits, edit_scope, original, diff, alpha)
    if original is not None or diff is not None:
        raise click.UsageError("--original and --diff go with --edit")
    # a first run on a machine with a second core compiles the fragment side there meanwhile
    second_compiler: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if backend == "software":
        from picaemu.fused import prewarm  # (its imports are the software route's)

        second_compiler = prewarm.beside(path)
    with second_compiler:
        start = time.perf_counter()
        # a forward-only run keeps no checkpoint and, unless it must find a draw, no per-draw record: memory stays
        # flat however many frames the capture holds
        written: list[Path] = []
        sink = _EveryDraw(rp.default_pipeline(backend), output, path, alpha, written) if every_draw else None
        replay = rp.open(path, checkpoints=False, record_draws=draw is not None, pipeline=sink, backend=backend)
        chosen = target or ("color" if draw is not None else "screen")

        def save(dest: Path) -> None:
            refuse_overwrite(dest, path)
            save_image(dest, capture_image(replay, chosen, screen, eye, alpha))
            written.append(dest)
            if verbose:
                click.echo(
                    f"{dest}: event {replay.position}/{len(replay.events)}, {replay.draw_count} draws, "
                    f"{time.perf_counter() - start:.2f} s",
                    err=True,
                )

        if every_draw:
            replay.run()  # the sink wrote a picture after every draw
        elif draw is not None:
            replay.run_to_draw(draw)
            save(output)
        elif all_frames:
            with contextlib.ExitStack() as stack:
                progress = stack.enter_context(open(os.devnull, "w")) if is_quiet() else sys.stderr
                frames = stack.enter_context(
                    click.progressbar(range(len(replay.frames)), label="rendering frames", file=progress, show_pos=True)
                )
                for i in frames:
                    replay.run_to_frame(i)
                    save(frame_path(output, i))
        elif frame is not None:
            replay.run_to_frame(frame)
            save(output)
        else:
            replay.run()
            save(output)
        if depth_output is not None:
            save_image(depth_output, capture_image(replay, "depth"))
            written.append(depth_output)
        return written


def split_edit(spec: str) -> tuple[int, str]:
    """``DRAW:EDIT`` -> (draw, edit text)."""
    draw, _, text = spec.partition(":")
    try:
        return int(draw, 0), text
    except ValueError:
        raise EditError(f"--edit {spec!r}: expected DRAW:EDIT, e.g. 12:DEPTH_COLOR_MASK.depth_func=always") from None


def render_edited(
    path: Path, output: Path, specs: tuple[str, ...], scope: str, original: Path | None, diff: Path | None, alpha: bool
) -> list[Path]:
    """``--edit``: the edited picture to ``output`` (and the original / diff when asked); a summary on stderr."""
    parsed = [split_edit(spec) for spec in specs]
    draws = {draw for draw, _ in parsed}
    if len(draws) > 1:
        raise EditError(f"--edit names draws {sorted(draws)}: one edit-and-replay run edits one draw")
    for dest in (output, original, diff):
        if dest is not None:
            refuse_overwrite(dest, path)
    from picaemu.debug import replay as drp  # the debugger only for --edit: a plain render does not import it

    result = drp.open(path).edit(draws.pop(), [text for _, text in parsed], scope)
    written = []
    for dest, image in ((output, result.edited), (original, result.original), (diff, result.diff)):
        if dest is not None:
            save_image(dest, image if alpha or image.shape[2] == 3 else np.ascontiguousarray(image[:, :, :3]))
            written.append(dest)
    if not is_quiet():

        def written_by(stats: dict) -> int:
            return stats.get("fragments_written", 0)

        click.echo(
            f"draw {result.draw} ({scope}): {result.draws_replayed} draws replayed, {result.changed_pixels} "
            f"pixels changed; fragments written {written_by(result.stats_original)} -> "
            f"{written_by(result.stats_edited)} at the draw, {written_by(result.totals_original)} -> "
            f"{written_by(result.totals_edited)} to the end of the frame",
            err=True,
        )
    return written
