"""The compiled per-fragment lighting loop (numba) behind ``picaemu.color.lighting.compute_lighting``.

Pure arithmetic over packed arrays; ``picaemu.color.lighting`` decodes registers and packs them. Layouts:

- ``quat`` (F,4) f32 x y z w (any length; zero stays zero), ``view`` (F,3) f32; ``bump`` (F,4) f32 0..1 texels of
  the bump unit or (0,4); ``shadow`` (F,4) f32 0..1 shadow term (already inverted if asked) or (0,4).
- ``lparams`` (S, LP_COUNT) f32 per active slot, columns ``LP_*``; ``lflags`` (S, LF_COUNT) int32, columns ``LF_*``
  (booleans as 0/1, the light's SP and DA LUT ids, the hardware light it is: the compiled draw loop writes that
  light's colors into the row's ``LP_DIFFUSE`` .. ``LP_SPEC1`` columns before each draw, ``picaemu.fused.loop``).
- ``slots`` (7, SL_COUNT) int32 for the LUT slots in ``SLOT_ORDER`` (active, input code of ``INPUT_CODES``,
  signed, LUT id — -1 for SP, whose id is per light) and ``slot_scale`` (7,) f32.
- ``gflags`` (G_COUNT,) int32 global switches ``G_*``; ``ambient`` (3,) f32; ``value``/``diff`` (24,256) f32 LUTs.
- outputs ``primary``/``secondary`` (F,4) uint8, written as ``trunc(clamp(x, 0, 1) · 255 + 1/1024)``.

The arithmetic is the one ``picaemu.color.lighting``'s docstring states (pica-pipeline.md §12.4-12.6).
"""

from __future__ import annotations

import math

import numba
import numpy as np

SLOT_ORDER = ("d0", "d1", "sp", "fr", "rb", "rg", "rr")
D0, D1, SP, FR, RB, RG, RR = range(len(SLOT_ORDER))
SL_ACTIVE, SL_INPUT, SL_SIGNED, SL_LUT, SL_COUNT = range(5)
INPUT_CODES = {"N.H": 0, "V.H": 1, "N.V": 2, "L.N": 3, "-L.P": 4, "cos phi": 5}  # kernel-internal codes
LP_POS, LP_SPOT, LP_DIFFUSE, LP_AMBIENT, LP_SPEC0, LP_SPEC1 = 0, 3, 6, 9, 12, 15
LP_BIAS, LP_SCALE, LP_COUNT = 18, 19, 20
LF_DIRECTIONAL, LF_TWO_SIDED, LF_GEO0, LF_GEO1, LF_SPOT, LF_DIST, LF_SHADOW, LF_SP_LUT, LF_DA_LUT, LF_LIGHT = range(10)
LF_COUNT = LF_LIGHT + 1  # LF_LIGHT: the hardware light (0-7) of the row (its LIGHTn_* registers)
(G_FRESNEL_P, G_FRESNEL_S, G_CLAMP, G_CP, G_SHADOW_P, G_SHADOW_S, G_SHADOW_A, G_SHADOW, G_BUMP, G_RENORM, G_COUNT) = (
    range(11)
)
BUMP_CODES = {"none": 0, "bump map": 1, "tangent map": 2}
BUMP_NORMAL, BUMP_TANGENT = 1, 2
SIGNED_STEPS, UNSIGNED_STEPS, LAST = 128, 256, 255
TOLERANCE = 1.0 / 1024
GEO_COLUMNS = 12  # per-fragment geometry: normal, tangent, unit view, raw view


