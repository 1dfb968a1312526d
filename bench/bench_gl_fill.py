"""Fill-heavy single draws, software pipeline vs OpenGL backend: the procedural texture and a mip-mapped texture
unit over a full 400x240 perspective mesh (the random scenes of tests/test_gl_proctex.py and
tests/test_gl_texture_lod.py, enlarged). Time = best of ``--runs`` draws of the same state into the same memory;
GL includes a ``glFinish`` (its fragments are shaded), not the write-back of the target. Run from the repository
root: ``python bench/bench_gl_fill.py [--runs 6]``; prints one line per scene for bench/results/gl.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tests.test_gl_proctex as proctex_scene  # noqa: E402
import tests.test_gl_texture_lod as lod_scene  # noqa: E402
from picaemu.draw import DrawCall, DrawKind  # noqa: E402
from picaemu.memory import PhysicalMemory  # noqa: E402
from picaemu.pipeline import Pipeline  # noqa: E402
from tests.test_lighting_golden import COLOR_ADDR, VBO, identity_vs, put  # noqa: E402

SIZE = (400, 240)
SCENES = (
    ("procedural texture", proctex_scene, 0),
    ("procedural texture", proctex_scene, 1),
    ("mip-mapped unit", lod_scene, 0),
    ("mip-mapped unit", lod_scene, 3),
)


def best_ms(pipeline: Pipeline, state: object, vertices: np.ndarray, data: dict[int, bytes], runs: int) -> float:
    from OpenGL import GL as gl

    mem = PhysicalMemory()
    for address, blob in data.items():
        mem.write(address, blob)
    mem.write(COLOR_ADDR, bytes(SIZE[0] * SIZE[1] * 4))
    mem.write(VBO, np.ascontiguousarray(vertices, np.float32).tobytes())
    put(state, "NUMVERTICES", count=len(vertices))
    put(state, "PRIMITIVE_CONFIG", topology=0)
    best = float("inf")
    for index in range(runs):
        start = time.perf_counter()
        pipeline.draw(DrawCall(index, DrawKind.ARRAYS, state, mem))
        if hasattr(pipeline, "sync"):
            gl.glFinish()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    from picaemu.gl.backend import GLPipeline

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    proctex_scene.SIZE = lod_scene.SIZE = SIZE  # the scene builders read the module's framebuffer size
    for name, module, seed in SCENES:
        state, scale = module.random_state(seed)
        vertices = proctex_scene.mesh(scale)
        data = {}
        if module is lod_scene:
            size = lod_scene.TEX_SIZE * lod_scene.TEX_SIZE * 8
            data = {lod_scene.TEX_ADDR: np.random.default_rng(seed).integers(0, 256, size, np.uint8).tobytes()}
        software = best_ms(Pipeline(vertex_shader=identity_vs), state.copy(), vertices, data, args.runs)
        gl = best_ms(GLPipeline(vertex_shader=identity_vs), state.copy(), vertices, data, args.runs)
        print(f"| {name} (seed {seed}) | {software:.1f} | {gl:.1f} | x{software / gl:.1f} |")


if __name__ == "__main__":
    main()
