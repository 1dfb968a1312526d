"""Per-fragment operations of one draw, in primitive order: stencil test, depth test, stencil/depth writes,
destination read, blend / logic op, color write mask, color write (pica-pipeline.md §15).

Receives the fragments that survived the alpha test — window pixels ``x``, ``y`` (F,) int32 (y up), ``depth`` (F,)
float32 in [0, 1] (quantized here to the depth buffer's width, as ``framebuffer.quantize_depth``), ``color`` (F, 4)
uint8 — in rasterization order, the decoded ``FramebufferState`` and ``DepthStencilState``, and the color stages
of the draw; writes the tiled buffers in emulated memory and adds ``killed_stencil``, ``killed_depth`` and
``fragments_written`` to ``stats``. Given a ``fate`` (F,) uint8 array, both passes also record each fragment's
``Fate`` (STENCIL, DEPTH or WRITTEN = passed every test); without one they skip that work.

Each fragment sees the depth, stencil and color its predecessors in the draw left (the hardware's per-pixel order).
Two ways, with the same results:

- ``resolve``: compiled passes over the fragments in order (numba, cache=True), reading and writing pixel words
  in memory; used when the color stages offer ``blend_program() -> picaemu.blend.BlendProgram``. The depth/stencil
  pass runs first over every fragment (depth and stencil never depend on color), then the color pass over the
  survivors (same order, so blending sees its predecessors' colors); when the two buffers share bytes, both run
  fragment by fragment instead. With 4-byte words and neither stencil nor recorded fates, lean loops do the work;
  blending into an RGBA8 buffer has one too (``_blend_loop``, its per-draw factors held in scalars).
- ``resolve_shadow``: shadow-map rendering mode (COLOR_OPERATION ``fragment_mode`` "shadow map rendering",
  §15.8): no alpha, stencil, depth or blend stage; ``picaemu.shadow.shadow_write`` updates the 32-bit color
  buffer's (depth, intensity) texels in fragment order from the fragment depth and the TEV output's green.
- ``resolve_layers``: for color stages that only offer ``blend(src, dst)`` (wrappers that observe every blend
  call): the fragments are split into layers in which each pixel appears once (layer k holds the k-th fragment of
  every pixel); layers run one after the other, each fully vectorized (``depth_stencil.depth_stencil_test``).
"""

from __future__ import annotations

import itertools
from enum import IntEnum
from typing import NamedTuple, Protocol

import numba
import numpy as np

from picaemu import framebuffer as fbm
from picaemu.blend import BlendMode, BlendProgram, blend_channel, blend_pixel, factor_rows, logic_pixel
from picaemu.depth_stencil import COMPARE, STENCIL_OPS, DepthStencilState, depth_stencil_test
from picaemu.errors import MemoryFault, UnsupportedFeature
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of
from picaemu.shadow import ShadowState, shadow_write

# COMPARE as a truth table: [func, 0 / 1 / 2 for a < b / a == b / a > b]
COMPARE_TABLE = np.array([COMPARE[f](np.array([0, 1, 2]), np.array([1, 1, 1])) for f in sorted(COMPARE)], np.bool_)
ALWAYS_PASSES = 0b111  # pass mask of a disabled test (``compare_mask``)
KILLED_STENCIL, KILLED_DEPTH, SURVIVED = range(3)  # counters of the compiled pass
NO_BYTES = np.zeros(0, np.uint8)
NO_ROWS = np.zeros((0, 9), np.int64)  # ``_color_pass`` without its lean blending loop
FRAGMENT_MODE_SHADOW = "shadow map rendering"  # COLOR_OPERATION.fragment_mode enum name
SHADOW_BPP = 4  # the shadow map is a 32-bit color buffer (depth 24 + intensity 8)


class Fate(IntEnum):
    """What became of a rasterized fragment (``Pipeline(fragment_observer=...)``; docs/render.md)."""

    WRITTEN = 0  # passed every test: color written (if COLORBUFFER_WRITE allows), depth/stencil per their enables
    SCISSOR = 1  # rejected by the scissor test (rasterizer)
    ALPHA = 2  # failed the alpha test
    STENCIL = 3  # failed the stencil test
    DEPTH = 4  # failed the depth test


