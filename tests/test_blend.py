"""Alpha test, blending (every equation and factor; min/max apply the factors) and the 16 logic ops, typed by
hand: the scalar reference (``picaemu.fragment.reference``) and the vectorized alpha test."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import UnsupportedFeature
from picaemu.fragment.blend import BlendState, alpha_test, div255
from picaemu.fragment.reference import alpha_passes, blend_color
from picaemu.regs import access, id_of

S = (200, 100, 50, 128)
D = (100, 200, 250, 64)
ONE, ZERO = 1, 0


def _regs(
    *, eq=(0, 0), rgb=(ONE, ZERO), alpha=(ONE, ZERO), const=(10, 20, 30, 40), blending=1, logic=0, test=(0, 0, 0)
) -> np.ndarray:
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=blending, constant=0xE4)
    regs[id_of("BLEND_FUNC")] = access.compose(
        "BLEND_FUNC",
        rgb_equation=eq[0],
        alpha_equation=eq[1],
        rgb_src=rgb[0],
        rgb_dst=rgb[1],
        alpha_src=alpha[0],
        alpha_dst=alpha[1],
    )
    regs[id_of("BLEND_COLOR")] = access.compose("BLEND_COLOR", **dict(zip("rgba", const, strict=True)))
    regs[id_of("LOGIC_OP")] = access.compose("LOGIC_OP", op=logic)
    regs[id_of("FRAGOP_ALPHA_TEST")] = access.compose("FRAGOP_ALPHA_TEST", enable=test[0], func=test[1], ref=test[2])
    return regs


def _blend(regs: np.ndarray, s=S, d=D) -> list[int]:
    """The scalar reference's blend / logic op (the compiled passes' oracle) of one fragment."""
    return list(blend_color(BlendState.from_regs(regs), s, d))


def test_standard_alpha_blending() -> None:
    # Fs = As = 128, Fd = 255 - As = 127: R (200*128 + 100*127)/255 = 38300/255 = 150.2 -> 150
    # G (12800 + 25400)/255 = 149.8 -> 149; B (6400 + 31750)/255 = 149.6 -> 149; A one/zero: 128
    assert _blend(_regs(rgb=(6, 7))) == [150, 149, 149, 128]


@pytest.mark.parametrize(
    ("eq", "expected"),
    [
        (0, [255, 255, 255, 192]),  # add, one/one: 300, 300, 300 clamp; 128 + 64
        (1, [100, 0, 0, 64]),  # src - dst
        (2, [0, 100, 200, 0]),  # dst - src
        (3, [100, 100, 50, 64]),  # min
        (4, [200, 200, 250, 128]),  # max
        (5, [255, 255, 255, 192]),
        (6, [255, 255, 255, 192]),
        (7, [255, 255, 255, 192]),  # act as add
    ],
)
def test_equations_with_unit_factors(eq: int, expected: list[int]) -> None:
    assert _blend(_regs(eq=(eq, eq), rgb=(ONE, ONE), alpha=(ONE, ONE))) == expected


def test_min_max_apply_the_factors() -> None:
    # min(S * As, D * 1) / 255: G min(100*128, 200*255)/255 = 12800/255 = 50.2 -> 50 (OpenGL would give 100)
    assert _blend(_regs(eq=(3, 3), rgb=(6, ONE), alpha=(ONE, ONE)))[1] == 50
    # max(S * 0, D * (255 - As)): R 100*127/255 = 49.8 -> 49
    assert _blend(_regs(eq=(4, 4), rgb=(ZERO, 7), alpha=(ONE, ONE)))[0] == 49


WHITE = (255, 255, 255, 255)


@pytest.mark.parametrize(
    ("factor", "expected"),
    [
        (0, [0, 0, 0, 0]),
        (1, [255, 255, 255, 255]),
        (2, [200, 100, 50, 128]),
        (3, [55, 155, 205, 127]),
        (4, [255, 255, 255, 255]),
        (5, [0, 0, 0, 0]),
        (6, [128, 128, 128, 128]),
        (7, [127, 127, 127, 127]),
        (8, [255, 255, 255, 255]),
        (9, [0, 0, 0, 0]),
        (10, [10, 20, 30, 40]),
        (11, [245, 235, 225, 215]),
        (12, [40, 40, 40, 40]),
        (13, [215, 215, 215, 215]),
        (14, [0, 0, 0, 255]),  # min(As, 255 - Ad) = min(128, 0); alpha 255
    ],
)
def test_every_destination_factor(factor: int, expected: list[int]) -> None:
    # src factor zero, dst = white: the result equals the factor (255 * F / 255)
    assert _blend(_regs(rgb=(ZERO, factor), alpha=(ZERO, factor)), d=WHITE) == expected


def test_src_alpha_saturate_nontrivial() -> None:
    # Fs = min(As, 255 - Ad) = min(128, 191) = 128 for rgb, 255 for alpha; S white
    assert _blend(_regs(rgb=(14, ZERO), alpha=(14, ZERO)), s=(255, 255, 255, 128), d=D) == [128, 128, 128, 128]


def test_division_by_255_without_dividing() -> None:
    # the compiled blend's quotient (``blend.div255``) for every value the clamped equation can take
    values = np.arange(255 * 255 + 1)
    assert [div255(int(v)) for v in values] == (values // 255).tolist()


def test_undefined_factor() -> None:
    with pytest.raises(UnsupportedFeature):
        BlendState.from_regs(_regs(rgb=(15, ZERO)))


SRC, DST = 0xCA, 0xAC


@pytest.mark.parametrize(
    ("op", "value"),
    [
        (0, 0x00),
        (1, 0x88),
        (2, 0x42),
        (3, 0xCA),
        (4, 0xFF),
        (5, 0x35),
        (6, 0xAC),
        (7, 0x53),
        (8, 0x77),
        (9, 0xEE),
        (10, 0x11),
        (11, 0x66),
        (12, 0x99),
        (13, 0x24),
        (14, 0xDB),
        (15, 0xBD),
    ],
)
def test_logic_ops(op: int, value: int) -> None:
    assert _blend(_regs(blending=0, logic=op), s=(SRC,) * 4, d=(DST,) * 4) == [value] * 4


@pytest.mark.parametrize(
    ("func", "passes"),
    [
        (0, [0, 0, 0]),
        (1, [1, 1, 1]),
        (2, [0, 1, 0]),
        (3, [1, 0, 1]),
        (4, [1, 0, 0]),
        (5, [1, 1, 0]),
        (6, [0, 0, 1]),
        (7, [0, 1, 1]),
    ],
)
def test_alpha_test(func: int, passes: list[int]) -> None:
    color = np.array([[0, 0, 0, 127], [0, 0, 0, 128], [0, 0, 0, 129]], np.uint8)
    bstate = BlendState.from_regs(_regs(test=(1, func, 128)))
    assert alpha_test(bstate, color).astype(int).tolist() == passes
    assert [int(alpha_passes(bstate, a)) for a in (127, 128, 129)] == passes
    assert alpha_test(BlendState.from_regs(_regs(test=(0, 0, 128))), color).all()
