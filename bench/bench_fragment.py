"""Fragment color path throughput: texture decoding per format (texels/s) and the full color path — two bilinear
textures, three TEV stages and alpha blending over 240x400x3 fragments (fragments/s).

Run: ``.venv/bin/python bench/bench_fragment.py [--repeat N]``. Prints one line per measurement (best of N).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from picaemu.color import tev
from picaemu.color.shading import ShadingState, sample_unit, shade
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.blend import blend_program
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.framebuffer import FramebufferState
from picaemu.memory import PhysicalMemory
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from picaemu.texture import TextureFormat, decode_texture
from picaemu.texture.formats import level_bytes

SIZE = 1024
FRAGMENTS = 240 * 400 * 3
TEX_SIZE = 256
ADDR = (0x18000000, 0x18100000)
COLOR_BUFFER, DEPTH_BUFFER = 0x18200000, 0x18300000  # 240x400 RGBA8 and D24S8, 8x8 tiled


def best(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up (caches, numba compilation)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_decode(repeat: int) -> None:
    rng = np.random.default_rng(0)
    for fmt in TextureFormat:
        data = rng.integers(0, 256, level_bytes(SIZE, SIZE, fmt), dtype=np.uint8).tobytes()
        t = best(lambda data=data, fmt=fmt: decode_texture(data, 0, SIZE, SIZE, fmt), repeat)
        print(f"decode {fmt.name:9s} {SIZE}x{SIZE}: {t * 1e3:7.1f} ms  {SIZE * SIZE / t / 1e6:7.1f} M texels/s")


def color_path_state() -> tuple[GpuState, PhysicalMemory]:
    st, mem = GpuState(), PhysicalMemory()
    rng = np.random.default_rng(1)
    r = st.regs
    r[id_of("TEXUNIT_CONFIG")] = access.compose("TEXUNIT_CONFIG", unit0_enable=1, unit1_enable=1)
    for unit, addr, reg in ((0, ADDR[0], "TEXUNIT0_ADDR1"), (1, ADDR[1], "TEXUNIT1_ADDR")):
        mem.write(addr, rng.integers(0, 256, TEX_SIZE * TEX_SIZE * 4, dtype=np.uint8))
        r[id_of(reg)] = addr >> 3
        r[id_of(f"TEXUNIT{unit}_DIM")] = access.compose(f"TEXUNIT{unit}_DIM", width=TEX_SIZE, height=TEX_SIZE)
        r[id_of(f"TEXUNIT{unit}_PARAM")] = access.compose(
            f"TEXUNIT{unit}_PARAM", mag_filter=1, min_filter=1, wrap_s=2, wrap_t=2
        )
    stages = [  # tex0 * primary; + tex1 (add); lerp(prev, const, tex1.a)
        dict(rgb_src0=3, rgb_src1=0, alpha_src0=3, alpha_src1=0, rgb=1, alpha=1),
        dict(rgb_src0=15, rgb_src1=4, alpha_src0=15, alpha_src1=4, rgb=2, alpha=1),
        dict(rgb_src0=15, rgb_src1=14, rgb_src2=4, alpha_src0=15, alpha_src1=14, alpha_src2=4, rgb=4, alpha=0),
    ]
    for n in range(6):
        cfg = stages[n] if n < len(stages) else dict(rgb_src0=15, alpha_src0=15, rgb=0, alpha=0)
        src = {k: v for k, v in cfg.items() if "src" in k}
        r[id_of(f"TEXENV{n}_SOURCE")] = access.compose(f"TEXENV{n}_SOURCE", **src)
        r[id_of(f"TEXENV{n}_COMBINER")] = access.compose(
            f"TEXENV{n}_COMBINER", rgb_combine=cfg["rgb"], alpha_combine=cfg["alpha"]
        )
        r[id_of(f"TEXENV{n}_OPERAND")] = access.compose(f"TEXENV{n}_OPERAND", rgb_op2=2)
        r[id_of(f"TEXENV{n}_COLOR")] = 0x80402010
    r[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=1, constant=0xE4)
    r[id_of("BLEND_FUNC")] = access.compose("BLEND_FUNC", rgb_src=6, rgb_dst=7, alpha_src=1, alpha_dst=0)
    _framebuffer_registers(r)
    return st, mem


def _framebuffer_registers(r: np.ndarray) -> None:
    """240x400 RGBA8 color + D24S8 depth, depth test GEQUAL with writes (as the fragment ops of a real draw)."""
    r[id_of("COLORBUFFER_LOC")] = access.compose("COLORBUFFER_LOC", address=COLOR_BUFFER >> 3)
    r[id_of("DEPTHBUFFER_LOC")] = access.compose("DEPTHBUFFER_LOC", address=DEPTH_BUFFER >> 3)
    r[id_of("FRAMEBUFFER_DIM")] = access.compose("FRAMEBUFFER_DIM", width=240, height_minus_1=399, orientation=1)
    r[id_of("COLORBUFFER_FORMAT")] = access.compose("COLORBUFFER_FORMAT", pixel_size=2, format=0)
    r[id_of("DEPTHBUFFER_FORMAT")] = access.compose("DEPTHBUFFER_FORMAT", format=3)
    for name in ("COLORBUFFER_READ", "COLORBUFFER_WRITE"):
        r[id_of(name)] = access.compose(name, enable=0xF)
    for name in ("DEPTHBUFFER_READ", "DEPTHBUFFER_WRITE"):
        r[id_of(name)] = access.compose(name, stencil=1, depth=1)
    funcs = access.locate("DEPTH_COLOR_MASK", "depth_func")[1].enum or {}
    gequal = next(code for code, name in funcs.items() if name.lower() in ("gequal", "greater or equal", ">="))
    r[id_of("DEPTH_COLOR_MASK")] = access.compose(
        "DEPTH_COLOR_MASK", depth_test=1, depth_func=gequal, red=1, green=1, blue=1, alpha=1, depth_write=1
    )


def color_path_fragments() -> Fragments:
    """Three full-screen layers in rasterization order, texture coordinates a smooth (rotated, repeated) mapping
    of the position, as a textured quad gives; random vertex colors."""
    rng = np.random.default_rng(2)
    frags = Fragments.empty(FRAGMENTS)
    idx = np.arange(FRAGMENTS)
    frags.x[:] = x = idx % 240
    frags.y[:] = y = (idx // 240) % 400
    frags.primitive[:] = idx // (240 * 400)
    frags.texcoord0[:, 0] = (0.9 * x + 0.3 * y) / 200
    frags.texcoord0[:, 1] = (-0.3 * x + 0.9 * y) / 200
    frags.texcoord1[:, 0] = x / 240
    frags.texcoord1[:, 1] = y / 400
    frags.color[:] = rng.random((FRAGMENTS, 4), np.float32)
    return frags


def bench_color_path(repeat: int) -> None:
    st, mem = color_path_state()
    frags = color_path_fragments()
    dst = np.random.default_rng(3).integers(0, 256, (FRAGMENTS, 4), dtype=np.uint8)

    def run() -> np.ndarray:
        sstate = ShadingState.from_state(st)
        return shade(sstate, frags, mem)

    sstate = ShadingState.from_state(st)
    unit0 = sstate.texturing.units[0]
    parts = {
        "  sample one bilinear unit": lambda: sample_unit(unit0, frags, mem),
        "  TEV (3 active stages)": lambda: tev.combine(sstate.tev, {0: dst, 3: dst, 4: dst}, FRAGMENTS),
    }
    for name, fn in parts.items():
        print(f"{name:28s}: {best(fn, repeat) * 1e3:6.1f} ms")
    t = best(run, repeat)
    print(
        f"color path (2 bilinear textures {TEX_SIZE}x{TEX_SIZE}, 3 TEV stages), {FRAGMENTS} "
        f"fragments: {t * 1e3:.1f} ms  {FRAGMENTS / t / 1e6:.2f} M fragments/s"
    )
    depth = np.tile(np.linspace(0.2, 0.8, FRAGMENTS // 3, dtype=np.float32), 3)  # each layer passes GEQUAL

    def full() -> None:
        sstate = ShadingState.from_state(st)
        color = shade(sstate, frags, mem)
        fb, ds = FramebufferState.from_regs(st.regs), DepthStencilState.from_regs(st.regs)
        stats = {"killed_stencil": 0, "killed_depth": 0, "fragments_written": 0}
        fragment_ops.resolve(mem, fb, ds, blend_program(sstate.blend), frags.x, frags.y, depth, color, stats)

    t = best(full, repeat)
    print(
        f"full fragment path (the above + depth test/write + blending + tiled write to a 240x400 RGBA8/D24S8 "
        f"framebuffer, 3x overdraw): {t * 1e3:.1f} ms  {FRAGMENTS / t / 1e6:.2f} M fragments/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench_decode(args.repeat)
    bench_color_path(args.repeat)


if __name__ == "__main__":
    main()
