"""The fused fragment side's compiled kernel: one draw's window triangles -> pixels in memory, in one call.

``fragment_side`` only calls the stages' own compiled kernels, in the order of the staged path
(``picaemu.pipeline.Pipeline._fragments``): the rasterizer's ``_scan`` (bound, then emit), the level of detail and
level choice of ``picaemu.texture.lod`` (``neighbours`` once per draw, ``lods_of``, ``mip_choices``), the texture
filter ``filtering.filter_2d`` per level over a memory texel source (``picaemu.texture.fetch``: packed formats and
ETC1 / ETC1A4), the mip blend and ``round_u8``, the primary color's ``shading._round_one``, the procedural texture's
``proctex.texels``, fragment lighting's ``light_fragments``, the TEV's ``_stage`` / ``_dot3`` per stage as
``tev.combine`` runs them, fog's ``fog.fog_colors``, the alpha test's pass table, and ``fragment.kernels.run_passes``
with the passes ``fragment_ops.resolve`` would choose (``fragment_ops.pass_kinds``, once per plan). Its arguments
after the triangles are a ``picaemu.fused.fragments.FragmentPlan``'s ``args`` (that module documents the layout of
``ints`` / ``units`` / ``tev_rows`` / ``color_ints``); nothing here reads a Python object.
"""

from __future__ import annotations

import numba
import numpy as np

from picaemu.color.fog import fog_colors
from picaemu.color.lighting_kernel import G_BUMP, light_fragments
from picaemu.color.shading import _round_one
from picaemu.color.tev import _dot3, _stage
from picaemu.fragment import kernels as fk
from picaemu.fragment.ops import FATE_OF_COUNTER
from picaemu.raster.rasterizer import (
    CHUNK_FRAGMENTS,
    FRAGMENT_BYTES,
    ONE_PASS_BYTES,
    SCAN_BOUND,
    SCAN_EMIT,
    _scan,
    normalise_quaternions,
)
from picaemu.texture import proctex
from picaemu.texture.fetch import decode_level
from picaemu.texture.filtering import DECODED, cube_face, filter_2d, nan_to_num32, round_u8
from picaemu.texture.formats import MAX_SIZE, MIN_SIZE
from picaemu.texture.lod import TAPS_LINEAR, TAPS_NEAREST, lods_of, mip_choices, neighbours
from picaemu.texture.state import CUBE_LOW_MASK

