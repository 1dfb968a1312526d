"""The PICA's small float formats and fixed-point fields, as numpy-vectorized conversions.

Float formats (sign.exponent.mantissa, no denormals: an exponent of 0 with a non-zero mantissa is a normal number):

=========  ==========  ====  ================================================================
name       layout      bias  used by
=========  ==========  ====  ================================================================
float24    1.7.16      63    shader registers and uniforms, fixed attributes, viewport, depth map
float31    1.7.23      63    VIEWPORT_INVW/INVH, stored in register bits 1-31
float20    1.7.12      63    light distance-attenuation bias/scale
float16    1.5.10      15    light position, gas, shadow penumbra, proctex noise
=========  ==========  ====  ================================================================

Decoding follows the hardware-tested emulators: all bits but the sign zero is a signed zero; an all-ones exponent is
Inf (mantissa 0) or NaN. Encoding truncates the mantissa (as libctru does); an exponent below range gives a signed
zero and one above gives a signed Inf. Every function takes a scalar or an array of raw integers and returns
float32 (scalar in, Python float out).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import overload

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class FloatFormat:
    """A sign/exponent/mantissa layout with its exponent bias."""

    name: str
    exp_bits: int
    mant_bits: int
    bias: int

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.mant_bits


FLOAT24 = FloatFormat("float24", 7, 16, 63)
FLOAT31 = FloatFormat("float31", 7, 23, 63)
FLOAT20 = FloatFormat("float20", 7, 12, 63)
FLOAT16 = FloatFormat("float16", 5, 10, 15)
FLOAT_FORMATS = {f.name: f for f in (FLOAT24, FLOAT31, FLOAT20, FLOAT16)}

_ArrayLike = npt.ArrayLike


def _to_f32_bits(raw: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    raw = raw.astype(np.uint32) & np.uint32((1 << fmt.bits) - 1)
    sign = (raw >> np.uint32(fmt.bits - 1)) & np.uint32(1)
    exp = (raw >> np.uint32(fmt.mant_bits)) & np.uint32((1 << fmt.exp_bits) - 1)
    mant = raw & np.uint32((1 << fmt.mant_bits) - 1)
    exp_max = (1 << fmt.exp_bits) - 1
    f32_exp = np.where(exp == exp_max, np.uint32(255), exp + np.uint32(127 - fmt.bias))
    out = (
        (sign << np.uint32(31)) | (f32_exp.astype(np.uint32) << np.uint32(23)) | (mant << np.uint32(23 - fmt.mant_bits))
    )
    is_zero = (raw & np.uint32((1 << (fmt.bits - 1)) - 1)) == 0
    return np.where(is_zero, sign << np.uint32(31), out).astype(np.uint32)


@functools.lru_cache(maxsize=4096)
def _decode_scalar(raw: int, fmt: FloatFormat) -> float:
    """``decode_float`` of one register value: the stages decode the same few values every draw, and numpy on a
    0-d array costs ~20 us a call."""
    return float(_to_f32_bits(np.asarray(raw, dtype=np.uint64).astype(np.uint32), fmt).view(np.float32))


@overload
def decode_float(raw: int, fmt: FloatFormat) -> float: ...
@overload
def decode_float(raw: np.ndarray, fmt: FloatFormat) -> np.ndarray: ...
def decode_float(raw: int | np.ndarray, fmt: FloatFormat) -> float | np.ndarray:
    """Raw ``fmt`` bits -> float32 value(s)."""
    if isinstance(raw, int | np.integer):
        return _decode_scalar(int(raw), fmt)
    arr = np.asarray(raw, dtype=np.uint64).astype(np.uint32)
    out = _to_f32_bits(arr, fmt).view(np.float32)
    return float(out) if np.ndim(raw) == 0 else out


@overload
def encode_float(value: float, fmt: FloatFormat) -> int: ...
@overload
def encode_float(value: np.ndarray, fmt: FloatFormat) -> np.ndarray: ...
def encode_float(value: float | np.ndarray, fmt: FloatFormat) -> int | np.ndarray:
    """float32 value(s) -> raw ``fmt`` bits, truncating the mantissa."""
    bits = np.asarray(value, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = (bits >> 31) & 1
    exp = (bits >> 23) & 0xFF
    mant = (bits & 0x7FFFFF) >> (23 - fmt.mant_bits)
    exp_max = (1 << fmt.exp_bits) - 1
    new_exp = exp - 127 + fmt.bias
    sign_part = sign << (fmt.bits - 1)
    is_nan_inf = exp == 0xFF
    is_nan = is_nan_inf & ((bits & 0x7FFFFF) != 0)
    normal = sign_part | (np.clip(new_exp, 0, exp_max) << fmt.mant_bits) | mant
    inf = sign_part | (exp_max << fmt.mant_bits)
    nan = inf | (1 << (fmt.mant_bits - 1))
    out = np.where(new_exp <= 0, sign_part, normal)
    out = np.where((new_exp >= exp_max) & ~is_nan_inf, inf, out)
    out = np.where(is_nan_inf, np.where(is_nan, nan, inf), out)
    out = np.where(exp == 0, sign_part, out)  # f32 zero/denormal -> signed zero
    out = out.astype(np.uint32)
    return int(out) if np.ndim(value) == 0 else out


@overload
def f24(raw: int) -> float: ...
@overload
def f24(raw: np.ndarray) -> np.ndarray: ...
def f24(raw: int | np.ndarray) -> float | np.ndarray:
    """float24 (1.7.16) raw bits -> float32."""
    return decode_float(raw, FLOAT24)


@overload
def to_f24(value: float) -> int: ...
@overload
def to_f24(value: np.ndarray) -> np.ndarray: ...
def to_f24(value: float | np.ndarray) -> int | np.ndarray:
    """float32 -> float24 (1.7.16) raw bits (mantissa truncated)."""
    return encode_float(value, FLOAT24)


@overload
def f16(raw: int) -> float: ...
@overload
def f16(raw: np.ndarray) -> np.ndarray: ...
def f16(raw: int | np.ndarray) -> float | np.ndarray:
    """float16 (1.5.10) raw bits -> float32."""
    return decode_float(raw, FLOAT16)


@overload
def to_f16(value: float) -> int: ...
@overload
def to_f16(value: np.ndarray) -> np.ndarray: ...
def to_f16(value: float | np.ndarray) -> int | np.ndarray:
    """float32 -> float16 (1.5.10) raw bits (mantissa truncated)."""
    return encode_float(value, FLOAT16)


def f31_register(word: int) -> float:
    """A float31 stored in register bits 1-31 (VIEWPORT_INVW/INVH) -> float."""
    return float(decode_float(word >> 1, FLOAT31))


FINITE_LIMIT = np.float32(2.0**100)  # |x| bound of ``finite``: large, yet x * 2**20 stays finite in float32


def finite(x: npt.ArrayLike) -> np.ndarray:
    """float32 array with NaN -> 0 and +-Inf -> +-``FINITE_LIMIT``: what a float becomes before it can pick a table
    entry. A GPU value that is NaN or Inf (a NaN depth scale, a shader's 0 * Inf) must never turn into an index:
    numpy's cast of NaN gives INT64_MIN, which indexes outside any table."""
    return np.nan_to_num(np.asarray(x, np.float32), nan=0.0, posinf=float(FINITE_LIMIT), neginf=-float(FINITE_LIMIT))


@overload
def signed(raw: int | np.integer, bits: int) -> int: ...
@overload
def signed(raw: np.ndarray, bits: int) -> np.ndarray: ...
def signed(raw: int | np.integer | np.ndarray, bits: int) -> int | np.ndarray:
    """Two's-complement ``bits``-bit field -> signed integer."""
    sign_bit = 1 << (bits - 1)
    if isinstance(raw, np.ndarray):
        field = raw.astype(np.int64) & ((1 << bits) - 1)
        return (field ^ sign_bit) - sign_bit
    r = int(raw) & ((1 << bits) - 1)
    return (r ^ sign_bit) - sign_bit


def fixed(raw: int | np.ndarray, sign_bits: int, int_bits: int, frac_bits: int) -> float | np.ndarray:
    """fixedS.I.F (two's complement when S = 1) -> float."""
    bits = sign_bits + int_bits + frac_bits
    value = signed(raw, bits) if sign_bits else (raw & ((1 << bits) - 1))
    scale = float(1 << frac_bits)
    if isinstance(value, np.ndarray):
        return (value / scale).astype(np.float32)
    return value / scale


def unpack_f24_vec4(w1: int, w2: int, w3: int) -> tuple[int, int, int, int]:
    """Three packed words (most significant first, layout W:Z:Y:X) -> raw float24 (x, y, z, w)."""
    x = w3 & 0xFFFFFF
    y = ((w2 & 0xFFFF) << 8) | (w3 >> 24)
    z = ((w1 & 0xFF) << 16) | (w2 >> 16)
    w = w1 >> 8
    return x, y, z, w


def pack_f24_vec4(x: float, y: float, z: float, w: float) -> tuple[int, int, int]:
    """float (x, y, z, w) -> the three packed float24 words, most significant first."""
    rx, ry, rz, rw = (int(to_f24(v)) for v in (x, y, z, w))
    w1 = (rw << 8) | (rz >> 16)
    w2 = ((rz & 0xFFFF) << 16) | (ry >> 8)
    w3 = ((ry & 0xFF) << 24) | rx
    return w1 & 0xFFFFFFFF, w2 & 0xFFFFFFFF, w3 & 0xFFFFFFFF


def f32_bits(value: float) -> int:
    """IEEE float32 bit pattern of ``value``."""
    return int(np.float32(value).view(np.uint32))


def bits_f32(word: int) -> float:
    """IEEE float32 value of a 32-bit pattern."""
    return float(np.uint32(word & 0xFFFFFFFF).view(np.float32))
