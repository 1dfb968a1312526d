"""The fused fragment side's compiled kernel: one draw's window triangles -> pixels in memory, in one call.

``fragment_side`` runs the stages in the order of the staged path (``pipeline_fragments.FragmentSide._fragments``): the
rasterizer's ``_scan`` (bound, then emit), ``neighbours`` once per draw for the level of detail, the texture units, the
primary color's ``shading._round_one``, fragment lighting, the procedural texture, the TEV's ``_stage`` / ``_dot3`` per
stage as ``tev.combine`` runs them (``_combine``; a stage that outputs one of its sources unchanged by the draw's
constants or by a color all its fragments share runs none: ``_reproduced``), fog, the alpha test's pass table, and
``fragment.kernels.run_passes`` with the passes ``fragment_ops.resolve`` would choose (``fragment_ops.pass_kinds``, once
per plan). The texture units, their LOD's ``neighbours``, lighting, the procedural texture and fog are
``picaemu.fused.features``' kernels, called by address through the plan's ``links`` (compiled once, on their own, and
only for the captures that use them); the rasterizer's ``_scan``, the shading (``shade_fragments``), ``run_passes`` and
the TEV's ``_stage`` (by ``_combine``) are called by address too (``core_links`` fills their rows of ``links``, and
``run_passes``' own passes by address: each compiled once, on its own, instead of optimised and emitted again inside its
callers). Its arguments after the triangles are a ``picaemu.fused.fragments.FragmentPlan``'s ``args`` (``layout`` names
the slots of ``ints`` / ``units`` / ``tev_rows`` / ``color_ints``); nothing here reads a Python object.

Each stage is a pass over all of a draw's fragments (up to ``CHUNK_FRAGMENTS``), its arrays far larger than the
caches: running the shading in blocks of 1-64 k fragments instead was measured slower or no faster (minicraft's
draws, thirteenth session: the stages are bound by their arithmetic, and the sequential streams prefetch well), and
all of a draw's texels are read before any of its pixels is written (a draw sampling its own target reads them as
they were).
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import types

from picaemu import numba_link
from picaemu.color.shading import _round_one
from picaemu.color.tev import _dot3, _stage
from picaemu.color.tev_kernels import OP_ADD, OP_LERP, OP_MODULATE, OP_REPLACE, OP_SUBTRACT
from picaemu.fragment import kernels as fk
from picaemu.fragment.ops import FATE_OF_COUNTER
from picaemu.fused.features import (
    LINK_FOG,
    LINK_LIGHTING,
    LINK_NEIGHBOURS,
    LINK_PROCTEX,
    LINK_TEXTURE,
    NEIGHBOURS_ID,
    wrote,
)
from picaemu.fused.features import NUM_LINKS as NUM_FEATURE_LINKS
from picaemu.fused.layout import (
    ALPHA_TEST,
    BUF_COLOR,
    BUF_READ,
    C_FOG,
    C_LIGHTING,
    C_PROCTEX,
    COLOR_KIND,
    CONSTANT,
    DEPTH_KIND,
    DIVISION_BY_ZERO,
    DONE,
    KILLED_ALPHA,
    KILLED_DEPTH,
    KILLED_STENCIL,
    NUM_SLOTS,
    PRIMARY,
    PRIMARY_SLOT,
    PROCTEX_SLOT,
    RASTERIZED,
    SCISSORED,
    T_ACTIVE,
    T_ALPHA_CH,
    T_ALPHA_INV,
    T_ALPHA_OP,
    T_ALPHA_SHIFT,
    T_ALPHA_SRC,
    T_BUFFER_ALPHA,
    T_BUFFER_RGB,
    T_CONSTANT,
    T_DOT3,
    T_DOT3_RGBA,
    T_OUT,
    T_READS_CONSTANT,
    T_RGB_OP,
    T_RGB_SHIFT,
    T_RGB_SRC,
    T_SPLIT_BUFFER,
    TEX0,
    TEXELS,
    TEXTURE_FAULT,
    TOO_MANY_FRAGMENTS,
    U_NEEDS_LOD,
    U_USED,
    USES_BUFFER,
    WRITTEN,
    ZERO,
)
from picaemu.raster.rasterizer import CHUNK_FRAGMENTS, FRAGMENT_BYTES, ONE_PASS_BYTES, SCAN_BOUND, SCAN_EMIT, _scan


@numba_link.compiled_only()
def _fixed(row, uniform, slot, c0, c1, c2, inverted) -> int:  # pragma: no cover - compiled
    """The value every fragment's operand reading channels c0, c1, c2 of ``slot`` has when that is the same for all
    of them (the stage's constant, or a slot whose ``uniform`` row holds every fragment's color, with those channels
    equal; ``inverted``: 255 - it), else -1."""
    if slot == CONSTANT:
        v0, v1, v2 = row[T_CONSTANT + c0], row[T_CONSTANT + c1], row[T_CONSTANT + c2]
    else:
        v0, v1, v2 = uniform[slot, c0], uniform[slot, c1], uniform[slot, c2]
    if v0 < 0 or v0 != v1 or v0 != v2:
        return -1
    return 255 - v0 if inverted else v0


@numba_link.compiled_only()
def _kept(op, b_value, c_value, same) -> int:  # pragma: no cover - compiled
    """Which operand (0 or 1) combine op ``op`` returns unchanged when its operands b and c have the fixed values
    ``b_value`` / ``c_value`` (-1: not fixed) and ``same`` says whether a and b are the same operand, or -1: replace;
    modulate by 255, add or subtract 0 (a); interpolate with c = 255 (a) or 0 (b), or between equal a and b.
    Exact in integers: (a 255 + b 0) // 255 = a, (a c + a (255 - c)) // 255 = a."""
    if op == OP_REPLACE or (op == OP_MODULATE and b_value == 255):
        return 0
    if op in (OP_ADD, OP_SUBTRACT) and b_value == 0:
        return 0
    if op == OP_LERP and (c_value == 255 or same):
        return 0
    return 1 if op == OP_LERP and c_value == 0 else -1


