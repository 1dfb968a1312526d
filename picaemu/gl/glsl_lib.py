"""GLSL text shared by every generated program: the vertex shader, the uniform block and the helper functions
that port the software stages' arithmetic (texture wrap and filter, cube faces, TEV combine ops, fog).

Each helper states which software function it mirrors; generated code (``picaemu.gl.shadergen``) calls them with
compile-time constant mode arguments, so the GLSL compiler folds every branch a draw does not take. ``precise``
keeps the float32 steps unfused (no fma), in the software's order.
"""

from __future__ import annotations

from picaemu.color.lighting_kernel import LP_COUNT
from picaemu.raster.rasterizer import SCISSOR_EXCLUDE, SCISSOR_INCLUDE
from picaemu.regs.blocks.lighting import NUM_LIGHTS

VERSION = "#version 450 core\n"

# one vertex = 6 vec4 (24 floats): window x y (pixels: 12.4 values, exact in float32), z/w, 1/w; then the 18
# varying columns of picaemu.geometry.output_map (4..21) premultiplied by 1/w; then, in a triangle's first vertex,
# the index of the first window triangle clipping made of the same primitive and their count (SIBLING_FLOATS; 0 in
# the others). The vertex buffer doubles as the storage buffer the fragment shader reads its triangle's three
# vertices from (by gl_PrimitiveID).
VERTEX_VEC4S = 6
SIBLING_FLOATS = 22  # first sibling, sibling count
VERTEX_SHADER = (
    VERSION
    + """
layout(location = 0) in vec4 a_pos;
uniform vec2 u_size;
void main() {
    gl_Position = vec4(a_pos.xy / u_size * 2.0 - 1.0, 0.0, 1.0);
}
"""
)

# std140 block, filled by picaemu.gl.shadergen.uniform_block (offsets in 16-byte rows listed there)
UNIFORM_BLOCK = f"""
layout(std140, binding = 0) uniform Draw {{
    ivec4 u_tev_const[6];
    ivec4 u_tev_buffer;
    ivec4 u_border[3];
    vec4 u_lod[3];        // bias, min level, max level
    ivec4 u_alpha;        // reference
    ivec4 u_scissor;      // x1 y1 x2 y2 inclusive
    vec4 u_depth;         // scale, offset, format maximum
    vec4 u_fog_color;
    vec4 u_fog_lut[64];   // 128 values, then 128 deltas
    vec4 u_light[{NUM_LIGHTS * LP_COUNT // 4}];   // picaemu.gl.lightgen.lighting_rows: lighting_kernel LP_* per light
    vec4 u_slot_scale[2]; // LUT slot scales, lighting_kernel.SLOT_ORDER
    vec4 u_ambient;       // global ambient
    vec4 u_pt_f[2];       // proctexgen.proctex_rows: noise amplitude u v, phase u v; 9 x frequency u v, |width x bias|
    ivec4 u_pt_i[3];      // color-table width, min LOD, max LOD; level offsets 0-3, 4-7
    ivec4 u_shadow;       // x: unit 0's shadow depth bias, bit 0 cleared
}};
"""

