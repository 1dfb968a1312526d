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

- ``resolve``: compiled passes over the fragments in order (``picaemu.fragment.kernels``), reading and writing
  pixel words in memory; used when the color stages offer ``blend_program() -> picaemu.fragment.blend.BlendProgram``.
  The
  depth/stencil pass runs first over every fragment (depth and stencil never depend on color), then the color pass
  over the survivors (same order, so blending sees its predecessors' colors); when the two buffers share bytes,
  both run fragment by fragment instead. 32-bit buffers (D24S8 without stencil or recorded fates; RGBA8) take
  word passes, the rest byte passes; each is its own kernel, compiled the first time a draw needs it.
- ``resolve_shadow``: shadow-map rendering mode (COLOR_OPERATION ``fragment_mode`` "shadow map rendering",
  §15.8): no alpha, stencil, depth or blend stage; ``picaemu.fragment.shadow.shadow_write`` updates the 32-bit color
  buffer's (depth, intensity) texels in fragment order from the fragment depth and the TEV output's green.
- ``resolve_layers``: for color stages that only offer ``blend(src, dst)`` (wrappers that observe every blend
  call): the fragments are split into layers in which each pixel appears once (layer k holds the k-th fragment of
  every pixel); layers run one after the other, each fully vectorized (``depth_stencil.depth_stencil_test``).
"""

from __future__ import annotations

import itertools
import sys
from enum import IntEnum
from functools import cached_property
from typing import NamedTuple, Protocol

import numba
import numpy as np

from picaemu.errors import MemoryFault, UnsupportedFeature
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import kernels as fk
from picaemu.fragment.blend import LOGIC_TABLES, BlendMode, BlendProgram, factor_rows
from picaemu.fragment.depth_stencil import COMPARE, STENCIL_OPS, DepthStencilState, depth_stencil_test
from picaemu.fragment.shadow import ShadowState, shadow_write
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.regs import access, id_of
from picaemu.regs.blocks.fragops import LOGIC_OPS as LOGIC_OP_NAMES

# COMPARE as a truth table: [func, 0 / 1 / 2 for a < b / a == b / a > b]
COMPARE_TABLE = np.array([COMPARE[f](np.array([0, 1, 2]), np.array([1, 1, 1])) for f in sorted(COMPARE)], np.bool_)
COMPARE_MASKS = tuple(sum(int(passes) << k for k, passes in enumerate(row)) for row in COMPARE_TABLE)
ALWAYS_PASSES = 0b111  # pass mask of a disabled test (``compare_mask``)
NO_BYTES = np.zeros(0, np.uint8)
WORD_BYTES = 4  # pixel size of the word passes
LITTLE_ENDIAN_HOST = sys.byteorder == "little"  # uint32 views then read words in the buffers' byte order
LOGIC_COPY = next(code for code, name in LOGIC_OP_NAMES.items() if name == "copy")
FRAGMENT_MODE_SHADOW = "shadow map rendering"  # COLOR_OPERATION.fragment_mode enum name
SHADOW_BPP = 4  # the shadow map is a 32-bit color buffer (depth 24 + intensity 8)


class Fate(IntEnum):
    """What became of a rasterized fragment (``Pipeline(fragment_observer=...)``; docs/render.md)."""

    WRITTEN = 0  # passed every test: color written (if COLORBUFFER_WRITE allows), depth/stencil per their enables
    SCISSOR = 1  # rejected by the scissor test (rasterizer)
    ALPHA = 2  # failed the alpha test
    STENCIL = 3  # failed the stencil test
    DEPTH = 4  # failed the depth test


# fate of a compiled-pass counter index (fragment_kernels: KILLED_STENCIL, KILLED_DEPTH, SURVIVED)
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
    return COMPARE_MASKS[func]


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


class OpsPlan:
    """``resolve``'s per-draw constants, which depend on the framebuffer, depth/stencil and blend states only: each
    is computed on first use (so a draw fails where it always did) and kept while those registers stay (the draw
    state's ``fragment_ops`` part)."""

    def __init__(self, fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram) -> None:
        self.fb, self.ds, self.program = fb, ds, program

    @cached_property
    def params(self) -> OpsParams:
        return _params(self.fb, self.ds, self.program)

    @cached_property
    def stencil_tables(self) -> np.ndarray:
        return stencil_tables(self.ds)

    @cached_property
    def byte_color_args(self) -> tuple:
        return _byte_color_args(self.fb, self.ds, self.program)

    @cached_property
    def layout(self) -> tuple[tuple[int, int, int], ...]:
        return fbm.COLOR_LAYOUTS[self.fb.color_format]

    @cached_property
    def packer(self) -> tuple[int, ...]:
        return fk.packer(self.layout)

    @cached_property
    def blend_rows(self) -> tuple[tuple[int, ...], ...]:
        """``fragment_kernels.blend_words``' four channel rows."""
        shifts = [shift for _, shift in sorted((ch, shift) for ch, shift, _ in self.layout)]
        rows = np.column_stack([factor_rows(self.program), np.array(self.ds.color_mask, np.int64), shifts])
        return tuple(tuple(int(v) for v in row) for row in rows)

    @cached_property
    def logic_args(self) -> tuple[tuple[int, ...], int]:
        """``fragment_kernels.logic_words``' table (a logic op, or "copy" for a partial write mask) and write mask."""
        table = self.program.logic if self.program.mode is BlendMode.LOGIC else LOGIC_TABLES[LOGIC_COPY]
        write_mask = sum(0xFF << shift for ch, shift, _ in self.layout if self.ds.color_mask[ch])
        return tuple(0xFFFFFFFF if t else 0 for t in table), write_mask


def resolve(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram,
            x: np.ndarray, y: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict,
            fate: np.ndarray | None = None, plan: OpsPlan | None = None) -> None:
    """All per-fragment operations of the draw's surviving fragments in compiled passes (see the module doc);
    ``plan``: the ``OpsPlan`` of ``fb``, ``ds`` and ``program`` when the caller keeps one."""
    plan = OpsPlan(fb, ds, program) if plan is None else plan
    p = plan.params
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
    if p.use_depth and p.color_write and np.shares_memory(depth_buf, color_buf):
        counts[fk.SURVIVED] = fk.interleaved(x, y, depth, color, p, depth_buf, plan.stencil_tables, counts, fate,
                                             FATE_OF_COUNTER, color_buf, *plan.byte_color_args)
    else:
        survivors = _depth_stencil(p, plan, x, y, depth, depth_buf, counts, fate)
        counts[fk.SURVIVED] = survivors.shape[0]
        if p.color_write and survivors.shape[0]:
            _color(p, plan, survivors, x, y, color, color_buf)
    if fault is not None and counts[fk.SURVIVED]:
        raise fault
    stats["killed_stencil"] += int(counts[fk.KILLED_STENCIL])
    stats["killed_depth"] += int(counts[fk.KILLED_DEPTH])
    if p.color_write:
        stats["fragments_written"] += int(counts[fk.SURVIVED])


def _words(buf: np.ndarray, bpp: int) -> np.ndarray | None:
    """``buf`` as uint32 pixel words when the word passes apply (32-bit pixels, 4-byte aligned, little-endian
    host: the buffers' byte order), else None."""
    if bpp != WORD_BYTES or not LITTLE_ENDIAN_HOST or buf.ctypes.data % WORD_BYTES or buf.shape[0] % WORD_BYTES:
        return None
    return buf.view(np.uint32)


def _depth_stencil(p: OpsParams, plan: OpsPlan, x: np.ndarray, y: np.ndarray, depth: np.ndarray,
                   depth_buf: np.ndarray, counts: np.ndarray, fate: np.ndarray) -> np.ndarray:
    """Depth/stencil of every fragment in order; returns the survivors' indices (int32)."""
    if not p.use_depth:
        fate[:] = Fate.WRITTEN
        return np.arange(x.shape[0], dtype=np.int32)
    survivors = np.empty(x.shape[0], np.int32)
    words = _words(depth_buf, p.depth_bpp)
    if words is not None and not p.stencil_active and fate.shape[0] != x.shape[0]:
        n = fk.depth_words(x, y, depth, p, words, survivors)
        counts[fk.KILLED_DEPTH] += x.shape[0] - n
    else:
        n = fk.depth_stencil_pass(x, y, depth, p, depth_buf, plan.stencil_tables, counts, fate, FATE_OF_COUNTER,
                                  survivors)
    return survivors[:n]


def _color(p: OpsParams, plan: OpsPlan, survivors: np.ndarray, x: np.ndarray, y: np.ndarray, color: np.ndarray,
           color_buf: np.ndarray) -> None:
    """Color write of the survivors: a word pass when one applies (``fragment_kernels``), else the byte pass."""
    words = _words(color_buf, p.color_bpp) if all(bits == 8 for _, _, bits in plan.layout) else None
    if words is None:
        fk.color_pass(survivors, x, y, color, p, color_buf, *plan.byte_color_args)
    elif not p.need_dst:
        fk.replace_words(survivors, x, y, color, p, words, plan.packer)
    elif plan.program.mode is BlendMode.BLEND:
        fk.blend_words(survivors, x, y, color, p, words, *plan.blend_rows)
    else:  # a logic op, or the source through a partial write mask (the op "copy")
        fk.logic_words(survivors, x, y, color, p, words, plan.packer, *plan.logic_args)


def _byte_color_args(fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram) -> tuple:
    """The arguments of the byte color pass after the color buffer (``fragment_kernels.color_pass``)."""
    layout = fbm.COLOR_LAYOUTS[fb.color_format]
    return (np.array(layout, np.int64), fk.packer(layout), np.array(ds.color_mask, np.bool_), program.eqs,
            program.kinds, program.chans, program.inverts, program.constant, program.logic)


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
                   fate: np.ndarray | None = None, observer: StageObserver | None = None) -> None:
    """The same operations one overdraw layer at a time, calling ``stages.blend(src, dst)`` once per layer; an
    ``observer`` receives ``on_depth_stencil`` per layer that reads the depth/stencil buffer."""
    qdepth = fbm.quantize_depth(depth, fb.depth_format)
    pixels, order, bounds = _layers(x, y, fb.width, fb.height, fb.flipped)
    if fate is not None:
        fate[:] = Fate.WRITTEN
    if bounds.shape[0] == 2:
        _layer(memory, fb, ds, stages, pixels, qdepth, color, stats, fate, slice(None), observer)
        return
    for lo, hi in itertools.pairwise(bounds):
        sel = order[lo:hi]
        _layer(memory, fb, ds, stages, pixels[sel], qdepth[sel], color[sel], stats, fate, sel, observer)


def _layer(memory: PhysicalMemory, fb: fbm.FramebufferState, ds: DepthStencilState, stages: ColorBlend,
           pixels: np.ndarray, depth: np.ndarray, color: np.ndarray, stats: dict, fate: np.ndarray | None,
           index: np.ndarray | slice, observer: StageObserver | None = None) -> None:
    """Depth/stencil and color write of fragments that each hit a different pixel (tiled pixel indices);
    ``fate[index]`` (when given) receives their fates."""
    if ds.uses_depth_buffer(fb.depth_format):
        buf = fb.depth_bytes(memory)
        stored = fbm.gather_pixels(buf, pixels, fb.depth_bpp)
        if not fb.depth_read:
            stored = np.zeros_like(stored)  # reads disabled: the old value is unknown; 0 (reference §15.7)
        old_depth, old_stencil = fbm.split_depth_word(stored, fb.depth_format)
        res = depth_stencil_test(ds, fb.depth_format, depth, old_depth, old_stencil)
        if observer is not None:
            observer.on_depth_stencil(pixels, depth, old_depth, old_stencil, res.stencil_pass, res.depth_pass)
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
