"""The readable scalar reference of the per-fragment operations: plain Python, one fragment at a time, straight
from the rule table (``picaemu.fragment.rules``). It is the test oracle of the compiled passes
(``picaemu.fragment.ops.resolve``), as ``picaemu.shader.reference`` is the vectorized shader unit's; nothing in
a render calls it.

- ``alpha_passes(bstate, alpha) -> bool``: the alpha test (all pass when it is off).
- ``depth_stencil(ds, fmt, frag_depth, stored_depth, stored_stencil) -> DepthStencilOutcome``: stencil test, depth
  test and the values the tests leave (depth integers already quantized to the buffer's width; before the
  buffer write enables of ``FramebufferState``).
- ``blend_color(bstate, src, dst) -> (r, g, b, a)``: blending (per channel ``eq(S * Fs, D * Fd) // 255`` clamped
  to 0..255) or, with blending off, the logic op; colors 8-bit RGBA.
- ``resolve(memory, fb, ds, bstate, x, y, depth, color, preset=None) -> Resolved``: every per-fragment operation of
  a draw's fragments into emulated memory, in order — stencil test, depth test, stencil/depth writes (through the
  buffer read/write enables: a disabled read reads 0), destination read, blend / logic op (``bstate`` None: the
  source replaces the destination), color write mask, color write — with each fragment's ``Fate`` and the color
  buffer's pixel (decoded to RGBA8) before and after it. ``preset`` marks fragments already killed (scissor,
  alpha): they change nothing, their before/after is their pixel's color at their turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from picaemu.errors import MemoryFault
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import rules
from picaemu.fragment.blend import BlendState
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.ops import Fate
from picaemu.memory import PhysicalMemory

Color = tuple[int, int, int, int]


class DepthStencilOutcome(NamedTuple):
    stencil_pass: bool
    depth_pass: bool  # passed the stencil test and the depth test: the fragment survives
    depth: int  # depth value after the test (the fragment's when it passed and depth writes are on)
    stencil: int  # stencil value after the op and its write mask (the stored one when the stencil is inactive)


def alpha_passes(bstate: BlendState, alpha: int) -> bool:
    return not bstate.alpha_test or rules.compare(bstate.alpha_func, alpha, bstate.alpha_ref)


def depth_stencil(
    ds: DepthStencilState, fmt: fbm.DepthFormat, frag_depth: int, stored_depth: int, stored_stencil: int
) -> DepthStencilOutcome:
    active = ds.stencil_active(fmt)
    m = ds.stencil_input_mask
    s_pass = not active or rules.compare(ds.stencil_func, ds.stencil_ref & m, stored_stencil & m)
    d_pass = s_pass and (not ds.depth_test or rules.compare(ds.depth_func, frag_depth, stored_depth))
    stencil = stored_stencil
    if active:
        op = ds.op_fail if not s_pass else (ds.op_depth_fail if not d_pass else ds.op_depth_pass)
        wm = ds.stencil_write_mask
        stencil = int(rules.stencil_op(op, stored_stencil, ds.stencil_ref)) & wm | (stored_stencil & ~wm & 0xFF)
    return DepthStencilOutcome(s_pass, d_pass, frag_depth if d_pass and ds.depth_write else stored_depth, stencil)


def blend_color(bstate: BlendState, src: Color, dst: Color) -> Color:
    if not bstate.blending:
        return tuple(rules.logic_op(bstate.logic_op, s, d) for s, d in zip(src, dst, strict=True))  # type: ignore
    const = bstate.constant
    out = []
    for ch in range(4):
        alpha = ch == rules.ALPHA
        eq = bstate.alpha_equation if alpha else bstate.rgb_equation
        fs = rules.factor(bstate.alpha_src if alpha else bstate.rgb_src, ch, src, dst, const)
        fd = rules.factor(bstate.alpha_dst if alpha else bstate.rgb_dst, ch, src, dst, const)
        out.append(min(max(rules.equation(eq, src[ch] * fs, dst[ch] * fd) // 255, 0), 255))
    return tuple(out)  # type: ignore[return-value]


@dataclass
class Resolved:
    """What ``resolve`` did: per fragment its fate and its pixel's color before / after it (None when the color
    buffer is not in mapped memory), and the counters the pipeline keeps."""

    fates: list[Fate] = field(default_factory=list)
    before: list[Color | None] = field(default_factory=list)
    after: list[Color | None] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=lambda: dict(killed_stencil=0, killed_depth=0, fragments_written=0))


def _read(buf: np.ndarray, pixel: int, bpp: int) -> int:
    return int.from_bytes(bytes(buf[pixel * bpp : (pixel + 1) * bpp]), "little")


def _write(buf: np.ndarray, pixel: int, bpp: int, word: int) -> None:
    buf[pixel * bpp : (pixel + 1) * bpp] = np.frombuffer(word.to_bytes(bpp, "little"), np.uint8)


def _decode(word: int, fmt: fbm.ColorFormat) -> Color:
    return tuple(int(v) for v in fbm.decode_color(np.array([word], np.uint32), fmt)[0])  # type: ignore[return-value]


def _pixel_color(buf: np.ndarray | None, fb: fbm.FramebufferState, pixel: int) -> Color | None:
    return None if buf is None else _decode(_read(buf, pixel, fb.color_bpp), fb.color_format)


def _depth_pass(
    memory: PhysicalMemory,
    fb: fbm.FramebufferState,
    ds: DepthStencilState,
    pixel: int,
    depth: float,
    stats: dict[str, int],
) -> Fate:
    """Stencil and depth test of one fragment and the depth buffer write; returns its fate so far."""
    fmt = fb.depth_format
    if not ds.uses_depth_buffer(fmt):
        return Fate.WRITTEN
    buf = fb.depth_bytes(memory)
    word = _read(buf, pixel, fb.depth_bpp) if fb.depth_read else 0  # a disabled read reads 0
    old_d = word & fbm.depth_max(fmt)
    old_s = word >> fbm.STENCIL_SHIFT & 0xFF if fmt is fbm.DepthFormat.D24S8 else 0
    frag = int(fbm.quantize_depth(np.array([depth], np.float32), fmt)[0])
    out = depth_stencil(ds, fmt, frag, old_d, old_s)
    new_d = out.depth if fb.depth_write else old_d
    new_s = out.stencil if fb.stencil_write else old_s
    if (new_d, new_s) != (old_d, old_s):
        _write(buf, pixel, fb.depth_bpp, new_s << fbm.STENCIL_SHIFT | new_d)  # new_s is 0 unless D24S8
    if not out.stencil_pass:
        stats["killed_stencil"] += 1
        return Fate.STENCIL
    if not out.depth_pass:
        stats["killed_depth"] += 1
        return Fate.DEPTH
    return Fate.WRITTEN


def _color_write(
    buf: np.ndarray, fb: fbm.FramebufferState, ds: DepthStencilState, bstate: BlendState | None, pixel: int, src: Color
) -> None:
    out = src
    if bstate is not None or not all(ds.color_mask):  # the destination is read
        dst = _decode(_read(buf, pixel, fb.color_bpp), fb.color_format) if fb.color_read else (0, 0, 0, 0)
        out = blend_color(bstate, src, dst) if bstate is not None else src
        out = tuple(o if m else d for o, d, m in zip(out, dst, ds.color_mask, strict=True))  # type: ignore[assignment]
    word = int(fbm.encode_color(np.array([out], np.uint8), fb.color_format)[0])
    _write(buf, pixel, fb.color_bpp, word)


def resolve(
    memory: PhysicalMemory,
    fb: fbm.FramebufferState,
    ds: DepthStencilState,
    bstate: BlendState | None,
    x: np.ndarray,
    y: np.ndarray,
    depth: np.ndarray,
    color: np.ndarray,
    preset: list[Fate] | None = None,
) -> Resolved:
    """The per-fragment operations of ``len(x)`` fragments, one after the other (see the module docstring)."""
    res = Resolved()
    try:
        color_buf: np.ndarray | None = fb.color_bytes(memory)
    except MemoryFault:
        color_buf = None
    for i in range(len(x)):
        pixel = fbm.tiled_pixel(int(x[i]), int(y[i]), fb.width, fb.height, fb.flipped)
        res.before.append(_pixel_color(color_buf, fb, pixel))
        fate = preset[i] if preset is not None and preset[i] is not Fate.WRITTEN else None
        if fate is None:
            fate = _depth_pass(memory, fb, ds, pixel, float(depth[i]), res.stats)
            if fate is Fate.WRITTEN and fb.color_write:
                if color_buf is None:
                    fb.color_bytes(memory)  # raises the fault
                _color_write(color_buf, fb, ds, bstate, pixel, tuple(int(v) for v in color[i]))  # type: ignore
                res.stats["fragments_written"] += 1
        res.fates.append(fate)
        res.after.append(_pixel_color(color_buf, fb, pixel))
    return res
