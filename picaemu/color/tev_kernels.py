"""The TEV's compiled per-fragment loops (numba, cached): one combine op on 8-bit integers, one stage's four output
channels over every fragment (``_stage``) and the dot3 ops (``_dot3``). ``picaemu.color.tev`` decodes the stages
and sequences them (``tev.program``); these loops only see scalars and (F, 4) uint8 arrays, so the fused fragment
kernel (``picaemu.fused.fragment_kernel``) calls the same ones.

Integer maths, divisions truncating toward zero, as Azahar's software renderer (HW rounding is unknown); combine op
codes as ``picaemu.regs.blocks.tev.COMBINE_OPS``.
"""

from __future__ import annotations

import sys

import numba
import numpy as np

from picaemu import numba_link
from picaemu.fragment.blend import div255
from picaemu.regs.blocks.tev import COMBINE_OPS

_OP = {name: code for code, name in COMBINE_OPS.items()}
OP_REPLACE, OP_MODULATE, OP_ADD, OP_ADD_SIGNED, OP_LERP = (
    _OP["replace"],
    _OP["modulate"],
    _OP["add"],
    _OP["add signed"],
    _OP["interpolate"],
)
OP_SUBTRACT, OP_DOT3_RGB, OP_DOT3_RGBA, OP_MUL_ADD = (
    _OP["subtract"],
    _OP["dot3 RGB"],
    _OP["dot3 RGBA"],
    _OP["multiply then add"],
)


# the shift of each channel's byte in a fragment's (4,) uint8 color read as one native 32-bit word
_AT = (0, 8, 16, 24) if sys.byteorder == "little" else (24, 16, 8, 0)


