"""TEV combiner: every op, operand, scale, the stage-0 rules and the combiner buffer, on hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.tev import TevState, combine

PRIMARY, TEX0, TEX1, BUFFER, CONST, PREV = 0x0, 0x3, 0x4, 0xD, 0xE, 0xF


def _passthrough(regs: np.ndarray) -> None:
    for n in range(6):
        regs[id_of(f"TEXENV{n}_SOURCE")] = access.compose(f"TEXENV{n}_SOURCE", rgb_src0=PREV, alpha_src0=PREV)


def _stage(regs: np.ndarray, n: int, *, rgb=(PRIMARY, PRIMARY, PRIMARY), alpha=(PRIMARY, PRIMARY, PRIMARY),
           rgb_ops=(0, 0, 0), alpha_ops=(0, 0, 0), combine=(0, 0), const=(0, 0, 0, 0), scale=(0, 0)) -> None:
    p = f"TEXENV{n}"
    regs[id_of(f"{p}_SOURCE")] = access.compose(
        f"{p}_SOURCE", **{f"rgb_src{i}": v for i, v in enumerate(rgb)},
        **{f"alpha_src{i}": v for i, v in enumerate(alpha)})
    regs[id_of(f"{p}_OPERAND")] = access.compose(
        f"{p}_OPERAND", **{f"rgb_op{i}": v for i, v in enumerate(rgb_ops)},
        **{f"alpha_op{i}": v for i, v in enumerate(alpha_ops)})
    regs[id_of(f"{p}_COMBINER")] = access.compose(f"{p}_COMBINER", rgb_combine=combine[0], alpha_combine=combine[1])
    regs[id_of(f"{p}_COLOR")] = access.compose(f"{p}_COLOR", **dict(zip("rgba", const, strict=True)))
    regs[id_of(f"{p}_SCALE")] = access.compose(f"{p}_SCALE", rgb_scale=scale[0], alpha_scale=scale[1])


def _run(regs: np.ndarray, inputs: dict[int, tuple]) -> tuple:
    arrays = {k: np.array([v], np.uint8) for k, v in inputs.items()}
    return tuple(int(c) for c in combine(TevState.from_regs(regs), arrays, 1)[0])


def _one_stage(op: int, a: tuple, b: tuple, c: tuple, scale: int = 0, alpha_op: int | None = None) -> tuple:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    alpha_op = op if alpha_op is None else alpha_op
    _stage(regs, 0, rgb=(PRIMARY, TEX0, TEX1), alpha=(PRIMARY, TEX0, TEX1), combine=(op, alpha_op),
           scale=(scale, scale))
    return _run(regs, {PRIMARY: a, TEX0: b, TEX1: c})


A, B, C = (200, 100, 50, 200), (100, 200, 64, 100), (64, 64, 200, 64)


@pytest.mark.parametrize(("op", "expected"), [
    (0, (200, 100, 50, 200)),  # replace
    (1, (78, 78, 12, 78)),  # modulate: 200*100/255 = 78.4; 50*64/255 = 12.5
    (2, (255, 255, 114, 255)),  # add
    (3, (172, 172, 0, 172)),  # add signed: 300-128; 50+64-128 < 0
    (5, (100, 0, 0, 100)),  # subtract
    (8, (142, 142, 212, 142)),  # a*b/255 + c: (20000 + 16320)/255 = 142.4; (3200 + 51000)/255 = 212.5
])
def test_combine_ops(op: int, expected: tuple) -> None:
    assert _one_stage(op, A, B, C) == expected


def test_lerp_and_add_multiply_by_hand() -> None:
    # lerp: (a*c + b*(255-c)) / 255 per channel
    # R (200*64 + 100*191)/255 = 31900/255 = 125.09 -> 125; G (100*64 + 200*191)/255 = 44600/255 = 174.9 -> 174
    # B (50*200 + 64*55)/255 = 13520/255 = 53.0 -> 53
    assert _one_stage(4, A, B, C) == (125, 174, 53, 125)
    # add-multiply: R min(300,255)*64/255 = 64; B min(114,255)*200/255 = 22800/255 = 89.4 -> 89
    assert _one_stage(9, A, B, C) == (64, 64, 89, 64)


def test_dot3_truncates_each_term_toward_zero() -> None:
    # a=(255,0,128) b=(0,0,128): r ((255)(-255)+128)/256 = -253.5 -> -253; g (65025+128)/256 -> 254; b 129/256 -> 0
    assert _one_stage(6, (255, 0, 128, 9), (0, 0, 128, 9), (0, 0, 0, 0), alpha_op=0) == (1, 1, 1, 9)
    # same inputs: 254 + 0 + 254 -> clamp 255
    assert _one_stage(6, (255, 128, 0, 9), (255, 128, 0, 9), (0, 0, 0, 0), alpha_op=0)[:3] == (255, 255, 255)


def test_dot3_rgba_replaces_alpha() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PRIMARY, TEX0, PRIMARY), alpha=(0x9, 0x9, 0x9), combine=(7, 12))  # alpha part ignored
    assert _run(regs, {PRIMARY: (255, 0, 128, 9), TEX0: (0, 0, 128, 9)}) == (1, 1, 1, 1)


COLOR = (10, 20, 30, 40)


@pytest.mark.parametrize(("operand", "rgb"), [
    (0x0, (10, 20, 30)), (0x1, (245, 235, 225)), (0x2, (40, 40, 40)), (0x3, (215, 215, 215)),
    (0x4, (10, 10, 10)), (0x5, (245, 245, 245)), (0x8, (20, 20, 20)), (0x9, (235, 235, 235)),
    (0xC, (30, 30, 30)), (0xD, (225, 225, 225)),
])
def test_rgb_operands(operand: int, rgb: tuple) -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb_ops=(operand, 0, 0))
    assert _run(regs, {PRIMARY: COLOR})[:3] == rgb


@pytest.mark.parametrize(("operand", "alpha"), [(0, 40), (1, 215), (2, 10), (3, 245), (4, 20), (5, 235), (6, 30),
                                                (7, 225)])
def test_alpha_operands(operand: int, alpha: int) -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, alpha_ops=(operand, 0, 0))
    assert _run(regs, {PRIMARY: COLOR})[3] == alpha


@pytest.mark.parametrize(("scale", "value"), [(0, 78), (1, 156), (2, 255), (3, 78)])
def test_scale(scale: int, value: int) -> None:
    assert _one_stage(1, A, B, C, scale=scale)[0] == value


def test_constant_and_previous_chain() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(CONST,) * 3, alpha=(CONST,) * 3, const=(1, 2, 3, 4))
    _stage(regs, 3, rgb=(PREV, CONST, PREV), alpha=(PREV, CONST, PREV), combine=(2, 2), const=(10, 10, 10, 10))
    assert _run(regs, {}) == (11, 12, 13, 14)


def test_stage0_previous_reads_slot2_and_buffer_reads_zero() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PREV, BUFFER, TEX0), alpha=(PREV, PREV, PREV), combine=(2, 0))
    assert _run(regs, {TEX0: (5, 6, 7, 8)}) == (5, 6, 7, 0)  # rgb = tex0 + 0; alpha: previous twice -> 0


def test_combiner_buffer_one_stage_delay() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    regs[id_of("TEXENV_BUFFER_COLOR")] = access.compose("TEXENV_BUFFER_COLOR", r=1, g=2, b=3, a=4)
    regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose("TEXENV_UPDATE_BUFFER", rgb_update0=1)
    _stage(regs, 0, rgb=(TEX0,) * 3, alpha=(TEX0,) * 3)  # out (50, 60, 70, 80) -> buffer rgb
    _stage(regs, 1, rgb=(BUFFER,) * 3, alpha=(BUFFER,) * 3)  # reads the initial color
    assert _run(regs, {TEX0: (50, 60, 70, 80)}) == (1, 2, 3, 4)
    _stage(regs, 1, rgb=(PREV,) * 3, alpha=(PREV,) * 3)
    _stage(regs, 2, rgb=(BUFFER,) * 3, alpha=(BUFFER,) * 3)  # reads stage 0's rgb, initial alpha
    assert _run(regs, {TEX0: (50, 60, 70, 80)}) == (50, 60, 70, 4)


def test_vectorized_over_fragments() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PRIMARY, TEX0, 0), alpha=(PRIMARY, TEX0, 0), combine=(1, 1))
    prim = np.array([[255, 255, 255, 255], [128, 0, 64, 255]], np.uint8)
    tex = np.array([[1, 2, 3, 4], [255, 255, 255, 0]], np.uint8)
    out = combine(TevState.from_regs(regs), {PRIMARY: prim, TEX0: tex}, 2)
    assert out.tolist() == [[1, 2, 3, 4], [128, 0, 64, 0]]


def test_undefined_codes_raise_only_when_read() -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PRIMARY, 0x8, 0x8))  # replace reads slot 0 only: slots 1 and 2 are never read
    TevState.from_regs(regs)
    _stage(regs, 0, rgb=(PRIMARY, 0x8, 0x8), combine=(1, 0))
    with pytest.raises(UnsupportedFeature) as err:
        TevState.from_regs(regs)
    assert err.value.register == id_of("TEXENV0_SOURCE")
    _stage(regs, 0, rgb_ops=(0x6, 0, 0))
    with pytest.raises(UnsupportedFeature):
        TevState.from_regs(regs)
    _stage(regs, 0, combine=(10, 0))
    with pytest.raises(UnsupportedFeature):
        TevState.from_regs(regs)