@numba_link.compiled_only()
def _reproduced(row, ch, inv, alias, uniform) -> int:  # pragma: no cover - compiled
    """The source slot whose colors stage ``row`` (channels ``ch``, inversions ``inv``: ``tev_ch`` / ``tev_inv``;
    its slots read through ``alias``) outputs unchanged, or -1: no scaling, its RGB op keeping an uninverted operand
    that reads R, G, B of that slot, its alpha op one that reads A of it (``_kept``; ``uniform``: ``_uniform``'s
    rows). citro2d's last stage, a fade by a constant of alpha 0, is one; so is its sprites' first stage, a
    texture modulated by a white primary color. Never the constant or split-buffer slots, which stages refill."""
    if row[T_DOT3] or row[T_RGB_SHIFT] or row[T_ALPHA_SHIFT]:
        return -1
    a, b, c = alias[row[T_RGB_SRC]], alias[row[T_RGB_SRC + 1]], alias[row[T_RGB_SRC + 2]]
    same = a == b and inv[0] == inv[1] and ch[0, 0] == ch[1, 0] and ch[0, 1] == ch[1, 1] and ch[0, 2] == ch[1, 2]
    j = _kept(
        row[T_RGB_OP],
        _fixed(row, uniform, b, ch[1, 0], ch[1, 1], ch[1, 2], inv[1]),
        _fixed(row, uniform, c, ch[2, 0], ch[2, 1], ch[2, 2], inv[2]),
        same,
    )
    if j < 0 or inv[j] or ch[j, 0] != 0 or ch[j, 1] != 1 or ch[j, 2] != 2:
        return -1
    slot = a if j == 0 else b
    a, b, c = alias[row[T_ALPHA_SRC]], alias[row[T_ALPHA_SRC + 1]], alias[row[T_ALPHA_SRC + 2]]
    a_ch, b_ch, c_ch = row[T_ALPHA_CH], row[T_ALPHA_CH + 1], row[T_ALPHA_CH + 2]
    a_inv, b_inv = row[T_ALPHA_INV] != 0, row[T_ALPHA_INV + 1] != 0
    k = _kept(
        row[T_ALPHA_OP],
        _fixed(row, uniform, b, b_ch, b_ch, b_ch, b_inv),
        _fixed(row, uniform, c, c_ch, c_ch, c_ch, row[T_ALPHA_INV + 2] != 0),
        a == b and a_ch == b_ch and a_inv == b_inv,
    )
    if k < 0 or (a if k == 0 else b) != slot or (a_ch if k == 0 else b_ch) != 3 or (a_inv if k == 0 else b_inv):
        return -1
    return -1 if slot in (CONSTANT, BUF_READ) else slot


SHARED_BLOCK = 256  # fragments compared between two looks for a difference: a loop without exits vectorises