# return codes: 0 done; else the staged path must run the draw (nothing was written to memory)
DONE, TOO_MANY_FRAGMENTS, DIVISION_BY_ZERO, TEXTURE_FAULT = range(4)
# FRAGMENT_COUNTERS indices
RASTERIZED, SCISSORED, TEXELS, KILLED_ALPHA, KILLED_STENCIL, KILLED_DEPTH, WRITTEN = range(7)
# ints: texture addresses of units 0-2 (slots 0-2), then these
VRAM_BASE, FCRAM_BASE, USES_BUFFER, ALPHA_TEST, PRIMARY, DEPTH_KIND, COLOR_KIND = range(3, 10)
NUM_INTS = 10
# units rows: the unit is read (enabled and a TEV source); level 0's width, its log2 and height; texel word bits;
# wrap codes; magnification, minification and mip filters linear; the LOD changes the result
# (``TextureUnitState.needs_lod``: else level ``min_level`` with the magnification filter); min and max level; the
# LOD bias in 1/``LOD_BIAS_SCALE`` levels; its texcoords' columns (-1 reads 1.0); faces (1, or 6 for a cube map,
# sampled at ``filtering.cube_face`` of (s, t, texcoord0.w)) and the w column; projection (s / w, t / w); the
# format's fields
# (``texture.fetch.channel_fields``: shifts and widths of R, G, B, A) and texel source kind (``fetch.KIND_*``); per
# level 0..MAX_LEVELS-1 its byte offset from the base, then its byte size (filled for min..max); faces 1-5's
# address bits inside ``state.CUBE_LOW_MASK`` (the rest are the live base address's: ``state._addresses``)
(
    U_USED,
    U_WIDTH,
    U_WIDTH_LOG2,
    U_HEIGHT,
    U_WORD_BITS,
    U_WRAP_S,
    U_WRAP_T,
    U_MAG_LINEAR,
    U_MIN_LINEAR,
    U_MIP_LINEAR,
    U_NEEDS_LOD,
    U_MIN_LEVEL,
    U_MAX_LEVEL,
    U_LOD_BIAS,
    U_COL_S,
    U_COL_T,
    U_FACES,
    U_COL_W,
    U_PROJECT,
    U_FIELDS,
) = range(20)
U_KIND = U_FIELDS + 8
U_OFFSETS = U_KIND + 1
MAX_LEVELS = (MAX_SIZE // MIN_SIZE).bit_length()  # 1024 .. 8 texels: levels 0-7
U_BYTES = U_OFFSETS + MAX_LEVELS
U_FACE_LOW = U_BYTES + MAX_LEVELS
CUBE_FACES = 6
UNIT_INTS = U_FACE_LOW + CUBE_FACES - 1
LOD_BIAS_SCALE = 256  # the bias register is signed fixed point 1.4.8: an exact float32 after the division
# source slots of the (SLOTS, F, 4) uint8 TEV inputs
ZERO, PRIMARY_SLOT, TEX0, CONSTANT, PREV_A, PREV_B, BUF_READ, BUF_NEXT = 0, 1, 2, 5, 6, 7, 8, 9
PROCTEX_SLOT, LIGHT_PRIMARY, LIGHT_SECONDARY = 10, 11, 12
NUM_SLOTS = 13
# color_ints: the procedural texture is read (unit 3 on and a TEV source), its u and v columns (-1 reads 1.0), fog
# on, fog z flip, fragment lighting computed, its bump unit, the columns of the quaternion (x4) and view (x3)
C_PROCTEX, C_PROCTEX_U, C_PROCTEX_V, C_FOG, C_FOG_FLIP, C_LIGHTING, C_BUMP_UNIT, C_QUAT = range(8)
C_VIEW = C_QUAT + 4
COLOR_INTS = C_VIEW + 3
# tev_rows: stage runs (not a pass-through), RGB source slots x3, alpha source slots x3, RGB op, RGB shift, alpha
# operand channels x3 and inversions x3, alpha op (the kernel's), alpha shift, dot3, dot3 RGBA, reads the
# constant, constant RGBA x4, output slot, buffer RGB / alpha update after it
(
    T_ACTIVE,
    T_RGB_SRC,
    T_ALPHA_SRC,
    T_RGB_OP,
    T_RGB_SHIFT,
    T_ALPHA_CH,
    T_ALPHA_INV,
    T_ALPHA_OP,
    T_ALPHA_SHIFT,
    T_DOT3,
    T_DOT3_RGBA,
    T_READS_CONSTANT,
    T_CONSTANT,
    T_OUT,
    T_RGB_UPDATE,
    T_ALPHA_UPDATE,
) = (0, 1, 4, 7, 8, 9, 12, 15, 16, 17, 18, 19, 20, 24, 25, 26)
TEV_INTS = 27


@numba.njit(cache=True)
def _level_filter(data, start, row, lv, st, linear, border):  # pragma: no cover - compiled
    """``filtering.filter_2d`` of fragments at ``st`` (F, 2) with ``linear`` (F,) on level ``lv`` of the image at
    byte ``start`` of ``data`` (a memory region): (F, 4) float32."""
    width, height = row[U_WIDTH] >> lv, row[U_HEIGHT] >> lv
    layout = (
        start + row[U_OFFSETS + lv],
        row[U_WIDTH_LOG2] - lv,
        row[U_WORD_BITS],
        row[U_FIELDS],
        row[U_FIELDS + 1],
        row[U_FIELDS + 2],
        row[U_FIELDS + 3],
        row[U_FIELDS + 4],
        row[U_FIELDS + 5],
        row[U_FIELDS + 6],
        row[U_FIELDS + 7],
        row[U_KIND],
    )
    m = st.shape[0]
    zeros = np.zeros(m, np.int64)
    tables = (
        np.zeros((1, 1), np.int64),
        np.full(1, width, np.int64),
        np.full(1, height, np.int64),
        zeros,
        zeros,
        st,
        linear,
        row[U_WRAP_S],
        row[U_WRAP_T],
        border,
    )
    if m + 3 * np.count_nonzero(linear) > width * height:  # more taps than texels: decode the level once, then gather
        texels = np.empty((width * height, 4), np.uint8)
        decode_level(data, layout, texels)
        return filter_2d(texels, DECODED, *tables)
    return filter_2d(data, layout, *tables)


@numba.njit(cache=True)
def _filter_level(data, start, row, lv, keys, key, st, linear, border, out):  # pragma: no cover - compiled
    """``_level_filter`` of the fragments whose ``keys`` entry is ``key`` into their rows of ``out`` (F, 4)."""
    pick = np.flatnonzero(keys == key)
    if pick.shape[0] == keys.shape[0]:  # every fragment on this level and face: no gather, no scatter
        out[:] = _level_filter(data, start, row, lv, st, linear, border)
    elif pick.shape[0]:
        out[pick] = _level_filter(data, start, row, lv, st[pick], linear[pick], border)


IN_VRAM, IN_FCRAM = 0, 1


@numba.njit(cache=True)
def _region(ints, vram, fcram, address, size):  # pragma: no cover - compiled
    """(IN_VRAM or IN_FCRAM, the offset of physical ``address`` in it) when ``size`` bytes there lie wholly inside
    that region, else (-1, 0)."""
    if vram.shape[0] and ints[VRAM_BASE] <= address and address + size <= ints[VRAM_BASE] + vram.shape[0]:
        return IN_VRAM, address - ints[VRAM_BASE]
    if fcram.shape[0] and ints[FCRAM_BASE] <= address and address + size <= ints[FCRAM_BASE] + fcram.shape[0]:
        return IN_FCRAM, address - ints[FCRAM_BASE]
    return -1, 0


@numba.njit(cache=True, error_model="numpy")  # w = 0 divides to inf / NaN, as numpy does
def _coords(row, out_var, st, face):  # pragma: no cover - compiled
    """The unit's coordinates ``st`` (F, 2) float32 and ``face`` (F,) int64 (``sampler.unit_coords``): its
    texcoords; for a projection texture (s / w, t / w) with NaN -> 0 and infinities clamped (``np.nan_to_num``);
    for a cube map the face and face coordinates of the direction (s, t, w)."""
    cs, ct, cw = row[U_COL_S], row[U_COL_T], row[U_COL_W]
    one = np.float32(1.0)
    for i in range(st.shape[0]):
        s = out_var[i, cs] if cs >= 0 else one
        t = out_var[i, ct] if ct >= 0 else one
        w = out_var[i, cw] if cw >= 0 else one
        if row[U_FACES] != 1:
            face[i], st[i, 0], st[i, 1], _ = cube_face(s, t, w)
        elif row[U_PROJECT]:
            st[i, 0], st[i, 1], face[i] = nan_to_num32(np.float32(s / w)), nan_to_num32(np.float32(t / w)), 0
        else:
            st[i, 0], st[i, 1], face[i] = s, t, 0


@numba.njit(cache=True)
def _texture(u, ints, units, border, vram, fcram, out_var, nb, out) -> int:  # pragma: no cover - compiled
    """Unit ``u`` sampled for every fragment into ``out`` (F, 4) uint8 (``sampler.sample`` + rounding, its texels
    read from memory; the per-fragment LOD from the ``lod.neighbours`` ``nb``); returns the texel taps, or -1 when
    a face's levels are not wholly inside VRAM or FCRAM."""
    row = units[u]
    first, needs_lod, faces = row[U_MIN_LEVEL], row[U_NEEDS_LOD] != 0, row[U_FACES]
    last = row[U_MAX_LEVEL] if needs_lod else first
    span = row[U_OFFSETS + last] + row[U_BYTES + last] - row[U_OFFSETS + first]
    starts = np.empty((faces, 2), np.int64)  # each face's region and the offset of its level 0 there
    for f in range(faces):
        base = ints[u] if f == 0 else (ints[u] & ~CUBE_LOW_MASK) | row[U_FACE_LOW + f - 1]
        which, at = _region(ints, vram, fcram, base + row[U_OFFSETS + first], span)
        if which < 0:
            return -1
        starts[f, 0], starts[f, 1] = which, at - row[U_OFFSETS + first]
    n = out.shape[0]
    st, face = np.empty((n, 2), np.float32), np.empty(n, np.int64)
    _coords(row, out_var, st, face)
    if faces == 1 and not needs_lod:  # the common case: one image, one level, one filter
        linear = np.full(n, row[U_MAG_LINEAR] != 0, np.bool_)
        data = vram if starts[0, 0] == IN_VRAM else fcram
        round_u8(_level_filter(data, starts[0, 1], row, first, st, linear, border[u]), out)
        return n * (TAPS_LINEAR if row[U_MAG_LINEAR] else TAPS_NEAREST)
    lo = np.full(n, first, np.int64)
    linear = np.full(n, row[U_MAG_LINEAR] != 0, np.bool_)
    frac = np.zeros(n, np.float32)
    taps = n * (TAPS_LINEAR if row[U_MAG_LINEAR] else TAPS_NEAREST)
    hi = lo
    if needs_lod:  # shading.sample_unit's LOD on level 0's texel coordinates, then lod.mip_choice per fragment
        texel = np.empty((n, 2), np.float32)
        size_st = (np.float32(row[U_WIDTH]), np.float32(row[U_HEIGHT]))
        for i in range(n):
            texel[i, 0], texel[i, 1] = st[i, 0] * size_st[0], st[i, 1] * size_st[1]
        lod = np.empty(n, np.float32)
        lods_of(nb, texel, np.float32(row[U_LOD_BIAS]) / np.float32(LOD_BIAS_SCALE), lod)
        hi = np.empty(n, np.int64)
        taps = mip_choices(
            lod,
            first,
            last,
            row[U_MAG_LINEAR] != 0,
            row[U_MIN_LINEAR] != 0,
            row[U_MIP_LINEAR] != 0,
            lo,
            hi,
            frac,
            linear,
        )
    color = np.empty((n, 4), np.float32)
    _filter_faces(vram, fcram, starts, row, first, last, lo * CUBE_FACES + face, st, linear, border[u], color)
    if needs_lod and row[U_MIP_LINEAR]:  # a fragment with weight 0 keeps the first level's color exactly
        second = np.empty((n, 4), np.float32)
        keys = np.where(frac != 0, hi * CUBE_FACES + face, -1)
        _filter_faces(vram, fcram, starts, row, first, last, keys, st, linear, border[u], second)
        for i in range(n):
            w = frac[i]
            if w != 0:
                for ch in range(4):
                    color[i, ch] = np.float32(np.float32(1.0) - w) * color[i, ch] + w * second[i, ch]
    round_u8(color, out)
    return taps


@numba.njit(cache=True)
def _filter_faces(vram, fcram, starts, row, first, last, keys, st, linear, border, out):  # pragma: no cover
    """``_filter_level`` of every face and level: the fragments whose key is level * CUBE_FACES + face."""
    for f in range(starts.shape[0]):
        data = vram if starts[f, 0] == IN_VRAM else fcram
        for lv in range(first, last + 1):
            _filter_level(data, starts[f, 1], row, lv, keys, lv * CUBE_FACES + f, st, linear, border, out)


@numba.njit(cache=True)
def _columns(color_ints, first, count, out_var, n):  # pragma: no cover - compiled
    """(n, count) float32: the varying columns ``color_ints[first:first + count]`` of the first ``n`` fragments
    (-1 reads 1.0)."""
    out = np.empty((n, count), np.float32)
    for k in range(count):
        c = color_ints[first + k]
        for i in range(n):
            out[i, k] = out_var[i, c] if c >= 0 else np.float32(1.0)
    return out


@numba.njit(cache=True)
def _proctex(color_ints, proctex_args, out_var, out):  # pragma: no cover - compiled
    """Unit 3's texel (``proctex.texels`` on level 0: the plan refuses mip filters) for every fragment into
    ``out`` (F, 4) uint8; ``proctex_args``: ``ProctexState.kernel_args``."""
    n = out.shape[0]
    uv = _columns(color_ints, C_PROCTEX_U, 2, out_var, n)
    codes, reals, maps, colors, levels = proctex_args
    proctex.texels(codes, reals, maps, colors, levels, uv, np.zeros(n, np.int64), np.full(n, -1), np.zeros(n), out)


@numba.njit(cache=True)
def _lighting(color_ints, lighting, out_var, src):  # pragma: no cover - compiled
    """Fragment lighting's primary and secondary colors into their slots of ``src`` (``light_fragments`` as
    ``lighting.compute_lighting`` calls it, the bump unit's texels from its slot; the plan refuses a shadow term);
    ``lighting``: ``lighting.kernel_arrays`` and the LUTs' values and differences."""
    lparams, lflags, slots, scale, gflags, ambient, value, diff = lighting
    n = src.shape[1]
    bump = np.empty((0, 4), np.float32)
    if gflags[G_BUMP]:
        texels = src[TEX0 + color_ints[C_BUMP_UNIT]]
        bump = np.empty((n, 4), np.float32)
        for i in range(n):
            for ch in range(4):
                bump[i, ch] = np.float32(texels[i, ch]) / np.float32(255.0)
    quat, view = _columns(color_ints, C_QUAT, 4, out_var, n), _columns(color_ints, C_VIEW, 3, out_var, n)
    if np.all(color_ints[C_QUAT : C_QUAT + 4] >= 0):  # as the rasterizer gives a fully mapped quaternion
        normalise_quaternions(quat)
    no_shadow = np.empty((0, 4), np.float32)
    primary, secondary = src[LIGHT_PRIMARY], src[LIGHT_SECONDARY]
    light_fragments(
        quat, view, bump, no_shadow, lparams, lflags, slots, scale, gflags, ambient, value, diff, primary, secondary
    )


@numba.njit(cache=True)
def _combine(src, tev_rows, tev_ch, tev_inv, buffer_color, uses_buffer) -> int:  # pragma: no cover - compiled
    """The six TEV stages over the source slots ``src`` (SLOTS, F, 4) as ``tev.combine`` runs them; returns the
    slot holding the last stage's output."""
    n = src.shape[1]
    if uses_buffer:
        for i in range(n):
            for ch in range(4):
                src[BUF_NEXT, i, ch] = buffer_color[ch]
    prev = ZERO
    for k in range(tev_rows.shape[0]):
        row = tev_rows[k]
        if row[T_ACTIVE]:
            if row[T_READS_CONSTANT]:
                for i in range(n):
                    for ch in range(4):
                        src[CONSTANT, i, ch] = row[T_CONSTANT + ch]
            out = src[row[T_OUT]]
            dot3_rgba = row[T_DOT3_RGBA] != 0
            if row[T_DOT3]:
                _dot3(
                    src[row[T_RGB_SRC]],
                    src[row[T_RGB_SRC + 1]],
                    tev_ch[k],
                    tev_inv[k],
                    row[T_RGB_SHIFT],
                    dot3_rgba,
                    row[T_ALPHA_SHIFT],
                    out,
                )
            if not dot3_rgba:
                ch, inv = tev_ch[k], tev_inv[k]
                _stage(
                    src[row[T_RGB_SRC]],
                    src[row[T_RGB_SRC + 1]],
                    src[row[T_RGB_SRC + 2]],
                    src[row[T_ALPHA_SRC]],
                    src[row[T_ALPHA_SRC + 1]],
                    src[row[T_ALPHA_SRC + 2]],
                    (ch[0, 0], ch[0, 1], ch[0, 2], ch[1, 0], ch[1, 1], ch[1, 2], ch[2, 0], ch[2, 1], ch[2, 2]),
                    (inv[0], inv[1], inv[2]),
                    row[T_RGB_OP],
                    row[T_RGB_SHIFT],
                    (row[T_ALPHA_CH], row[T_ALPHA_CH + 1], row[T_ALPHA_CH + 2]),
                    (row[T_ALPHA_INV] != 0, row[T_ALPHA_INV + 1] != 0, row[T_ALPHA_INV + 2] != 0),
                    row[T_ALPHA_OP],
                    row[T_ALPHA_SHIFT],
                    row[T_DOT3] == 0,
                    out,
                )
            prev = row[T_OUT]
        if uses_buffer:
            src[BUF_READ] = src[BUF_NEXT]
            if row[T_RGB_UPDATE]:
                src[BUF_NEXT, :, :3] = src[prev, :, :3]
            if row[T_ALPHA_UPDATE]:
                src[BUF_NEXT, :, 3] = src[prev, :, 3]
    return prev


@numba.njit(cache=True)
def fragment_side(
    x,
    y,
    zndc,
    inv_w,
    vary,
    primitive,
    ints,
    raster,
    dparams,
    active,
    color_cols,
    units,
    tex_border,
    tev_rows,
    tev_ch,
    tev_inv,
    buffer_color,
    color_ints,
    proctex_args,
    lighting,
    fog_lut,
    fog_rgb,
    alpha_pass,
    vram,
    fcram,
    p,
    stencil_tables,
    depth_buf,
    depth_words,
    color_buf,
    color_words,
    layout,
    pk,
    mask,
    r0,
    r1,
    r2,
    r3,
    logic,
    logic_table,
    write_mask,
    counts,
) -> int:  # pragma: no cover - compiled
    """The fragment side of one draw (``picaemu.fused.fragments``); adds its ``FRAGMENT_COUNTERS`` to ``counts``
    and returns DONE, or returns another code having written nothing (memory, counts)."""
    t = x.shape[0]
    tri = np.zeros((t, 3), np.int64)
    no_var = np.empty((0, 0), np.float32)
    no_i, no_f = np.empty(0, np.int32), np.empty(0, np.float32)
    bound = _scan(
        x,
        y,
        zndc,
        inv_w,
        vary,
        primitive,
        active,
        raster,
        dparams,
        SCAN_BOUND,
        no_i,
        no_i,
        no_f,
        no_f,
        no_var,
        no_i,
        tri,
    )
    if bound >= CHUNK_FRAGMENTS or bound * (FRAGMENT_BYTES + 4 * active.shape[0]) > ONE_PASS_BYTES:
        return TOO_MANY_FRAGMENTS  # the staged path chunks or counts first
    ox, oy, op = np.empty(bound, np.int32), np.empty(bound, np.int32), np.empty(bound, np.int32)
    od, ow = np.empty(bound, np.float32), np.empty(bound, np.float32)
    ov = np.empty((bound, active.shape[0]), np.float32)
    n = _scan(x, y, zndc, inv_w, vary, primitive, active, raster, dparams, SCAN_EMIT, ox, oy, od, ow, ov, op, tri)
    local = np.zeros(counts.shape[0], np.int64)
    for k in range(t):
        if tri[k, 2]:
            return DIVISION_BY_ZERO
        local[SCISSORED] += tri[k, 1]
    local[RASTERIZED] = n + local[SCISSORED]
    if n:
        src = np.empty((NUM_SLOTS, n, 4), np.uint8)
        src[ZERO] = 0
        nb = np.empty((0, 4), np.int64)
        for u in range(units.shape[0]):
            if units[u, U_USED] and units[u, U_NEEDS_LOD] and nb.shape[0] == 0:  # one neighbour search per draw
                nb = neighbours(ox[:n], oy[:n], op[:n])
        for u in range(units.shape[0]):
            if units[u, U_USED]:
                taps = _texture(u, ints, units, tex_border, vram, fcram, ov, nb, src[TEX0 + u])
                if taps < 0:
                    return TEXTURE_FAULT
                local[TEXELS] += taps
        if ints[PRIMARY]:
            for i in range(n):
                for ch in range(4):
                    c = color_cols[ch]
                    src[PRIMARY_SLOT, i, ch] = _round_one(ov[i, c] if c >= 0 else np.float32(1.0))
        if color_ints[C_LIGHTING]:
            _lighting(color_ints, lighting, ov, src)
        if color_ints[C_PROCTEX]:
            _proctex(color_ints, proctex_args, ov, src[PROCTEX_SLOT])
        color = src[_combine(src, tev_rows, tev_ch, tev_inv, buffer_color, ints[USES_BUFFER] != 0)]
        if color_ints[C_FOG]:
            fog_colors(fog_lut, fog_rgb, color_ints[C_FOG_FLIP] != 0, od[:n], color)
        alive = n
        if ints[ALPHA_TEST]:
            keep = np.empty(n, np.int64)
            alive = 0
            for i in range(n):
                keep[alive] = i
                alive += alpha_pass[color[i, 3]]
            local[KILLED_ALPHA] += n - alive
            if alive < n:
                keep = keep[:alive]
                ox, oy, od, color = ox[keep], oy[keep], od[keep], color[keep]
        if alive:  # ``fragment_ops.resolve``'s passes, chosen once per plan (``fragment_ops.pass_kinds``)
            killed = np.zeros(3, np.int64)
            survived = fk.run_passes(
                ints[DEPTH_KIND],
                ints[COLOR_KIND],
                ox[:alive],
                oy[:alive],
                od[:alive],
                color[:alive],
                p,
                depth_buf,
                depth_words,
                stencil_tables,
                killed,
                np.zeros(0, np.uint8),
                FATE_OF_COUNTER,
                color_buf,
                color_words,
                layout,
                pk,
                mask,
                r0,
                r1,
                r2,
                r3,
                logic,
                logic_table,
                write_mask,
            )
            local[KILLED_STENCIL] += killed[fk.KILLED_STENCIL]
            local[KILLED_DEPTH] += killed[fk.KILLED_DEPTH]
            local[WRITTEN] += survived if p.color_write else 0
    counts += local
    return DONE
