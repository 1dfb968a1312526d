"""The procedural texture (texture unit 3) as generated GLSL: the TEV's source 3 (``s_tex3``).

A port of ``picaemu.texture.proctex.sample_proctex`` and ``proctex_lod`` for one fragment. ``proctex_key(ps,
coords) -> ProctexKey`` keeps the structural part (clamp, shift and mapping modes, noise on/off, filter, whether
the LOD comes from derivatives, the coordinate column) as compile-time choices; ``proctex_rows(ps) ->
(PROCTEX_ROWS, 4) int32`` packs the values (noise amplitude, phase and frequency, the LOD scale, width, LOD range,
the eight color-table offsets) for ``shadergen.uniform_block``.

LUTs: one ``GL_RGBA32F`` 1D array texture of ``LUT_LAYERS`` layers x 256 texels at texture image unit
``LUT_BINDING`` (``proctex_table(ps)`` builds it): layers 0-2 the noise, RGB-map and alpha-map tables (r = value,
g = difference, 128 entries), layer 3 the color table and layer 4 the color differences (rgba, the decoded
integers, exact in float32); read with ``texelFetch`` (``picaemu.gl.textures.ProctexTexture``).

Precision: the software's float32 steps are kept float32 and unfused (``precise``) in its order — noise,
coordinates, mapping functions, map lookups, color-table index and linear filtering; the one float64 step of the
software (the blend between two mip levels: numpy promotes ``lod - level`` to float64) is ``double`` here; the
integer parity tests of shift and mirrored repeat, which numpy does in int64, are done in float64 (exact for
every float32). The LOD's derivatives are the software's (``picaemu.texture.lod.derivatives``: the difference to the
next fragment of the same primitive, else from the previous one): the neighbours are evaluated from their edge
values with the rasterizer's coverage rule, in any window triangle of the primitive (``glsl_lib``), not read from
GL's helper invocations. ``log2`` is llvmpipe's (not correctly rounded): a pixel whose LOD lies at a level
boundary may pick the other level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from picaemu.gl import glsl_lib
from picaemu.texture.proctex import (
    CLAMPS,
    DEFAULT_SHIFT_STEP,
    MAX_LEVEL,
    NOISE_CELLS,
    NOISE_T1,
    NOISE_T2,
    SHIFT_PARITY,
    SHIFT_STEP,
    ProctexState,
)

LUT_BINDING = 5  # texture image unit of the proctex tables (0-2: texture units, 4: lighting LUTs)
LUT_LAYERS = 5  # noise, RGB map, alpha map, color, color difference
LAYER = {"noise": 0, "RGB map": 1, "alpha map": 2}
COLOR_LAYER, DIFF_LAYER = 3, 4
PROCTEX_ROWS = 5  # u_pt_f[2], u_pt_i[3]
CLAMP_CODES = {name: code for code, name in enumerate(CLAMPS)}


@dataclass(frozen=True)
class ProctexKey:
    column: int  # first varying column of its coordinates (shadergen.COORD_COLUMNS)
    u_clamp: str
    v_clamp: str
    rgb_func: str
    alpha_func: str | None  # None: alpha from the color table
    noise: bool
    u_shift: str
    v_shift: str
    linear: bool
    mip: str | None
    lod_from_derivatives: bool  # mip-filtered with a nonzero LOD bias (else the LOD is the min LOD)


def proctex_key(ps: ProctexState, column: int) -> ProctexKey:
    return ProctexKey(
        column,
        ps.u_clamp,
        ps.v_clamp,
        ps.rgb_func,
        ps.alpha_func if ps.separate_alpha else None,
        ps.noise_enable,
        ps.u_shift,
        ps.v_shift,
        ps.linear,
        ps.mip,
        ps.mip is not None and ps.lod_bias != 0,
    )


def proctex_rows(ps: ProctexState | None) -> np.ndarray:
    """(PROCTEX_ROWS, 4) int32 (rows 0-1 float32 bits): the ``u_pt_f`` / ``u_pt_i`` uniforms."""
    rows = np.zeros((PROCTEX_ROWS, 4), np.int32)
    if ps is None:
        return rows
    floats = rows.view(np.float32)
    floats[0] = (*ps.amplitude, *ps.phase)
    floats[1, :2] = [NOISE_CELLS * f for f in ps.frequency]
    floats[1, 2] = abs(ps.width * ps.lod_bias)
    rows[2, :3] = (ps.width, ps.min_lod, min(ps.max_lod, MAX_LEVEL))
    rows[3:5] = np.reshape(ps.offsets, (2, 4))
    return rows


def proctex_table(ps: ProctexState) -> np.ndarray:
    """(LUT_LAYERS, 256, 4) float32: the texture ``u_pt_luts`` reads (module docstring)."""
    table = np.zeros((LUT_LAYERS, 256, 4), np.float32)
    for name, layer in LAYER.items():
        value, diff = ps.maps[name]
        table[layer, : len(value), 0] = value
        table[layer, : len(diff), 1] = diff
    table[COLOR_LAYER] = ps.color
    table[DIFF_LAYER] = ps.color_diff
    return table


def _ints(values: np.ndarray) -> str:
    return ", ".join(str(int(v)) for v in values)


HELPERS = f"""
layout(binding = {LUT_BINDING}) uniform sampler1DArray u_pt_luts;  // proctexgen.proctex_table
const int PT_T1[16] = int[16]({_ints(NOISE_T1)});
const int PT_T2[16] = int[16]({_ints(NOISE_T2)});

