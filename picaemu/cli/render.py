"""``picaemu render CMDLIST.bin --mem ADDR=FILE ... -o OUT.png``: run a command list, save the color buffer.

Steps (each a small function, so that a whole-capture replay can reuse them): load memory blocks and fills,
run the command list through ``CommandProcessor`` with the rendering ``Pipeline``, then read the render target
the framebuffer registers name (after the run) and write it as a PNG whose row 0 is the top of the window
(window y grows upward). ``--depth`` writes the depth buffer as 8-bit grayscale, depth / format maximum.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
import numpy as np

from picaemu.cli.common import INT, compiles_kernels, exclusive, load_memory_blocks, quiet_option, reports_errors
from picaemu.cli.render_capture import capture_options, is_capture, render_capture
from picaemu.command.processor import CommandProcessor
from picaemu.draw import CompiledSink, DrawCall, PipelineEventKind, PipelineSink, is_compiled_sink
from picaemu.errors import FormatError
from picaemu.formats.files import image_format, is_stdout, refuse_overwrite, save_image
from picaemu.fragment.framebuffer import FramebufferState, depth_max, read_color_image, read_depth_image
from picaemu.memory import PhysicalMemory
from picaemu.replay import default_pipeline
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.fused.loop import CompiledDraws, CompiledPlans

WORD_MASK = 0xFFFFFFFF


class VerbosePipeline:
    """A ``Pipeline`` that reports every draw (counters and time) on stderr."""

    def __init__(self, pipeline: PipelineSink, verbose: bool) -> None:
        self.pipeline = pipeline
        self.verbose = verbose
        self.draws = 0

    def draw(self, call: DrawCall) -> None:
        self.pipeline.draw(call)
        self.draws += 1
        if self.verbose:
            self.pipeline.event(PipelineEventKind.MEMORY_SYNC, call.state)  # the draw's counters are complete
            s = call.stats
            click.echo(
                f"draw #{call.index} {call.kind.value}: {s['vertices']} vertices, "
                f"{s['primitives_rasterized']} triangles, {s['fragments_rasterized']} fragments, "
                f"{s['fragments_written']} written, {1000 * s['time_s']:.1f} ms",
                err=True,
            )

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        self.pipeline.event(kind, state)

    def compiled_plans(self, call: DrawCall) -> CompiledPlans | None:
        """The inner pipeline's plans (``picaemu.draw.CompiledSink``) unless every draw is reported."""
        if self.verbose or not is_compiled_sink(self.pipeline):
            return None
        return self.pipeline.compiled_plans(call)

    def compiled_allowed(self) -> bool:
        return not self.verbose and is_compiled_sink(self.pipeline) and self.pipeline.compiled_allowed()

    def compiled_draws(self, draws: CompiledDraws) -> None:
        cast(CompiledSink, self.pipeline).compiled_draws(draws)  # it offered the plans: a CompiledSink
        self.draws += len(draws)


