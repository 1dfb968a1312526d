"""Compiled per-fragment passes of ``picaemu.fragment.ops.resolve`` (numba, cache=True): one kernel per case, so
that a draw compiles only the passes it runs (a first draw on a fresh install pays for what it uses).

Every pass walks fragments in rasterization order and reads/writes pixel words of the tiled buffers in emulated
memory. Inputs: ``pix`` (F,) int64 each fragment's tiled pixel index (``framebuffer.tiled_pixels``, computed once
by ``run_passes`` in a loop that runs in vector lanes), ``depth`` (F,) float32, ``color`` (F, 4) uint8, ``p`` an
``OpsParams`` (fragment_ops: every field an int), ``survivors`` (S,) int32 indices (``interleaved`` takes window
pixels ``x``, ``y`` (F,) int32, y up).

- Word passes, for 32-bit pixels in 4-byte aligned buffers (``words``: a uint32 view, native = little-endian
  order, the byte order of the buffers): ``depth_words`` (depth test + write, stencil inactive, no fates),
  ``replace_words`` (the source replaces the pixel), ``logic_words`` (a logic op on whole words — every channel
  has 8 bits, so a bitwise op on the packed words is the op per channel — with the channel write mask, which
  also serves masked replace as the logic op "copy"), ``blend_words`` (blending: each round blends all its
  fragments in vector lanes, then writes them in order; fragments whose pixel an earlier one changed wait for the
  next round). ``run_passes`` replaces instead of blending when every survivor has one source alpha with which the
  blend writes the source itself (``_blend_replaces``).
- Byte passes, for everything else (2- and 3-byte pixels, unaligned buffers, stencil, buffers that share bytes,
  recorded draws): ``depth_stencil_pass``, ``color_pass``, and ``interleaved`` (both fragment by fragment; it also
  records each fragment's fate and its pixel's color before and after it for the fragment observer).

Helpers that take arrays and run per fragment are inlined by numba (``inline="always"``): a call of a compiled
function with array arguments costs reference counting per call, which LLVM's inlining does not remove; scalar
helpers are left to LLVM (numba's inlining of ``blend_channel`` at each of its call sites cost ~10 s of a first
run). ``run_passes`` calls the byte passes, ``logic_words`` and ``blend_words`` by address (``pass_links``).

Pixel words: ``pk`` packs 8-bit channels into a word (``packer``: 12 ints (channel, shift, 8 - bits) x 4, a missing
4th channel (0, 0, 8) adds nothing); a ``blend_words`` row (9 ints) is a ``blend.factor_rows`` row, the channel's
write mask and its shift in the word.
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import types

from picaemu import numba_link
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment.blend import (
    EQ_MIN,
    EQ_REVERSE_SUBTRACT,
    SEL_CONST,
    SEL_SRC_ALPHA,
    BlendMode,
    blend_channel,
    blend_factor,
    logic_pixel,
)

KILLED_STENCIL, KILLED_DEPTH, SURVIVED = range(3)  # counter indices of the passes
# the passes ``run_passes`` runs (``fragment_ops.pass_kinds`` picks them): depth/stencil, then color
DEPTH_NONE, DEPTH_WORDS, DEPTH_BYTES, INTERLEAVED = range(4)  # INTERLEAVED: both at once (color kind unused)
COLOR_NONE, COLOR_BYTES, REPLACE_WORDS, BLEND_WORDS, LOGIC_WORDS = range(5)


def packer(layout: tuple[tuple[int, int, int], ...]) -> tuple[int, ...]:
    """``pk`` of a ``framebuffer.COLOR_LAYOUTS`` entry (rows (channel, shift, bits))."""
    rows = [(ch, shift, 8 - bits) for ch, shift, bits in layout] + [(0, 0, 8)] * (4 - len(layout))
    return tuple(int(v) for row in rows for v in row)


# ---------------------------------------------------------------------------------------------- shared pieces
@numba_link.kernel(inline="always")
def _read_word(buf, offset: int, bpp: int) -> np.int64 | int:  # pragma: no cover - compiled
    """Little-endian ``bpp``-byte word at byte ``offset`` of ``buf`` (uint8, any alignment)."""
    word: np.int64 | int = 0
    for b in range(bpp):
        word |= np.int64(buf[offset + b]) << (8 * b)
    return word


@numba_link.kernel(inline="always")
def _write_word(buf, offset: int, word: int, bpp: int) -> None:  # pragma: no cover - compiled
    for b in range(bpp):
        buf[offset + b] = (word >> (8 * b)) & 0xFF


@numba_link.kernel(inline="always")
def _pack(src, row: int, pk) -> int:  # pragma: no cover - compiled
    """The pixel word of 8-bit channels ``src[row]``: each channel's top bits at its shift."""
    return (
        (np.int64(src[row, pk[0]]) >> pk[2]) << pk[1]
        | (np.int64(src[row, pk[3]]) >> pk[5]) << pk[4]
        | (np.int64(src[row, pk[6]]) >> pk[8]) << pk[7]
        | (np.int64(src[row, pk[9]]) >> pk[11]) << pk[10]
    )