int pt_div(int a, int b) {{ int q = a / b; return (a % b != 0 && a < 0) ? q - 1 : q; }}  // numpy //
int pt_mod(int a, int b) {{ return a - b * pt_div(a, b); }}  // numpy %

float pt_lut128(int layer, float x) {{  // proctex._lut (x finite)
    precise float p = max(x, 0.0) * 128.0;
    float i = min(floor(p), 127.0);
    vec2 e = texelFetch(u_pt_luts, ivec2(int(i), layer), 0).rg;
    precise float f = p - i;
    precise float r = e.r + e.g * f;
    return clamp(r, 0.0, 1.0);
}}

int pt_rand1(int k) {{ return (((pt_mod(k, 9) + 2) * 3) & 15) ^ PT_T1[pt_div(k, 9) & 15]; }}

float pt_rand2(int a, int b) {{  // proctex._rand2: the lattice gradient in [-1, 1]
    b = b + ((a & 3) == 1 ? 4 : 0);
    b = b ^ ((a & 1) * 6);
    b = ((b + 10 + a) & 15) ^ PT_T2[a];
    precise double g = -1.0LF + double(b) * (2.0LF / 15.0LF);
    return float(g);
}}

float pt_lerp(float a, float b, float t) {{ precise float r = a + (b - a) * t; return r; }}

float pt_noise(float u, float v) {{  // proctex.noise
    precise float x = u_pt_f[1].x * abs(u + u_pt_f[0].z);
    precise float y = u_pt_f[1].y * abs(v + u_pt_f[0].w);
    int xi = int(trunc(x)), yi = int(trunc(y));
    precise float fx = x - trunc(x);
    precise float fy = y - trunc(y);
    precise float s = fx + fy;
    int ax0 = pt_rand1(xi), ax1 = pt_rand1(xi + 1), by0 = pt_rand1(yi), by1 = pt_rand1(yi + 1);
    precise float g0 = pt_rand2(ax0, by0) * s;
    precise float g1 = pt_rand2(ax1, by0) * (s - 1.0);
    precise float g2 = pt_rand2(ax0, by1) * (s - 1.0);
    precise float g3 = pt_rand2(ax1, by1) * (s - 2.0);
    float sx = pt_lut128({LAYER["noise"]}, fx), sy = pt_lut128({LAYER["noise"]}, fy);
    return pt_lerp(pt_lerp(g0, g1, sx), pt_lerp(g2, g3, sx), sy);
}}

