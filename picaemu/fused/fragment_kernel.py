"""The fused fragment side's compiled kernel: one draw's window triangles -> pixels in memory, in one call.

``fragment_side`` only calls the stages' own compiled kernels, in the order of the staged path
(``picaemu.pipeline.Pipeline._fragments``): the rasterizer's ``_scan`` (bound, then emit), the texture filter
``filtering.filter_2d`` over a memory texel source (``picaemu.texture.fetch``) and ``round_u8``, the primary color's
``shading._round_one``, the procedural texture's ``proctex.texels``, fragment lighting's ``light_fragments``, the TEV's
``_stage`` / ``_dot3`` per stage as ``tev.combine`` runs them, fog's ``fog.fog_colors``, the alpha test's pass table,
and ``fragment.kernels.run_passes`` with the passes ``fragment_ops.resolve`` would choose (``fragment_ops.pass_kinds``,
once per plan). Its arguments after the triangles are a ``picaemu.fused.fragments.FragmentPlan``'s ``args`` (that module
documents the layout of ``ints`` / ``units`` / ``tev_rows`` / ``color_ints``); nothing here reads a Python object.
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
from picaemu.texture.filtering import DECODED, filter_2d, round_u8

# return codes: 0 done; else the staged path must run the draw (nothing was written to memory)
DONE, TOO_MANY_FRAGMENTS, DIVISION_BY_ZERO, TEXTURE_FAULT = range(4)
# FRAGMENT_COUNTERS indices
RASTERIZED, SCISSORED, TEXELS, KILLED_ALPHA, KILLED_STENCIL, KILLED_DEPTH, WRITTEN = range(7)
# ints: texture addresses of units 0-2 (slots 0-2), then these
VRAM_BASE, FCRAM_BASE, USES_BUFFER, ALPHA_TEST, PRIMARY, DEPTH_KIND, COLOR_KIND = range(3, 10)
NUM_INTS = 10
# units rows: the unit is read (enabled and a TEV source), its level's byte offset from the base and size, the
# level's width, its log2 and height, texel word bits, wrap codes, linear filter, its texcoords' columns (-1 reads
# 1.0), the format's fields (``texture.fetch.channel_fields``: shifts and widths of R, G, B, A)
(
    U_USED,
    U_OFFSET,
    U_BYTES,
    U_WIDTH,
    U_WIDTH_LOG2,
    U_HEIGHT,
    U_WORD_BITS,
    U_WRAP_S,
    U_WRAP_T,
    U_LINEAR,
    U_COL_S,
    U_COL_T,
    U_FIELDS,
) = range(13)
UNIT_INTS = U_FIELDS + 8
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
def _texture(u, ints, units, border, vram, fcram, out_var, out):  # pragma: no cover - compiled
    """Unit ``u`` sampled for every fragment into ``out`` (F, 4) uint8 (``sampler._sample_2d`` + rounding, its
    texels read from memory); False when the level is not wholly inside VRAM or FCRAM."""
    address, size = ints[u] + units[u, U_OFFSET], units[u, U_BYTES]
    if vram.shape[0] and ints[VRAM_BASE] <= address and address + size <= ints[VRAM_BASE] + vram.shape[0]:
        data, start = vram, address - ints[VRAM_BASE]
    elif fcram.shape[0] and ints[FCRAM_BASE] <= address and address + size <= ints[FCRAM_BASE] + fcram.shape[0]:
        data, start = fcram, address - ints[FCRAM_BASE]
    else:
        return False
    n = out.shape[0]
    uv = np.empty((n, 2), np.float32)
    cs, ct = units[u, U_COL_S], units[u, U_COL_T]
    for i in range(n):
        uv[i, 0] = out_var[i, cs] if cs >= 0 else np.float32(1.0)
        uv[i, 1] = out_var[i, ct] if ct >= 0 else np.float32(1.0)
    width = units[u, U_WIDTH]
    layout = (
        start,
        units[u, U_WIDTH_LOG2],
        units[u, U_WORD_BITS],
        units[u, U_FIELDS],
        units[u, U_FIELDS + 1],
        units[u, U_FIELDS + 2],
        units[u, U_FIELDS + 3],
        units[u, U_FIELDS + 4],
        units[u, U_FIELDS + 5],
        units[u, U_FIELDS + 6],
        units[u, U_FIELDS + 7],
    )
    height, linear = units[u, U_HEIGHT], units[u, U_LINEAR] != 0
    zeros = np.zeros(n, np.int64)
    tables = (
        np.zeros((1, 1), np.int64),
        np.full(1, width, np.int64),
        np.full(1, height, np.int64),
        zeros,
        zeros,
        uv,
        np.full(n, linear, np.bool_),
        units[u, U_WRAP_S],
        units[u, U_WRAP_T],
        border[u],
    )
    if n * (4 if linear else 1) > width * height:  # more taps than texels: decode the level once, then gather
        texels = np.empty((width * height, 4), np.uint8)
        decode_level(data, layout, texels)
        filtered = filter_2d(texels, DECODED, *tables)
    else:
        filtered = filter_2d(data, layout, *tables)
    round_u8(filtered, out)
    return True


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
        for u in range(units.shape[0]):
            if units[u, U_USED]:
                if not _texture(u, ints, units, tex_border, vram, fcram, ov, src[TEX0 + u]):
                    return TEXTURE_FAULT
                local[TEXELS] += n * (4 if units[u, U_LINEAR] else 1)
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