@numba.njit(cache=True, error_model="numpy", inline="always")
def _lut(value, diff, lut_id, x, signed):  # pragma: no cover - compiled
    """Entry ``floor(x * steps)`` clamped to the table, interpolated by the distance of the UNCLAMPED ``x * steps``
    from it: an input outside [0, 1] (unsigned) or [-1, 1] (signed), such as -L.P with a spot direction longer
    than 1 or N.H with a bump normal not renormalised, extrapolates along the end entry's difference, as the
    hardware does (``picaemu.color.lighting_luts``)."""
    if x != x:  # NaN (0 * Inf in a dot product) would floor to INT64_MIN: an index outside the table
        x = 0.0
    if signed:
        p = x * SIGNED_STEPS
        i = min(max(math.floor(p), -SIGNED_STEPS), SIGNED_STEPS - 1)
        idx = int(i) & LAST
    else:
        p = x * UNSIGNED_STEPS
        i = min(max(math.floor(p), 0), LAST)
        idx = int(i)
    return value[lut_id, idx] + diff[lut_id, idx] * (p - i)


@numba.njit(cache=True, error_model="numpy", inline="always")
def _rotate(qx, qy, qz, qw, vx, vy, vz):  # pragma: no cover - compiled
    cx = qy * vz - qz * vy + qw * vx
    cy = qz * vx - qx * vz + qw * vy
    cz = qx * vy - qy * vx + qw * vz
    return (vx + 2.0 * (qy * cz - qz * cy), vy + 2.0 * (qz * cx - qx * cz), vz + 2.0 * (qx * cy - qy * cx))


@numba.njit(cache=True, error_model="numpy", inline="always")
def _unit(x, y, z):  # pragma: no cover - compiled
    length = math.sqrt(x * x + y * y + z * z)
    if length > 0.0:
        return x / length, y / length, z / length, length
    return 0.0, 0.0, 0.0, 0.0


@numba.njit(cache=True, error_model="numpy", inline="always")
def _surface(quat, bump, i, bump_mode, renorm):  # pragma: no cover - compiled
    qx, qy, qz, qw = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
    qn = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if qn > 0.0:
        qx, qy, qz, qw = qx / qn, qy / qn, qz / qn, qw / qn
    nx, ny, nz, tx, ty, tz = 0.0, 0.0, 1.0, 1.0, 0.0, 0.0
    if bump_mode != 0:
        px, py, pz = 2.0 * bump[i, 0] - 1.0, 2.0 * bump[i, 1] - 1.0, 2.0 * bump[i, 2] - 1.0
        if bump_mode == BUMP_TANGENT:
            tx, ty, tz = px, py, pz
        else:
            nx, ny, nz = px, py, pz
            if renorm:
                nz = math.sqrt(max(1.0 - px * px - py * py, 0.0))
    n = _rotate(qx, qy, qz, qw, nx, ny, nz)
    t = _rotate(qx, qy, qz, qw, tx, ty, tz)
    return n, t


@numba.njit(cache=True, error_model="numpy", inline="always")
def _inputs(n, v, lv, h, t, spot, ln, cp_on):  # pragma: no cover - compiled
    """The six LUT inputs, indexed by ``INPUT_CODES``."""
    nh = n[0] * h[0] + n[1] * h[1] + n[2] * h[2]
    cp = 0.0
    if cp_on:
        cp = (h[0] - n[0] * nh) * t[0] + (h[1] - n[1] * nh) * t[1] + (h[2] - n[2] * nh) * t[2]
    return (
        nh,
        v[0] * h[0] + v[1] * h[1] + v[2] * h[2],
        n[0] * v[0] + n[1] * v[1] + n[2] * v[2],
        ln,
        lv[0] * spot[0] + lv[1] * spot[1] + lv[2] * spot[2],
        cp,
    )


@numba.njit(cache=True, error_model="numpy", inline="always")
def _slot(k, lut_id, slots, slot_scale, value, diff, inputs, two_sided, default):  # pragma: no cover - compiled
    if not slots[k, SL_ACTIVE]:
        return default
    x = inputs[slots[k, SL_INPUT]]
    signed = slots[k, SL_SIGNED] != 0
    if not signed:
        x = abs(x) if two_sided else max(x, 0.0)
    return slot_scale[k] * _lut(value, diff, lut_id, x, signed)


