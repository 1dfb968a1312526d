"""Debugger checkpoints: backward-step latency vs checkpoint memory for K (memory checkpoint every K draws).

Scene: one frame, one command list with N draws (flat 60x60 rectangles, the vertex-color shader) built with
``picaemu.builder.CaptureBuilder`` — the worst case for backward steps, since without mid-list checkpoints every
step back replays the list from its start. For each K: indexing time (``Session.index``: replay + per-draw state
copies + memory checkpoints), checkpoint memory (sparse 4 KiB pages), and the latency of stepping back one draw
(``Session.goto(after_draw(d - 1))`` from ``after_draw(d)``) and of a random jump, median and max.

Run: ``.venv/bin/python bench/bench_gui.py [--draws N] [--ks 1,2,4,8,16,32,64]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.debug.session import Session
from picaemu.replay import Replay

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the samples' shaders
from samples._common import VS_COLOR


def scene(draws: int) -> CaptureBuilder:
    b = CaptureBuilder()
    b.begin_frame(clear=(0, 0, 0, 255))
    b.shader(VS_COLOR)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    b.depth_test(False)
    rng = np.random.default_rng(1)
    pos, col = [], []
    for _ in range(draws):
        x0, y0 = rng.uniform(0, 340), rng.uniform(0, 180)
        x1, y1 = x0 + 60, y0 + 60
        pos += [
            [x0, y0, 0.5, 1],
            [x1, y0, 0.5, 1],
            [x1, y1, 0.5, 1],
            [x0, y0, 0.5, 1],
            [x1, y1, 0.5, 1],
            [x0, y1, 0.5, 1],
        ]
        col += [[*list(rng.uniform(0, 1, 3)), 1.0]] * 6
    b.vertices([np.array(pos, np.float32), np.array(col, np.float32)])
    for i in range(draws):
        b.draw(6, first=6 * i)
    b.end_frame()
    return b


def measure(cap, k: int) -> dict:
    s = Session(Replay(cap, checkpoints=False), memory_every=k)
    t = time.perf_counter()
    tl = s.index()
    index_s = time.perf_counter() - t
    n = len(tl.draws)
    back = []
    for d in range(n - 1, 0, -1):
        s.goto(tl.after_draw(d))
        t = time.perf_counter()
        s.goto(tl.after_draw(d - 1))
        back.append(time.perf_counter() - t)
    rng = np.random.default_rng(2)
    jumps = []
    for d in rng.integers(0, n, 32):
        t = time.perf_counter()
        s.goto(tl.after_draw(int(d)))
        jumps.append(time.perf_counter() - t)
    return {
        "k": k,
        "index_s": index_s,
        "checkpoints": len(s.checkpoints),
        "mib": s.checkpoint_bytes / 2**20,
        "back_med": statistics.median(back),
        "back_max": max(back),
        "jump_med": statistics.median(jumps),
        "jump_max": max(jumps),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=64)
    ap.add_argument("--ks", default="1,2,4,8,16,32,64")
    args = ap.parse_args()
    cap = scene(args.draws).capture()
    measure(cap, 64)  # warm numba caches
    print(f"{args.draws} draws in one command list")
    print(
        "| K | index s | checkpoints | checkpoint MiB | back 1 draw median ms | max ms | random jump median ms "
        "| max ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.ks.split(",")):
        r = measure(cap, k)
        print(
            f"| {r['k']} | {r['index_s']:.2f} | {r['checkpoints']} | {r['mib']:.1f} | {1e3 * r['back_med']:.1f} | "
            f"{1e3 * r['back_max']:.1f} | {1e3 * r['jump_med']:.1f} | {1e3 * r['jump_max']:.1f} |"
        )


if __name__ == "__main__":
    main()
