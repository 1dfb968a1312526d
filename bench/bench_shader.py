"""Shader-unit throughput: a 20-instruction transform + lighting vertex shader (19 arithmetic instructions + END)
over 100 k vertices (uniform flow and a divergent IFC variant) and the fixed cost of a 4-vertex draw.

What a figure counts: one ``run_vertex_shader`` call on N vertices = load the 4 attributes the program reads (of the
16 in the (N, 16, 4) float32 input), run the program on every vertex, pack the (N, 16, 4) float32 result (3 outputs
written, 13 zeroed): about 25.6 MB written per 100 k vertices, so half the time is moving memory, not computing.
Timed after one warm-up call of the same size (kernels loaded, decode cache and register pool filled). Prints, in
CPU time of this process (user + system), the best and the median of ``--repeat`` calls as vertices/s and
vertex-instructions/s, the best wall times, numba's target CPU (a machine without AVX-512 runs other code) and the
load average before and after — on a shared 2-core VM CPU time still grows with the load (caches, memory bus).
Why the sixth session's 18.0 M vertices/s did not reproduce: bench/RESULTS.md, "Checking a figure".

Run: ``.venv/bin/python bench/bench_shader.py [--vertices N] [--repeat N]``."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass

import llvmlite.binding
import numpy as np

from picaemu.shader import run_vertex_shader
from picaemu.shader.quick import setup_from_source

HEADER = """
.fvec mvp[4], mv[3], lightdir, ambient, diffuse
.constf consts(0.0, 1.0, 0.5, 2.0)
.out opos position
.out oclr color
.out otex texcoord0
.proc main
    dp4 opos.x, mvp[0], v0
    dp4 opos.y, mvp[1], v0
    dp4 opos.z, mvp[2], v0
    dp4 opos.w, mvp[3], v0
    dp3 r0.x, mv[0], v1
    dp3 r0.y, mv[1], v1
    dp3 r0.z, mv[2], v1
    dp3 r1.x, r0, r0
    rsq r1.x, r1.x
    mul r0.xyz, r0, r1.x
    dp3 r2.x, lightdir, r0
    max r2.x, consts.x, r2.x
"""
TAIL = """
    mul r3, diffuse, r2.x
    add r3, ambient, r3
    mul r3, r3, v2
    min r3, consts.y, r3
    mov oclr.xyz, r3
    mov oclr.w, v2.w
    mov otex, v3
    end
.end
"""
DIVERGENT = """
    cmp v0, gt, gt, consts.x
    ifc cmp.x
        mul r2.x, r2.x, consts.z
        add r2.x, r2.x, consts.z
    .else
        mul r2.x, r2.x, consts.w
        min r2.x, consts.y, r2.x
    .end
"""


def _setup(src: str):
    rng = np.random.default_rng(0)
    floats = rng.normal(size=(96, 4)).astype(np.float32)
    floats[7:11] = (0.3, 0.3, 0.3, 1)
    return setup_from_source(src, floats={k: floats[k] for k in range(10)})


def _inputs(n: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    a = np.zeros((n, 16, 4), np.float32)
    a[:, :4] = rng.normal(size=(n, 4, 4))
    return a


@dataclass
class Timing:
    """CPU and wall seconds of ``repeat`` calls: the best (least disturbed) and the median (typical)."""

    cpu: list[float]
    wall: list[float]

    def best(self) -> float:
        return min(self.cpu)

    def median(self) -> float:
        return statistics.median(self.cpu)

    def wall_best(self) -> float:
        return min(self.wall)


def _time(fn, repeat: int) -> Timing:
    """CPU time of this process (``time.process_time``: user + system, all threads) and wall time of each of
    ``repeat`` calls. The machine is shared: wall time includes waiting for other jobs, CPU time does not, but
    CPU time still grows when other jobs share the caches and memory bus (see bench/results/shader.md)."""
    timing = Timing([], [])
    for _ in range(repeat):
        t, w = time.process_time(), time.perf_counter()
        fn()
        timing.cpu.append(time.process_time() - t)
        timing.wall.append(time.perf_counter() - w)
    return timing


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds / 1e6:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    load_before = os.getloadavg()
    plain = _setup(HEADER + TAIL)
    divergent = _setup(HEADER + DIVERGENT + TAIL)
    n_instr = (HEADER + TAIL).count("\n    ")  # instructions executed per vertex (uniform flow), END included
    big = _inputs(args.vertices)
    run_vertex_shader(plain, big)  # warm: decode cache, the pooled register files of this size, page faults
    run_vertex_shader(divergent, big)
    plain_t = _time(lambda: run_vertex_shader(plain, big), args.repeat)
    div_t = _time(lambda: run_vertex_shader(divergent, big), args.repeat)
    small = big[:4]
    small_t = _time(lambda: [run_vertex_shader(plain, small) for _ in range(100)], args.repeat)
    n = args.vertices
    print(
        f"one call of run_vertex_shader on {n} vertices: load 4 of 16 attributes, run the program, pack the "
        f"({n}, 16, 4) float32 result; {n_instr} instructions per vertex ({n_instr - 1} arithmetic + END); "
        f"CPU time of this process (user + system), best and median of {args.repeat}"
    )
    print(
        f"uniform flow  : {n_instr} instructions x {n} vertices in {plain_t.best() * 1e3:.1f} ms -> "
        f"{_rate(n, plain_t.best())} M vertices/s (median {_rate(n, plain_t.median())}), "
        f"{n * n_instr / plain_t.best() / 1e6:.1f} M vertex-instructions/s"
    )
    print(
        f"divergent IFC : {n} vertices in {div_t.best() * 1e3:.1f} ms -> {_rate(n, div_t.best())} M vertices/s "
        f"({div_t.best() / plain_t.best():.2f}x the uniform-flow time)"
    )
    print(f"4-vertex draw : {small_t.best() * 1e4:.0f} us per batch (median {small_t.median() * 1e4:.0f} us)")
    walls = f"{plain_t.wall_best() * 1e3:.1f} ms, {div_t.wall_best() * 1e3:.1f} ms, {small_t.wall_best() * 1e4:.0f} us"
    print(f"best wall times: {walls}")
    load_after = os.getloadavg()
    print(
        f"machine: numba target {llvmlite.binding.get_host_cpu_name()}, {os.cpu_count()} cores, "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
