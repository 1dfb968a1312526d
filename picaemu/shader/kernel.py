"""Compiled arithmetic of the vectorized interpreter: a run of consecutive arithmetic instructions over a set of
lanes, one instruction at a time (each instruction finishes on every lane before the next starts).

``encode_row(ins) -> (ROW,) int32`` turns a decoded ``Instruction`` into a plan row; ``run_segment(plan (K, ROW)
int32, vr (32, 4, N) float32, out (16, 4, N) float32, c (128, 4) float32, a0 (2, N) int32, aL (N,) int32,
cmp (2, N) bool, lanes (L,) int64)`` executes the K rows on the listed lanes in place. Per lane and instruction:
fetch each source (relative addressing on the wide field: offset from a0.x/a0.y/aL, ignored outside -128..127,
index wrapped to 7 bits, rows 96-127 of ``c`` hold 1.0), swizzle, negate, compute in float32 with the float24
rules of ``picaemu.shader.ops`` (0 x inf = 0 in products, MAD product rounded before the add, NaN-ordered
MAX/MIN, RCP/RSQ of -0 = +inf, SGE/SLT give exactly 1.0/0.0, MOVA truncates, CMP operators 6/7 true), and
store the components of the write mask. ``ops`` (numpy) is the independent definition the scalar reference
interpreter uses; the differential test keeps the two equal.
"""

from __future__ import annotations

import numba
import numpy as np

from picaemu.shader.isa import Instruction

KOP = {"add": 0, "dp3": 1, "dp4": 2, "dph": 3, "dphi": 3, "dst": 4, "dsti": 4, "ex2": 5, "lg2": 6, "litp": 7,
       "mul": 8, "sge": 9, "sgei": 9, "slt": 10, "slti": 10, "flr": 11, "max": 12, "min": 13, "rcp": 14, "rsq": 15,
       "mova": 16, "mov": 17, "cmp": 18, "mad": 19, "madi": 19}
# plan row columns: op, dst, mask bits x y z w, cmp x/y, then 3 sources x (raw, sel x y z w, negate, idx)
C_OP, C_DST, C_MASK, C_CMP, C_SRC, SRC_W = 0, 1, 2, 6, 8, 7
ROW = C_SRC + 3 * SRC_W
NUM_OUT = 16
WINDOW_LO, WINDOW_HI = -128, 127
INDEX_MASK = 0x7F
INT32_MIN = -(2**31)
LITP_LIMIT = np.float32(127.9961)
F0 = np.float32(0.0)
F1 = np.float32(1.0)


def encode_row(ins: Instruction) -> np.ndarray:
    row = np.zeros(ROW, np.int32)
    row[C_OP] = KOP[ins.name]
    row[C_DST] = ins.dst
    row[C_MASK:C_MASK + 4] = [(ins.mask >> (3 - i)) & 1 for i in range(4)]
    row[C_CMP:C_CMP + 2] = ins.cmp_ops
    for k, op in enumerate(ins.srcs):
        b = C_SRC + k * SRC_W
        row[b] = op.raw
        row[b + 1:b + 5] = op.swizzle
        row[b + 5] = int(op.negate)
        row[b + 6] = op.idx
    return row


@numba.njit(cache=True, inline="always", error_model="numpy")
def _mul(a, b):
    p = a * b
    if p != p and a == a and b == b:
        return F0
    return p


@numba.njit(cache=True, inline="always", error_model="numpy")
def _fetch(row, k, vr, c, a0, aL, i):
    b = C_SRC + k * SRC_W
    raw = row[b]
    if raw < 32:
        x, y, z, w = vr[raw, row[b + 1], i], vr[raw, row[b + 2], i], vr[raw, row[b + 3], i], vr[raw, row[b + 4], i]
    else:
        idx = row[b + 6]
        off = 0
        if idx == 1:
            off = a0[0, i]
        elif idx == 2:
            off = a0[1, i]
        elif idx == 3:
            off = aL[i]
        if off < WINDOW_LO or off > WINDOW_HI:
            off = 0
        ci = (raw - 32 + off) & INDEX_MASK
        x, y, z, w = c[ci, row[b + 1]], c[ci, row[b + 2]], c[ci, row[b + 3]], c[ci, row[b + 4]]
    if row[b + 5]:
        return -x, -y, -z, -w
    return x, y, z, w