def apply_fills(memory: PhysicalMemory, specs: tuple[str, ...]) -> None:
    """``ADDR:SIZE=VALUE`` fills: SIZE bytes from ADDR with the little-endian 32-bit VALUE repeated."""
    for spec in specs:
        where, sep, value_text = spec.partition("=")
        addr_text, sep2, size_text = where.partition(":")
        try:
            address, size, value = int(addr_text, 0), int(size_text, 0), int(value_text, 0)
        except ValueError:
            raise FormatError(f"--fill wants ADDR:SIZE=VALUE, got {spec!r}") from None
        if not (sep and sep2) or size % 4 or size < 0 or not 0 <= value <= WORD_MASK:
            raise FormatError(f"--fill wants ADDR:SIZE=VALUE with SIZE a multiple of 4 and a 32-bit VALUE: {spec!r}")
        memory.view(address, size // 4, np.uint32, f"--fill {spec}")[:] = value


def save_color(memory: PhysicalMemory, fb: FramebufferState, path: Path, alpha: bool) -> None:
    image = read_color_image(memory, fb)
    save_image(path, image if alpha else image[:, :, :3])


def save_depth(memory: PhysicalMemory, fb: FramebufferState, path: Path) -> None:
    depth, _ = read_depth_image(memory, fb)
    gray = np.rint(depth.astype(np.float64) * (255.0 / depth_max(fb.depth_format))).astype(np.uint8)
    save_image(path, gray)


EXAMPLES = """
Examples:

\b
  picaemu render samples/captures/cube.pica -o cube.png
  picaemu render samples/captures/animation.pica -o anim.png --all-frames
  picaemu render samples/captures/cube.pica -o draw.png --draw 0 --target depth
  picaemu render samples/captures/triangle.pica -o - > triangle.png
  picaemu render samples/captures/game_cubes_300.pica -o e.png --edit '5:DEPTH_COLOR_MASK.depth_func=always'
"""


@click.command("render", epilog=EXAMPLES)
@click.argument("cmdlist", type=click.Path(exists=True, path_type=Path))
@click.option("--mem", "mem", multiple=True, metavar="ADDR=FILE", help="Load FILE into emulated memory at ADDR.")
@click.option(
    "--fill",
    "fills",
    multiple=True,
    metavar="ADDR:SIZE=VALUE",
    help="Fill SIZE bytes at ADDR with a 32-bit VALUE (a GX memory fill), after --mem.",
)
@click.option("--base", type=INT, default=0, help="Physical address of the command list (for jumps); default 0.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    required=True,
    help="PNG of the color buffer (row 0 = top); - for stdout.",
)
@click.option(
    "--depth",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the depth buffer as a grayscale PNG.",
)
@click.option("--alpha", is_flag=True, help="Keep the alpha channel in the color PNG (RGBA).")
@click.option("-v", "--verbose", is_flag=True, help="Progress and timing on stderr.")
@capture_options
@quiet_option
@reports_errors
@compiles_kernels
def render(
    cmdlist: Path,
    mem: tuple[str, ...],
    fills: tuple[str, ...],
    base: int,
    output: Path,
    depth: Path | None,
    alpha: bool,
    verbose: bool,
    **capture: object,
) -> None:
    """Run the command list CMDLIST (little-endian u32 words) and write the color buffer to a PNG.

    CMDLIST may also be a capture (.pica, CiTrace .ctf, c3dcap directory): then the top screen is written.
    """
    exclusive(
        frame=capture.get("frame"),
        draw=capture.get("draw"),
        all_frames=capture.get("all_frames"),
        every_draw=capture.get("every_draw"),
        edit=capture.get("edits"),
    )
    if is_stdout(output) and (
        capture.get("all_frames") or capture.get("every_draw") or (depth is not None and is_stdout(depth))
    ):
        raise click.UsageError("-o - writes one picture to stdout: not with --all-frames, --every-draw or --depth -")
    for out in (output, depth):
        if out is not None:
            image_format(out)  # an unknown suffix fails now, not after the replay
            refuse_overwrite(out, cmdlist, *(spec.partition("=")[2] for spec in mem))
    backend = str(capture.pop("backend", "software"))
    if is_capture(cmdlist):
        if mem or fills or base:
            raise FormatError("--mem, --fill and --base apply to a command list, not to a capture")
        render_capture(cmdlist, output, alpha=alpha, verbose=verbose, depth_output=depth, backend=backend, **capture)  # type: ignore[arg-type]
        return
    start = time.perf_counter()
    memory = PhysicalMemory()
    load_memory_blocks(memory, mem)
    apply_fills(memory, fills)
    sink = VerbosePipeline(default_pipeline(backend), verbose)
    processor = CommandProcessor(memory, sink)
    result = processor.run(cmdlist.read_bytes(), address=base)
    sink.event(PipelineEventKind.MEMORY_SYNC, processor.state)  # a GL backend writes its targets back
    fb = FramebufferState.from_regs(processor.state.regs)
    fb.check_size()
    save_color(memory, fb, output, alpha)
    if depth is not None:
        save_depth(memory, fb, depth)
    if verbose:
        click.echo(
            f"{result.packets} packets, {sink.draws} draws, {fb.width}x{fb.height} "
            f"{fb.color_format.name} -> {output} in {time.perf_counter() - start:.2f} s",
            err=True,
        )
    sys.stdout.flush()
