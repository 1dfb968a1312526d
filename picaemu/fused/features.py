"""The fused fragment side's features, each a kernel compiled on its own and called by address
(``picaemu.numba_link``): the texture units (``texture``), fragment lighting (``lighting``), the procedural texture
(``proctex``) and fog (``fog``). ``fragment_kernel.fragment_side`` calls the ones its plan turns on, through the
addresses in the plan's ``links`` (``LINK_*`` slots, filled by ``picaemu.fused.fragments`` for the features the
state uses): a capture that never fogs never compiles fog, and no feature is compiled again inside its caller.

The texture feature is two kernels: ``_texture`` samples one image on one level (the common case) and hands a
unit with mipmaps or a cube map to ``_levels``, which it calls by the address ``texture_args`` puts in its
``textures`` argument, compiled only when a plan first has such a unit (a capture without mipmaps or cube maps
never compiles the level of detail, the per-fragment level choice or the blend).

Each feature only calls the stages' own compiled kernels: the level of detail and level choice of
``picaemu.texture.lod``, the texture filter ``filtering.filter_2d`` (or ``nearest_u8``) per level over the level's
texels as decoded in the memory's ``picaemu.texture.level_cache`` — the whole level in its pool once
``level_at`` (the one rule of when a level is worth decoding) says so, else just the 4x4 blocks the draw taps,
decoded into its scratch (``tapped_level``: packed formats and ETC1 / ETC1A4 by ``picaemu.texture.fetch``) — the
mip blend and ``round_u8``; the procedural texture's ``proctex.texels_level0``; fragment lighting's
``light_fragments``; fog's ``fog.fog_colors``.
"""

from __future__ import annotations

import numpy as np
from numba import types

from picaemu import numba_link
from picaemu.color.fog import fog_colors
from picaemu.color.lighting_kernel import G_BUMP, light_fragments
from picaemu.fused.layout import (
    C_BUMP_UNIT,
    C_FOG_FLIP,
    C_PROCTEX_U,
    C_PROCTEX_V,
    C_QUAT,
    C_VIEW,
    CUBE_FACES,
    FCRAM_BASE,
    LIGHT_PRIMARY,
    LIGHT_SECONDARY,
    LOD_BIAS_SCALE,
    TARGETS,
    TEX0,
    U_BYTES,
    U_COL_S,
    U_COL_T,
    U_COL_W,
    U_FACE_LOW,
    U_FACES,
    U_FIELDS,
    U_HEIGHT,
    U_KIND,
    U_LAST_LEVEL,
    U_LOD_BIAS,
    U_MAG_LINEAR,
    U_MIN_LEVEL,
    U_MIN_LINEAR,
    U_MIP_LINEAR,
    U_NEEDS_LOD,
    U_OFFSETS,
    U_PROJECT,
    U_USED,
    U_WIDTH,
    U_WIDTH_LOG2,
    U_WORD_BITS,
    U_WRAP_S,
    U_WRAP_T,
    VRAM_BASE,
)
from picaemu.raster.rasterizer import normalise_quaternions
from picaemu.texture import level_cache, proctex
from picaemu.texture.filtering import cube_face, filter_2d, nan_to_num32, nearest_u8, round_u8
from picaemu.texture.level_cache import NOT_DECODED, coordinate_box, level_at, tapped_level, texels_left
from picaemu.texture.lod import TAPS_LINEAR, TAPS_NEAREST, lods_of, mip_choices, neighbours
from picaemu.texture.state import CUBE_LOW_MASK


