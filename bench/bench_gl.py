"""OpenGL backend vs the software pipeline, per frame, on the game-like scenes of ``samples/game_scene.py`` (and,
for the floor, the software pipeline with its fragment stages skipped: vertex loading, shader unit, clipping and
draw state alone, which both backends pay).

Time = best of ``--runs`` replays of the whole frame after one warm-up replay (numba's compile cache, GL program
compiles, texture uploads), each from the initial state (``run_to(0)``, not timed); the GL time includes writing
the render targets back to memory at the frame's display transfer. The two pictures are compared
(``picaemu.gl.compare``). Run from the repository root: ``python bench/bench_gl.py [--runs 5] [--scenes ...]``.
Prints a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_frame import frame_s  # noqa: E402  (bench/ is the script's directory)

from picaemu.gl.compare import compare  # noqa: E402
from picaemu.pipeline import Pipeline  # noqa: E402
from picaemu.replay import default_pipeline  # noqa: E402
from samples.game_scene import SCENES  # noqa: E402


class VertexOnly(Pipeline):
    """The software pipeline up to window triangles (no rasterization, no fragment stage)."""

    def _fragments(self, call, wt, stats) -> None:  # type: ignore[no-untyped-def]
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scenes", nargs="*", default=list(SCENES))
    args = parser.parse_args()
    print("| scene | software ms | GL ms | speed-up | vertex side alone ms | GL draws | GL vs software |")
    print("|---|---|---|---|---|---|---|")
    for name in args.scenes:
        capture = SCENES[name]()
        software, _, sw_image = frame_s(capture, args.runs, default_pipeline("software"))
        gl_pipe = default_pipeline("gl")
        gl, _, gl_image = frame_s(capture, args.runs, gl_pipe)
        floor, _, _ = frame_s(capture, args.runs, VertexOnly())
        diff = compare(sw_image, gl_image)
        print(
            f"| {name} | {software * 1e3:.1f} | {gl * 1e3:.1f} | x{software / gl:.2f} | {floor * 1e3:.1f} | "
            f"{gl_pipe.gl_draws // (args.runs + 1)} | max {diff.max_error}, {100 * diff.share_over:.2f} % > 2 |",
            flush=True,
        )


if __name__ == "__main__":
    main()