@numba.njit(cache=True, inline="always", error_model="numpy")
def _compare(code, a, b):
    if code == 0:
        return a == b
    if code == 1:
        return a != b
    if code == 2:
        return a < b
    if code == 3:
        return a <= b
    if code == 4:
        return a > b
    if code == 5:
        return a >= b
    return True


@numba.njit(cache=True, inline="always", error_model="numpy")
def _trunc(x):
    if abs(x) < np.float32(2.0**31):
        return np.int32(x)
    return np.int32(INT32_MIN)


@numba.njit(cache=True, inline="always", error_model="numpy")
def _clamp_litp(y):
    if y < -LITP_LIMIT:
        return -LITP_LIMIT
    if y > LITP_LIMIT:
        return LITP_LIMIT
    return y


@numba.njit(cache=True, inline="always", error_model="numpy")
def _max0(x):
    return x if (x > F0 or x != x) else F0


@numba.njit(cache=True, error_model="numpy")
def _lane(row, op, vr, out, c, a0, aL, cmp, i):
    ax, ay, az, aw = _fetch(row, 0, vr, c, a0, aL, i)
    if op == 16:                                            # mova
        if row[C_MASK]:
            a0[0, i] = _trunc(ax)
        if row[C_MASK + 1]:
            a0[1, i] = _trunc(ay)
        return
    if op in (5, 6, 7, 11, 14, 15, 17):                     # one-operand ops
        if op == 17:
            r = (ax, ay, az, aw)
        elif op == 11:
            r = (np.floor(ax), np.floor(ay), np.floor(az), np.floor(aw))
        elif op == 7:
            r = (_max0(ax), _clamp_litp(ay), F0, _max0(aw))
            cmp[0, i] = ax >= F0
            cmp[1, i] = aw >= F0
        else:
            if op == 5:
                s = np.float32(np.exp2(ax))
            elif op == 6:
                s = np.float32(np.log2(ax))
            elif op == 14:
                s = F1 / (ax + F0)
            else:
                s = F1 / np.sqrt(ax + F0)
            r = (s, s, s, s)
    else:
        bx, by, bz, bw = _fetch(row, 1, vr, c, a0, aL, i)
        if op == 18:                                        # cmp
            cmp[0, i] = _compare(row[C_CMP], ax, bx)
            cmp[1, i] = _compare(row[C_CMP + 1], ay, by)
            return
        if op == 0:
            r = (ax + bx, ay + by, az + bz, aw + bw)
        elif op == 8:
            r = (_mul(ax, bx), _mul(ay, by), _mul(az, bz), _mul(aw, bw))
        elif op == 19:
            cx, cy, cz, cw = _fetch(row, 2, vr, c, a0, aL, i)
            r = (_mul(ax, bx) + cx, _mul(ay, by) + cy, _mul(az, bz) + cz, _mul(aw, bw) + cw)
        elif op in (1, 2, 3):
            d = _mul(ax, bx) + _mul(ay, by) + _mul(az, bz)
            if op == 2:
                d = d + _mul(aw, bw)
            elif op == 3:
                d = d + bw
            r = (d, d, d, d)
        elif op == 4:
            r = (F1, _mul(ay, by), az, bw)
        elif op == 9:
            r = (F1 if ax >= bx else F0, F1 if ay >= by else F0, F1 if az >= bz else F0, F1 if aw >= bw else F0)
        elif op == 10:
            r = (F1 if ax < bx else F0, F1 if ay < by else F0, F1 if az < bz else F0, F1 if aw < bw else F0)
        elif op == 12:
            r = (ax if ax > bx else bx, ay if ay > by else by, az if az > bz else bz, aw if aw > bw else bw)
        else:
            r = (ax if ax < bx else bx, ay if ay < by else by, az if az < bz else bz, aw if aw < bw else bw)
    dst = row[C_DST]                      # o n -> out[n]; r n (0x10 + n) -> vr[0x10 + n]
    target = out if dst < NUM_OUT else vr
    if row[C_MASK]:
        target[dst, 0, i] = r[0]
    if row[C_MASK + 1]:
        target[dst, 1, i] = r[1]
    if row[C_MASK + 2]:
        target[dst, 2, i] = r[2]
    if row[C_MASK + 3]:
        target[dst, 3, i] = r[3]


@numba.njit(cache=True, error_model="numpy")
def run_segment(plan, vr, out, c, a0, aL, cmp, lanes):
    for k in range(plan.shape[0]):
        row = plan[k]
        op = row[C_OP]
        for j in range(lanes.shape[0]):
            _lane(row, op, vr, out, c, a0, aL, cmp, lanes[j])