@numba_link.kernel()
def _expand(v: int, bits: int) -> int:  # pragma: no cover - compiled
    """Bit replication of a ``bits``-wide value to 8 bits (``framebuffer._expand``)."""
    out = 0
    shift = 8 - bits
    while shift > -bits:
        out |= (v << shift) if shift >= 0 else (v >> -shift)
        shift -= bits
    return out & 0xFF


@numba_link.kernel(inline="always")
def _decode_pixel(buf, offset: int, bpp: int, layout, out, row: int) -> None:  # pragma: no cover - compiled
    """The pixel word at byte ``offset`` as 8-bit RGBA into ``out[row]`` (channels the format lacks read 255:
    ``framebuffer.decode_color``); layout (C, 3) (channel, shift, bits)."""
    word = _read_word(buf, offset, bpp)
    out[row, :] = 255
    for k in range(layout.shape[0]):
        ch, shift, bits = layout[k, 0], layout[k, 1], layout[k, 2]
        v = (word >> shift) & ((1 << bits) - 1)
        out[row, ch] = v if bits == 8 else _expand(v, bits)


@numba_link.compiled_only()
def _passes(mask: int, a: int, b: int) -> bool:  # pragma: no cover - compiled
    """``a FUNC b`` for the function whose ``rules.COMPARE`` mask is ``mask`` (no branch, no table load)."""
    return (mask >> (np.int64(a >= b) + np.int64(a > b))) & 1 != 0


@numba_link.compiled_only()
def _quantize(frag_depth, depth_max: int) -> np.int64:  # pragma: no cover - compiled
    """``framebuffer.quantize_depth`` of one fragment (NaN -> 0)."""
    d: float = np.float64(frag_depth)
    d = min(max(d, 0.0), 1.0) if d == d else 0.0
    return np.int64(d * depth_max)


# ---------------------------------------------------------------------------------------------- word passes
@numba_link.compiled_only()
def depth_words(pix, depth, p, words, survivors) -> int:  # pragma: no cover - compiled
    """Depth test + write of every fragment, stencil inactive (its stored bits stay), no fates; the stored word is
    always read, then dropped when reads are disabled. Survivors' indices -> ``survivors``; returns their number."""
    keep = np.int64(0xFFFFFFFF) if p.depth_read else np.int64(0)
    write = p.write_depth != 0
    n = 0
    for i in range(pix.shape[0]):
        pixel = pix[i]
        stored = words[pixel]
        word = np.int64(stored) & keep
        old_d = word & p.depth_max
        new_d = _quantize(depth[i], p.depth_max)
        passed = _passes(p.depth_pass, new_d, old_d)
        # branch-free: the test's outcome is data (random per fragment), a mispredicted branch costs more than a
        # store of the unchanged word
        words[pixel] = ((word & ~p.depth_max) | new_d) if passed and write and new_d != old_d else stored
        survivors[n] = i
        n += passed
    return n


@numba_link.compiled_only()
def replace_words(survivors, pix, color, words, pk) -> None:  # pragma: no cover - compiled
    for j in range(survivors.shape[0]):
        i = survivors[j]
        words[pix[i]] = _pack(color, i, pk)