# fate of a compiled-pass counter index (KILLED_STENCIL, KILLED_DEPTH, SURVIVED)
FATE_OF_COUNTER = np.array([Fate.STENCIL, Fate.DEPTH, Fate.WRITTEN], np.uint8)
NO_FATE = np.zeros(0, np.uint8)


class ColorBlend(Protocol):
    """What ``resolve_layers`` needs of the color stages (``picaemu.pipeline.ColorStages``)."""

    def blend(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray: ...

    @property
    def reads_destination(self) -> bool: ...


class OpsParams(NamedTuple):
    """Scalar configuration of the compiled pass (all ints: one numba signature for every draw)."""

    width: int
    height: int
    flipped: int
    use_depth: int  # the draw reads or writes the depth/stencil buffer
    depth_bpp: int
    depth_read: int
    depth_max: int
    stencil_active: int
    stencil_pass: int  # compare_mask of the stencil function
    stencil_ref: int  # already masked with the input mask
    stencil_input_mask: int
    depth_pass: int  # compare_mask of the depth function (ALWAYS_PASSES with the depth test off)
    write_depth: int  # DEPTH_COLOR_MASK.depth_write and DEPTHBUFFER_WRITE.depth
    write_stencil: int  # DEPTHBUFFER_WRITE.stencil
    color_write: int
    color_bpp: int
    color_read: int
    need_dst: int
    blend_mode: int


def stencil_tables(ds: DepthStencilState) -> np.ndarray:
    """(3, 256) int64: the stored stencil after the fail / depth-fail / depth-pass op, through the write mask, for
    every old value (``depth_stencil.stencil_update`` tabulated)."""
    old = np.arange(256, dtype=np.int32)
    wm = ds.stencil_write_mask
    ops = (ds.op_fail, ds.op_depth_fail, ds.op_depth_pass)
    return np.array([(STENCIL_OPS[op](old, ds.stencil_ref) & wm) | (old & ~wm & 0xFF) for op in ops], np.int64)


def compare_mask(func: int) -> int:
    """A compare function as 3 bits: bit k set when it passes for outcome k (0 / 1 / 2 = a < b / a == b / a > b)."""
    return sum(int(passes) << k for k, passes in enumerate(COMPARE_TABLE[func]))


def color_layout(fmt: fbm.ColorFormat) -> np.ndarray:
    """(C, 3) int64 rows (channel, shift, bits) of ``framebuffer.COLOR_LAYOUTS``."""
    return np.array(fbm.COLOR_LAYOUTS[fmt], np.int64)


# ---------------------------------------------------------------------------------------------- compiled pass
@numba.njit(cache=True, inline="always")
def _read_word(buf, offset: int, bpp: int) -> int:  # pragma: no cover - compiled
    """Little-endian ``bpp``-byte word at byte ``offset`` of ``buf`` (uint8, any alignment)."""
    if bpp == 4:  # the common case, written out so that the compiler can make it one load
        return (np.int64(buf[offset]) | np.int64(buf[offset + 1]) << 8 | np.int64(buf[offset + 2]) << 16
                | np.int64(buf[offset + 3]) << 24)
    word = 0
    for b in range(bpp):
        word |= np.int64(buf[offset + b]) << (8 * b)
    return word


@numba.njit(cache=True, inline="always")
def _write_word(buf, offset: int, word: int, bpp: int) -> None:  # pragma: no cover - compiled
    if bpp == 4:
        buf[offset], buf[offset + 1] = word & 0xFF, (word >> 8) & 0xFF
        buf[offset + 2], buf[offset + 3] = (word >> 16) & 0xFF, (word >> 24) & 0xFF
        return
    for b in range(bpp):
        buf[offset + b] = (word >> (8 * b)) & 0xFF


@numba.njit(cache=True, inline="always")
def _packer(layout):  # pragma: no cover - compiled
    """A color layout (C, 3) as 12 scalars (channel, shift, 8 - bits) x 4, a missing 4th channel as (0, 0, 8) (adds
    nothing): kept in registers by the loops (the uint8 stores into memory could alias a layout array)."""
    n = layout.shape[0]
    c3, s3, r3 = (layout[3, 0], layout[3, 1], 8 - layout[3, 2]) if n > 3 else (0, 0, 8)
    return (layout[0, 0], layout[0, 1], 8 - layout[0, 2], layout[1, 0], layout[1, 1], 8 - layout[1, 2],
            layout[2, 0], layout[2, 1], 8 - layout[2, 2], c3, s3, r3)


@numba.njit(cache=True, inline="always")
def _pack(src, row: int, pk) -> int:  # pragma: no cover - compiled
    """The pixel word of 8-bit channels ``src[row]`` (``_packer`` layout): each channel's top bits at its shift."""
    return ((np.int64(src[row, pk[0]]) >> pk[2]) << pk[1] | (np.int64(src[row, pk[3]]) >> pk[5]) << pk[4]
            | (np.int64(src[row, pk[6]]) >> pk[8]) << pk[7] | (np.int64(src[row, pk[9]]) >> pk[11]) << pk[10])


@numba.njit(cache=True, inline="always")
def _expand(v: int, bits: int) -> int:  # pragma: no cover - compiled
    """Bit replication of a ``bits``-wide value to 8 bits (``framebuffer._expand``)."""
    out = 0
    shift = 8 - bits
    while shift > -bits:
        out |= (v << shift) if shift >= 0 else (v >> -shift)
        shift -= bits
    return out & 0xFF


@numba.njit(cache=True, inline="always")
def _passes(mask: int, a: int, b: int) -> bool:  # pragma: no cover - compiled
    """``a FUNC b`` for the function whose ``compare_mask`` is ``mask`` (no branch, no table load)."""
    return (mask >> (np.int64(a >= b) + np.int64(a > b))) & 1 != 0


@numba.njit(cache=True, inline="always")
def _quantize(frag_depth, depth_max: int) -> int:  # pragma: no cover - compiled
    """``framebuffer.quantize_depth`` of one fragment (NaN -> 0)."""
    d = np.float64(frag_depth)
    d = min(max(d, 0.0), 1.0) if d == d else 0.0
    return np.int64(d * depth_max)


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
def _depth_only_loop(x, y, depth, p, buf, survivors, bpp: int) -> int:  # pragma: no cover - compiled
    """The depth test and write of every fragment in order when the stencil is inactive (its stored bits stay), no
    fates recorded, ``bpp`` = p.depth_bpp: the stored word is always read (then dropped when reads are disabled);
    survivors' indices -> ``survivors``; returns their number."""
    keep = -1 if p.depth_read else 0
    n = 0
    for i in range(x.shape[0]):
        offset = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0) * bpp
        word = _read_word(buf, offset, bpp) & keep
        old_d = word & p.depth_max
        new_d = _quantize(depth[i], p.depth_max)
        if not _passes(p.depth_pass, new_d, old_d):
            continue
        if p.write_depth and new_d != old_d:
            _write_word(buf, offset, (word & ~p.depth_max) | new_d, bpp)
        survivors[n] = i
        n += 1
    return n