@numba_link.kernel()
def _shared(words) -> bool:  # pragma: no cover - compiled
    """Whether every row of ``words`` (F, 1) uint32 (a slot's colors, a word each) equals the first, compared in
    blocks of SHARED_BLOCK up to the first block that holds a difference."""
    n = words.shape[0]
    for start in range(0, n, SHARED_BLOCK):
        diff = np.uint32(0)
        for i in range(start, min(start + SHARED_BLOCK, n)):
            diff |= words[i, 0] ^ words[0, 0]
        if diff:
            return False
    return True


@numba_link.kernel()
def uniform_slots(src, primary, proctex):  # pragma: no cover - compiled
    """(SLOTS, 4) int64: the color every fragment of a slot of ``src`` shares, -1 where none is known (``_combine``'s
    ``uniform``): the zero slot, and the primary color and procedural texture slots (when ``primary`` /
    ``proctex``: filled) when every fragment has the first one's color (a white primary color, a procedural texture
    read at one coordinate pair; ``_shared``: a word compare per fragment up to the first block that differs)."""
    uniform = numba_link.empty((NUM_SLOTS, 4), np.int64)  # element loops, not np.full: a numpy function compiled less
    for slot in range(NUM_SLOTS):
        for ch in range(4):
            uniform[slot, ch] = 0 if slot == ZERO else -1
    for slot in (PRIMARY_SLOT, PROCTEX_SLOT):
        if not (primary if slot == PRIMARY_SLOT else proctex) or src.shape[1] == 0:
            continue
        colors = src[slot]
        same = _shared(colors.view(np.uint32))
        for ch in range(4):
            uniform[slot, ch] = colors[0, ch] if same else -1
    return uniform