float pt_odd(float c, double parity) {{  // ((int(c) + parity) // 2) % 2 for c >= 0, exact in float64
    double h = floor((double(trunc(c)) + parity) * 0.5LF);
    return float(h - 2.0LF * floor(h * 0.5LF));
}}

float pt_clamp(float c, int mode) {{  // proctex.CLAMPS (c >= 0)
    if (mode == {CLAMP_CODES["clamp to zero"]}) return c > 1.0 ? 0.0 : c;
    if (mode == {CLAMP_CODES["clamp to edge"]}) return min(c, 1.0);
    if (mode == {CLAMP_CODES["symmetrical repeat"]}) {{ precise float r = c - floor(c); return r; }}
    if (mode == {CLAMP_CODES["mirrored repeat"]}) {{
        precise float frac = c - trunc(c);
        precise float mirrored = 1.0 - frac;
        return mod(double(trunc(c)), 2.0LF) == 0.0LF ? frac : mirrored;  // int(c) even: frac
    }}
    return c > 0.5 ? 1.0 : 0.0;
}}

// the mip level's color at position g in [0, 1] (proctex._level_color), 0..255 floats
vec4 pt_color(float g, int level, bool linear) {{
    precise float width = float(max(u_pt_i[0].x >> level, 1)) - 1.0;
    precise float index = float(u_pt_i[1 + level / 4][level % 4]) + g * width;
    if (!linear) {{
        int k = int(clamp(floor(index + 0.5), 0.0, 255.0));
        return texelFetch(u_pt_luts, ivec2(k, {COLOR_LAYER}), 0);
    }}
    float i = clamp(floor(index), 0.0, 255.0);
    precise float frac = index - i;
    vec4 d = texelFetch(u_pt_luts, ivec2(int(i), {DIFF_LAYER}), 0);
    precise vec4 c = texelFetch(u_pt_luts, ivec2(int(i), {COLOR_LAYER}), 0) + frac * (2.0 * d);
    return c;
}}