@numba_link.compiled_only()
def logic_words(survivors, pix, color, p, words, pk, table, write_mask: int) -> None:  # pragma: no cover - compiled
    """``table``: the op's ``blend.LOGIC_TABLES`` row widened to words (each entry 0 or 0xFFFFFFFF);
    ``write_mask``: the word bits of the channels the color mask writes (the others keep the read value)."""
    keep = np.int64(0xFFFFFFFF) if p.color_read else np.int64(0)  # reads disabled: the destination reads 0
    t0, t1, t2, t3 = table
    for j in range(survivors.shape[0]):
        i = survivors[j]
        pixel = pix[i]
        d = np.int64(words[pixel]) & keep
        s = _pack(color, i, pk)
        ns, nd = ~s, ~d
        out = (t0 & ns & nd) | (t1 & ns & d) | (t2 & s & nd) | (t3 & s & d)
        words[pixel] = (out & write_mask) | (d & ~write_mask)


@numba_link.compiled_only()
def _blend_lanes(m: int, src, raw, keep, out, r0, r1, r2, r3) -> None:  # pragma: no cover - compiled
    """The blended words of ``m`` fragments, source colors ``src`` (R | G << 8 | B << 16 | A << 24) over stored
    words ``raw`` read through the mask ``keep``, -> ``out``: no branch and no memory access but the arrays' own,
    so the loop runs in vector lanes."""
    for j in range(m):
        s, d = np.int32(src[j]), np.int32(raw[j] & keep)
        s0, s1, s2, s3 = s & 0xFF, (s >> 8) & 0xFF, (s >> 16) & 0xFF, (s >> 24) & 0xFF
        d0, d1, d2, d3 = (d >> r0[8]) & 0xFF, (d >> r1[8]) & 0xFF, (d >> r2[8]) & 0xFF, (d >> r3[8]) & 0xFF
        sat = min(s3, 255 - d3)
        o0 = blend_channel(r0, s0, s3, d0, d3, sat) if r0[7] else d0
        o1 = blend_channel(r1, s1, s3, d1, d3, sat) if r1[7] else d1
        o2 = blend_channel(r2, s2, s3, d2, d3, sat) if r2[7] else d2
        o3 = blend_channel(r3, s3, s3, d3, d3, sat) if r3[7] else d3
        out[j] = np.uint32(np.uint32(o0) << r0[8] | np.uint32(o1) << r1[8] | np.uint32(o2) << r2[8])
        out[j] |= np.uint32(o3) << r3[8]


ROUNDS_WORK = 4  # blends a fragment may cost on average (rounds of deep overdraw) before one fragment a round


@numba_link.compiled_only()
def blend_words(survivors, pix, color, p, words, r0, r1, r2, r3) -> None:  # pragma: no cover - compiled
    """Blending into 8-bit-per-channel pixels; r0..r3 the rows of channels R G B A (module doc). In rounds over
    the fragments still to do, ``survivors[start:start + m]``: read each one's stored word and source color, blend
    them all at once in vector lanes (``_blend_lanes``), then write each result, in order, where its pixel still
    holds the word read (the blend is a function of the source and that word); the others, whose pixel an earlier
    fragment of the round changed, move to the front in order for the next round, which reads their pixels again.
    Once a pixel changes, its later fragments of the round all wait: each pixel's fragments keep their order. Past
    ``ROUNDS_WORK`` blends a fragment on average (many fragments on the same pixels), the rest go one a round.
    ``survivors`` is overwritten."""
    keep = np.uint32(0xFFFFFFFF) if p.color_read else np.uint32(0)  # reads disabled: the destination reads 0
    n = survivors.shape[0]
    at, raw = numba_link.empty(n, np.int64), numba_link.empty(n, np.uint32)
    src, out = numba_link.empty(n, np.uint32), numba_link.empty(n, np.uint32)
    start, m, work = 0, n, 0
    while m:
        step = m if work <= ROUNDS_WORK * n else 1
        work += step
        for j in range(step):
            i = survivors[start + j]
            at[j] = pix[i]
            raw[j] = words[at[j]]
            src[j] = np.uint32(color[i, 0]) | np.uint32(color[i, 1]) << 8 | np.uint32(color[i, 2]) << 16
            src[j] |= np.uint32(color[i, 3]) << 24
        _blend_lanes(step, src, raw, keep, out, r0, r1, r2, r3)
        left = 0
        for j in range(step):
            if words[at[j]] == raw[j]:
                words[at[j]] = out[j]
            else:
                survivors[start + left] = survivors[start + j]
                left += 1
        start, m = (start + 1, m - 1) if step < m else (start, left)  # one a round: none waits


