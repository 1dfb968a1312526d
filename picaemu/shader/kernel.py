"""Compiled arithmetic of the vectorized interpreter: a run of consecutive arithmetic instructions over a set of lanes,
one instruction at a time (each instruction finishes on every lane before the next starts).

``encode_row(ins) -> (ROW,) int32`` turns a decoded ``Instruction`` into a plan row; ``run_segment(plan (K, ROW)
int32, vr (32, 4, N) float32, out (16, 4, N) float32, c (128, 4) float32, a0 (2, N) int32, aL (N,) int32, cmp (2, N)
bool, lanes (L,) int64, full, scratch ...)`` executes the K rows on the listed lanes in place. Per lane and
instruction: fetch each source (relative addressing on the wide field: offset from a0.x/a0.y/aL, ignored outside
-128..127, index wrapped to 7 bits, rows 96-127 of ``c`` hold 1.0), swizzle, negate, compute in float32 with the
float24 rules of ``picaemu.shader.ops`` (0 x inf = 0 in products, MAD product rounded before the add, NaN-ordered
MAX/MIN, RCP/RSQ of -0 = +inf, SGE/SLT give exactly 1.0/0.0, MOVA truncates, CMP operators 6/7 true), and store the
components of the write mask. ``ops`` (numpy) is the independent definition the scalar reference interpreter uses;
the differential test keeps the two equal.
"""

from __future__ import annotations

import numpy as np

from picaemu import numba_link
from picaemu.shader.isa import Instruction

KOP = {
    "add": 0,
    "dp3": 1,
    "dp4": 2,
    "dph": 3,
    "dphi": 3,
    "dst": 4,
    "dsti": 4,
    "ex2": 5,
    "lg2": 6,
    "litp": 7,
    "mul": 8,
    "sge": 9,
    "sgei": 9,
    "slt": 10,
    "slti": 10,
    "flr": 11,
    "max": 12,
    "min": 13,
    "rcp": 14,
    "rsq": 15,
    "mova": 16,
    "mov": 17,
    "cmp": 18,
    "mad": 19,
    "madi": 19,
}
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
    row[C_MASK : C_MASK + 4] = [(ins.mask >> (3 - i)) & 1 for i in range(4)]
    row[C_CMP : C_CMP + 2] = ins.cmp_ops
    for k, op in enumerate(ins.srcs):
        b = C_SRC + k * SRC_W
        row[b] = op.raw
        row[b + 1 : b + 5] = op.swizzle
        row[b + 5] = int(op.negate)
        row[b + 6] = op.idx
    return row


@numba_link.compiled_only(error_model="numpy")
def _mul(a, b):
    p = a * b
    if p != p and a == a and b == b:
        return F0
    return p


@numba_link.kernel(error_model="numpy", inline="always")
def _source(src, vr, c, a0, aL, lanes, full, buf, col):
    """One operand for every lane, from its ``SRC_W`` plan columns ``src`` (raw, sel x y z w, negate, idx): a
    (4, M) view of the register when no copy is needed, a (4, 1) column for a plain uniform (read with lane step
    0), else ``buf`` filled with the swizzled, negated (relatively addressed) values."""
    raw, neg, idx = src[0], src[5], src[6]
    s0, s1, s2, s3 = src[1], src[2], src[3], src[4]
    m = buf.shape[1]
    if raw < 32:
        reg = vr[raw]
        if full and not neg and s0 == 0 and s1 == 1 and s2 == 2 and s3 == 3:
            return reg
        sign = np.float32(-1.0) if neg else F1
        for j in range(m):
            i = j if full else lanes[j]
            buf[0, j] = reg[s0, i] * sign
            buf[1, j] = reg[s1, i] * sign
            buf[2, j] = reg[s2, i] * sign
            buf[3, j] = reg[s3, i] * sign
        return buf
    sign = np.float32(-1.0) if neg else F1
    if idx == 0:  # one value for every lane: a (4, 1) column read with step 0
        col[0, 0], col[1, 0] = c[raw - 32, s0] * sign, c[raw - 32, s1] * sign
        col[2, 0], col[3, 0] = c[raw - 32, s2] * sign, c[raw - 32, s3] * sign
        return col
    for j in range(m):
        i = j if full else lanes[j]
        off = a0[0, i] if idx == 1 else (a0[1, i] if idx == 2 else aL[i])
        if off < WINDOW_LO or off > WINDOW_HI:
            off = 0
        ci = (raw - 32 + off) & INDEX_MASK
        buf[0, j] = c[ci, s0] * sign
        buf[1, j] = c[ci, s1] * sign
        buf[2, j] = c[ci, s2] * sign
        buf[3, j] = c[ci, s3] * sign
    return buf


