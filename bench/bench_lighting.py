"""Throughput of fragment lighting and the procedural texture over one 240x400 screen of fragments.

Lighting: 2 positional lights, LUT configuration 0 with D0 (N.H), RR (N.V) and SP (-L.P) enabled, distance
attenuation on, specular 0 and 1, random normals and view vectors. Compared with a plain TEV pass over the same
fragment count (one modulate stage of the vertex color and a texture, the unlit path's combiner cost) when
``picaemu.color.tev`` exists. Procedural texture: noise on, linear filtering, sqrt mapping, separate alpha.
Times are the least CPU (process) time of repeated calls. Run: ``.venv/bin/python bench/bench_lighting.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from picaemu import numeric
from picaemu.color import lighting_luts
from picaemu.color.lighting import LightingState, compute_lighting
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from picaemu.texture.proctex import ProctexState, sample_proctex

WIDTH, HEIGHT = 400, 240
N = WIDTH * HEIGHT


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] |= np.uint32(access.compose(name, **fields))


def lit_state() -> GpuState:
    s = GpuState()
    put(s, "LIGHTING_ENABLE0", enable=1)
    put(s, "LIGHTING_CONFIG0", config=0, constant_4=4, constant_1=1)
    put(s, "LIGHTING_CONFIG1", d1_disable=1, fr_disable=1, rb_disable=1, rg_disable=1, constant_1=1)
    put(s, "LIGHTING_NUM_LIGHTS", count_minus_1=1)
    put(s, "LIGHTING_LIGHT_PERMUTATION", slot0=0, slot1=1)
    put(s, "LIGHTING_LUTINPUT_SELECT", d0_input=0, rr_input=2, sp_input=4)
    for n, pos in enumerate([(1.0, 2.0, 3.0), (-2.0, 1.0, 1.0)]):
        p = f"LIGHT{n}_"
        put(s, p + "XY", x=numeric.to_f16(pos[0]), y=numeric.to_f16(pos[1]))
        put(s, p + "Z", z=numeric.to_f16(pos[2]))
        put(s, p + "SPOTDIR_Z", z=2048)
        put(s, p + "ATTENUATION_SCALE", scale=numeric.encode_float(0.1, numeric.FLOAT20))
        for c in ("DIFFUSE", "SPECULAR0", "SPECULAR1", "AMBIENT"):
            put(s, p + c, r=180, g=120, b=60)
    ramp = lighting_luts.encode_entries(np.linspace(0, 1, 256))
    for lut_id in (0, 6, 8, 9, 16, 17):
        s.lighting_luts[lut_id] = ramp
    return s


def fragments(rng: np.random.Generator) -> Fragments:
    fr = Fragments.empty(N)
    fr.quat[:] = rng.normal(size=(N, 4)).astype(np.float32)
    fr.view[:] = rng.normal(size=(N, 3)).astype(np.float32)
    return fr


def proctex_state() -> GpuState:
    s = GpuState()
    put(s, "TEXUNIT3_PROCTEX0", u_clamp=3, v_clamp=2, rgb_func=6, alpha_func=4, separate_alpha=1, noise_enable=1)
    put(s, "TEXUNIT3_PROCTEX1", u_amplitude=1024, u_phase=numeric.to_f16(0.3))
    put(s, "TEXUNIT3_PROCTEX2", v_amplitude=1024, v_phase=numeric.to_f16(0.7))
    put(s, "TEXUNIT3_PROCTEX3", u_frequency=numeric.to_f16(2.0), v_frequency=numeric.to_f16(3.0))
    put(s, "TEXUNIT3_PROCTEX4", filter=1, width=128, max_lod=6)
    s.proctex_luts[:] = np.arange(256, dtype=np.uint32) * 0x01010101
    return s


def best_of(fn: Callable[[], object], repeats: int = 15) -> float:
    """Least CPU time (process time: the machine is shared, so wall time mostly measures the other jobs) of
    ``repeats`` calls after a warm-up call (numba compilation, caches)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def tev_pass(rng: np.random.Generator) -> Callable[[], object] | None:
    try:
        from picaemu.color.tev import TevState, combine
    except ImportError:
        return None
    s = GpuState()
    put(s, "TEXENV0_SOURCE", rgb_src0=0, rgb_src1=3, alpha_src0=0, alpha_src1=3)
    put(s, "TEXENV0_COMBINER", rgb_combine=1, alpha_combine=1)
    for n in range(1, 6):
        put(s, f"TEXENV{n}_SOURCE", rgb_src0=15, alpha_src0=15)
    tstate = TevState.from_regs(s.regs)
    inputs = {0: rng.integers(0, 256, (N, 4), dtype=np.uint8), 3: rng.integers(0, 256, (N, 4), dtype=np.uint8)}
    return lambda: combine(tstate, inputs, N)


def full_path() -> tuple[float, float, int] | None:
    """(lit s, unlit s, fragments) of one 400x240 draw of the golden sphere through ``Pipeline``: lighting feeding
    TEV versus the same draw with lighting off and TEV reading the vertex color."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the scene lives in the golden-image test
    try:
        from tests.test_lighting_golden import lit_sphere_state, render, sphere_vertices
    except ImportError:
        return None
    vertices = sphere_vertices(24, 48)
    vertices[:, 0, 0] *= HEIGHT / WIDTH  # keep the sphere round: it fills the screen height
    vertices[:, 0, :2] *= 1.2
    lit = lit_sphere_state((WIDTH, HEIGHT))
    unlit = lit.copy()
    unlit.regs[id_of("LIGHTING_ENABLE0")] = 0
    unlit.regs[id_of("TEXENV0_SOURCE")] = access.compose("TEXENV0_SOURCE", rgb_src0=0, alpha_src0=0)
    unlit.regs[id_of("TEXENV0_COMBINER")] = 0
    image = render(lit.copy(), vertices)
    covered = int(np.count_nonzero(image[..., 3]))
    return best_of(lambda: render(lit.copy(), vertices), 5), best_of(lambda: render(unlit.copy(), vertices), 5), covered


def main() -> None:
    rng = np.random.default_rng(1)
    lstate = LightingState.from_state(lit_state())
    frags = fragments(rng)
    t_light = best_of(lambda: compute_lighting(lstate, frags, {}))
    print(
        f"lighting: {N} fragments, 2 lights, D0+RR+SP+DA: {t_light * 1e3:.1f} ms = {N / t_light / 1e6:.2f} M frag/s",
        flush=True,
    )
    tev = tev_pass(rng)
    if tev is not None:
        t_tev = best_of(tev)
        print(
            f"TEV (1 modulate stage + 5 pass-through): {t_tev * 1e3:.1f} ms = {N / t_tev / 1e6:.2f} M frag/s; "
            f"lighting / TEV = {t_light / t_tev:.2f}x"
        )
    full = full_path()
    if full is not None:
        t_lit, t_unlit, covered = full
        print(
            f"full pipeline, one draw of {covered} fragments: lit {t_lit * 1e3:.1f} ms, "
            f"unlit {t_unlit * 1e3:.1f} ms; lit / unlit = {t_lit / t_unlit:.2f}x",
            flush=True,
        )
    pstate = ProctexState.from_state(proctex_state())
    uv = rng.uniform(-2, 2, (N, 2)).astype(np.float32)
    t_pt = best_of(lambda: sample_proctex(pstate, uv))
    print(f"proctex: {N} texels (noise, linear, separate alpha): {t_pt * 1e3:.1f} ms = {N / t_pt / 1e6:.2f} M texel/s")


if __name__ == "__main__":
    main()