@numba_link.compiled_only()
def _blend_replaces(survivors, color, r0, r1, r2, r3) -> bool:  # pragma: no cover - compiled
    """Whether blending by rows r0..r3 writes each of the (at least one) ``survivors``' own color, so that
    ``replace_words`` gives the same pixels: all of one source alpha, with which each channel is written, its
    factors are fixed (constants, or that alpha) at 255 for the source and 0 for the destination, and its equation
    then gives S x 255 (add, subtract, max). citro2d's untextured draws blend an opaque color by its alpha."""
    alpha, zero = np.int32(color[survivors[0], 3]), np.int32(0)
    for row in (r0, r1, r2, r3):
        fixed = (row[1] == SEL_CONST or row[1] == SEL_SRC_ALPHA) and (row[4] == SEL_CONST or row[4] == SEL_SRC_ALPHA)
        fs = blend_factor(row[1], np.int32(255 * row[2]), np.int32(row[3]), zero, alpha, zero, zero, zero)
        fd = blend_factor(row[4], np.int32(255 * row[5]), np.int32(row[6]), zero, alpha, zero, zero, zero)
        if not (row[7] and fixed and fs == 255 and fd == 0 and row[0] != EQ_REVERSE_SUBTRACT and row[0] != EQ_MIN):
            return False
    for j in range(survivors.shape[0]):  # noqa: SIM110 - a loop, not all() of a generator: compiled code
        if color[survivors[j], 3] != alpha:
            return False
    return True


# ---------------------------------------------------------------------------------------------- byte passes
@numba_link.kernel(inline="always")
def _depth_stencil(p, frag_depth, buf, offset, stencil_new) -> int:  # pragma: no cover - compiled
    """Test one fragment against its pixel's stored word, store the new word when it changes; returns the counter
    index of its fate (KILLED_STENCIL, KILLED_DEPTH or SURVIVED)."""
    word = _read_word(buf, offset, p.depth_bpp) if p.depth_read else 0
    old_d = word & p.depth_max
    new_d = _quantize(frag_depth, p.depth_max)
    old_s = (word >> fbm.STENCIL_SHIFT) & 0xFF if p.stencil_active else 0  # stencil_active implies D24S8
    s_pass = not p.stencil_active or _passes(p.stencil_pass, p.stencil_ref, old_s & p.stencil_input_mask)
    d_pass = s_pass and _passes(p.depth_pass, new_d, old_d)
    new_s = old_s
    if p.stencil_active and p.write_stencil:
        new_s = stencil_new[0 if not s_pass else (1 if not d_pass else 2), old_s]
    if not (d_pass and p.write_depth):
        new_d = old_d
    if new_d != old_d or new_s != old_s:  # the stored stencil bits stay when the stencil is inactive
        keep = (word & ~p.depth_max) if not p.stencil_active else (new_s << fbm.STENCIL_SHIFT)
        _write_word(buf, offset, keep | new_d, p.depth_bpp)
    if not s_pass:
        return KILLED_STENCIL
    return SURVIVED if d_pass else KILLED_DEPTH


@numba_link.compiled_only()
def depth_stencil_pass(
    pix, depth, p, depth_buf, stencil_new, counts, fate, fate_of, survivors
) -> int:  # pragma: no cover - compiled
    """Depth/stencil of every fragment in order: the survivors' indices -> ``survivors`` (returns their number),
    the killed ones counted in ``counts``, each fate -> ``fate`` when it has one entry per fragment (from
    ``fate_of``); ``stencil_new`` (3, 256): ``fragment_ops.stencil_tables``."""
    record = fate.shape[0] == pix.shape[0]
    n = 0
    for i in range(pix.shape[0]):
        result = _depth_stencil(p, depth[i], depth_buf, pix[i] * p.depth_bpp, stencil_new)
        if record:
            fate[i] = fate_of[result]
        if result == SURVIVED:
            survivors[n] = i
            n += 1
        else:
            counts[result] += 1
    return n