@numba.njit(cache=True)
def _depth_pass(x, y, depth, p, depth_buf, stencil_new, counts, fate, fate_of,
                survivors) -> int:  # pragma: no cover - compiled
    """Depth/stencil of every fragment in order: the indices of the survivors go to ``survivors`` (returns their
    number), the killed ones to ``counts``, each fate to ``fate`` (when it has one entry per fragment, from
    ``fate_of``). With 4-byte words, no stencil and no fates, a lean loop does the work."""
    record = fate.shape[0] == x.shape[0]
    if not record and not p.stencil_active and p.depth_bpp == 4:
        n = _depth_only_loop(x, y, depth, p, depth_buf, survivors, 4)
        counts[KILLED_DEPTH] += x.shape[0] - n
        return n
    n = 0
    for i in range(x.shape[0]):
        pixel = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0)
        result = _depth_stencil(p, depth[i], depth_buf, pixel * p.depth_bpp, stencil_new)
        if record:
            fate[i] = fate_of[result]
        if result == SURVIVED:
            survivors[n] = i
            n += 1
        else:
            counts[result] += 1
    return n


@numba.njit(cache=True, inline="always")
def _replace_loop(survivors, x, y, color, p, buf, pk, bpp: int) -> None:  # pragma: no cover - compiled
    """Color write of the fragments ``survivors`` when the source replaces the pixel (``bpp`` = p.color_bpp)."""
    for j in range(survivors.shape[0]):
        i = survivors[j]
        offset = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0) * bpp
        _write_word(buf, offset, _pack(color, i, pk), bpp)