@numba_link.kernel()
def _combine(
    src, tev_rows, tev_ch, tev_inv, buffer_color, uses_buffer, uniform, stage
) -> int:  # pragma: no cover - compiled
    """The stages of a ``tev_program.TevProgram`` (its rows in slots: ``fragments._tev_rows``) over the source slots
    ``src`` (SLOTS, F, 4), as ``tev.combine`` runs them; returns the slot holding the last stage's output. A stage
    that outputs one of its sources unchanged (``_reproduced``, by the constants of this draw and the ``uniform``
    (SLOTS, 4) colors of the source slots that hold one color, -1 elsewhere) runs no pass: its output slot names that
    source (``alias``) for the stages after it. ``stage``: the entry of ``_stage`` (``stage_entry``), called by
    address: its vector loop is optimised once, not again inside ``_combine`` and ``shade_fragments``."""
    n = src.shape[1]
    if uses_buffer:
        for i in range(n):
            for ch in range(4):
                src[BUF_COLOR, i, ch] = buffer_color[ch]
    alias = numba_link.empty(NUM_SLOTS, np.int64)  # not np.arange: a numpy function compiled less
    for slot in range(NUM_SLOTS):
        alias[slot] = slot
    last = ZERO
    for k in range(tev_rows.shape[0]):
        row = tev_rows[k]
        if not row[T_ACTIVE]:
            continue
        last = row[T_OUT]
        same = _reproduced(row, tev_ch[k], tev_inv[k], alias, uniform)
        if same >= 0:
            alias[last] = same
            continue
        # element loops: an array assignment compiles numba's shape-mismatch error (seconds of compile time)
        if row[T_READS_CONSTANT]:
            for i in range(n):
                for ch in range(4):
                    src[CONSTANT, i, ch] = row[T_CONSTANT + ch]
        if row[T_SPLIT_BUFFER]:
            rgb, alpha = src[alias[row[T_BUFFER_RGB]]], src[alias[row[T_BUFFER_ALPHA]]]
            for i in range(n):
                for ch in range(3):
                    src[BUF_READ, i, ch] = rgb[i, ch]
                src[BUF_READ, i, 3] = alpha[i, 3]
        out = src[last]
        rgb_src = (alias[row[T_RGB_SRC]], alias[row[T_RGB_SRC + 1]], alias[row[T_RGB_SRC + 2]])
        alpha_src = (alias[row[T_ALPHA_SRC]], alias[row[T_ALPHA_SRC + 1]], alias[row[T_ALPHA_SRC + 2]])
        dot3_rgba = row[T_DOT3_RGBA] != 0
        if row[T_DOT3]:
            _dot3(
                src[rgb_src[0]],
                src[rgb_src[1]],
                tev_ch[k],
                tev_inv[k],
                row[T_RGB_SHIFT],
                dot3_rgba,
                row[T_ALPHA_SHIFT],
                out,
            )
        if not dot3_rgba:
            ch, inv = tev_ch[k], tev_inv[k]
            operands = (
                src[rgb_src[0]],
                src[rgb_src[1]],
                src[rgb_src[2]],
                src[alpha_src[0]],
                src[alpha_src[1]],
                src[alpha_src[2]],
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
            numba_link.call(STAGE_ID, stage, operands)
    return alias[last]


@numba_link.kernel()
def shade_fragments(ox, oy, op, od, ov, texturing, coloring, local):  # pragma: no cover - compiled
    """The color of each of the n = ``ox.shape[0]`` fragments (window ``ox``, ``oy`` (n,) int32, primitive ``op``
    (n,) int32, depth ``od`` (n,) float32, the plan's ``active`` varyings ``ov`` (n, A) float32, quaternions as
    interpolated): texture units, primary color, lighting, procedural texture, TEV and fog, as ``fragment_side``
    shades them; adds the texel taps to ``local[TEXELS]``. ``texturing``: (ints, color_cols, units, textures,
    vram, fcram, links); ``coloring``: (tev_rows, tev_ch, tev_inv, buffer_color, color_ints, proctex_args,
    lighting, fog_lut, fog_rgb) (``fragment_side``'s arguments of those names). Returns (DONE, (n, 4) uint8
    colors) or (TEXTURE_FAULT, anything). ``fragment_side`` calls it; so does the observed compiled route
    (``picaemu.fused.observed``), which records what the per-fragment passes do to each fragment."""
    ints, color_cols, units, textures, vram, fcram, links = texturing
    tev_rows, tev_ch, tev_inv, buffer_color, color_ints, proctex_args, lighting, fog_lut, fog_rgb = coloring
    n = ox.shape[0]
    src = numba_link.empty((NUM_SLOTS, n, 4), np.uint8)
    src[ZERO] = 0
    nb = numba_link.empty((0, 4), np.int64)
    for u in range(units.shape[0]):
        if units[u, U_USED] and units[u, U_NEEDS_LOD] and nb.shape[0] == 0:  # one neighbour search per draw
            nb = numba_link.call(NEIGHBOURS_ID, links[LINK_NEIGHBOURS], (ox, oy, op))  # linked by such a plan only
    for u in range(units.shape[0]):
        if units[u, U_USED]:
            taps = numba_link.call(
                LINK_TEXTURE,
                links[LINK_TEXTURE],
                (u, ints, units, textures, vram, fcram, ov, nb, src[TEX0 + u]),
            )
            if taps < 0:
                return TEXTURE_FAULT, src[ZERO]
            local[TEXELS] += taps
    if ints[PRIMARY]:
        for i in range(n):
            for ch in range(4):
                c = color_cols[ch]
                src[PRIMARY_SLOT, i, ch] = _round_one(ov[i, c] if c >= 0 else np.float32(1.0))
    if color_ints[C_LIGHTING]:
        numba_link.call(LINK_LIGHTING, links[LINK_LIGHTING], (color_ints, lighting, ov, src))
    if color_ints[C_PROCTEX]:
        numba_link.call(LINK_PROCTEX, links[LINK_PROCTEX], (color_ints, proctex_args, ov, src[PROCTEX_SLOT]))
    uniform = uniform_slots(src, ints[PRIMARY] != 0, color_ints[C_PROCTEX] != 0)
    last = _combine(src, tev_rows, tev_ch, tev_inv, buffer_color, ints[USES_BUFFER] != 0, uniform, links[LINK_STAGE])
    color = src[last]
    if color_ints[C_FOG]:
        numba_link.call(LINK_FOG, links[LINK_FOG], (color_ints, fog_lut, fog_rgb, od, color))
    return DONE, color


@numba_link.kernel()
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
    textures,
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
    links,
    counts,
) -> int:  # pragma: no cover - compiled
    """The fragment side of one draw (``picaemu.fused.fragments``); adds its ``FRAGMENT_COUNTERS`` to ``counts``
    and returns DONE, or returns another code having written nothing (memory, counts)."""
    t = x.shape[0]
    tri = numba_link.zeros((t, 3), np.int64)
    no_var = numba_link.empty((0, 0), np.float32)
    no_i, no_f = numba_link.empty(0, np.int32), numba_link.empty(0, np.float32)
    scan, passes = links[LINK_SCAN], links[LINK_PASSES]
    # ``_scan``'s arguments (numba builds tuples by concatenation, not unpacking)
    triangles, bounding = (x, y, zndc, inv_w, vary, primitive, active, raster, dparams), (SCAN_BOUND, no_i, no_i)
    bound = numba_link.call(SCAN_ID, scan, triangles + bounding + (no_f, no_f, no_var, no_i, tri))
    if bound >= CHUNK_FRAGMENTS or bound * (FRAGMENT_BYTES + 4 * active.shape[0]) > ONE_PASS_BYTES:
        return TOO_MANY_FRAGMENTS  # the staged path chunks or counts first
    ox, oy, op = numba_link.empty(bound, np.int32), numba_link.empty(bound, np.int32), numba_link.empty(bound, np.int32)
    od, ow = numba_link.empty(bound, np.float32), numba_link.empty(bound, np.float32)
    ov = numba_link.empty((bound, active.shape[0]), np.float32)
    n = numba_link.call(SCAN_ID, scan, triangles + (SCAN_EMIT, ox, oy, od, ow, ov, op, tri))  # noqa: RUF005
    local = numba_link.zeros(counts.shape[0], np.int64)
    for k in range(t):
        if tri[k, 2]:
            return DIVISION_BY_ZERO
        local[SCISSORED] += tri[k, 1]
    local[RASTERIZED] = n + local[SCISSORED]
    if n:
        texturing = (ints, color_cols, units, textures, vram, fcram, links)
        coloring = (tev_rows, tev_ch, tev_inv, buffer_color, color_ints, proctex_args, lighting, fog_lut, fog_rgb)
        code, color = numba_link.call(
            SHADE_ID, links[LINK_SHADE], (ox[:n], oy[:n], op[:n], od[:n], ov[:n], texturing, coloring, local)
        )
        if code:
            return code
        alive = n
        if ints[ALPHA_TEST]:
            alive = 0
            for i in range(n):  # the survivors moved to the front in place (fancy indexing: compile time)
                if alpha_pass[color[i, 3]]:
                    ox[alive], oy[alive], od[alive] = ox[i], oy[i], od[i]
                    for ch in range(4):
                        color[alive, ch] = color[i, ch]
                    alive += 1
            local[KILLED_ALPHA] += n - alive
        if alive:  # ``fragment_ops.resolve``'s passes, chosen once per plan (``fragment_ops.pass_kinds``)
            killed = numba_link.zeros(3, np.int64)
            fragments = (ints[DEPTH_KIND], ints[COLOR_KIND], ox[:alive], oy[:alive], od[:alive], color[:alive])
            ops = (p, depth_buf, depth_words, stencil_tables, killed, numba_link.zeros(0, np.uint8), FATE_OF_COUNTER)
            colors = (color_buf, color_words, layout, pk, mask, r0, r1, r2, r3, logic, logic_table, write_mask)
            survived = numba_link.call(PASSES_ID, passes, fragments + ops + colors + (links[LINK_BYTE_PASSES:],))
            local[KILLED_STENCIL] += killed[fk.KILLED_STENCIL]
            local[KILLED_DEPTH] += killed[fk.KILLED_DEPTH]
            local[WRITTEN] += survived if p.color_write else 0
            wrote(ints, vram, fcram, textures[1])  # no level over these bytes is trusted (``level_cache.trusted``)
    counts += local
    return DONE