@numba_link.compiled_only(error_model="numpy")
def _max0(x):
    return x if (x > F0 or x != x) else F0


@numba_link.compiled_only(error_model="numpy")
def _binop(op, a, b):
    if op == 0:
        return a + b
    if op == 8:
        return _mul(a, b)
    if op == 9:
        return F1 if a >= b else F0
    if op == 10:
        return F1 if a < b else F0
    if op == 12:
        return a if a > b else b
    return a if a < b else b


@numba_link.compiled_only(error_model="numpy")
def _flags(op, row, a, b, cmp, a0, lanes, full, vr_lanes):
    """MOVA, CMP and LITP's flag side effects."""
    m = vr_lanes if full else lanes.shape[0]
    sa = 1 if a.shape[1] > 1 else 0
    sb = 1 if b.shape[1] > 1 else 0
    for j in range(m):
        i = j if full else lanes[j]
        for comp in range(2):  # x and y
            x = a[comp, j * sa]
            if op == 16:
                if row[C_MASK + comp]:  # MOVA truncates; out of int32 range (or NaN) gives INT32_MIN
                    a0[comp, i] = np.int32(x) if abs(x) < np.float32(2.0**31) else np.int32(INT32_MIN)
            elif op == 18:
                y, code = b[comp, j * sb], row[C_CMP + comp]
                if code == 0:
                    cmp[comp, i] = x == y
                elif code == 1:
                    cmp[comp, i] = x != y
                elif code == 2:
                    cmp[comp, i] = x < y
                elif code == 3:
                    cmp[comp, i] = x <= y
                elif code == 4:
                    cmp[comp, i] = x > y
                elif code == 5:
                    cmp[comp, i] = x >= y
                else:
                    cmp[comp, i] = True
            else:  # LITP: x and w
                cmp[comp, i] = a[3 * comp, j * sa] >= F0


@numba_link.compiled_only(error_model="numpy")
def _compute(op, row, a, b, cc, dest):
    """Masked result components of ``op`` into ``dest`` (4, M); every lane's inputs are read before it is
    written, so sources may alias the destination. A source with one column is the same for every lane."""
    m = dest.shape[1]
    sa = 1 if a.shape[1] > 1 else 0
    sb = 1 if b.shape[1] > 1 else 0
    sc = 1 if cc.shape[1] > 1 else 0
    mx, my, mz, mw = row[C_MASK], row[C_MASK + 1], row[C_MASK + 2], row[C_MASK + 3]
    if op in (0, 8, 9, 10, 12, 13):
        for comp in range(4):
            if row[C_MASK + comp]:
                for j in range(m):
                    dest[comp, j] = _binop(op, a[comp, j * sa], b[comp, j * sb])
        return
    if op == 17 or op == 11 or op == 19:
        for comp in range(4):
            if row[C_MASK + comp]:
                for j in range(m):
                    if op == 17:
                        dest[comp, j] = a[comp, j * sa]
                    elif op == 11:
                        dest[comp, j] = np.floor(a[comp, j * sa])
                    else:
                        dest[comp, j] = _mul(a[comp, j * sa], b[comp, j * sb]) + cc[comp, j * sc]
        return
    for j in range(m):
        if op == 1 or op == 2 or op == 3:
            d = _mul(a[0, j * sa], b[0, j * sb]) + _mul(a[1, j * sa], b[1, j * sb]) + _mul(a[2, j * sa], b[2, j * sb])
            if op == 2:
                d = d + _mul(a[3, j * sa], b[3, j * sb])
            elif op == 3:
                d = d + b[3, j * sb]
            r0 = r1 = r2 = r3 = d
        elif op == 4:
            r0, r1, r2, r3 = F1, _mul(a[1, j * sa], b[1, j * sb]), a[2, j * sa], b[3, j * sb]
        elif op == 7:
            y = a[1, j * sa]
            r1 = -LITP_LIMIT if y < -LITP_LIMIT else (LITP_LIMIT if y > LITP_LIMIT else y)
            r0, r2, r3 = _max0(a[0, j * sa]), F0, _max0(a[3, j * sa])
        else:
            x = a[0, j * sa]
            if op == 5:
                d = np.float32(np.exp2(x))
            elif op == 6:
                d = np.float32(np.log2(x))
            elif op == 14:
                d = F1 / (x + F0)
            else:
                d = F1 / np.sqrt(x + F0)
            r0 = r1 = r2 = r3 = d
        if mx:
            dest[0, j] = r0
        if my:
            dest[1, j] = r1
        if mz:
            dest[2, j] = r2
        if mw:
            dest[3, j] = r3