@numba.njit(cache=True, error_model="numpy")
def _store(out, i, r, g, b, a):  # pragma: no cover - compiled
    for c, x in enumerate((r, g, b, a)):
        out[i, c] = min(int(min(max(x, 0.0), 1.0) * 255.0 + TOLERANCE), 255)


@numba.njit(cache=True, error_model="numpy")
def _geometry(quat, view, bump, bump_mode, renorm, out):  # pragma: no cover - compiled
    """out[:, 0:3] normal, [3:6] tangent, [6:9] unit view vector, [9:12] the view vector as interpolated."""
    for i in range(quat.shape[0]):
        n, t = _surface(quat, bump, i, bump_mode, renorm)
        vx, vy, vz, _ = _unit(view[i, 0], view[i, 1], view[i, 2])
        out[i, 0], out[i, 1], out[i, 2] = n
        out[i, 3], out[i, 4], out[i, 5] = t
        out[i, 6], out[i, 7], out[i, 8] = vx, vy, vz
        out[i, 9], out[i, 10], out[i, 11] = view[i, 0], view[i, 1], view[i, 2]


@numba.njit(cache=True, error_model="numpy")
def _one_light(geo, shadow, lp, lf, slots, slot_scale, gflags, value, diff, last, dsum, ssum):
    # pragma: no cover - compiled
    cp_on = gflags[G_CP] != 0
    two = lf[LF_TWO_SIDED] != 0
    shadow_p = gflags[G_SHADOW] != 0 and lf[LF_SHADOW] != 0 and gflags[G_SHADOW_P] != 0
    shadow_s = gflags[G_SHADOW] != 0 and lf[LF_SHADOW] != 0 and gflags[G_SHADOW_S] != 0
    fresnel = last and (gflags[G_FRESNEL_P] or gflags[G_FRESNEL_S]) and slots[FR, SL_ACTIVE]
    spot = (lp[LP_SPOT], lp[LP_SPOT + 1], lp[LP_SPOT + 2])
    # per-light values as locals: loaded once, not once per fragment (stores to dsum/ssum could alias the arrays)
    directional, dist_on, spot_on = lf[LF_DIRECTIONAL] != 0, lf[LF_DIST] != 0, lf[LF_SPOT] != 0
    geo0, geo1, clamp = lf[LF_GEO0] != 0, lf[LF_GEO1] != 0, gflags[G_CLAMP] != 0
    sp_lut, da_lut = lf[LF_SP_LUT], lf[LF_DA_LUT]
    px, py, pz, da_scale, da_bias = lp[LP_POS], lp[LP_POS + 1], lp[LP_POS + 2], lp[LP_SCALE], lp[LP_BIAS]
    diffuse = (lp[LP_DIFFUSE], lp[LP_DIFFUSE + 1], lp[LP_DIFFUSE + 2])
    ambient = (lp[LP_AMBIENT], lp[LP_AMBIENT + 1], lp[LP_AMBIENT + 2])
    spec0 = (lp[LP_SPEC0], lp[LP_SPEC0 + 1], lp[LP_SPEC0 + 2])
    spec1 = (lp[LP_SPEC1], lp[LP_SPEC1 + 1], lp[LP_SPEC1 + 2])
    for i in range(geo.shape[0]):
        n = (geo[i, 0], geo[i, 1], geo[i, 2])
        t = (geo[i, 3], geo[i, 4], geo[i, 5])
        v = (geo[i, 6], geo[i, 7], geo[i, 8])
        if directional:
            lx, ly, lz, dist = _unit(px, py, pz)
        else:  # the raw view: |pos + view| is the distance that drives distance attenuation
            lx, ly, lz, dist = _unit(px + geo[i, 9], py + geo[i, 10], pz + geo[i, 11])
        lv = (lx, ly, lz)
        hx, hy, hz = v[0] + lx, v[1] + ly, v[2] + lz
        half_sq = hx * hx + hy * hy + hz * hz
        hnx, hny, hnz, _ = _unit(hx, hy, hz)
        h = (hnx, hny, hnz)
        ln = lx * n[0] + ly * n[1] + lz * n[2]
        ln_c = abs(ln) if two else max(ln, 0.0)
        atten = 1.0
        if dist_on:
            atten = _lut(value, diff, da_lut, min(max(da_scale * dist + da_bias, 0.0), 1.0), False)
        inputs = _inputs(n, v, lv, h, t, spot, ln, cp_on)
        if spot_on:
            atten *= _slot(SP, sp_lut, slots, slot_scale, value, diff, inputs, two, 1.0)
        d0 = _slot(D0, slots[D0, SL_LUT], slots, slot_scale, value, diff, inputs, two, 1.0)
        d1 = _slot(D1, slots[D1, SL_LUT], slots, slot_scale, value, diff, inputs, two, 1.0)
        rr = _slot(RR, slots[RR, SL_LUT], slots, slot_scale, value, diff, inputs, two, 1.0)
        rg = _slot(RG, slots[RG, SL_LUT], slots, slot_scale, value, diff, inputs, two, rr)
        rb = _slot(RB, slots[RB, SL_LUT], slots, slot_scale, value, diff, inputs, two, rr)
        refl = (rr, rg, rb)
        geo_f = min(ln_c / half_sq, 1.0) if half_sq > 0.0 else 0.0
        g0 = d0 * (geo_f if geo0 else 1.0)
        g1 = d1 * (geo_f if geo1 else 1.0)
        hl = 0.0 if clamp and ln_c == 0.0 else atten
        for c in range(3):
            lit = diffuse[c] * ln_c
            spec = (g0 * spec0[c] + g1 * refl[c] * spec1[c]) * hl
            if shadow_p:
                lit *= shadow[i, c]
            if shadow_s:
                spec *= shadow[i, c]
            dsum[i, c] += (lit + ambient[c]) * atten
            ssum[i, c] += spec
        if fresnel:
            fr = _slot(FR, slots[FR, SL_LUT], slots, slot_scale, value, diff, inputs, two, 1.0)
            if gflags[G_FRESNEL_P]:
                dsum[i, 3] = fr
            if gflags[G_FRESNEL_S]:
                ssum[i, 3] = fr


