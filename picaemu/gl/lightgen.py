"""Fragment lighting as generated GLSL: the TEV's fragment primary and secondary colors (sources 1 and 2).

A port of ``picaemu.color.lighting_kernel.light_fragments`` for one fragment, unrolled per active light slot with
the switches as compile-time constants. The structural part comes from the kernel's own packing
(``picaemu.color.lighting.kernel_arrays``: per-light flags and LUT ids, the LUT slots' activity/input/sign, the global
switches), so the two implementations read one description; ``lighting_key(ls) -> LightingKey`` keeps it and
``lighting_rows(ls) -> (LIGHT_ROWS, 4) float32`` packs the values (per-light parameters in the kernel's ``LP_*``
columns, the slot scales, the global ambient) for ``shadergen.uniform_block``.

LUTs: the 24 decoded tables (``DecodedLuts.value`` / ``diff``, (24, 256) float32) are one ``GL_RG32F`` 1D array
texture of 24 layers x 256 texels (r = value, g = difference, layer = LUT id) at texture image unit
``LUT_BINDING``, read with ``texelFetch`` (``picaemu.gl.textures.TableTexture``).

Precision: the kernel's types are mirrored — float32 where its inputs are float32 and stay so (the quaternion's
normalization, the unit view vector, a directional light's unit vector and its distance-attenuation input),
float64 elsewhere (``double`` in GLSL, ``precise``: no fused multiply-add, the kernel's evaluation order). The
outputs are ``trunc(clamp(x, 0, 1) * 255 + 1/1024)``; a float64 sum landing on the other side of a truncation
boundary than numba's is the one way the two can differ (measured on the lit scenes: docs/gl.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.color import lighting_kernel as K
from picaemu.color.lighting import LightingState, kernel_arrays
from picaemu.geometry import output_map as om
from picaemu.regs.blocks.lighting import NUM_LIGHTS

LUT_BINDING = 4  # texture image unit of the LUT texture (0-2: texture units)
QUAT_COLUMN, VIEW_COLUMN = om.QUAT.start - 4, om.VIEW.start - 4
LIGHT_ROWS = NUM_LIGHTS * K.LP_COUNT // 4 + 2 + 1  # per-light parameters, 7 slot scales (2 rows), ambient
INPUT_NAMES = ("nh", "vh", "nv", "ln", "lp", "cp")  # GLSL names of the six LUT inputs, by kernel input code


@dataclass(frozen=True)
class LightingKey:
    """The structural lighting state: the kernel's packed flag arrays as tuples (``lighting_kernel`` layouts),
    plus the units the bump map and the shadow term read (None when the feature is off) and the shadow inversion."""

    enabled: bool
    lflags: tuple[tuple[int, ...], ...]  # (S, LF_COUNT)
    slots: tuple[tuple[int, ...], ...]  # (7, SL_COUNT)
    gflags: tuple[int, ...]  # (G_COUNT,)
    bump_unit: int | None
    shadow_unit: int | None
    shadow_invert: bool


def lighting_key(ls: LightingState) -> LightingKey:
    if not ls.enabled:
        return LightingKey(False, (), (), (), None, None, False)
    _, lflags, slots, _, gflags, _ = kernel_arrays(ls)
    return LightingKey(
        True,
        tuple(map(tuple, lflags.tolist())),
        tuple(map(tuple, slots.tolist())),
        tuple(gflags.tolist()),
        ls.bump_unit if ls.bump_mode != "none" else None,
        ls.shadow.unit if ls.shadow is not None else None,
        bool(ls.shadow is not None and ls.shadow.invert),
    )


def units_read(ls: LightingState | None) -> frozenset[int]:
    """Texture units the lighting reads (bump map, shadow term)."""
    if ls is None or not ls.enabled:
        return frozenset()
    key = lighting_key(ls)
    return frozenset(u for u in (key.bump_unit, key.shadow_unit) if u is not None)


def lighting_rows(ls: LightingState | None) -> np.ndarray:
    """(LIGHT_ROWS, 4) float32: the values of the ``u_light`` / ``u_slot_scale`` / ``u_ambient`` uniforms."""
    rows = np.zeros((LIGHT_ROWS, 4), np.float32)
    if ls is None or not ls.enabled:
        return rows
    lparams, _, _, scale, _, ambient = kernel_arrays(ls)
    flat = rows.reshape(-1)
    flat[: lparams.size] = lparams.reshape(-1)
    base = NUM_LIGHTS * K.LP_COUNT
    flat[base : base + scale.size] = scale
    flat[base + 8 : base + 11] = ambient
    return rows


UNIFORMS = f"""
    vec4 u_light[{NUM_LIGHTS * K.LP_COUNT // 4}];  // lighting_kernel LP_* columns, 20 floats per light slot
    vec4 u_slot_scale[2];
    vec4 u_ambient;
"""

HELPERS = f"""
layout(binding = {LUT_BINDING}) uniform sampler1DArray u_luts;  // r value, g difference; texel entry, layer LUT id

float lp_at(int i) {{ return u_light[i / 4][i % 4]; }}

double lut(int id, double x, bool signed_in) {{  // lighting_kernel._lut
    if (isnan(x)) x = 0.0LF;
    precise double p;
    double i;
    int idx;
    if (signed_in) {{
        p = x * 128.0LF;  // the index is clamped, the weight p - i is not (extrapolation past the ends)
        i = clamp(floor(p), -128.0LF, 127.0LF);
        idx = int(i) & 255;
    }} else {{
        p = x * 256.0LF;
        i = clamp(floor(p), 0.0LF, 255.0LF);
        idx = int(i);
    }}
    vec2 e = texelFetch(u_luts, ivec2(idx, id), 0).rg;
    precise double r = double(e.r) + double(e.g) * (p - i);
    return r;
}}

double dot3(dvec3 a, dvec3 b) {{ precise double s = a.x * b.x + a.y * b.y + a.z * b.z; return s; }}

vec4 unit_f(vec3 a) {{  // lighting_kernel._unit in float32: (unit vector, length)
    precise float len = sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
    return len > 0.0 ? vec4(a / len, len) : vec4(0.0);
}}

dvec4 unit_d(dvec3 a) {{
    precise double len = sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
    return len > 0.0LF ? dvec4(a / len, len) : dvec4(0.0LF);
}}

dvec3 rotate(vec4 q, dvec3 v) {{  // lighting_kernel._rotate (float32 quaternion, float64 vector)
    dvec4 d = dvec4(q);
    precise double cx = d.y * v.z - d.z * v.y + d.w * v.x;
    precise double cy = d.z * v.x - d.x * v.z + d.w * v.y;
    precise double cz = d.x * v.y - d.y * v.x + d.w * v.z;
    precise dvec3 r = dvec3(v.x + 2.0LF * (d.y * cz - d.z * cy), v.y + 2.0LF * (d.z * cx - d.x * cz),
                            v.z + 2.0LF * (d.x * cy - d.y * cx));
    return r;
}}

double cos_phi(dvec3 h, dvec3 n, double nh, dvec3 t) {{  // lighting_kernel._inputs
    precise dvec3 d = h - n * nh;
    return dot3(d, t);
}}

ivec4 store_u8(dvec4 x) {{  // lighting_kernel._store
    precise dvec4 s = clamp(x, 0.0LF, 1.0LF) * 255.0LF + 0.0009765625LF;
    return min(ivec4(s), 255);
}}
"""


def _lp(k: int, col: int) -> str:
    return f"lp_at({k * K.LP_COUNT + col})"


def _lp3(k: int, col: int) -> str:
    return f"vec3({_lp(k, col)}, {_lp(k, col + 1)}, {_lp(k, col + 2)})"


def _surface(key: LightingKey) -> list[str]:
    """Normal, tangent, unit view and raw view (lighting_kernel._geometry)."""
    q = ", ".join(f"varying_at({QUAT_COLUMN + c})" for c in range(4))
    v = ", ".join(f"varying_at({VIEW_COLUMN + c})" for c in range(3))
    lines = [
        f"vec4 lq = vec4({q});",
        "precise float lqn = sqrt(lq.x * lq.x + lq.y * lq.y + lq.z * lq.z + lq.w * lq.w);",
        "if (lqn > 0.0) lq = lq / lqn;",
        "dvec3 ln_in = dvec3(0.0LF, 0.0LF, 1.0LF), lt_in = dvec3(1.0LF, 0.0LF, 0.0LF);",
    ]
    mode = key.gflags[K.G_BUMP]
    if mode:
        lines.append(f"precise dvec3 lbump = 2.0LF * dvec3(vec3(s_tex{key.bump_unit}.rgb) / 255.0) - 1.0LF;")
        if mode == K.BUMP_TANGENT:
            lines.append("lt_in = lbump;")
        else:
            lines.append("ln_in = lbump;")
            if key.gflags[K.G_RENORM]:
                lines += [
                    "precise double lz2 = 1.0LF - lbump.x * lbump.x - lbump.y * lbump.y;",
                    "ln_in.z = sqrt(max(lz2, 0.0LF));",
                ]
    lines += [
        "dvec3 l_n = rotate(lq, ln_in), l_t = rotate(lq, lt_in);",
        f"vec3 lview = vec3({v});",
        "dvec3 l_v = dvec3(unit_f(lview).xyz), l_vraw = dvec3(lview);",
        "precise dvec4 dsum = dvec4(0.0LF, 0.0LF, 0.0LF, 1.0LF), ssum = dsum;",
    ]
    if key.shadow_unit is not None:
        invert = "1.0 - " if key.shadow_invert else ""
        lines.append(f"vec4 l_shadow = {invert}vec4(s_tex{key.shadow_unit}) / 255.0;")
    return lines


def _slot(key: LightingKey, slot: int, lut_id: str, two_sided: bool, default: str) -> str:
    """The expression of one LUT slot (lighting_kernel._slot)."""
    active, code, signed, _ = key.slots[slot]
    if not active:
        return default
    x = INPUT_NAMES[code]
    if not signed:
        x = f"abs({x})" if two_sided else f"max({x}, 0.0LF)"
    scale = f"double(u_slot_scale[{slot // 4}][{slot % 4}])"
    return f"{scale} * lut({lut_id}, {x}, {'true' if signed else 'false'})"


def _light(key: LightingKey, k: int) -> list[str]:
    """One light slot's contribution (lighting_kernel._one_light)."""
    f = key.lflags[k]
    g = key.gflags
    two = bool(f[K.LF_TWO_SIDED])
    lines = [f"{{  // light slot {k}"]
    if f[K.LF_DIRECTIONAL]:
        lines += [f"vec4 lu = unit_f({_lp3(k, K.LP_POS)});", "dvec3 l = dvec3(lu.xyz);"]
        lines.append(f"precise float da_in = {_lp(k, K.LP_SCALE)} * lu.w + {_lp(k, K.LP_BIAS)};")
        dist_input = "double(da_in)"
    else:
        lines += [f"dvec4 lu = unit_d(dvec3({_lp3(k, K.LP_POS)}) + l_vraw);", "dvec3 l = lu.xyz;"]
        lines.append(f"precise double da_in = double({_lp(k, K.LP_SCALE)}) * lu.w + double({_lp(k, K.LP_BIAS)});")
        dist_input = "da_in"
    lines += [
        "precise dvec3 h = l_v + l;",
        "double half_sq = dot3(h, h);",
        "dvec3 hn = unit_d(h).xyz;",
        "double ln = dot3(l, l_n);",
        f"double ln_c = {'abs(ln)' if two else 'max(ln, 0.0LF)'};",
        "precise double atten = 1.0LF;",
    ]
    if f[K.LF_DIST]:
        lines.append(f"atten = lut({f[K.LF_DA_LUT]}, clamp({dist_input}, 0.0LF, 1.0LF), false);")
    nh = "dot3(l_n, hn)"
    cp = "0.0LF"
    if g[K.G_CP]:
        lines.append(f"double nh_ = {nh};")
        nh = "nh_"
        cp = "cos_phi(hn, l_n, nh_, l_t)"
    lines += [
        f"double nh = {nh}, vh = dot3(l_v, hn), nv = dot3(l_n, l_v), lp = dot3(l, dvec3({_lp3(k, K.LP_SPOT)})),"
        f" cp = {cp};"
    ]
    if f[K.LF_SPOT]:
        lines.append(f"atten = atten * ({_slot(key, K.SP, str(f[K.LF_SP_LUT]), two, '1.0LF')});")
    common = {s: str(key.slots[s][K.SL_LUT]) for s in (K.D0, K.D1, K.RR, K.RG, K.RB, K.FR)}
    lines += [
        f"double d0 = {_slot(key, K.D0, common[K.D0], two, '1.0LF')};",
        f"double d1 = {_slot(key, K.D1, common[K.D1], two, '1.0LF')};",
        f"double rr = {_slot(key, K.RR, common[K.RR], two, '1.0LF')};",
        f"dvec3 refl = dvec3(rr, {_slot(key, K.RG, common[K.RG], two, 'rr')}, "
        f"{_slot(key, K.RB, common[K.RB], two, 'rr')});",
        "double geo_f = half_sq > 0.0LF ? min(ln_c / half_sq, 1.0LF) : 0.0LF;",
        f"double g0 = d0 * {'geo_f' if f[K.LF_GEO0] else '1.0LF'};",
        f"double g1 = d1 * {'geo_f' if f[K.LF_GEO1] else '1.0LF'};",
        f"double hl = {'ln_c == 0.0LF ? 0.0LF : atten' if g[K.G_CLAMP] else 'atten'};",
        f"precise dvec3 lit = dvec3({_lp3(k, K.LP_DIFFUSE)}) * ln_c;",
        f"precise dvec3 spec = (g0 * dvec3({_lp3(k, K.LP_SPEC0)}) + g1 * refl * dvec3({_lp3(k, K.LP_SPEC1)})) * hl;",
    ]
    shadowed = g[K.G_SHADOW] and f[K.LF_SHADOW]
    if shadowed and g[K.G_SHADOW_P]:
        lines.append("lit = lit * dvec3(l_shadow.rgb);")
    if shadowed and g[K.G_SHADOW_S]:
        lines.append("spec = spec * dvec3(l_shadow.rgb);")
    lines += [f"dsum.rgb = dsum.rgb + (lit + dvec3({_lp3(k, K.LP_AMBIENT)})) * atten;", "ssum.rgb = ssum.rgb + spec;"]
    last = k == len(key.lflags) - 1
    if last and (g[K.G_FRESNEL_P] or g[K.G_FRESNEL_S]) and key.slots[K.FR][K.SL_ACTIVE]:
        lines.append(f"double fr = {_slot(key, K.FR, common[K.FR], two, '1.0LF')};")
        lines += ["dsum.a = fr;"] if g[K.G_FRESNEL_P] else []
        lines += ["ssum.a = fr;"] if g[K.G_FRESNEL_S] else []
    return [*lines, "}"]


def lighting_lines(key: LightingKey) -> list[str]:
    """GLSL statements that set ``ivec4 s_lp, s_ls`` (the fragment primary and secondary colors); they read the
    ``s_tex{u}`` of the units in ``units_read`` and the helpers of ``glsl_lib``."""
    if not key.enabled:
        return ["ivec4 s_lp = ivec4(0), s_ls = ivec4(0);"]
    lines = _surface(key)
    for k in range(len(key.lflags)):
        lines += _light(key, k)
    g = key.gflags
    if g[K.G_SHADOW] and g[K.G_SHADOW_A]:
        lines += ["dsum.a = dsum.a * double(l_shadow.a);"] if g[K.G_FRESNEL_P] else []
        lines += ["ssum.a = ssum.a * double(l_shadow.a);"] if g[K.G_FRESNEL_S] else []
    lines += ["ivec4 s_lp = store_u8(dvec4(dsum.rgb + dvec3(u_ambient.rgb), dsum.a));", "ivec4 s_ls = store_u8(ssum);"]
    return lines