# The rasterizer, the shading and the per-fragment passes, called by address (``picaemu.numba_link``): each compiled
# once, on its own, instead of optimised and emitted again inside ``fragment_side``'s machine code. Their entries
# are rows of the plan's ``links`` after the features' (``features.LINK_*``), filled by ``core_links``; the rows
# from LINK_BYTE_PASSES on are ``run_passes``' own ``pass_links`` (``fragment.kernels.pass_links``).
LINK_SCAN, LINK_SHADE, LINK_PASSES, LINK_STAGE, LINK_BYTE_PASSES = range(NUM_FEATURE_LINKS, NUM_FEATURE_LINKS + 5)
NUM_LINKS = LINK_BYTE_PASSES + fk.NUM_PASS_LINKS
SCAN_ID, SHADE_ID, PASSES_ID, STAGE_ID = 9, 10, 11, 24
STAGE = numba_link.register(STAGE_ID, _stage, types.none)
# values of the types ``_combine`` passes ``_stage``: six operand slots, channels, inversions, op and scale of RGB
# then alpha, whether RGB is combined, the output slot
_SLOT = np.zeros((0, 4), np.uint8)
_STAGE_SAMPLE = (*(_SLOT,) * 6, (0,) * 9, (False,) * 3, 0, 0, (0,) * 3, (False,) * 3, 0, 0, True, _SLOT)