@numba_link.kernel(inline="always", error_model="numpy")
def _color_one(
    i, offset, color, p, color_buf, layout, pk, mask, r0, r1, r2, r3, logic, dst, out
) -> None:  # pragma: no cover - compiled
    """Destination read, blend / logic op, write mask and color write of fragment ``i`` at byte ``offset``;
    ``dst`` / ``out`` (1, 4) uint8 scratch rows; r0..r3 the blend rows of channels R G B A (``blend_words``)."""
    for ch in range(4):
        out[0, ch] = color[i, ch]
    if p.need_dst:
        if p.color_read:
            _decode_pixel(color_buf, offset, p.color_bpp, layout, dst, 0)
        else:
            for ch in range(4):  # reads disabled: the destination reads 0 (a loop: a slice fill compiles more)
                dst[0, ch] = 0
        if p.blend_mode == BlendMode.BLEND:
            s0, s1, s2, s3 = np.int64(color[i, 0]), np.int64(color[i, 1]), np.int64(color[i, 2]), np.int64(color[i, 3])
            d0, d1, d2, d3 = np.int64(dst[0, 0]), np.int64(dst[0, 1]), np.int64(dst[0, 2]), np.int64(dst[0, 3])
            sat = min(s3, 255 - d3)
            out[0, 0] = blend_channel(r0, s0, s3, d0, d3, sat)
            out[0, 1] = blend_channel(r1, s1, s3, d1, d3, sat)
            out[0, 2] = blend_channel(r2, s2, s3, d2, d3, sat)
            out[0, 3] = blend_channel(r3, s3, s3, d3, d3, sat)
        elif p.blend_mode == BlendMode.LOGIC:
            for ch in range(4):
                out[0, ch] = logic_pixel(np.int64(color[i, ch]), np.int64(dst[0, ch]), logic)
        for ch in range(4):
            if not mask[ch]:
                out[0, ch] = dst[0, ch]
    _write_word(color_buf, offset, _pack(out, 0, pk), p.color_bpp)


@numba_link.compiled_only(error_model="numpy")  # no divisor left (blending's quotient by 255 is ``div255``)
def color_pass(
    survivors, pix, color, p, color_buf, layout, pk, mask, r0, r1, r2, r3, logic
) -> None:  # pragma: no cover - compiled
    """Destination read, blend / logic op, write mask and color write of the fragments ``survivors``, any pixel
    size. layout (C, 3) (channel, shift, bits); mask (4,) bool color write mask; r0..r3 the blend rows
    (``blend_words``); logic the logic op's ``blend.LOGIC_TABLES`` row."""
    dst = numba_link.empty((1, 4), np.uint8)
    out = numba_link.empty((1, 4), np.uint8)
    for j in range(survivors.shape[0]):
        i = survivors[j]
        offset = pix[i] * p.color_bpp
        _color_one(i, offset, color, p, color_buf, layout, pk, mask, r0, r1, r2, r3, logic, dst, out)