@numba.njit(cache=True, inline="always")
def _row(rows, k: int):  # pragma: no cover - compiled
    """Row ``k`` of a (4, 9) array as a tuple of scalars (kept in registers by the loop)."""
    return (rows[k, 0], rows[k, 1], rows[k, 2], rows[k, 3], rows[k, 4], rows[k, 5], rows[k, 6], rows[k, 7],
            rows[k, 8])


@numba.njit(cache=True, inline="always")
def _blend_loop(survivors, x, y, color, p, buf, rows) -> None:  # pragma: no cover - compiled
    """Blending into 32-bit (RGBA8, 8 bits per channel) pixels of the fragments ``survivors``; ``rows`` (4, 9):
    per channel its ``blend.factor_rows`` row, write mask and shift, held in scalars for the whole loop."""
    r0, r1, r2, r3 = _row(rows, 0), _row(rows, 1), _row(rows, 2), _row(rows, 3)
    keep = -1 if p.color_read else 0  # reads disabled: every destination channel reads 0
    for j in range(survivors.shape[0]):
        i = survivors[j]
        offset = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0) * 4
        word = _read_word(buf, offset, 4) & keep
        s0, s1, s2, s3 = np.int64(color[i, 0]), np.int64(color[i, 1]), np.int64(color[i, 2]), np.int64(color[i, 3])
        d0, d1, d2, d3 = (word >> r0[8]) & 0xFF, (word >> r1[8]) & 0xFF, (word >> r2[8]) & 0xFF, (word >> r3[8]) & 0xFF
        sat = min(s3, 255 - d3)
        o0 = blend_channel(r0, s0, s3, d0, d3, sat) if r0[7] else d0
        o1 = blend_channel(r1, s1, s3, d1, d3, sat) if r1[7] else d1
        o2 = blend_channel(r2, s2, s3, d2, d3, sat) if r2[7] else d2
        o3 = blend_channel(r3, s3, s3, d3, d3, sat) if r3[7] else d3
        _write_word(buf, offset, o0 << r0[8] | o1 << r1[8] | o2 << r2[8] | o3 << r3[8], 4)


@numba.njit(cache=True, error_model="numpy")  # its only divisor (blending's 255) is a constant
def _color_pass(survivors, x, y, color, p, color_buf, layout, mask, eqs, kinds, chans, inverts, constant,
                logic, rows) -> None:  # pragma: no cover - compiled
    """Destination read, blend / logic op, write mask and color write of the fragments ``survivors`` (indices, in
    order). layout (C, 3) (channel, shift, bits); mask (4,) bool color write mask; eqs..logic: a
    ``BlendProgram``; rows: (4, 9) for ``_blend_loop`` (blending into 32-bit pixels), else (0, 9)."""
    pk = _packer(layout)
    if not p.need_dst and p.color_bpp == 4:  # the source replaces a 32-bit pixel
        _replace_loop(survivors, x, y, color, p, color_buf, pk, 4)
        return
    if p.blend_mode == BlendMode.BLEND and p.color_bpp == 4 and rows.shape[0] == 4:
        _blend_loop(survivors, x, y, color, p, color_buf, rows)
        return
    dst = np.empty((1, 4), np.uint8)
    out = np.empty((1, 4), np.uint8)
    for j in range(survivors.shape[0]):
        i = survivors[j]
        offset = fbm.tiled_pixel(x[i], y[i], p.width, p.height, p.flipped != 0) * p.color_bpp
        for ch in range(4):
            out[0, ch] = color[i, ch]
        if p.need_dst:
            word = _read_word(color_buf, offset, p.color_bpp) if p.color_read else 0
            dst[0, :] = 255 if p.color_read else 0
            if p.color_read:
                for k in range(layout.shape[0]):
                    ch, shift, bits = layout[k, 0], layout[k, 1], layout[k, 2]
                    dst[0, ch] = _expand((word >> shift) & ((1 << bits) - 1), bits)
            if p.blend_mode == BlendMode.BLEND:
                blend_pixel(color, i, dst, 0, constant, eqs, kinds, chans, inverts, out, 0)
            elif p.blend_mode == BlendMode.LOGIC:
                for ch in range(4):
                    out[0, ch] = logic_pixel(np.int64(color[i, ch]), np.int64(dst[0, ch]), logic)
            for ch in range(4):
                if not mask[ch]:
                    out[0, ch] = dst[0, ch]
        _write_word(color_buf, offset, _pack(out, 0, pk), p.color_bpp)