def stage_entry() -> np.ndarray:
    """(2,) int64: the entry of ``_stage`` for ``_combine``'s call (compiled or loaded on first use)."""
    return np.array(STAGE.entry(*_STAGE_SAMPLE), np.int64)


SCAN = numba_link.register(SCAN_ID, _scan, types.int64)
SHADE = numba_link.register(SHADE_ID, shade_fragments, types.Tuple((types.int64, types.Array(types.uint8, 2, "C"))))
PASSES = numba_link.register(PASSES_ID, fk.run_passes, types.int64)
# ``fragment_side``'s parameters that a plan's ``args`` fill (``FragmentPlan``), ``links`` the last of them
PLAN_PARAMS = tuple(inspect.signature(fragment_side.py_func).parameters)[6:-1]
# values of the types ``fragment_side`` passes its callees: the triangles (x, y (T, 3) int64; zndc, 1/w (T, 3)
# float32; varyings (T, 3, V) float32; primitive (T,) int32), fragments' int32 / float32 columns, varyings (F, A)
# float32, per-triangle scan counts and fragment counters (int64)
_TRIANGLES = (
    np.zeros((0, 3), np.int64),
    np.zeros((0, 3), np.int64),
    np.zeros((0, 3), np.float32),
    np.zeros((0, 3), np.float32),
    np.zeros((0, 3, 0), np.float32),
    np.zeros(0, np.int32),
)
_I32, _F32, _VARYINGS = np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros((0, 0), np.float32)
_INT64_2D, _INT64, _COLORS = np.zeros((0, 3), np.int64), np.zeros(0, np.int64), np.zeros((0, 4), np.uint8)
_FATE_OF_COUNTER = FATE_OF_COUNTER.view()  # as compiled code types a global array: read-only
_FATE_OF_COUNTER.flags.writeable = False
# ``shade_fragments``' ``texturing`` (then ``links``) and ``coloring``: these plan arguments
_TEXTURING = ("ints", "color_cols", "units", "textures", "vram", "fcram")
_COLORING = (
    "tev_rows",
    "tev_ch",
    "tev_inv",
    "buffer_color",
    "color_ints",
    "proctex_args",
    "lighting",
    "fog_lut",
    "fog_rgb",
)


def core_links(args: tuple, links: np.ndarray, stages: bool) -> None:
    """Fill ``links``' rows LINK_SCAN, LINK_SHADE, LINK_PASSES and LINK_STAGE with the entries
    (``numba_link.Linked.entry``) of ``_scan``, ``shade_fragments``, ``run_passes`` and the TEV's ``_stage`` (when
    ``stages``: a TEV stage of the plan is active) for the types ``fragment_side`` passes them with a plan whose
    ``args`` before ``links`` are ``args``, and the rows from LINK_BYTE_PASSES with those of the passes its depth and
    color kinds call by address (compiled on first use). What chooses an entry here besides the arguments' types is
    one of ``fragment_links.Switches`` (links are remembered by them)."""
    a = dict(zip(PLAN_PARAMS[:-1], args, strict=True))
    i32, f32 = _I32, _F32
    scan = (*_TRIANGLES, a["active"], a["raster"], a["dparams"], SCAN_BOUND, i32, i32, f32, f32, _VARYINGS, i32)
    links[LINK_SCAN] = SCAN.entry(*scan, _INT64_2D)
    if stages:  # else no stage to run: never compiled for this plan
        links[LINK_STAGE] = stage_entry()
    texturing = (*(a[k] for k in _TEXTURING), links)
    coloring = tuple(a[k] for k in _COLORING)
    links[LINK_SHADE] = SHADE.entry(i32, i32, i32, f32, _VARYINGS, texturing, coloring, _INT64)
    ops = ("p", "depth_buf", "depth_words", "stencil_tables")
    colors = ("color_buf", "color_words", "layout", "pk", "mask", "r0", "r1", "r2", "r3", "logic", "logic_table")
    passes = (
        a["ints"][DEPTH_KIND],
        a["ints"][COLOR_KIND],
        i32,
        i32,
        f32,
        _COLORS,
        *(a[k] for k in ops),
        _INT64,
        np.zeros(0, np.uint8),
        _FATE_OF_COUNTER,
        *(a[k] for k in colors),
        a["write_mask"],
    )
    links[LINK_BYTE_PASSES:] = fk.pass_links(*passes)
    links[LINK_PASSES] = PASSES.entry(*passes, links[LINK_BYTE_PASSES:])