@numba_link.kernel(error_model="numpy", _nrt=False)
def run_segment(plan, vr, out, c, a0, aL, cmp, lanes, full, bufs, res, cols):
    """Execute the plan rows in order on ``lanes`` (``full``: lanes are 0..N-1 in order). ``bufs`` (3, 4, M),
    ``res`` (4, M) and ``cols`` (3, 4, 1) float32 are scratch space for M = the lane count (allocated by the
    caller: an ``np.empty`` here would compile numba's allocation machinery too). Compiled without numba's
    reference counting (``_nrt=False``: it allocates nothing and returns no array; the counting of its operand views
    was a fifth of its LLVM IR)."""
    m = vr.shape[2] if full else lanes.shape[0]
    for k in range(plan.shape[0]):
        row = plan[k]
        op = row[C_OP]
        nsrc = 1 if op in (5, 6, 7, 11, 14, 15, 16, 17) else (3 if op == 19 else 2)
        # one call site of the inlined ``_source`` for the 1-3 operands (three sites cost ~1.5 s of compile time)
        a = b = cc = cols[0]  # placeholders of the operands' type
        for q in range(nsrc):
            fetched = _source(
                row[C_SRC + q * SRC_W : C_SRC + (q + 1) * SRC_W], vr, c, a0, aL, lanes, full, bufs[q], cols[q]
            )
            if q == 0:
                a = fetched
            elif q == 1:
                b = fetched
            else:
                cc = fetched
        if nsrc < 2:
            b = a
        if nsrc < 3:
            cc = a
        if op == 16 or op == 18:
            _flags(op, row, a, b, cmp, a0, lanes, full, m)
            continue
        if op == 7:
            _flags(op, row, a, b, cmp, a0, lanes, full, m)
        dst = row[C_DST]  # o n -> out[n]; r n (0x10 + n) -> vr[0x10 + n]
        target = out[dst] if dst < NUM_OUT else vr[dst]
        # ``_compute`` is a function of its own, called once per row: inlined by numba at these two sites it was typed
        # and lowered twice (~0.5 s of README line 1); one inlined site (``target if full else res``) ran ~4 % slower
        if full:
            _compute(op, row, a, b, cc, target)
            continue
        _compute(op, row, a, b, cc, res)
        for comp in range(4):
            if row[C_MASK + comp]:
                for j in range(m):
                    target[comp, lanes[j]] = res[comp, j]


@numba_link.kernel()
def load_attributes(attributes, pairs, vr):
    """vr[reg, :, i] = attributes[i, k, :] for each (k, reg) row of ``pairs`` (one pass over the vertices)."""
    for i in range(attributes.shape[0]):
        for p in range(pairs.shape[0]):
            k, reg = pairs[p, 0], pairs[p, 1]
            for comp in range(4):
                vr[reg, comp, i] = attributes[i, k, comp]


@numba_link.kernel()
def store_outputs(out, written, result):
    """result[i, o, :] = out[o, :, i] where ``written[o]``, else 0 — every element of ``result`` written once, in
    memory order (so ``result`` can come uninitialised from ``np.empty``)."""
    for i in range(result.shape[0]):
        for o in range(result.shape[1]):
            if written[o]:
                for comp in range(4):
                    result[i, o, comp] = out[o, comp, i]
            else:
                for comp in range(4):
                    result[i, o, comp] = 0.0