@numba.njit(cache=True)
def _interleaved(x, y, depth, color, p, depth_buf, stencil_new, counts, fate, fate_of, color_buf, layout, mask, eqs,
                 kinds, chans, inverts, constant, logic, rows) -> int:  # pragma: no cover - compiled
    """Both passes fragment by fragment, for color and depth buffers that share bytes (then a color write can
    change a later fragment's stored depth word); returns the number of survivors."""
    one = np.zeros(1, np.int32)
    record = fate.shape[0] == x.shape[0]
    n = 0
    for i in range(x.shape[0]):
        f = fate[i : i + 1] if record else fate
        if _depth_pass(x[i : i + 1], y[i : i + 1], depth[i : i + 1], p, depth_buf, stencil_new, counts, f, fate_of,
                       one):
            n += 1
            if p.color_write:
                _color_pass(one, x[i : i + 1], y[i : i + 1], color[i : i + 1], p, color_buf, layout, mask, eqs,
                            kinds, chans, inverts, constant, logic, rows)
    return n


def _params(fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram) -> OpsParams:
    m = ds.stencil_input_mask
    return OpsParams(
        width=fb.width, height=fb.height, flipped=int(fb.flipped), use_depth=int(ds.uses_depth_buffer(fb.depth_format)),
        depth_bpp=fb.depth_bpp, depth_read=int(fb.depth_read), depth_max=fbm.depth_max(fb.depth_format),
        stencil_active=int(ds.stencil_active(fb.depth_format)), stencil_pass=compare_mask(ds.stencil_func),
        stencil_ref=ds.stencil_ref & m, stencil_input_mask=m,
        depth_pass=compare_mask(ds.depth_func) if ds.depth_test else ALWAYS_PASSES,
        write_depth=int(ds.depth_write and fb.depth_write),
        write_stencil=int(fb.stencil_write), color_write=int(fb.color_write), color_bpp=fb.color_bpp,
        color_read=int(fb.color_read), need_dst=int(program.mode is not BlendMode.REPLACE or not all(ds.color_mask)),
        blend_mode=int(program.mode),
    )


def _lean_rows(fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram) -> np.ndarray:
    """(4, 9) int64 rows of ``_blend_loop`` when it applies (blending into a 32-bit RGBA8 buffer), else (0, 9)."""
    layout = fbm.COLOR_LAYOUTS[fb.color_format]
    if program.mode is not BlendMode.BLEND or fb.color_bpp != 4 or any(bits != 8 for _, _, bits in layout):
        return NO_ROWS
    shifts = [shift for _, shift in sorted((ch, shift) for ch, shift, _ in layout)]
    return np.column_stack([factor_rows(program), np.array(ds.color_mask, np.int64), shifts]).astype(np.int64)