@numba.njit(cache=True, error_model="numpy")
def light_fragments(
    quat, view, bump, shadow, lparams, lflags, slots, slot_scale, gflags, ambient, value, diff, primary, secondary
):  # pragma: no cover - compiled
    """Fill ``primary`` and ``secondary`` (F,4) uint8 (see the module docstring)."""
    count = quat.shape[0]
    geo = np.empty((count, GEO_COLUMNS), np.float64)
    _geometry(quat, view, bump, gflags[G_BUMP], gflags[G_RENORM] != 0, geo)
    dsum = np.zeros((count, 4), np.float64)
    ssum = np.zeros((count, 4), np.float64)
    dsum[:, 3] = 1.0
    ssum[:, 3] = 1.0
    for k in range(lparams.shape[0]):
        _one_light(
            geo,
            shadow,
            lparams[k],
            lflags[k],
            slots,
            slot_scale,
            gflags,
            value,
            diff,
            k == lparams.shape[0] - 1,
            dsum,
            ssum,
        )
    shadow_alpha = gflags[G_SHADOW] != 0 and gflags[G_SHADOW_A] != 0
    for i in range(count):
        if shadow_alpha and gflags[G_FRESNEL_P]:
            dsum[i, 3] *= shadow[i, 3]
        if shadow_alpha and gflags[G_FRESNEL_S]:
            ssum[i, 3] *= shadow[i, 3]
        _store(primary, i, dsum[i, 0] + ambient[0], dsum[i, 1] + ambient[1], dsum[i, 2] + ambient[2], dsum[i, 3])
        _store(secondary, i, ssum[i, 0], ssum[i, 1], ssum[i, 2], ssum[i, 3])


__all__ = ["BUMP_CODES", "INPUT_CODES", "SLOT_ORDER", "light_fragments"]
