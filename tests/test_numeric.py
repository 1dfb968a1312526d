"""Float formats and fixed point, against values worked out by hand from the bit layouts."""

from __future__ import annotations

import math

import numpy as np

from picaemu import numeric as n


def test_float24_hand_values() -> None:
    assert n.f24(0x3F0000) == 1.0  # exp 63 = bias, mantissa 0
    assert n.f24(0x400000) == 2.0
    assert n.f24(0xBF8000) == -1.5  # sign, exp 63, mantissa 0x8000 = .5
    assert n.f24(0x3E0000) == 0.5
    assert n.f24(0x000000) == 0.0 and math.copysign(1, n.f24(0x800000)) == -1
    assert n.f24(0x7F0000) == math.inf and math.isnan(n.f24(0x7F0001))
    assert n.f24(0x000001) == 2.0**-63 * (1 + 2**-16)  # no denormals: exp 0 is a normal number


def test_float24_encode_truncates_and_saturates() -> None:
    assert n.to_f24(1.0) == 0x3F0000
    assert n.to_f24(-2.25) == 0xC00000 | 0x2000  # -1.125 * 2: mantissa .125 -> 0x2000
    assert n.to_f24(1e30) == 0x7F0000  # above range -> inf
    assert n.to_f24(-1e-30) == 0x800000  # below range -> signed zero
    assert n.to_f24(1.0 + 2**-20) == 0x3F0000  # mantissa truncated, not rounded


def test_float16_float20_float31() -> None:
    assert n.f16(0x3C00) == 1.0 and n.f16(0xC000) == -2.0
    assert n.decode_float(0x3F000, n.FLOAT20) == 1.0  # 1.7.12, bias 63
    # 2/240 = 0.008333: float31 exp = 63 - 7 = 56, as citro3d writes it (0x38111112 >> 1)
    assert abs(n.f31_register(0x38111112) - 2 / 240) < 1e-7


def test_vectorized_round_trip() -> None:
    values = np.array([0.0, 1.0, -3.5, 1024.0, 1 / 3], np.float32)
    back = n.f24(n.to_f24(values))
    assert np.all(np.abs(back - values) <= np.abs(values) * 2**-16)


def test_packed_vec4() -> None:
    assert n.pack_f24_vec4(1.0, 2.0, 0.0, -1.0) == (0xBF000000, 0x00004000, 0x003F0000)
    assert n.unpack_f24_vec4(0xBF000000, 0x00004000, 0x003F0000) == (0x3F0000, 0x400000, 0, 0xBF0000)


def test_fixed_point() -> None:
    assert n.fixed(0x1FFF, 1, 4, 8) == -1 / 256  # 13-bit two's complement
    assert n.fixed(0x100, 1, 4, 8) == 1.0
    assert n.fixed(0x800, 0, 0, 12) == 0.5
    assert n.signed(0x3FF, 10) == -1


def test_scalar_decode_equals_the_array_decode() -> None:
    """Register fields decode one int at a time through a cached path: same values as the array path, for
    every float16 and for random float20/24/31 words (zeros, denormal-range exponents, inf, NaN included)."""
    import struct

    rng = np.random.default_rng(7)
    for fmt in (n.FLOAT16, n.FLOAT20, n.FLOAT24, n.FLOAT31):
        words = np.arange(1 << 16) if fmt is n.FLOAT16 else rng.integers(0, 1 << fmt.bits, 20000)
        words = np.concatenate([words, [0, 1 << (fmt.bits - 1), (1 << fmt.bits) - 1]])
        arrays = n.decode_float(words.astype(np.uint64), fmt)
        scalars = [n.decode_float(int(w), fmt) for w in words.tolist()]
        assert [struct.pack("<d", v) for v in scalars] == [struct.pack("<d", float(v)) for v in arrays]
