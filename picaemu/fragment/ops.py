"""Per-fragment operations of one draw, in primitive order: stencil test, depth test, stencil/depth writes,
destination read, blend / logic op, color write mask, color write (pica-pipeline.md §15) — the one
implementation: compiled passes (``picaemu.fragment.kernels``) over per-draw arrays built from the rule table
(``picaemu.fragment.rules``). ``picaemu.fragment.reference`` is the same thing in readable scalar Python, the test
oracle.

``resolve`` receives the fragments that survived the alpha test — window pixels ``x``, ``y`` (F,) int32 (y up),
``depth`` (F,) float32 in [0, 1] (quantized here to the depth buffer's width, as ``framebuffer.quantize_depth``),
``color`` (F, 4) uint8 — in rasterization order, the decoded ``FramebufferState`` and ``DepthStencilState`` and
the draw's ``BlendProgram``; writes the tiled buffers in emulated memory and adds ``killed_stencil``,
``killed_depth`` and ``fragments_written`` to ``stats``. Each fragment sees the depth, stencil and color its
predecessors in the draw left (the hardware's per-pixel order).

The depth/stencil pass runs first over every fragment (depth and stencil never depend on color), then the color
pass over the survivors (same order, so blending sees its predecessors' colors); 32-bit buffers (D24S8 without
stencil; RGBA8) take word passes, the rest byte passes; each is its own kernel, compiled the first time a draw
needs it. When the two buffers share bytes, or when the caller passes a ``FragmentLog`` (the fragment observer is
attached), both passes run fragment by fragment instead (``kernels.interleaved``), and the log receives each
fragment's ``Fate`` and its pixel's color before and after it; fragments the log already marks as killed (scissor,
alpha test) are skipped but still get their pixel's color.

``resolve_shadow``: shadow-map rendering mode (COLOR_OPERATION ``fragment_mode`` "shadow map rendering", §15.8):
no alpha, stencil, depth or blend stage; ``picaemu.fragment.shadow.shadow_write`` updates the 32-bit color
buffer's (depth, intensity) texels in fragment order from the fragment depth and the TEV output's green.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from typing import NamedTuple

import numpy as np

from picaemu.errors import MemoryFault, UnsupportedFeature
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import kernels as fk
from picaemu.fragment import rules
from picaemu.fragment.blend import LOGIC_TABLES, BlendMode, BlendProgram, factor_rows
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.shadow import ShadowState, shadow_write
from picaemu.memory import PhysicalMemory
from picaemu.regs import access, id_of

ALWAYS_PASSES = 0b111  # pass mask of a disabled test (``rules.COMPARE``)
NO_BYTES = np.zeros(0, np.uint8)
NO_COLORS = np.zeros((0, 4), np.uint8)
NO_WORDS = np.zeros(0, np.uint32)  # a buffer the word passes do not read
WORD_BYTES = 4  # pixel size of the word passes
LITTLE_ENDIAN_HOST = sys.byteorder == "little"  # uint32 views then read words in the buffers' byte order
FRAGMENT_MODE_SHADOW = "shadow map rendering"  # COLOR_OPERATION.fragment_mode enum name
SHADOW_BPP = 4  # the shadow map is a 32-bit color buffer (depth 24 + intensity 8)


class Fate(IntEnum):
    """What became of a rasterized fragment (a stage observer's ``on_fragments``; docs/render.md)."""

    WRITTEN = 0  # passed every test: color written (if COLORBUFFER_WRITE allows), depth/stencil per their enables
    SCISSOR = 1  # rejected by the scissor test (rasterizer)
    ALPHA = 2  # failed the alpha test
    STENCIL = 3  # failed the stencil test
    DEPTH = 4  # failed the depth test


# fate of a compiled-pass counter index (fragment_kernels: KILLED_STENCIL, KILLED_DEPTH, SURVIVED)
FATE_OF_COUNTER = np.array([Fate.STENCIL, Fate.DEPTH, Fate.WRITTEN], np.uint8)
NO_FATE = np.zeros(0, np.uint8)


@dataclass(frozen=True)
class FragmentLog:
    """Per-fragment records of a recorded ``resolve`` (what the fragment observer receives): ``fate`` (F,) uint8
    ``Fate`` codes (entries preset to another fate than WRITTEN are fragments killed before: skipped),
    ``before`` / ``after`` (F, 4) uint8 the color buffer's pixel decoded to RGBA8 before and after the fragment's
    turn (after = before for a killed fragment; zero when the color buffer is not in mapped memory), and for the
    fragments that reached the depth/stencil tests the buffer's ``stored_depth`` (F,) uint32 (the buffer's integer
    depth) and ``stored_stencil`` (F,) uint8 they were tested against (0 when depth reads are disabled; stencil 0
    unless D24S8)."""

    fate: np.ndarray
    before: np.ndarray
    after: np.ndarray
    stored_depth: np.ndarray
    stored_stencil: np.ndarray

    @classmethod
    def start(cls, fate: np.ndarray) -> FragmentLog:
        """A log for ``len(fate)`` fragments with their fates so far (WRITTEN = not killed yet)."""
        n = fate.shape[0]
        return cls(
            np.array(fate, np.uint8),
            np.zeros((n, 4), np.uint8),
            np.zeros((n, 4), np.uint8),  # a copy
            np.zeros(n, np.uint32),
            np.zeros(n, np.uint8),
        )


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
    stencil_pass: int  # rules.COMPARE mask of the stencil function
    stencil_ref: int  # already masked with the input mask
    stencil_input_mask: int
    depth_pass: int  # rules.COMPARE mask of the depth function (ALWAYS_PASSES with the depth test off)
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
    return np.array([(rules.stencil_op(op, old, ds.stencil_ref) & wm) | (old & ~wm & 0xFF) for op in ops], np.int64)


def _params(fb: fbm.FramebufferState, ds: DepthStencilState, program: BlendProgram) -> OpsParams:
    m = ds.stencil_input_mask
    return OpsParams(
        width=fb.width,
        height=fb.height,
        flipped=int(fb.flipped),
        use_depth=int(ds.uses_depth_buffer(fb.depth_format)),
        depth_bpp=fb.depth_bpp,
        depth_read=int(fb.depth_read),
        depth_max=fbm.depth_max(fb.depth_format),
        stencil_active=int(ds.stencil_active(fb.depth_format)),
        stencil_pass=rules.COMPARE[ds.stencil_func],
        stencil_ref=ds.stencil_ref & m,
        stencil_input_mask=m,
        depth_pass=rules.COMPARE[ds.depth_func] if ds.depth_test else ALWAYS_PASSES,
        write_depth=int(ds.depth_write and fb.depth_write),
        write_stencil=int(fb.stencil_write),
        color_write=int(fb.color_write),
        color_bpp=fb.color_bpp,
        color_read=int(fb.color_read),
        need_dst=int(program.mode is not BlendMode.REPLACE or not all(ds.color_mask)),
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
        """The arguments of the byte color pass after the color buffer (``kernels.color_pass``)."""
        return (
            np.array(self.layout, np.int64),
            self.packer,
            np.array(self.ds.color_mask, np.bool_),
            *self.blend_rows,
            self.program.logic,
        )

    @cached_property
    def layout(self) -> tuple[tuple[int, int, int], ...]:
        return fbm.COLOR_LAYOUTS[self.fb.color_format]

    @cached_property
    def packer(self) -> tuple[int, ...]:
        return fk.packer(self.layout)

    @cached_property
    def blend_rows(self) -> tuple[tuple[int, ...], ...]:
        """The four channel rows of ``kernels.blend_channel`` (``blend.factor_rows``, the channel's write mask and
        its shift in the pixel word: 0 for a channel the format lacks), for both the word and the byte passes."""
        shift = {ch: sh for ch, sh, _ in self.layout}
        shifts = [shift.get(ch, 0) for ch in range(4)]
        blend = self.program.mode is BlendMode.BLEND
        factors = factor_rows(self.program) if blend else np.zeros((4, 7), np.int64)  # unused without blending
        rows = np.column_stack([factors, np.array(self.ds.color_mask, np.int64), shifts])
        return tuple(tuple(int(v) for v in row) for row in rows)

    @cached_property
    def logic_args(self) -> tuple[tuple[int, ...], int]:
        """``fragment_kernels.logic_words``' table (a logic op, or "copy" for a partial write mask) and write mask."""
        table = self.program.logic if self.program.mode is BlendMode.LOGIC else LOGIC_TABLES[rules.LOGIC_COPY]
        write_mask = sum(0xFF << shift for ch, shift, _ in self.layout if self.ds.color_mask[ch])
        return tuple(0xFFFFFFFF if t else 0 for t in table), write_mask


def resolve(
    memory: PhysicalMemory,
    fb: fbm.FramebufferState,
    ds: DepthStencilState,
    program: BlendProgram,
    x: np.ndarray,
    y: np.ndarray,
    depth: np.ndarray,
    color: np.ndarray,
    stats: dict,
    log: FragmentLog | None = None,
    plan: OpsPlan | None = None,
) -> None:
    """All per-fragment operations of the draw's surviving fragments in compiled passes (see the module doc);
    ``log``: record every fragment (``FragmentLog``); ``plan``: the ``OpsPlan`` of ``fb``, ``ds`` and ``program``
    when the caller keeps one."""
    plan = OpsPlan(fb, ds, program) if plan is None else plan
    p = plan.params
    depth_buf = fb.depth_bytes(memory) if p.use_depth else NO_BYTES
    color_buf, fault = NO_BYTES, None
    if p.color_write or log is not None:
        try:
            color_buf = fb.color_bytes(memory)
        except MemoryFault as err:  # raised below only if some fragment reaches the color write
            fault, p = (err if p.color_write else None), p._replace(color_write=0)
    counts = np.zeros(3, np.int64)
    x, y = np.ascontiguousarray(x, np.int32), np.ascontiguousarray(y, np.int32)
    depth, color = np.ascontiguousarray(depth, np.float32), np.ascontiguousarray(color, np.uint8)
    if log is not None:
        depth_kind = fk.INTERLEAVED
        logged = (log.fate, log.before, log.after, log.stored_depth, log.stored_stencil)
    else:
        depth_kind, color_kind, depth_words, color_words = pass_kinds(p, plan, depth_buf, color_buf, False)
        logged = (NO_FATE, NO_COLORS, NO_COLORS, NO_WORDS, NO_BYTES)
    if depth_kind == fk.INTERLEAVED:  # both passes fragment by fragment: a full log, or buffers that share bytes
        counts[fk.SURVIVED] = fk.interleaved(
            x,
            y,
            depth,
            color,
            p,
            depth_buf,
            plan.stencil_tables,
            counts,
            FATE_OF_COUNTER,
            color_buf,
            *logged,
            *plan.byte_color_args,
        )
    else:
        args = (
            depth_kind,
            color_kind,
            x,
            y,
            depth,
            color,
            p,
            depth_buf,
            depth_words,
            plan.stencil_tables,
            counts,
            NO_FATE,  # the split passes record no fates (the recorded pass is the interleaved one)
            FATE_OF_COUNTER,
            color_buf,
            color_words,
            *plan.byte_color_args,
            *plan.logic_args,
        )
        counts[fk.SURVIVED] = fk.run_passes(*args, fk.pass_links(*args))
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


def pass_kinds(
    p: OpsParams, plan: OpsPlan, depth_buf: np.ndarray, color_buf: np.ndarray, fates: bool
) -> tuple[int, int, np.ndarray, np.ndarray]:
    """The compiled passes (``kernels.run_passes``) that serve these buffers: (depth kind, color kind, the depth
    and color buffers as uint32 words for the word passes, else empty). Both buffers sharing bytes: one
    interleaved pass (a color write can change a later fragment's stored depth word); else the word passes for
    32-bit buffers (depth: without an active stencil and without recorded ``fates``; color: 8-bit channels), the
    byte passes for the rest."""
    if p.use_depth and p.color_write and np.shares_memory(depth_buf, color_buf):
        return fk.INTERLEAVED, fk.COLOR_NONE, NO_WORDS, NO_WORDS
    depth_words = _words(depth_buf, p.depth_bpp) if p.use_depth and not p.stencil_active and not fates else None
    depth_kind = fk.DEPTH_NONE if not p.use_depth else fk.DEPTH_BYTES if depth_words is None else fk.DEPTH_WORDS
    color_words = (
        _words(color_buf, p.color_bpp) if p.color_write and all(bits == 8 for _, _, bits in plan.layout) else None
    )
    if not p.color_write:
        color_kind = fk.COLOR_NONE
    elif color_words is None:
        color_kind = fk.COLOR_BYTES
    elif not p.need_dst:
        color_kind = fk.REPLACE_WORDS
    else:
        color_kind = fk.BLEND_WORDS if plan.program.mode is BlendMode.BLEND else fk.LOGIC_WORDS
    return (
        depth_kind,
        color_kind,
        NO_WORDS if depth_words is None else depth_words,
        NO_WORDS if color_words is None else color_words,
    )


# ---------------------------------------------------------------------------------------------- shadow rendering
def is_shadow_mode(regs: np.ndarray) -> bool:
    """True when COLOR_OPERATION selects shadow-map rendering (§15.8)."""
    return access.value(regs, "COLOR_OPERATION", "fragment_mode") == FRAGMENT_MODE_SHADOW


def check_shadow_target(fb: fbm.FramebufferState, regs: np.ndarray) -> None:
    """A shadow map is a 32-bit color buffer: any other format raises ``UnsupportedFeature`` (COLORBUFFER_FORMAT)."""
    if fb.color_bpp != SHADOW_BPP:
        raise UnsupportedFeature(
            f"shadow-map rendering into a {fb.color_format.name} color buffer (needs 32-bit)",
            register=id_of("COLORBUFFER_FORMAT"),
            value=access.word(regs, "COLORBUFFER_FORMAT"),
        )


def resolve_shadow(
    memory: PhysicalMemory,
    fb: fbm.FramebufferState,
    sstate: ShadowState,
    x: np.ndarray,
    y: np.ndarray,
    depth: np.ndarray,
    intensity: np.ndarray,
    stats: dict,
) -> None:
    """Shadow-map rendering of the draw's fragments (every one reaches the update: no alpha/stencil/depth test).

    ``intensity`` (F,) uint8 is the TEV output's green; the color buffer must be 32 bits per pixel
    (``check_shadow_target``); with color writes disabled (COLORBUFFER_WRITE = 0) nothing is written. Adds the
    fragments to ``fragments_written`` when the buffer is written."""
    if fb.color_bpp != SHADOW_BPP:
        raise UnsupportedFeature(
            f"shadow-map rendering into a {fb.color_format.name} color buffer (needs 32-bit)",
            register=id_of("COLORBUFFER_FORMAT"),
        )
    if not fb.color_write or x.shape[0] == 0:
        return
    texels = fb.color_bytes(memory).reshape(-1, SHADOW_BPP)
    pixels = fbm.pixel_index(x, y, fb.width, fb.height, fb.flipped)
    shadow_write(sstate, pixels, depth, intensity, texels)
    stats["fragments_written"] += int(x.shape[0])