def resolve(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram,
            x: np.ndarray, y: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict,
            fate: np.ndarray | None = None) -> None:
    """All per-fragment operations of the draw's surviving fragments in compiled passes (see the module doc)."""
    p = _params(fb, ds, program)
    depth_buf = fb.depth_bytes(memory) if p.use_depth else NO_BYTES
    color_buf, fault = NO_BYTES, None
    if p.color_write:
        try:
            color_buf = fb.color_bytes(memory)
        except MemoryFault as err:  # raised below only if some fragment reaches the color write
            fault, p = err, p._replace(color_write=0)
    counts = np.zeros(3, np.int64)
    x, y = np.ascontiguousarray(x, np.int32), np.ascontiguousarray(y, np.int32)
    depth, color = np.ascontiguousarray(depth, np.float32), np.ascontiguousarray(color, np.uint8)
    fate = NO_FATE if fate is None else fate
    blend_args = (color_layout(fb.color_format), np.array(ds.color_mask, np.bool_), program.eqs, program.kinds,
                  program.chans, program.inverts, program.constant, program.logic, _lean_rows(fb, ds, program))
    if p.use_depth and p.color_write and np.shares_memory(depth_buf, color_buf):
        counts[SURVIVED] = _interleaved(x, y, depth, color, p, depth_buf, stencil_tables(ds), counts, fate,
                                        FATE_OF_COUNTER, color_buf, *blend_args)
    else:
        if p.use_depth:  # depth/stencil of every fragment, then the color of the survivors, both in order
            survivors = np.empty(x.shape[0], np.int32)
            n = _depth_pass(x, y, depth, p, depth_buf, stencil_tables(ds), counts, fate, FATE_OF_COUNTER, survivors)
            survivors = survivors[:n]
        else:
            survivors = np.arange(x.shape[0], dtype=np.int32)
            fate[:] = Fate.WRITTEN
        counts[SURVIVED] = survivors.shape[0]
        if p.color_write and survivors.shape[0]:
            _color_pass(survivors, x, y, color, p, color_buf, *blend_args)
    if fault is not None and counts[SURVIVED]:
        raise fault
    stats["killed_stencil"] += int(counts[KILLED_STENCIL])
    stats["killed_depth"] += int(counts[KILLED_DEPTH])
    if p.color_write:
        stats["fragments_written"] += int(counts[SURVIVED])


# ---------------------------------------------------------------------------------------------- layered fallback
@numba.njit(cache=True)
def _layers(x, y, width, height, flipped):  # pragma: no cover - compiled
    """Tiled pixel index of every fragment, and the fragments grouped by layer (layer k = the k-th fragment of
    each pixel, in order): returns (pixels (F,) int64, order (F,) int64, bounds (K + 1,) int64)."""
    n = x.shape[0]
    pixels = np.empty(n, np.int64)
    rank = np.empty(n, np.int64)
    seen = np.zeros(width * height, np.int32)
    layers = 0
    for i in range(n):
        p = fbm.tiled_pixel(x[i], y[i], width, height, flipped)
        pixels[i] = p
        rank[i] = seen[p]
        seen[p] += 1
        layers = max(layers, seen[p])
    bounds = np.zeros(layers + 1, np.int64)
    for i in range(n):
        bounds[rank[i] + 1] += 1
    for k in range(layers):
        bounds[k + 1] += bounds[k]
    fill = bounds[:-1].copy()
    order = np.empty(n, np.int64)
    for i in range(n):
        order[fill[rank[i]]] = i
        fill[rank[i]] += 1
    return pixels, order, bounds


def resolve_layers(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorBlend,
                   x: np.ndarray, y: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict,
                   fate: np.ndarray | None = None) -> None:
    """The same operations one overdraw layer at a time, calling ``stages.blend(src, dst)`` once per layer."""
    qdepth = fbm.quantize_depth(depth, fb.depth_format)
    pixels, order, bounds = _layers(x, y, fb.width, fb.height, fb.flipped)
    if fate is not None:
        fate[:] = Fate.WRITTEN
    if bounds.shape[0] == 2:
        _layer(memory, fb, ds, stages, pixels, qdepth, color, stats, fate, slice(None))
        return
    for lo, hi in itertools.pairwise(bounds):
        sel = order[lo:hi]
        _layer(memory, fb, ds, stages, pixels[sel], qdepth[sel], color[sel], stats, fate, sel)


