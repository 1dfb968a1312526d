"""``picaemu diff-backends CAPTURE -o DIR``: render a capture with the software and the OpenGL backends and write
both pictures and their difference (``picaemu.gl.compare``).

Writes DIR/software.png, DIR/gl.png and DIR/difference.png (gray = 16 x the per-pixel difference, red over 2
levels), each atomically; prints the figures (max error, share of pixels over 2 levels, PSNR) and the draws the GL
backend handed to the software pipeline, by rule. ``--frame N`` compares the state after frame N, ``--target
color`` the render target instead of the top screen. ``--draw N`` compares one draw instead: the render target
right after draw N, drawn by each backend from the same state before it (the debugger's answer,
``picaemu.debug.backend_diff``; the line names the rule when GL handed the draw to the software pipeline).
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from picaemu.cli.common import compiles_kernels, examples, reports_errors
from picaemu.draw import PipelineSink
from picaemu.formats.files import save_image


def render_with(path: Path, backend: str, frame: int | None, target: str) -> tuple[np.ndarray, PipelineSink]:
    """(picture, the replay's pipeline) of one backend."""
    from picaemu.replay import open as open_capture

    replay = open_capture(path, checkpoints=False, record_draws=False, backend=backend)
    if frame is None:
        replay.run()
    else:
        replay.run_to_frame(frame)
    image = replay.screen() if target == "screen" else np.ascontiguousarray(replay.color_buffer()[:, :, :3])
    return image, replay.pipeline


def _one_draw(capture: Path, out_dir: Path, draw: int) -> None:
    from picaemu.debug.replay import open as open_capture

    replay = open_capture(capture)  # kept: the debugger holds it weakly
    d = replay.debugger.backend_diff(draw)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, image in (("software", d.software[:, :, :3]), ("gl", d.gl[:, :, :3]), ("difference", d.difference)):
        save_image(out_dir / f"{name}.png", np.ascontiguousarray(image))
    click.echo(d.summary())


@click.command(
    "diff-backends",
    epilog=examples(
        "picaemu diff-backends samples/captures/animation.pica -o diff/ --frame 2",
        "picaemu diff-backends samples/captures/game_lit_300.pica -o diff/ --draw 41",
    ),
)
@click.argument("capture", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory for software.png, gl.png and difference.png.",
)
@click.option("--frame", type=int, default=None, help="Compare the state after frame N (default: the end).")
@click.option(
    "--target",
    type=click.Choice(["screen", "color"]),
    default="screen",
    show_default=True,
    help="The top screen, or the render target the registers name.",
)
@click.option("--draw", type=int, default=None, help="Compare one draw (its render target right after it).")
@reports_errors
@compiles_kernels
def diff_backends(capture: Path, out_dir: Path, frame: int | None, target: str, draw: int | None) -> None:
    """Render CAPTURE with both backends; write the two pictures and their difference."""
    from picaemu.gl.compare import compare, difference_image

    if draw is not None:
        _one_draw(capture, out_dir, draw)
        return
    gl_image, gl_pipeline = render_with(capture, "gl", frame, target)
    sw_image, _ = render_with(capture, "software", frame, target)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_image(out_dir / "software.png", sw_image)
    save_image(out_dir / "gl.png", gl_image)
    save_image(out_dir / "difference.png", difference_image(sw_image, gl_image))
    click.echo(f"{capture.name}: {compare(sw_image, gl_image).line()}")
    from picaemu.gl.backend import GLPipeline

    assert isinstance(gl_pipeline, GLPipeline)
    click.echo(
        f"GL draws: {gl_pipeline.gl_draws}; software fallbacks: "
        + (", ".join(f"{n} x {rule}" for rule, n in gl_pipeline.fallbacks.items()) or "none")
    )
