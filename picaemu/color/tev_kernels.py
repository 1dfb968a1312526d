"""The TEV's compiled per-fragment loops (numba, cached): one combine op on 8-bit integers, one stage's four output
channels over every fragment (``_stage``) and the dot3 ops (``_dot3``). ``picaemu.color.tev`` decodes the stages
and sequences them (``tev.program``); these loops only see scalars and (F, 4) uint8 arrays, so the fused fragment
kernel (``picaemu.fused.fragment_kernel``) calls the same ones.

Integer maths, divisions truncating toward zero, as Azahar's software renderer (HW rounding is unknown); combine op
codes as ``picaemu.regs.blocks.tev.COMBINE_OPS``.
"""

from __future__ import annotations

import numba
import numpy as np

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


@numba.njit(cache=True, inline="always", error_model="numpy")
def _div_trunc(x: int, d: int) -> int:
    """Integer division truncating toward zero (C semantics)."""
    return -((-x) // d) if x < 0 else x // d


@numba.njit(cache=True, error_model="numpy")
def _combine_one(op: int, a: int, b: int, c: int) -> int:
    """One channel of every combine op but dot3 (see the reference table), 8-bit integers in and out."""
    if op == OP_REPLACE:
        return a
    if op == OP_MODULATE:
        return a * b // 255
    if op == OP_ADD:
        return min(a + b, 255)
    if op == OP_ADD_SIGNED:
        return min(max(a + b - 128, 0), 255)
    if op == OP_LERP:
        return (a * c + b * (255 - c)) // 255
    if op == OP_SUBTRACT:
        return max(a - b, 0)
    if op == OP_MUL_ADD:
        return min((a * b + 255 * c) // 255, 255)
    return min(a + b, 255) * c // 255  # add then multiply


@numba.njit(cache=True, error_model="numpy")  # every divisor is a constant: no division-by-zero branches
def _operate(x: int, y: int, z: int, inv0: bool, inv1: bool, inv2: bool, op: int, shift: int) -> int:
    """One output channel from its three operand values: inverted (255 - v) where asked, combined, scaled."""
    x = 255 - x if inv0 else x
    y = 255 - y if inv1 else y
    z = 255 - z if inv2 else z
    return min(_combine_one(op, x, y, z) << shift, 255)


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
    reading ``alpha_ch[j]``; sources (F, 4) uint8; the choices arrive as tuples of scalars, so that they stay in
    registers and the compiler hoists the op selection."""
    k00, k01, k02, k10, k11, k12, k20, k21, k22 = rgb_ch
    i0, i1, i2 = rgb_inv
    c0, c1, c2 = alpha_ch
    j0, j1, j2 = alpha_inv
    for i in range(out.shape[0]):
        if with_rgb:
            out[i, 0] = _operate(
                np.int64(r0[i, k00]), np.int64(r1[i, k10]), np.int64(r2[i, k20]), i0, i1, i2, rgb_op, rgb_shift
            )
            out[i, 1] = _operate(
                np.int64(r0[i, k01]), np.int64(r1[i, k11]), np.int64(r2[i, k21]), i0, i1, i2, rgb_op, rgb_shift
            )
            out[i, 2] = _operate(
                np.int64(r0[i, k02]), np.int64(r1[i, k12]), np.int64(r2[i, k22]), i0, i1, i2, rgb_op, rgb_shift
            )
        out[i, 3] = _operate(
            np.int64(a0[i, c0]), np.int64(a1[i, c1]), np.int64(a2[i, c2]), j0, j1, j2, alpha_op, alpha_shift
        )


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