@numba_link.kernel(error_model="numpy")
def interleaved(
    x,
    y,
    depth,
    color,
    p,
    depth_buf,
    stencil_new,
    counts,
    fate_of,
    color_buf,
    fate,
    before,
    after,
    stored_d,
    stored_s,
    layout,
    pk,
    mask,
    r0,
    r1,
    r2,
    r3,
    logic,
) -> int:  # pragma: no cover - compiled
    """Both byte passes fragment by fragment: for color and depth buffers that share bytes (a color write can
    change a later fragment's stored depth word) and for recorded draws. Returns the number of survivors.

    With ``fate`` holding one entry per fragment, fragments whose entry is not ``fate_of[SURVIVED]`` on entry
    (killed earlier: scissor, alpha test) are skipped, and every other fragment's fate is recorded; with ``before``
    / ``after`` (F, 4) uint8 and a color buffer (``color_buf``, read even when ``p.color_write`` is 0), the pixel's
    color decoded to RGBA8 before and after each fragment's turn; with ``stored_d`` (F,) / ``stored_s`` (F,), the
    depth and stencil each fragment that reached the tests was tested against (0 when reads are disabled)."""
    dst = numba_link.empty((1, 4), np.uint8)
    out = numba_link.empty((1, 4), np.uint8)
    record = fate.shape[0] == x.shape[0]
    colors = before.shape[0] == x.shape[0] and color_buf.shape[0] > 0
    tests = stored_d.shape[0] == x.shape[0]
    alive = fate_of[SURVIVED]
    n = 0
    for i in range(x.shape[0]):
        pixel = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0)
        offset = pixel * p.color_bpp
        if colors:
            _decode_pixel(color_buf, offset, p.color_bpp, layout, before, i)
        if not record or fate[i] == alive:
            result = SURVIVED
            if p.use_depth:
                if tests:
                    word = _read_word(depth_buf, pixel * p.depth_bpp, p.depth_bpp) if p.depth_read else 0
                    stored_d[i] = word & p.depth_max
                    stored_s[i] = (word >> fbm.STENCIL_SHIFT) & 0xFF if p.depth_bpp == 4 else 0  # D24S8
                result = _depth_stencil(p, depth[i], depth_buf, pixel * p.depth_bpp, stencil_new)
                if record:
                    fate[i] = fate_of[result]
            if result == SURVIVED:
                n += 1
                if p.color_write:
                    _color_one(i, offset, color, p, color_buf, layout, pk, mask, r0, r1, r2, r3, logic, dst, out)
            else:
                counts[result] += 1
        if colors:
            _decode_pixel(color_buf, offset, p.color_bpp, layout, after, i)
    return n


# ---------------------------------------------------------------------------------------------- dispatch
@numba_link.kernel(error_model="numpy")
def run_passes(
    depth_kind,
    color_kind,
    x,
    y,
    depth,
    color,
    p,
    depth_buf,
    depth_words_view,
    stencil_new,
    counts,
    fate,
    fate_of,
    color_buf,
    color_words_view,
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
    pass_links,
) -> int:  # pragma: no cover - compiled
    """The per-fragment operations of the fragments ``x`` .. ``color`` by the passes of ``depth_kind`` /
    ``color_kind`` (any kind but ``INTERLEAVED``, whose pass ``interleaved`` its caller runs: the fused fragment
    side's plans refuse buffers that share bytes, so a capture whose buffers never overlap never compiles it): the
    killed ones counted in ``counts``, each fate -> ``fate`` when it has one entry per fragment; returns the number
    of survivors. ``depth_words_view`` / ``color_words_view``: the buffers as uint32 words (for the word passes,
    else empty); ``pass_links``: (NUM_PASS_LINKS, 2) int64, the entries of the passes called by address
    (``pass_links``); the rest as the passes above take them. Every pass reads the pixel indices computed here."""
    n = x.shape[0]
    pix = fbm.tiled_pixels(x, y, p.width, p.height, p.flipped != 0)
    survivors = numba_link.empty(n, np.int32)
    for i in range(n):  # not np.arange(n).astype(np.int32): two compiled numpy functions of their own
        survivors[i] = i
    survived = n
    if depth_kind == DEPTH_WORDS:
        survived = depth_words(pix, depth, p, depth_words_view, survivors)
        counts[KILLED_DEPTH] += n - survived
    elif depth_kind == DEPTH_BYTES:
        tested = (pix, depth, p, depth_buf, stencil_new, counts, fate, fate_of, survivors)
        survived = numba_link.call(DEPTH_BYTES_ID, pass_links[PASS_DEPTH_BYTES], tested)
    survivors = survivors[:survived]
    if survived and color_kind == COLOR_BYTES:
        colored = (survivors, pix, color, p, color_buf, layout, pk, mask, r0, r1, r2, r3, logic)
        numba_link.call(COLOR_BYTES_ID, pass_links[PASS_COLOR_BYTES], colored)
    elif survived and (
        color_kind == REPLACE_WORDS or (color_kind == BLEND_WORDS and _blend_replaces(survivors, color, r0, r1, r2, r3))
    ):
        replace_words(survivors, pix, color, color_words_view, pk)
    elif survived and color_kind == BLEND_WORDS:
        blended = (survivors, pix, color, p, color_words_view, r0, r1, r2, r3)
        numba_link.call(BLEND_WORDS_ID, pass_links[PASS_BLEND_WORDS], blended)
    elif survived and color_kind == LOGIC_WORDS:
        logic = (survivors, pix, color, p, color_words_view, pk, logic_table, write_mask)
        numba_link.call(LOGIC_WORDS_ID, pass_links[PASS_LOGIC_WORDS], logic)
    return survived