@numba.njit(cache=True, inline="always", error_model="numpy")
def _div_trunc(x: int, d: int) -> int:
    """Integer division truncating toward zero (C semantics)."""
    return -((-x) // d) if x < 0 else x // d


@numba_link.compiled_only()
def _combine_one(op: int, a, b, c) -> np.int32:  # pragma: no cover - compiled
    """One channel of every combine op but dot3 (see the reference table), 8-bit integers in and out. Every op's
    value in 32 bits and the op's chosen by selects, not branches (a stage's op is the same for every fragment, so
    that ``_stage``'s loop over fragments runs in vector lanes); quotients by 255 by ``div255`` (multiply then add:
    (a b + 255 c) // 255 = a b // 255 + c)."""
    a, b, c = np.int32(a), np.int32(b), np.int32(c)
    ab, product = np.int32(a + b), div255(np.int32(a * b))
    v = div255(np.int32(min(ab, np.int32(255)) * c))  # add then multiply: the codes no other op has
    v = a if op == OP_REPLACE else v
    v = product if op == OP_MODULATE else v
    v = min(ab, np.int32(255)) if op == OP_ADD else v
    v = min(max(np.int32(ab - 128), np.int32(0)), np.int32(255)) if op == OP_ADD_SIGNED else v
    v = div255(np.int32(a * c + b * (255 - c))) if op == OP_LERP else v
    v = max(np.int32(a - b), np.int32(0)) if op == OP_SUBTRACT else v
    v = min(np.int32(product + c), np.int32(255)) if op == OP_MUL_ADD else v
    return np.int32(v)


@numba_link.compiled_only()
def _operate(x: int, y: int, z: int, flips: tuple, op: int, shift: int) -> np.int32:  # pragma: no cover - compiled
    """One output channel from its three operand values: inverted where ``flips`` (one int each: 255 to invert,
    255 - v = v ^ 255, else 0) asks, combined, scaled."""
    v = _combine_one(op, np.int32(x ^ flips[0]), np.int32(y ^ flips[1]), np.int32(z ^ flips[2]))
    return min(np.int32(v << shift), np.int32(255))


@numba.njit(cache=True)
def _stage(
    r0,
    r1,
    r2,
    a0,
    a1,
    a2,
    rgb_ch,
    rgb_inv,
    rgb_op,
    rgb_shift,
    alpha_ch,
    alpha_inv,
    alpha_op,
    alpha_shift,
    with_rgb,
    out,
) -> None:  # pragma: no cover - compiled
    """Output channels of one stage for every fragment, in one pass: RGB (when ``with_rgb``; dot3 is ``_dot3``'s)
    from r0-r2, operand j of channel ch reading channel ``rgb_ch[3 * j + ch]``, and alpha from a0-a2, operand j
    reading ``alpha_ch[j]``; sources and ``out`` (F, 4) uint8, C-contiguous; the choices arrive as tuples of
    scalars, so that they stay in registers. Each fragment's colors are read and written as one 32-bit word, a
    channel by a shift (``_AT``), so that the loop runs in vector lanes."""
    k00, k01, k02 = _AT[rgb_ch[0]], _AT[rgb_ch[1]], _AT[rgb_ch[2]]
    k10, k11, k12 = _AT[rgb_ch[3]], _AT[rgb_ch[4]], _AT[rgb_ch[5]]
    k20, k21, k22 = _AT[rgb_ch[6]], _AT[rgb_ch[7]], _AT[rgb_ch[8]]
    c0, c1, c2 = _AT[alpha_ch[0]], _AT[alpha_ch[1]], _AT[alpha_ch[2]]
    flips = (np.int32(255 * rgb_inv[0]), np.int32(255 * rgb_inv[1]), np.int32(255 * rgb_inv[2]))
    alpha_flips = (np.int32(255 * alpha_inv[0]), np.int32(255 * alpha_inv[1]), np.int32(255 * alpha_inv[2]))
    w0, w1, w2 = r0.view(np.uint32), r1.view(np.uint32), r2.view(np.uint32)
    v0, v1, v2, words = a0.view(np.uint32), a1.view(np.uint32), a2.view(np.uint32), out.view(np.uint32)
    kept = np.int32(~(255 << _AT[3]))  # the RGB bytes of a word
    for i in range(out.shape[0]):
        x, y, z, o = np.int32(w0[i, 0]), np.int32(w1[i, 0]), np.int32(w2[i, 0]), np.int32(words[i, 0])
        if with_rgb:
            o0 = _operate((x >> k00) & 255, (y >> k10) & 255, (z >> k20) & 255, flips, rgb_op, rgb_shift)
            o1 = _operate((x >> k01) & 255, (y >> k11) & 255, (z >> k21) & 255, flips, rgb_op, rgb_shift)
            o2 = _operate((x >> k02) & 255, (y >> k12) & 255, (z >> k22) & 255, flips, rgb_op, rgb_shift)
            o = np.int32(o0 << _AT[0] | o1 << _AT[1] | o2 << _AT[2])
        x, y, z = np.int32(v0[i, 0]), np.int32(v1[i, 0]), np.int32(v2[i, 0])
        o3 = _operate((x >> c0) & 255, (y >> c1) & 255, (z >> c2) & 255, alpha_flips, alpha_op, alpha_shift)
        words[i, 0] = np.uint32(o & kept | o3 << _AT[3])


@numba.njit(cache=True, error_model="numpy")  # every divisor is a constant: no division-by-zero branches
def _dot3(r0, r1, rgb_ch, rgb_inv, shift, rgba, alpha_shift, out) -> None:  # pragma: no cover - compiled
    """Dot3 of the first two RGB operands into out[:, :3] scaled by ``shift`` (and, when ``rgba``, into out[:, 3]
    scaled by ``alpha_shift``)."""
    for i in range(out.shape[0]):
        total = 0
        for ch in range(3):
            x, y = np.int64(r0[i, rgb_ch[0, ch]]), np.int64(r1[i, rgb_ch[1, ch]])
            x = 255 - x if rgb_inv[0] else x
            y = 255 - y if rgb_inv[1] else y
            total += _div_trunc((2 * x - 255) * (2 * y - 255) + 128, 256)
        dot = min(max(total, 0), 255)
        v = min(dot << shift, 255)
        out[i, 0] = out[i, 1] = out[i, 2] = v
        if rgba:
            out[i, 3] = min(dot << alpha_shift, 255)
