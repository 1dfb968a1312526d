"""Arithmetic of the shader ALU over lanes, float24 rules evaluated in float32 (pica-shader-isa.md §3, §6, §7).

Every function takes swizzled, negated sources of shape (4, K) — or (4, 1) for a uniform operand, broadcast —
float32, lane axis last, and returns (4, K) per-lane results or (1, K) for scalar results that the store
replicates. Rules: a product that is NaN while neither factor is NaN is +0 (0 x inf = 0) in MUL, MAD/MADI,
each term of DP3/DP4/DPH and DST's product; MAD rounds the product to float32 before the add; MAX/MIN are
``a > b ? a : b`` / ``a < b ? a : b`` (NaN order of the hardware); RCP/RSQ of -0 give +inf (no negative zero);
SGE/SLT give exactly 1.0/0.0 (NaN -> 0.0); scalar ops (EX2, LG2, RCP, RSQ) read lane x. Compare operators
6 and 7 are always true. The scalar reference interpreter computes with these; the compiled kernel of the
vectorized interpreter (``kernel.py``) implements the same rules separately, and the differential test
compares the two.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
ONE = F32(1.0)
ZERO = F32(0.0)
LITP_LIMIT = F32(127.9961)  # 128 - 1/256 as the hardware test reports it


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b with 0 x inf = +0 (NaN factors still give NaN)."""
    p = a * b
    bad = p != p
    if bad.any():
        p = np.where(bad & (a == a) & (b == b), ZERO, p)
    return p


def _dot(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    p = mul(a[:n], b[:n])
    acc = p[0]
    for i in range(1, n):
        acc = acc + p[i]
    return acc[None, :] if acc.ndim else np.array([[acc]], F32)


def dp3(a, b):
    return _dot(a, b, 3)


def dp4(a, b):
    return _dot(a, b, 4)


def dph(a, b):
    acc = _dot(a, b, 3)
    return acc + b[3][None, :]


def dst(a, b):
    k = max(a.shape[1], b.shape[1])
    out = np.empty((4, k), F32)
    out[0] = ONE
    out[1] = mul(a[1], b[1])
    out[2] = a[2]
    out[3] = b[3]
    return out


def add(a, b):
    return a + b


def sge(a, b):
    return (a >= b).astype(F32)


def slt(a, b):
    return (a < b).astype(F32)


def vmax(a, b):
    return np.where(a > b, a, b)


def vmin(a, b):
    return np.where(a < b, a, b)


def ex2(a):
    return np.exp2(a[0])[None, :]


def lg2(a):
    return np.log2(a[0])[None, :]


def rcp(a):
    return (ONE / (a[0] + ZERO))[None, :]


def rsq(a):
    return (ONE / np.sqrt(a[0] + ZERO))[None, :]


def flr(a):
    return np.floor(a)


def mov(a):
    return a


def mad(a, b, c):
    return mul(a, b) + c


def litp(a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LITP: (result (4, K), cmp.x (K,), cmp.y (K,))."""
    out = np.empty_like(a)
    out[0] = np.maximum(a[0], ZERO)
    out[1] = np.clip(a[1], -LITP_LIMIT, LITP_LIMIT)
    out[2] = ZERO
    out[3] = np.maximum(a[3], ZERO)
    return out, a[0] >= ZERO, a[3] >= ZERO


def _always(a, b):
    return np.ones(np.broadcast(a, b).shape, bool)


COMPARE = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, _always, _always)

BINARY = {
    "add": add,
    "dp3": dp3,
    "dp4": dp4,
    "dph": dph,
    "dphi": dph,
    "dst": dst,
    "dsti": dst,
    "mul": mul,
    "sge": sge,
    "sgei": sge,
    "slt": slt,
    "slti": slt,
    "max": vmax,
    "min": vmin,
}
UNARY = {"ex2": ex2, "lg2": lg2, "rcp": rcp, "rsq": rsq, "flr": flr, "mov": mov}
TERNARY = {"mad": mad, "madi": mad}


def truncate_to_int(x: np.ndarray) -> np.ndarray:
    """MOVA conversion: truncate toward zero into int32; NaN and out-of-range values become INT32_MIN, which the
    relative-addressing window (-128..127) then ignores, exactly like any other far offset."""
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
        ok = np.abs(t) < 2.0**31
        return np.where(ok, t, -(2.0**31)).astype(np.int32)
