"""Rasterizer / pipeline throughput: 10 k small (~20 px) and 100 large triangles in 240x400, depth-tested.

Prints, for flat and Gouraud fills: triangles/s, fragments/s and frame time of (a) the rasterizer kernel alone
and (b) a whole draw through ``Pipeline`` (vertex loader, identity vertex shader, assembly, clipping, culling,
rasterizer, depth test + write, color write in tiled RGBA8 / D24S8 memory; primary-color fragment stage, so that
TEV cost is not counted). numba's first-run compile time is ``bench_compile.py``'s.

Run: ``.venv/bin/python bench/bench_raster.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

W, H = 240, 400
SMALL, LARGE = 10_000, 100
COLOR_ADDR, DEPTH_ADDR, VBO = 0x18000000, 0x18100000, 0x20000000


def triangles(n: int, leg: float, rng: np.random.Generator, gouraud: bool) -> np.ndarray:
    """(3n, 8) float32 vertices (clip x y z w, r g b a) of counter-clockwise right triangles."""
    x0 = rng.uniform(0, W - leg, n)
    y0 = rng.uniform(0, H - leg, n)
    z = rng.uniform(-1, 0, n)
    px = np.stack([x0, x0 + leg, x0], 1)
    py = np.stack([y0, y0, y0 + leg], 1)
    v = np.zeros((n, 3, 8), np.float32)
    v[:, :, 0] = px / (W / 2) - 1
    v[:, :, 1] = py / (H / 2) - 1
    v[:, :, 2] = z[:, None]
    v[:, :, 3] = 1
    v[:, :, 4:8] = rng.uniform(0, 1, (n, 3 if gouraud else 1, 4))
    return v.reshape(-1, 8)


def make_state(n_vertices: int):
    from picaemu.numeric import to_f24
    from picaemu.regs import access, id_of
    from picaemu.state import GpuState

    st = GpuState()

    def put(name: str, **f: int) -> None:
        st.regs[id_of(name)] = access.compose(name, **f)

    put("FRAMEBUFFER_DIM", width=W, height_minus_1=H - 1, orientation=1)
    put("COLORBUFFER_LOC", address=COLOR_ADDR >> 3)
    put("DEPTHBUFFER_LOC", address=DEPTH_ADDR >> 3)
    put("COLORBUFFER_FORMAT", format=0)
    put("DEPTHBUFFER_FORMAT", format=3)
    put("COLORBUFFER_READ", enable=15)
    put("COLORBUFFER_WRITE", enable=15)
    put("DEPTHBUFFER_READ", depth=1, stencil=1)
    put("DEPTHBUFFER_WRITE", depth=1, stencil=1)
    put("DEPTH_COLOR_MASK", depth_test=1, depth_func=6, depth_write=1, red=1, green=1, blue=1, alpha=1)
    st.regs[id_of("VIEWPORT_WIDTH")] = to_f24(W / 2)
    st.regs[id_of("VIEWPORT_HEIGHT")] = to_f24(H / 2)
    st.regs[id_of("DEPTHMAP_SCALE")] = to_f24(-1.0)
    put("DEPTHMAP_ENABLE", mode=1)
    put("SH_OUTMAP_TOTAL", count=2)
    put("SH_OUTMAP_O0", x=0, y=1, z=2, w=3)
    put("SH_OUTMAP_O1", x=8, y=9, z=10, w=11)
    put("VSH_OUTMAP_MASK", o0=1, o1=1)
    put("ATTRIBBUFFERS_LOC", base=VBO >> 4)
    put("ATTRIBBUFFERS_FORMAT_LOW", attr0_type=3, attr0_components_minus_1=3, attr1_type=3, attr1_components_minus_1=3)
    put("ATTRIBBUFFERS_FORMAT_HIGH", num_attrs_minus_1=1)
    put("ATTRIBBUFFER0_CONFIG1", comp0=0, comp1=1)
    put("ATTRIBBUFFER0_CONFIG2", stride=32, num_components=2)
    put("NUMVERTICES", count=n_vertices)
    return st


def identity_vs(ds, attributes, counters=None):
    """o0 = v0, o1 = v1, the other outputs 0: (N, 16, 4), as the shader unit returns."""
    out = np.zeros((attributes.shape[0], 16, 4), np.float32)
    out[:, :2] = attributes[:, :2]
    return out


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_case(name: str, n: int, leg: float, gouraud: bool, repeat: int) -> None:
    from picaemu.draw import DrawCall, DrawKind
    from picaemu.geometry import clipping
    from picaemu.geometry.output_map import COLOR, NUM_COLUMNS
    from picaemu.memory import PhysicalMemory
    from picaemu.pipeline import Pipeline, PrimaryColorStages
    from picaemu.raster.rasterizer import RasterState, rasterize

    rng = np.random.default_rng(1)
    verts = triangles(n, leg, rng, gouraud)
    tris = np.ones((n, 3, NUM_COLUMNS), np.float32)
    tris[:, :, :8] = verts.reshape(n, 3, 8)
    vp = clipping.ViewportState(W / 2, H / 2, 0, 0, 0)
    wt = clipping.to_window(tris, np.arange(n), vp)
    rs = RasterState(W, H, 0, (0, 0, 0, 0), -1.0, 0.0, False)
    color = np.arange(COLOR.start - 4, COLOR.stop - 4)  # the pipeline interpolates the mapped varyings only
    frags, _ = rasterize(wt, rs, color)
    t_raster = best(lambda: rasterize(wt, rs, color), repeat)

    mem = PhysicalMemory()
    mem.write(VBO, verts.tobytes())
    st = make_state(3 * n)
    pipe = Pipeline(identity_vs, lambda s: PrimaryColorStages())

    def frame() -> dict:
        mem.fill(DEPTH_ADDR, W * H * 4, 0)
        call = DrawCall(0, DrawKind.ARRAYS, st, mem)
        pipe.draw(call)
        return call.stats

    stats = frame()
    frame()  # the first draws of a process also grow the heap (page faults): time the steady state
    t_frame = best(frame, repeat)
    f = len(frags)
    kernel = f"{n / t_raster / 1e6:5.2f} M tri/s {f / t_raster / 1e6:5.1f} M frag/s {t_raster * 1e3:6.1f} ms"
    draw = f"{n / t_frame / 1e6:5.3f} M tri/s {f / t_frame / 1e6:5.1f} M frag/s {t_frame * 1e3:6.1f} ms"
    print(
        f"{name:24s} {n:6d} tris {f:8d} frags ({f / n:7.1f}/tri) | raster kernel: {kernel} | pipeline draw: {draw}"
        f" (written {stats['fragments_written']})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from picaemu import allocator

    allocator.keep_freed_memory()  # as a Pipeline does: the kernel-alone figures then pay no fresh page faults
    for gouraud in (False, True):
        shade = "Gouraud" if gouraud else "flat"
        bench_case(f"small ~20 px, {shade}", SMALL, 6.4, gouraud, args.repeat)
        bench_case(f"large ~19k px, {shade}", LARGE, 195.0, gouraud, args.repeat)


if __name__ == "__main__":
    main()