@numba_link.kernel(inline="always")
def _layout(start, row, lv):  # pragma: no cover - compiled
    """The ``picaemu.texture.fetch`` layout of level ``lv`` of the unit ``row``'s image at byte ``start``."""
    return (
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


@numba_link.compiled_only(inline="always")  # small, twice: no library of its own
def _texels(cache, at, data, start, row, lv, st):  # pragma: no cover - compiled
    """(decoded texels, where level ``lv`` of the image at byte ``start`` of ``data`` (a memory region) starts in
    them) for the filters to tap at ``st`` (F, 2): the level cache's ``pool`` from texel ``at`` (``_texture`` asks the
    cache), or (``at`` negative: ``level_at`` left it in memory) its ``scratch`` from texel 0, the blocks tapped
    decoded there."""
    if at >= 0:
        return cache[2], at
    tapped_level(cache, at, data, _layout(start, row, lv), row[U_HEIGHT] >> lv, st, row[U_WRAP_S], row[U_WRAP_T])
    return cache[4], 0


@numba_link.compiled_only(inline="always")  # small, twice: no library of its own
def _level_filter(cache, at, data, start, row, lv, st, linear, border):  # pragma: no cover - compiled
    """``filtering.filter_2d`` of fragments at ``st`` (F, 2) with ``linear`` (F,) on level ``lv`` of the image at
    byte ``start`` of ``data`` (a memory region): (F, 4) float32, its texels as ``_texels`` gives them."""
    m = st.shape[0]
    zeros = numba_link.zeros(m, np.int64)
    texels, first = _texels(cache, at, data, start, row, lv, st)
    offsets, widths, heights = numba_link.empty((1, 1), np.int64), _one(row[U_WIDTH] >> lv), _one(row[U_HEIGHT] >> lv)
    offsets[0, 0] = first
    return filter_2d(texels, offsets, widths, heights, zeros, zeros, st, linear, row[U_WRAP_S], row[U_WRAP_T], border)


@numba_link.kernel(inline="always")
def _one(value):  # pragma: no cover - compiled
    """(1,) int64 holding ``value`` (allocated in the caller: ``numba_link.empty``)."""
    out = numba_link.empty(1, np.int64)
    out[0] = value
    return out


@numba_link.kernel(inline="always")
def _filled(n, value, out):  # pragma: no cover - compiled
    """``out[:n] = value`` element by element; returns ``out``."""
    for i in range(n):
        out[i] = value
    return out


@numba_link.compiled_only()
def _picked(keys, key, count, st, linear):  # pragma: no cover - compiled
    """(coordinates, linear flags, rows) of the ``count`` fragments whose ``keys`` entry is ``key``: ``st``,
    ``linear`` themselves and no rows when that is every fragment, else copies gathered element by element (numpy's
    fancy indexing compiles far more). Each array variable is assigned once: numba counts references to a variable
    assigned twice at every turn of a loop using it."""
    n = keys.shape[0]
    if count == n:
        return st, linear, numba_link.empty(0, np.int64)
    pick, st_pick, linear_pick = (
        numba_link.empty(count, np.int64),
        numba_link.empty((count, 2), np.float32),
        numba_link.empty(count, np.bool_),
    )
    k = 0
    for i in range(n):
        if keys[i] == key:
            pick[k], st_pick[k, 0], st_pick[k, 1], linear_pick[k] = i, st[i, 0], st[i, 1], linear[i]
            k += 1
    return st_pick, linear_pick, pick


@numba_link.compiled_only(inline="always")  # called once: no library of its own
def _filter_level(cache, at, data, start, row, lv, keys, key, st, linear, border, out):  # pragma: no cover
    """``_level_filter`` of the fragments whose ``keys`` entry is ``key`` into their rows of ``out`` (F, 4)."""
    n = keys.shape[0]
    count = 0
    for i in range(n):
        count += keys[i] == key
    if count == 0:
        return
    st_pick, linear_pick, pick = _picked(keys, key, count, st, linear)
    colors = _level_filter(cache, at, data, start, row, lv, st_pick, linear_pick, border)
    gathered = count < n
    for k in range(count):  # an array assignment compiles numba's shape-mismatch error
        i = pick[k] if gathered else k
        for ch in range(4):
            out[i, ch] = colors[k, ch]


IN_VRAM, IN_FCRAM = 0, 1


@numba_link.compiled_only(inline="always")  # small, once: no library of its own
def _region(ints, vram, fcram, address, size):  # pragma: no cover - compiled
    """(IN_VRAM or IN_FCRAM, the offset of physical ``address`` in it) when ``size`` bytes there lie wholly inside
    that region, else (-1, 0)."""
    if vram.shape[0] and ints[VRAM_BASE] <= address and address + size <= ints[VRAM_BASE] + vram.shape[0]:
        return IN_VRAM, address - ints[VRAM_BASE]
    if fcram.shape[0] and ints[FCRAM_BASE] <= address and address + size <= ints[FCRAM_BASE] + fcram.shape[0]:
        return IN_FCRAM, address - ints[FCRAM_BASE]
    return -1, 0


@numba_link.compiled_only()
def wrote(ints, vram, fcram, cache):  # pragma: no cover - compiled
    """The draw's render targets (``layout.TARGETS``) told to the memory's level cache (``level_cache.wrote``), in
    the region codes its levels are keyed by."""
    for k in range(2):
        address, size = ints[TARGETS + 2 * k], ints[TARGETS + 2 * k + 1]
        if size:
            region, at = _region(ints, vram, fcram, address, size)
            level_cache.wrote(cache, region, at, at + size)


@numba_link.compiled_only(error_model="numpy")  # w = 0 divides to inf / NaN, as numpy does (not inlined)
def _coords(row, out_var, st, face):  # pragma: no cover - compiled
    """The unit's coordinates ``st`` (F, 2) float32 and ``face`` (F,) int64 (``sampler.unit_coords``): its
    texcoords; for a projection texture (s / w, t / w) with NaN -> 0 and infinities clamped (``np.nan_to_num``);
    for a cube map the face and face coordinates of the direction (s, t, w)."""
    cs, ct, cw = row[U_COL_S], row[U_COL_T], row[U_COL_W]
    cube, project = row[U_FACES] != 1, row[U_PROJECT] != 0  # in registers: not reloaded after each store
    one = np.float32(1.0)
    for i in range(st.shape[0]):
        s = out_var[i, cs] if cs >= 0 else one
        t = out_var[i, ct] if ct >= 0 else one
        w = out_var[i, cw] if cw >= 0 else one
        if cube:
            face[i], st[i, 0], st[i, 1], _ = cube_face(s, t, w)
        elif project:
            st[i, 0], st[i, 1], face[i] = nan_to_num32(np.float32(s / w)), nan_to_num32(np.float32(t / w)), 0
        else:
            st[i, 0], st[i, 1], face[i] = s, t, 0


@numba_link.compiled_only()
def _texture(u, ints, units, textures, vram, fcram, out_var, nb, out) -> int:  # pragma: no cover - compiled
    """Unit ``u`` sampled for every fragment into ``out`` (F, 4) uint8 (``sampler.sample`` + rounding, its texels
    from the memory's ``level_cache``; the per-fragment LOD from the ``lod.neighbours`` ``nb``); ``textures``:
    ``texture_args``. One image on one level (the common case) here; mipmaps and cube maps by ``_levels``, called by
    address. Returns the texel taps, or -1 when a face's levels are not wholly inside VRAM or FCRAM."""
    border, cache, levels = textures
    row = units[u]
    first, last, needs_lod, faces = row[U_MIN_LEVEL], row[U_LAST_LEVEL], row[U_NEEDS_LOD] != 0, row[U_FACES]
    span = row[U_OFFSETS + last] + row[U_BYTES + last] - row[U_OFFSETS + first]
    starts = numba_link.empty((faces, 2), np.int64)  # each face's region and the offset of its level 0 there
    for f in range(faces):
        base = ints[u] if f == 0 else (ints[u] & ~CUBE_LOW_MASK) | row[U_FACE_LOW + f - 1]
        which, at = _region(ints, vram, fcram, base + row[U_OFFSETS + first], span)
        if which < 0:
            return -1
        starts[f, 0], starts[f, 1] = which, at - row[U_OFFSETS + first]
    n = out.shape[0]
    st, face = numba_link.empty((n, 2), np.float32), numba_link.empty(n, np.int64)
    _coords(row, out_var, st, face)
    if faces != 1 or needs_lod:
        return numba_link.call(LEVELS_ID, levels, (row, nb, cache, border[u], vram, fcram, starts, st, face, out))
    # no per-fragment arrays: a draw of a few dozen fragments pays for each allocation
    taps = n * (TAPS_LINEAR if row[U_MAG_LINEAR] else TAPS_NEAREST)
    data = vram if starts[0, 0] == IN_VRAM else fcram
    layout = _layout(starts[0, 1], row, first)
    height = row[U_HEIGHT] >> first
    want = texels_left(coordinate_box(st), row[U_WIDTH] >> first, height, taps)
    decoded = level_at(cache, starts[0, 0], data, layout, height, row[U_BYTES + first], want)
    if row[U_MAG_LINEAR]:
        everyone = _filled(n, True, numba_link.empty(n, np.bool_))
        round_u8(_level_filter(cache, decoded, data, starts[0, 1], row, first, st, everyone, border[u]), out)
        return taps
    texels, offset = _texels(cache, decoded, data, starts[0, 1], row, first, st)  # filtered nearest: to uint8
    w, h, wrap_s, wrap_t = row[U_WIDTH] >> first, row[U_HEIGHT] >> first, row[U_WRAP_S], row[U_WRAP_T]
    nearest_u8(texels, offset, w, h, st, wrap_s, wrap_t, border[u], out)
    return taps


@numba_link.compiled_only()
def _levels(row, nb, cache, border, vram, fcram, starts, st, face, out) -> int:  # pragma: no cover - compiled
    """``_texture`` of a unit with mipmaps or a cube map, from its ``starts`` (each face's region and the offset of
    its level 0 there), coordinates ``st`` (F, 2) and faces ``face`` (F,): each fragment's level(s) by its LOD
    (``lod.lods_of`` / ``mip_choices``), the cache asked once per level and face tapped, each level filtered for
    its fragments, the two levels of a linear mip filter blended. Compiled when a plan first needs it."""
    first, last, needs_lod = row[U_MIN_LEVEL], row[U_LAST_LEVEL], row[U_NEEDS_LOD] != 0
    n = out.shape[0]
    taps = n * (TAPS_LINEAR if row[U_MAG_LINEAR] else TAPS_NEAREST)
    blend = needs_lod and row[U_MIP_LINEAR] != 0  # a fragment with weight 0 keeps the first level's color exactly
    lo = _filled(n, first, numba_link.empty(n, np.int64))
    linear = _filled(n, row[U_MAG_LINEAR] != 0, numba_link.empty(n, np.bool_))
    frac = numba_link.zeros(n, np.float32)
    hi = lo
    if needs_lod:  # shading.sample_unit's LOD on level 0's texel coordinates, then lod.mip_choice per fragment
        texel = numba_link.empty((n, 2), np.float32)
        size_st = (np.float32(row[U_WIDTH]), np.float32(row[U_HEIGHT]))
        for i in range(n):
            texel[i, 0], texel[i, 1] = st[i, 0] * size_st[0], st[i, 1] * size_st[1]
        lod = numba_link.empty(n, np.float32)
        lods_of(nb, texel, np.float32(row[U_LOD_BIAS]) / np.float32(LOD_BIAS_SCALE), lod)
        hi = numba_link.empty(n, np.int64)
        mag, minify, mip = row[U_MAG_LINEAR] != 0, row[U_MIN_LINEAR] != 0, row[U_MIP_LINEAR] != 0
        taps = mip_choices(lod, first, last, mag, minify, mip, lo, hi, frac, linear)
    # level * CUBE_FACES + face of each fragment's first and second level (-1: none); the taps of each key
    keys, second_keys = numba_link.empty(n, np.int64), numba_link.empty(n, np.int64)
    demand = numba_link.zeros((last + 1) * CUBE_FACES, np.int64)
    for i in range(n):  # a loop, not np.where (1.2 s of compile)
        keys[i] = lo[i] * CUBE_FACES + face[i]
        second_keys[i] = hi[i] * CUBE_FACES + face[i] if blend and frac[i] != 0 else -1
        each = TAPS_LINEAR if linear[i] else TAPS_NEAREST
        demand[keys[i]] += each
        if second_keys[i] >= 0:
            demand[second_keys[i]] += each
    keyed, box = demand.shape[0], coordinate_box(st)
    at = _filled(keyed, NOT_DECODED, numba_link.empty(keyed, np.int64))  # each key's level in the cache's pool
    for key in range(first * CUBE_FACES, keyed):  # the cache asked once per level and face, with all its taps
        if demand[key]:
            lv, f = key // CUBE_FACES, key % CUBE_FACES
            data = vram if starts[f, 0] == IN_VRAM else fcram
            layout = _layout(starts[f, 1], row, lv)
            height = row[U_HEIGHT] >> lv
            want = texels_left(box, row[U_WIDTH] >> lv, height, demand[key])
            at[key] = level_at(cache, starts[f, 0], data, layout, height, row[U_BYTES + lv], want)
    color = numba_link.empty((n, 4), np.float32)
    _filter_faces(cache, at, vram, fcram, starts, row, first, last, keys, st, linear, border, color)
    if blend:
        second = numba_link.empty((n, 4), np.float32)
        _filter_faces(cache, at, vram, fcram, starts, row, first, last, second_keys, st, linear, border, second)
        for i in range(n):
            w = frac[i]
            if w != 0:
                for ch in range(4):
                    color[i, ch] = np.float32(np.float32(1.0) - w) * color[i, ch] + w * second[i, ch]
    round_u8(color, out)
    return taps


@numba_link.compiled_only()
def _filter_faces(cache, at, vram, fcram, starts, row, first, last, keys, st, linear, border, out):  # pragma: no cover
    """``_filter_level`` of every face and level: the fragments whose key is level * CUBE_FACES + face, each level
    read from the cache's ``pool`` at ``at[key]`` or, its tapped blocks decoded, from its ``scratch`` (``at[key]``
    negative, ``level_at``'s answer)."""
    for f in range(starts.shape[0]):
        region, start = starts[f, 0], starts[f, 1]
        data = vram if region == IN_VRAM else fcram
        for lv in range(first, last + 1):
            key = lv * CUBE_FACES + f
            _filter_level(cache, at[key], data, start, row, lv, keys, key, st, linear, border, out)


@numba_link.compiled_only()
def _columns(color_ints, first, count, out_var, n):  # pragma: no cover - compiled
    """(n, count) float32: the varying columns ``color_ints[first:first + count]`` of the first ``n`` fragments
    (-1 reads 1.0)."""
    out = numba_link.empty((n, count), np.float32)
    for k in range(count):
        c = color_ints[first + k]
        for i in range(n):
            out[i, k] = out_var[i, c] if c >= 0 else np.float32(1.0)
    return out


@numba_link.compiled_only()
def _proctex(color_ints, proctex_args, out_var, out):  # pragma: no cover - compiled
    """Unit 3's texel (``proctex.texels_level0``: the plan refuses mip filters) for every fragment into ``out``
    (F, 4) uint8, its coordinates read from the varyings ``out_var`` (F, A) in place; ``proctex_args``:
    ``ProctexState.kernel_args``."""
    codes, reals, maps, colors, levels = proctex_args
    cu, cv = color_ints[C_PROCTEX_U], color_ints[C_PROCTEX_V]
    proctex.texels_level0(codes, reals, maps, colors, levels, out_var, cu, cv, out)


@numba_link.compiled_only()
def _lighting(color_ints, lighting, out_var, src):  # pragma: no cover - compiled
    """Fragment lighting's primary and secondary colors into their slots of ``src`` (``light_fragments`` as
    ``lighting.compute_lighting`` calls it, the bump unit's texels from its slot; the plan refuses a shadow term);
    ``lighting``: ``lighting.kernel_arrays`` and the LUTs' values and differences."""
    lparams, lflags, slots, scale, gflags, ambient, value, diff = lighting
    n = src.shape[1]
    bump = numba_link.empty((0, 4), np.float32)
    if gflags[G_BUMP]:
        texels = src[TEX0 + color_ints[C_BUMP_UNIT]]
        bump = numba_link.empty((n, 4), np.float32)
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


@numba_link.compiled_only()
def _fog(color_ints, fog_lut, fog_rgb, depth, color):  # pragma: no cover - compiled
    """Fog (``fog.fog_colors``) over ``color`` (F, 4) uint8 by the fragments' ``depth`` (at least F)."""
    fog_colors(fog_lut, fog_rgb, color_ints[C_FOG_FLIP] != 0, depth[: color.shape[0]], color)


# ``links`` slots of the plan: the feature kernels by address (the first four are their link ids too)
LINK_TEXTURE, LINK_LIGHTING, LINK_PROCTEX, LINK_FOG, LINK_NEIGHBOURS = range(5)
NUM_LINKS = 5
TEXTURE = numba_link.register(LINK_TEXTURE, _texture, types.int64)
NEIGHBOURS_ID = 15  # ``lod.neighbours``: compiled when a plan first has a unit with a level of detail
NEIGHBOURS = numba_link.register(NEIGHBOURS_ID, neighbours, types.Array(types.int64, 2, "C"))
LEVELS_ID = 14  # ``_levels``, called by ``_texture`` at the entry ``texture_args`` gives it
LEVELS = numba_link.register(LEVELS_ID, _levels, types.int64)
LIGHTING = numba_link.register(LINK_LIGHTING, _lighting, types.none)
PROCTEX = numba_link.register(LINK_PROCTEX, _proctex, types.none)
FOG = numba_link.register(LINK_FOG, _fog, types.none)


# values of the types ``_texture`` passes ``_levels``: LOD neighbours (F, 4) int64, starts (faces, 2) int64,
# coordinates (F, 2) float32, faces (F,) int64, texels (F, 4) uint8
NEIGHBOURS_SAMPLE, _STARTS = np.zeros((0, 4), np.int64), np.zeros((0, 2), np.int64)
_ST, _FACES, TEXELS_SAMPLE = np.zeros((0, 2), np.float32), np.zeros(0, np.int64), np.zeros((0, 4), np.uint8)


def texture_args(border: np.ndarray, cache: tuple, units: np.ndarray, vram: np.ndarray, fcram: np.ndarray) -> tuple:
    """``_texture``'s ``textures``: the units' border colors (3, 4) float32, the memory's ``level_cache``, and the
    entry (``numba_link.Linked.entry``) of ``_levels``, compiled on first use, when a used unit of ``units`` (the
    plan's rows) has mipmaps or a cube map (0 otherwise: ``_texture`` then never calls it)."""
    levels = np.zeros(2, np.int64)
    used = units[:, U_USED] != 0
    if (used & ((units[:, U_NEEDS_LOD] != 0) | (units[:, U_FACES] != 1))).any():
        sample = (units[0], NEIGHBOURS_SAMPLE, cache, border[0], vram, fcram, _STARTS, _ST, _FACES, TEXELS_SAMPLE)
        levels[:] = LEVELS.entry(*sample)
    return border, cache, levels
