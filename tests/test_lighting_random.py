"""Differential test: the compiled lighting kernel against a scalar reference written here from
pica-pipeline.md §12 (plain Python floats, one fragment at a time), on seeded random configurations.

The reference works from the random configuration itself (not from ``LightingState``), so register encoding,
decoding and the kernel are all checked together. Outputs must agree within 1 (float32 vs float64 truncation).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from picaemu import numeric
from picaemu.color import lighting_luts
from picaemu.color.lighting import LightingState, compute_lighting
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.state import GpuState

AVAILABLE = {
    0: "d0 sp rr",
    1: "sp fr rr",
    2: "d0 d1 rr",
    3: "d0 d1 fr",
    4: "d0 d1 sp rr rg rb",
    5: "d0 sp fr rr rg rb",
    6: "d0 d1 sp fr rr",
    8: "d0 d1 sp fr rr rg rb",
}
LUT_ROW = {"d0": 0, "d1": 1, "fr": 3, "rb": 4, "rg": 5, "rr": 6}
SCALES = {0: 1.0, 1: 2.0, 2: 4.0, 3: 8.0, 6: 0.25, 7: 0.5}
SLOTS = ("d0", "d1", "sp", "fr", "rb", "rg", "rr")


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] |= np.uint32(access.compose(name, **fields))


def random_config(rng: random.Random) -> dict:
    cfg = {
        "config": rng.choice(sorted(AVAILABLE)),
        "fresnel": rng.randrange(4),
        "clamp": rng.randrange(2),
        "bump": rng.choice([0, 1, 2]),
        "renorm_off": rng.randrange(2),
        "shadow": rng.randrange(2),
        "shadow_flags": [rng.randrange(2) for _ in range(4)],
        "ambient": [rng.randrange(64) for _ in range(3)],
        "luts": {
            s: dict(
                on=rng.random() < 0.7, sel=rng.randrange(6), signed=rng.randrange(2), scale=rng.choice(sorted(SCALES))
            )
            for s in SLOTS
        },
        "lights": [],
    }
    for n in rng.sample(range(8), rng.randrange(1, 4)):
        cfg["lights"].append(
            dict(
                n=n,
                pos=[rng.uniform(-2, 2) for _ in range(3)],
                directional=rng.randrange(2),
                two=rng.randrange(2),
                geo0=rng.randrange(2),
                geo1=rng.randrange(2),
                spot=rng.randrange(2),
                da=rng.randrange(2),
                shadow_off=rng.randrange(2),
                spotdir=[rng.randrange(-2048, 2048) for _ in range(3)],
                bias=rng.uniform(0, 0.5),
                scale=rng.uniform(0, 0.5),
                colors={
                    c: [rng.randrange(256) for _ in range(3)] for c in ("SPECULAR0", "SPECULAR1", "DIFFUSE", "AMBIENT")
                },
            )
        )
    return cfg


def build_state(cfg: dict, tables: np.ndarray) -> GpuState:
    s = GpuState()
    s.lighting_luts[:] = tables
    f0, f1, f2, f3 = cfg["shadow_flags"]
    put(s, "LIGHTING_ENABLE0", enable=1)
    put(
        s,
        "LIGHTING_CONFIG0",
        config=cfg["config"],
        fresnel=cfg["fresnel"],
        clamp_highlights=cfg["clamp"],
        bump_mode=cfg["bump"],
        bump_unit=1,
        bump_no_renorm=cfg["renorm_off"],
        shadow_enable=cfg["shadow"],
        shadow_unit=2,
        shadow_primary=f0,
        shadow_secondary=f1,
        shadow_invert=f2,
        shadow_alpha=f3,
    )
    put(s, "LIGHTING_NUM_LIGHTS", count_minus_1=len(cfg["lights"]) - 1)
    put(s, "LIGHTING_AMBIENT", **dict(zip("rgb", cfg["ambient"], strict=True)))
    for name, lut in cfg["luts"].items():
        if name != "sp":
            put(s, "LIGHTING_CONFIG1", **{f"{name}_disable": int(not lut["on"])})
        put(s, "LIGHTING_LUTINPUT_SELECT", **{f"{name}_input": lut["sel"]})
        put(s, "LIGHTING_LUTINPUT_ABS", **{f"{name}_abs_disable": lut["signed"]})
        put(s, "LIGHTING_LUTINPUT_SCALE", **{f"{name}_scale": lut["scale"]})
    for slot, lt in enumerate(cfg["lights"]):
        n, p = lt["n"], f"LIGHT{lt['n']}_"
        put(s, "LIGHTING_LIGHT_PERMUTATION", **{f"slot{slot}": n})
        put(
            s,
            "LIGHTING_CONFIG1",
            **{
                f"spot_disable{n}": 1 - lt["spot"],
                f"dist_atten_disable{n}": 1 - lt["da"],
                f"shadow_disable{n}": lt["shadow_off"],
            },
        )
        put(s, p + "XY", x=numeric.to_f16(lt["pos"][0]), y=numeric.to_f16(lt["pos"][1]))
        put(s, p + "Z", z=numeric.to_f16(lt["pos"][2]))
        put(s, p + "SPOTDIR_XY", x=lt["spotdir"][0], y=lt["spotdir"][1])
        put(s, p + "SPOTDIR_Z", z=lt["spotdir"][2])
        put(
            s,
            p + "CONFIG",
            type=lt["directional"],
            two_sided=lt["two"],
            geometric_factor_0=lt["geo0"],
            geometric_factor_1=lt["geo1"],
        )
        put(s, p + "ATTENUATION_BIAS", bias=numeric.encode_float(lt["bias"], numeric.FLOAT20))
        put(s, p + "ATTENUATION_SCALE", scale=numeric.encode_float(lt["scale"], numeric.FLOAT20))
        for c, rgb in lt["colors"].items():
            put(s, p + c, **dict(zip("rgb", rgb, strict=True)))
    return s


# --- scalar reference ----------------------------------------------------------------------------------------


def dot(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def unit(v):
    n = math.sqrt(dot(v, v))
    return [x / n for x in v] if n > 0 else [0.0, 0.0, 0.0]


def rotate(q, v):
    u, w = q[:3], q[3]
    c1 = [
        u[1] * v[2] - u[2] * v[1] + w * v[0],
        u[2] * v[0] - u[0] * v[2] + w * v[1],
        u[0] * v[1] - u[1] * v[0] + w * v[2],
    ]
    c2 = [u[1] * c1[2] - u[2] * c1[1], u[2] * c1[0] - u[0] * c1[2], u[0] * c1[1] - u[1] * c1[0]]
    return [v[i] + 2 * c2[i] for i in range(3)]


def lut(tables, row, x, signed):
    if signed:
        p = x * 128  # the index is clamped, the weight p - i is not (pica-pipeline.md §12.2)
        i = max(-128, min(127, math.floor(p)))
        e = int(tables[row][i & 0xFF])
    else:
        p = x * 256
        i = max(0, min(255, math.floor(p)))
        e = int(tables[row][i])
    diff = ((e >> 12) & 0x7FF) / 2047 * (-1 if e >> 23 & 1 else 1)
    return (e & 0xFFF) / 4095 + diff * (p - i)


def reference(cfg, tables, quat, view, bump_t, shadow_t):
    avail = AVAILABLE[cfg["config"]].split()
    q = [c / math.sqrt(dot(quat, quat)) for c in quat] if dot(quat, quat) > 0 else [0.0] * 4
    ns, ts = [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]
    p = [2 * c / 255 - 1 for c in bump_t[:3]]
    if cfg["bump"] == 1:
        ns = [p[0], p[1], math.sqrt(max(1 - p[0] ** 2 - p[1] ** 2, 0)) if not cfg["renorm_off"] else p[2]]
    elif cfg["bump"] == 2:
        ts = p
    n_, t_, v = rotate(q, ns), rotate(q, ts), unit(view)
    sh = [c / 255 for c in shadow_t]
    if cfg["shadow_flags"][2]:
        sh = [1 - c for c in sh]
    diffuse, specular = [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]
    for k, lt in enumerate(cfg["lights"]):
        raw = [float(numeric.f16(numeric.to_f16(c))) for c in lt["pos"]]  # the float16 the register holds
        if not lt["directional"]:  # the view as interpolated: its length counts toward the distance
            raw = [a + b for a, b in zip(raw, view, strict=True)]
        dist = math.sqrt(dot(raw, raw))
        lv = unit(raw)
        h = [a + b for a, b in zip(v, lv, strict=True)]
        hn = unit(h)
        ln = dot(lv, n_)
        lnc = abs(ln) if lt["two"] else max(ln, 0.0)
        spot = [numeric.signed(c & 0x1FFF, 13) / 2047 for c in lt["spotdir"]]
        nh = dot(n_, hn)
        proj = [hn[i] - n_[i] * nh for i in range(3)]
        inputs = [nh, dot(v, hn), dot(n_, v), ln, dot(lv, spot), dot(proj, t_) if cfg["config"] == 8 else 0.0]

        def look(name, row, default, lt=lt, inputs=inputs):
            cf = cfg["luts"][name]
            if name not in avail or (name != "sp" and not cf["on"]):
                return default
            x = inputs[cf["sel"]]
            if not cf["signed"]:
                x = abs(x) if lt["two"] else max(x, 0.0)
            return SCALES[cf["scale"]] * lut(tables, row, x, bool(cf["signed"]))

        bias = float(numeric.decode_float(numeric.encode_float(lt["bias"], numeric.FLOAT20), numeric.FLOAT20))
        scale = float(numeric.decode_float(numeric.encode_float(lt["scale"], numeric.FLOAT20), numeric.FLOAT20))
        atten = lut(tables, 16 + lt["n"], max(0.0, min(1.0, scale * dist + bias)), False) if lt["da"] else 1.0
        if lt["spot"]:
            atten *= look("sp", 8 + lt["n"], 1.0)
        d0, d1, rr = look("d0", 0, 1.0), look("d1", 1, 1.0), look("rr", 6, 1.0)
        refl = [rr, look("rg", 5, rr), look("rb", 4, rr)]
        hh = dot(h, h)
        g = min(lnc / hh, 1.0) if hh > 0 else 0.0
        shadowed = cfg["shadow"] and not lt["shadow_off"]
        for c in range(3):
            col = {name: rgb[c] / 255 for name, rgb in lt["colors"].items()}
            lit = col["DIFFUSE"] * lnc * (sh[c] if shadowed and cfg["shadow_flags"][0] else 1.0)
            spec = d0 * col["SPECULAR0"] * (g if lt["geo0"] else 1.0) + d1 * refl[c] * col["SPECULAR1"] * (
                g if lt["geo1"] else 1.0
            )
            spec *= 0.0 if cfg["clamp"] and lnc == 0 else atten
            spec *= sh[c] if shadowed and cfg["shadow_flags"][1] else 1.0
            diffuse[c] += (lit + col["AMBIENT"]) * atten
            specular[c] += spec
        if k == len(cfg["lights"]) - 1 and cfg["fresnel"] and "fr" in avail and cfg["luts"]["fr"]["on"]:
            fr = look("fr", 3, 1.0)
            if cfg["fresnel"] & 1:
                diffuse[3] = fr
            if cfg["fresnel"] & 2:
                specular[3] = fr
    if cfg["shadow"] and cfg["shadow_flags"][3]:
        if cfg["fresnel"] & 1:
            diffuse[3] *= sh[3]
        if cfg["fresnel"] & 2:
            specular[3] *= sh[3]
    for c in range(3):
        diffuse[c] += cfg["ambient"][c] / 255
    u8 = lambda x: math.trunc(max(0.0, min(1.0, x)) * 255 + 1 / 1024)  # noqa: E731
    return [u8(x) for x in diffuse], [u8(x) for x in specular]


@pytest.mark.parametrize("seed", range(24))
def test_kernel_matches_scalar_reference(seed: int):
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    tables = np.zeros((24, 256), np.uint32)
    for row in [*LUT_ROW.values(), *range(8, 24)]:
        tables[row] = lighting_luts.encode_entries(nrng.uniform(0, 1, 256))
    cfg = random_config(rng)
    count = 40
    frags = Fragments.empty(count)
    frags.quat[:] = nrng.normal(size=(count, 4))
    frags.view[:] = nrng.normal(size=(count, 3))
    tex = {1: nrng.integers(0, 256, (count, 4), dtype=np.uint8), 2: nrng.integers(0, 256, (count, 4), dtype=np.uint8)}
    primary, secondary = compute_lighting(LightingState.from_state(build_state(cfg, tables)), frags, tex)
    for i in range(count):
        p_ref, s_ref = reference(
            cfg,
            tables,
            [float(c) for c in frags.quat[i]],
            [float(c) for c in frags.view[i]],
            tex[1][i].tolist(),
            tex[2][i].tolist(),
        )
        assert np.abs(primary[i].astype(int) - p_ref).max() <= 1, (i, primary[i].tolist(), p_ref)
        assert np.abs(secondary[i].astype(int) - s_ref).max() <= 1, (i, secondary[i].tolist(), s_ref)