ivec4 pt_store(dvec4 c) {{ return ivec4(clamp(trunc(c), 0.0LF, 255.0LF)); }}
"""

MAPPINGS = {
    "U": "{u}",
    "U2": "{u} * {u}",
    "V": "{v}",
    "V2": "{v} * {v}",
    "(U+V)/2": "({u} + {v}) * 0.5",
    "(U2+V2)/2": "({u} * {u} + {v} * {v}) * 0.5",
    "sqrt(U2+V2)": "min(sqrt({u} * {u} + {v} * {v}), 1.0)",
    "min": "min({u}, {v})",
    "max": "max({u}, {v})",
    "rmax": "min((({u} + {v}) * 0.5 + sqrt({u} * {u} + {v} * {v})) * 0.5, 1.0)",
}


def _shift(other: str, mode: str, clamp: str) -> str:
    parity = SHIFT_PARITY[mode]
    if parity is None:
        return "0.0"
    step = SHIFT_STEP.get(clamp, DEFAULT_SHIFT_STEP)
    return f"{step!r} * pt_odd({other}, {parity}.0LF)"


def _lod(key: ProctexKey, scissor_mode: int) -> list[str]:
    """``float pt_lod`` (proctex.proctex_lod), clamped to [min LOD, max LOD]; the derivatives are the software's
    neighbour differences (``functions``)."""
    if not key.lod_from_derivatives:
        return ["float pt_lod = float(u_pt_i[0].y);"]
    return [
        f"vec2 pt_dx = abs(pt_derivative(ivec2(1, 0), {scissor_mode}));",
        f"vec2 pt_dy = abs(pt_derivative(ivec2(0, 1), {scissor_mode}));",
        "precise float pt_rho = max(pt_dx.x, pt_dy.x) + max(pt_dx.y, pt_dy.y);",
        "precise float pt_lin = u_pt_f[1].z * pt_rho;",
        "float pt_lod = clamp(log2(pt_lin), float(u_pt_i[0].y), float(u_pt_i[0].z));",
    ]


def _color(key: ProctexKey, scissor_mode: int) -> list[str]:
    """``dvec4 pt_rgba``: the color table at ``pt_g`` with the mip filter."""
    lin = str(key.linear).lower()
    if key.mip is None:
        return [f"dvec4 pt_rgba = dvec4(pt_color(pt_g, 0, {lin}));"]
    lines = _lod(key, scissor_mode)
    if key.mip == "nearest":
        return [*lines, f"dvec4 pt_rgba = dvec4(pt_color(pt_g, clamp(int(roundEven(pt_lod)), 0, {MAX_LEVEL}), {lin}));"]
    return [
        *lines,
        f"int pt_lo = clamp(int(floor(pt_lod)), 0, {MAX_LEVEL}), pt_hi = min(pt_lo + 1, {MAX_LEVEL});",
        f"vec4 pt_a = pt_color(pt_g, pt_lo, {lin});",
        f"precise vec4 pt_ba = pt_color(pt_g, pt_hi, {lin}) - pt_a;",
        "precise double pt_t = double(pt_lod) - double(pt_lo);",
        "precise dvec4 pt_rgba = dvec4(pt_a) + dvec4(pt_ba) * pt_t;",
    ]


def functions(key: ProctexKey) -> str:
    """The generated GLSL functions ``proctex_lines`` calls (besides ``HELPERS``)."""
    c = key.column
    return glsl_lib.derivative_function("pt_derivative", f"vec2(varying_with(e, b, {c}), varying_with(e, b, {c + 1}))")


def proctex_lines(key: ProctexKey, scissor_mode: int) -> list[str]:
    """GLSL statements that set ``ivec4 s_tex3`` from the varyings, the uniforms and ``HELPERS`` (``scissor_mode``:
    the program's, for the neighbours the LOD's derivatives read)."""
    c = key.column
    lines = [
        f"vec2 pt_uv = vec2(varying_at({c}), varying_at({c + 1}));",
        "float pt_u = abs(nan_to_num(pt_uv.x)), pt_v = abs(nan_to_num(pt_uv.y));",
        f"precise float pt_us = {_shift('pt_v', key.u_shift, key.u_clamp)};",
        f"precise float pt_vs = {_shift('pt_u', key.v_shift, key.v_clamp)};",
    ]
    if key.noise:
        lines += [
            "float pt_n = pt_noise(pt_u, pt_v);",
            "precise float pt_un = pt_u + pt_n * u_pt_f[0].x;",
            "precise float pt_vn = pt_v + pt_n * u_pt_f[0].y;",
            "pt_u = abs(pt_un); pt_v = abs(pt_vn);",
        ]
    lines += [
        f"precise float pt_cu = pt_clamp(pt_u + pt_us, {CLAMP_CODES[key.u_clamp]});",
        f"precise float pt_cv = pt_clamp(pt_v + pt_vs, {CLAMP_CODES[key.v_clamp]});",
        f"precise float pt_f = {MAPPINGS[key.rgb_func].format(u='pt_cu', v='pt_cv')};",
        f"float pt_g = pt_lut128({LAYER['RGB map']}, pt_f);",
        *_color(key, scissor_mode),
        "ivec4 s_tex3 = pt_store(pt_rgba);",
    ]
    if key.alpha_func is not None:
        lines += [
            f"precise float pt_fa = {MAPPINGS[key.alpha_func].format(u='pt_cu', v='pt_cv')};",
            f"precise float pt_a8 = pt_lut128({LAYER['alpha map']}, pt_fa) * 255.0;",
            "s_tex3.a = int(pt_a8);",
        ]
    return lines