# The byte passes, the logic pass and blending, called by address (``picaemu.numba_link``): each compiled on its
# own when a draw first needs it (a capture of RGBA8 buffers without logic ops, README line 1 or the games so far,
# never compiles the first three: ~1.4 s of CPU), and blending's vector loop is optimised once, not again inside
# ``run_passes``. ``run_passes``' ``pass_links`` holds their entries in these rows.
PASS_DEPTH_BYTES, PASS_COLOR_BYTES, PASS_LOGIC_WORDS, PASS_BLEND_WORDS = range(4)
NUM_PASS_LINKS = 4
DEPTH_BYTES_ID, COLOR_BYTES_ID, LOGIC_WORDS_ID, BLEND_WORDS_ID = 20, 21, 22, 23
DEPTH_BYTES_PASS = numba_link.register(DEPTH_BYTES_ID, depth_stencil_pass, types.int64)
COLOR_BYTES_PASS = numba_link.register(COLOR_BYTES_ID, color_pass, types.none)
LOGIC_WORDS_PASS = numba_link.register(LOGIC_WORDS_ID, logic_words, types.none)
BLEND_WORDS_PASS = numba_link.register(BLEND_WORDS_ID, blend_words, types.none)
_PARAMS = tuple(inspect.signature(run_passes.py_func).parameters)[:-1]  # those ``pass_links`` takes
_PIXELS, _SURVIVORS = np.zeros(0, np.int64), np.zeros(0, np.int32)  # values of the types ``run_passes`` passes


def pass_links(*args: object) -> np.ndarray:
    """``run_passes``' ``pass_links`` for its arguments before it, ``args`` (or values of the same types): the
    entries (``numba_link.Linked.entry``, compiled or loaded on first use) of the passes its depth and color kinds
    call by address, zero for the others. Only the depth and color kinds' values choose (the fused fragment side
    remembers a plan's links by them and by its arguments' types: ``picaemu.fused.fragment_links``)."""
    a = dict(zip(_PARAMS, args, strict=True))
    links = np.zeros((NUM_PASS_LINKS, 2), np.int64)
    pix, survivors, color, p = _PIXELS, _SURVIVORS, a["color"], a["p"]
    if a["depth_kind"] == DEPTH_BYTES:
        tested = ("depth", "p", "depth_buf", "stencil_new", "counts", "fate", "fate_of")
        links[PASS_DEPTH_BYTES] = DEPTH_BYTES_PASS.entry(pix, *(a[k] for k in tested), survivors)
    if a["color_kind"] == COLOR_BYTES:
        colored = ("color_buf", "layout", "pk", "mask", "r0", "r1", "r2", "r3", "logic")
        links[PASS_COLOR_BYTES] = COLOR_BYTES_PASS.entry(survivors, pix, color, p, *(a[k] for k in colored))
    if a["color_kind"] == LOGIC_WORDS:
        logic = ("color_words_view", "pk", "logic_table", "write_mask")
        links[PASS_LOGIC_WORDS] = LOGIC_WORDS_PASS.entry(survivors, pix, color, p, *(a[k] for k in logic))
    if a["color_kind"] == BLEND_WORDS:
        words, rows = a["color_words_view"], (a["r0"], a["r1"], a["r2"], a["r3"])
        links[PASS_BLEND_WORDS] = BLEND_WORDS_PASS.entry(survivors, pix, color, p, words, *rows)
    return links
