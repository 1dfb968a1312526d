"""numba's first-run cost: compiling into an empty on-disk cache (a fresh install), and loading from that cache.

Each case runs in a new interpreter with its own ``NUMBA_CACHE_DIR``, twice: first with the directory empty, then
again with what the first run left there. Printed per run: the import time (Python, numpy, numba, picaemu),
the time of the first draw or command, and the part of it that numba spent compiling (its "numba:compile"
events; 0 when everything came from the cache).

Cases: a first 4-vertex draw through ``Pipeline`` with the primary-color stages (vertex loader, identity vertex
shader, clipping, rasterizer, depth test, color write: the kernels of issue #4), the same draw with the default
shading (+ TEV, fog, blending), and the README's main job ``picaemu render samples/captures/triangle.pica`` (+ the
command processor and the shader interpreter).

Run: ``.venv/bin/python bench/bench_compile.py [--repeat N] [--cases 1 2 3]`` (``--cases 1``: the quickest case).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PRELUDE = """
import json, sys, time
t0 = time.perf_counter()
from numba.core import event
compiling = event.TimingListener()
event.register("numba:compile", compiling)
"""
_DRAW = (
    _PRELUDE
    + """
sys.path.insert(0, {bench!r})
import numpy as np
import bench_raster as br
from picaemu.draw import DrawCall, DrawKind
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline, PrimaryColorStages
t1 = time.perf_counter()
mem = PhysicalMemory()
mem.write(br.VBO, br.triangles(4, 6.4, np.random.default_rng(1), True).tobytes())
pipe = Pipeline(br.identity_vs, lambda s: PrimaryColorStages()) if {primary} else Pipeline(br.identity_vs)
pipe.draw(DrawCall(0, DrawKind.ARRAYS, br.make_state(12), mem))
t2 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, compiling.duration if compiling.done else 0.0]))
"""
)
_RENDER = (
    _PRELUDE
    + """
from picaemu.cli import main
t1 = time.perf_counter()
main(["render", {capture!r}, "-o", {out!r}], standalone_mode=False)
t2 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, compiling.duration if compiling.done else 0.0]))
"""
)


def _run(snippet: str, cache: str) -> tuple[float, float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run(
        [sys.executable, "-c", snippet], env=env, capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="fresh-cache rounds per case")
    ap.add_argument(
        "--cases", nargs="*", type=int, help="only these cases, by number from 1 (the order printed): 1 is quickest"
    )
    args = ap.parse_args()
    bench = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "first draw, primary color": _DRAW.format(bench=bench, primary=True),
            "first draw, default shading": _DRAW.format(bench=bench, primary=False),
            "picaemu render triangle.pica": _RENDER.format(
                capture="samples/captures/triangle.pica", out=os.path.join(tmp, "t.png")
            ),
        }
        chosen = [name for k, name in enumerate(cases, 1) if not args.cases or k in args.cases]
        for name in chosen:
            snippet = cases[name]
            for _ in range(args.repeat):
                cache = tempfile.mkdtemp(dir=tmp)
                for label in ("fresh cache", "from cache"):
                    imp, first, comp = _run(snippet, cache)
                    print(
                        f"{name:30s} {label:11s}: import {imp:5.2f} s | first call {first:5.2f} s "
                        f"(numba compiling {comp:5.2f} s)"
                    )


if __name__ == "__main__":
    main()