def _layer(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorBlend,
           pixels: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict, fate: np.ndarray | None,
           index: np.ndarray | slice) -> None:
    """Depth/stencil and color write of fragments that each hit a different pixel (tiled pixel indices);
    ``fate[index]`` (when given) receives their fates."""
    if ds.uses_depth_buffer(fb.depth_format):
        buf = fb.depth_bytes(memory)
        stored = fbm.gather_pixels(buf, pixels, fb.depth_bpp)
        if not fb.depth_read:
            stored = np.zeros_like(stored)  # reads disabled: the old value is unknown; 0 (reference §15.7)
        old_depth, old_stencil = fbm.split_depth_word(stored, fb.depth_format)
        res = depth_stencil_test(ds, fb.depth_format, depth, old_depth, old_stencil)
        stats["killed_stencil"] += int((~res.stencil_pass).sum())
        stats["killed_depth"] += int((res.stencil_pass & ~res.depth_pass).sum())
        new_depth = res.new_depth if fb.depth_write else old_depth
        new_stencil = res.new_stencil if fb.stencil_write else old_stencil
        if fate is not None:
            fate[index] = np.where(res.stencil_pass, np.where(res.depth_pass, Fate.WRITTEN, Fate.DEPTH),
                                   Fate.STENCIL)
        changed = (new_depth != old_depth) | (new_stencil != old_stencil)
        if changed.any():
            word = fbm.join_depth_word(new_depth[changed], new_stencil[changed], fb.depth_format)
            fbm.scatter_pixels(buf, pixels[changed], word, fb.depth_bpp)
        alive = res.alive
        pixels, color = pixels[alive], color[alive]
    if not fb.color_write or pixels.shape[0] == 0:
        return
    _write_color(memory, fb, ds, stages, pixels, color)
    stats["fragments_written"] += int(pixels.shape[0])


def _write_color(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorBlend,
                 pixels: np.ndarray, color: np.ndarray) -> None:
    buf = fb.color_bytes(memory)
    mask = np.array(ds.color_mask)
    need_dst = stages.reads_destination or not mask.all()
    if need_dst:
        dst = fbm.decode_color(fbm.gather_pixels(buf, pixels, fb.color_bpp), fb.color_format)
        if not fb.color_read:
            dst = np.zeros_like(dst)  # reads disabled: old value unknown; 0 (reference §15.7)
        color = np.where(mask, stages.blend(color, dst), dst).astype(np.uint8)
    fbm.scatter_pixels(buf, pixels, fbm.encode_color(color, fb.color_format), fb.color_bpp)


# ---------------------------------------------------------------------------------------------- shadow rendering
def is_shadow_mode(regs: np.ndarray) -> bool:
    """True when COLOR_OPERATION selects shadow-map rendering (§15.8)."""
    return access.value(regs, "COLOR_OPERATION", "fragment_mode") == FRAGMENT_MODE_SHADOW


def check_shadow_target(fb: fbm.FramebufferState, regs: np.ndarray) -> None:
    """A shadow map is a 32-bit color buffer: any other format raises ``UnsupportedFeature`` (COLORBUFFER_FORMAT)."""
    if fb.color_bpp != SHADOW_BPP:
        raise UnsupportedFeature(f"shadow-map rendering into a {fb.color_format.name} color buffer (needs 32-bit)",
                                 register=id_of("COLORBUFFER_FORMAT"), value=access.word(regs, "COLORBUFFER_FORMAT"))


def resolve_shadow(memory: PhysicalMemory, fb: fbm.FramebufferState, sstate: ShadowState, x: np.ndarray,
                   y: np.ndarray, depth: np.ndarray, intensity: np.ndarray, stats: dict) -> None:
    """Shadow-map rendering of the draw's fragments (every one reaches the update: no alpha/stencil/depth test).

    ``intensity`` (F,) uint8 is the TEV output's green; the color buffer must be 32 bits per pixel
    (``check_shadow_target``); with color writes disabled (COLORBUFFER_WRITE = 0) nothing is written. Adds the
    fragments to ``fragments_written`` when the buffer is written."""
    if fb.color_bpp != SHADOW_BPP:
        raise UnsupportedFeature(f"shadow-map rendering into a {fb.color_format.name} color buffer (needs 32-bit)",
                                 register=id_of("COLORBUFFER_FORMAT"))
    if not fb.color_write or x.shape[0] == 0:
        return
    texels = fb.color_bytes(memory).reshape(-1, SHADOW_BPP)
    pixels = fbm.pixel_index(x, y, fb.width, fb.height, fb.flipped)
    shadow_write(sstate, pixels, depth, intensity, texels)
    stats["fragments_written"] += int(x.shape[0])