HELPERS = (
    (
        f"const int SCISSOR_EXCLUDE = {SCISSOR_EXCLUDE}, SCISSOR_INCLUDE = {SCISSOR_INCLUDE};\n"
        f"const int SIBLING_FLOATS = {SIBLING_FLOATS};\n"
    )
    + """
layout(std430, binding = 1) readonly buffer Triangles { float tri[]; };
out vec4 o_color;

// picaemu.raster.rasterizer._emit, in float64 as the software does it: the exact integer edge values of this pixel's
// sample (16X + 8, 16Y + 8 in 12.4) as barycentric weights, the perspective divisor, z/w, w.
dvec3 g_e;           // edge values E0 E1 E2 (E_i: the edge opposite vertex i)
double g_inv_den;    // 1 / sum(E_i / w_i)
int g_base;          // first float of this triangle in tri[]

double vtx_at(int base, int j, int k) { return double(tri[base + 24 * j + k]); }
double vtx(int j, int k) { return vtx_at(g_base, j, k); }

void setup_barycentrics() {
    g_base = gl_PrimitiveID * 72;
    double px = double(gl_FragCoord.x) * 16.0, py = double(gl_FragCoord.y) * 16.0;
    for (int i = 0; i < 3; i++) {
        int a = (i + 1) % 3, b = (i + 2) % 3;
        double ax = vtx(a, 0) * 16.0, ay = vtx(a, 1) * 16.0;
        double dx = vtx(b, 0) * 16.0 - ax, dy = vtx(b, 1) * 16.0 - ay;
        g_e[i] = dx * (py - ay) - dy * (px - ax);
    }
    precise double den = g_e[0] * vtx(0, 3) + g_e[1] * vtx(1, 3) + g_e[2] * vtx(2, 3);
    g_inv_den = 1.0LF / den;
}

double weighted(int k) {  // sum(E_i * value_i) in the software's order
    precise double s = g_e[0] * vtx(0, k) + g_e[1] * vtx(1, k) + g_e[2] * vtx(2, k);
    return s;
}

float varying_at(int column) {  // column of picaemu.geometry.output_map minus 4, perspective-correct, as float32
    precise double v = weighted(4 + column) * g_inv_den;
    return float(v);
}

// picaemu.texture.lod.derivatives (``derivative_function``): the software's neighbour fragments are this triangle's
// pixels (fill rule), inside the framebuffer and not scissored away; GL's dFdx would read helper invocations instead
// (whose storage-buffer reads llvmpipe does not perform: NaN derivatives on every other triangle of a mesh), so the
// neighbours are evaluated from their edge values.
uniform vec2 u_size;

bool covers(int base, dvec2 p, out dvec3 e) {  // rasterizer._scan's coverage of sample p by triangle base
    for (int i = 0; i < 3; i++) {
        int a = (i + 1) % 3, b = (i + 2) % 3;
        double ax = vtx_at(base, a, 0) * 16.0, ay = vtx_at(base, a, 1) * 16.0;
        double dx = vtx_at(base, b, 0) * 16.0 - ax, dy = vtx_at(base, b, 1) * 16.0 - ay;
        e[i] = dx * (p.y - ay) - dy * (p.x - ax);
        if (e[i] + ((dy > 0.0LF || (dy == 0.0LF && dx < 0.0LF)) ? -1.0LF : 0.0LF) < 0.0LF) return false;
    }
    return true;
}

// the software's fragment of this primitive at pixel + d: its edge values e in the window triangle at tri[base]
// (this one or another that clipping made of the same primitive: the software's neighbour is any fragment with
// the primitive's number)
bool fragment_at(ivec2 d, int scissor_mode, out dvec3 e, out int base) {
    ivec2 p = ivec2(gl_FragCoord.xy) + d;
    e = dvec3(0.0LF);
    base = g_base;
    if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, ivec2(u_size)))) return false;
    bool inside = all(greaterThanEqual(p, u_scissor.xy)) && all(lessThanEqual(p, u_scissor.zw));
    if ((scissor_mode == SCISSOR_EXCLUDE && inside) || (scissor_mode == SCISSOR_INCLUDE && !inside)) return false;
    dvec2 sample_at = dvec2(p) * 16.0LF + 8.0LF;
    int first = int(vtx(0, SIBLING_FLOATS)), count = int(vtx(0, SIBLING_FLOATS + 1));
    for (int j = first; j < first + count; j++) {
        base = j * 72;
        if (covers(base, sample_at, e)) return true;
    }
    return false;
}

float varying_with(dvec3 e, int base, int column) {  // varying_at for the fragment of edge values e (_emit)
    precise double den = e[0] * vtx_at(base, 0, 3) + e[1] * vtx_at(base, 1, 3) + e[2] * vtx_at(base, 2, 3);
    precise double s = e[0] * vtx_at(base, 0, 4 + column) + e[1] * vtx_at(base, 1, 4 + column)
                       + e[2] * vtx_at(base, 2, 4 + column);
    precise double v = s * (1.0LF / den);
    return float(v);
}

float fragment_depth(bool w_buffer) {  // depth map and clamp; float32 as Fragments.depth
    precise double inv_area2 = 1.0LF / (g_e[0] + g_e[1] + g_e[2]);
    precise double z = weighted(2) * inv_area2;
    precise double depth = z * double(u_depth.x) + double(u_depth.y);
    if (w_buffer) {
        precise double w = g_inv_den / inv_area2;
        depth = depth * w;
    }
    return float(clamp(depth, 0.0LF, 1.0LF));
}

float nan_to_num(float x) {  // numpy.nan_to_num for float32
    if (isnan(x)) return 0.0;
    if (isinf(x)) return x > 0.0 ? 3.4028234663852886e38 : -3.4028234663852886e38;
    return x;
}

int wrap(int k, int n, int mode) {  // picaemu.texture.filtering.wrap; -1 = border
    if (mode == 0) return clamp(k, 0, n - 1);
    if (mode == 1) return (k >= 0 && k < n) ? k : -1;
    if (mode == 3) { int m = k & (2 * n - 1); return m < n ? m : 2 * n - 1 - m; }
    if (mode == 4) return k < 0 ? (k & (n - 1)) : min(k, n - 1);
    if (mode == 5) return k < 0 ? (k & (n - 1)) : (k < n ? k : -1);
    return k & (n - 1);
}

int floor_int(float x) {  // math.floor to an integer, clamped to a range where wrap's arithmetic stays exact
    return int(clamp(floor(x), -1073741824.0, 1073741824.0));
}

vec4 tap(usampler2DArray tex, int lv, int face, int s, int t, ivec4 border) {
    if (s < 0 || t < 0) return vec4(border);
    return vec4(texelFetch(tex, ivec3(s, t, face), lv));
}

// picaemu.texture.filtering.filter_2d for one fragment
vec4 filter_2d(usampler2DArray tex, int lv, int face, vec2 st, bool linear, int ws, int wt, ivec4 border) {
    // level lv's size from level 0's: llvmpipe's textureSize(tex, lv) with lv varying within a 2x2 quad returns
    // another pixel's level size (measured: a level-0 pixel beside level-2 pixels got the level-2 size)
    ivec2 size = max(textureSize(tex, 0).xy >> lv, ivec2(1));
    if (!linear) {
        int s = wrap(floor_int(st.x * float(size.x)), size.x, ws);
        int t = wrap(floor_int(st.y * float(size.y)), size.y, wt);
        return tap(tex, lv, face, s, t, border);
    }
    precise float ps = st.x * float(size.x) - 0.5;
    precise float pt = st.y * float(size.y) - 0.5;
    float fs = floor(ps), ft = floor(pt);
    precise float ax = ps - fs;
    precise float ay = pt - ft;
    int s0 = wrap(floor_int(fs), size.x, ws), s1 = wrap(floor_int(fs) + 1, size.x, ws);
    int t0 = wrap(floor_int(ft), size.y, wt), t1 = wrap(floor_int(ft) + 1, size.y, wt);
    precise float wy0 = 1.0 - ay;
    precise float wx0 = 1.0 - ax;
    precise vec4 acc = vec4(0.0);
    precise float w00 = wx0 * wy0;
    acc = acc + w00 * tap(tex, lv, face, s0, t0, border);
    precise float w10 = ax * wy0;
    acc = acc + w10 * tap(tex, lv, face, s1, t0, border);
    precise float w01 = wx0 * ay;
    acc = acc + w01 * tap(tex, lv, face, s0, t1, border);
    precise float w11 = ax * ay;
    acc = acc + w11 * tap(tex, lv, face, s1, t1, border);
    return acc;
}

ivec4 round_u8(vec4 c) {  // picaemu.texture.filtering.round_u8
    precise vec4 h = c + 0.5;
    return ivec4(min(h, vec4(255.0)));
}

// picaemu.texture.sampler.cube_coords: returns face coordinates, face in .z
vec3 cube_coords(vec3 d) {
    vec3 a = abs(d);
    bool xm = a.x > a.y && a.x > a.z;
    bool ym = !xm && a.y > a.z;
    float major = xm ? d.x : (ym ? d.y : d.z);
    float s = xm ? -d.z : (ym ? (d.y > 0.0 ? d.x : -d.x) : d.x);
    float t = xm ? (d.x > 0.0 ? -d.y : d.y) : (ym ? d.z : (d.z > 0.0 ? -d.y : d.y));
    int axis = xm ? 0 : (ym ? 1 : 2);
    precise float u = (s / major) * 0.5 + 0.5;
    precise float v = (t / major) * 0.5 + 0.5;
    return vec3(nan_to_num(u), nan_to_num(v), float(2 * axis + (major < 0.0 ? 1 : 0)));
}

float cube_major(vec3 d) {  // picaemu.texture.sampler.cube_coords: |major axis|
    vec3 a = abs(d);
    bool xm = a.x > a.y && a.x > a.z;
    bool ym = !xm && a.y > a.z;
    return xm ? a.x : (ym ? a.y : a.z);
}

// picaemu.texture.sampler._shadow + picaemu.fragment.shadow.shadow_compare: the nearest texel of level lv (an RGBA8
// shadow texel: depth = A << 16 | B << 8 | G, intensity = R) is lit (its intensity) when depth >= the reference
// trunc(clamp(ref, 0, 1) * 0xFFFFFF) - bias (at least 0), else 0
ivec4 shadow_lookup(usampler2DArray tex, int lv, int face, vec2 st, float ref, int ws, int wt, ivec4 border,
                    int bias) {
    ivec2 size = max(textureSize(tex, 0).xy >> lv, ivec2(1));
    precise double ks = floor(double(st.x) * double(size.x));  // float32 x integer: exact in float64, as numpy
    precise double kt = floor(double(st.y) * double(size.y));
    int s = wrap(int(clamp(ks, -1073741824.0LF, 1073741824.0LF)), size.x, ws);
    int t = wrap(int(clamp(kt, -1073741824.0LF, 1073741824.0LF)), size.y, wt);
    ivec4 texel = ivec4(tap(tex, lv, face, s, t, border));
    int stored = (texel.a << 16) | (texel.b << 8) | texel.g;
    precise double z_ref = double(clamp(ref, 0.0, 1.0)) * 16777215.0LF;
    int z = isnan(ref) ? 0 : max(int(z_ref) - bias, 0);
    return ivec4(stored >= z ? texel.r : 0);
}

ivec4 primary_u8(vec4 c) {  // picaemu.color.shading.primary_color: rint(clamp(c, 0, 1) * 255), NaN -> 0
    vec4 v = mix(vec4(0.0), min(c, vec4(1.0)), greaterThan(c, vec4(0.0)));
    precise vec4 s = v * 255.0;
    return ivec4(roundEven(s));
}

int div_trunc(int x, int d) { return x < 0 ? -((-x) / d) : x / d; }

// picaemu.color.tev_kernels._combine_one (one op, three operand vectors)
ivec4 tev_op(int op, ivec4 a, ivec4 b, ivec4 c) {
    if (op == 0) return a;
    if (op == 1) return a * b / 255;
    if (op == 2) return min(a + b, 255);
    if (op == 3) return clamp(a + b - 128, 0, 255);
    if (op == 4) return (a * c + b * (255 - c)) / 255;
    if (op == 5) return max(a - b, 0);
    if (op == 8) return min((a * b + 255 * c) / 255, 255);
    return min(a + b, 255) * c / 255;
}

int tev_dot3(ivec3 x, ivec3 y) {  // picaemu.color.tev._dot3 before scaling
    int total = 0;
    for (int ch = 0; ch < 3; ch++) total += div_trunc((2 * x[ch] - 255) * (2 * y[ch] - 255) + 128, 256);
    return clamp(total, 0, 255);
}

// picaemu.color.fog.fog_factor and apply_fog
ivec4 fog(ivec4 color, float depth, bool z_flip) {
    float d = clamp(depth, 0.0, 1.0);
    precise float x = (z_flip ? 1.0 - d : d) * 128.0;
    int i = int(clamp(floor(x), 0.0, 127.0));
    float value = u_fog_lut[i / 4][i % 4], delta = u_fog_lut[32 + i / 4][i % 4];
    precise float f = clamp(value + delta * (x - float(i)), 0.0, 1.0);
    precise vec3 mixed = f * vec3(color.rgb) + (1.0 - f) * u_fog_color.rgb;
    return ivec4(ivec3(mixed), color.a);
}

bool compare(int func, int a, int b) {  // picaemu.fragment.rules.COMPARE
    if (func == 0) return false;
    if (func == 1) return true;
    if (func == 2) return a == b;
    if (func == 3) return a != b;
    if (func == 4) return a < b;
    if (func == 5) return a <= b;
    if (func == 6) return a > b;
    return a >= b;
}
"""
)


def derivative_function(name: str, value: str) -> str:
    """GLSL ``vec2 {name}(ivec2 axis, int scissor_mode)``: ``picaemu.texture.lod.derivatives`` of the float32 vec2
    expression ``value`` (written in terms of ``e`` and ``b``, a fragment's edge values and its triangle's first
    float in ``tri[]``, e.g. ``vec2(varying_with(e, b, 0), varying_with(e, b, 1))``) along ``axis``: the difference
    to the next fragment of this primitive, else from the previous one, else 0 — the software's neighbour
    differences, evaluated at the neighbours' own edge values."""
    return f"""
vec2 {name}(ivec2 axis, int scissor_mode) {{
    dvec3 e = g_e;
    int b = g_base;
    vec2 here = {value};
    if (fragment_at(axis, scissor_mode, e, b)) {{ precise vec2 d = {value} - here; return d; }}
    if (fragment_at(-axis, scissor_mode, e, b)) {{ precise vec2 d = here - {value}; return d; }}
    return vec2(0.0);
}}
"""
