"""TEV combiner: every op, operand, scale, the stage-0 rules and the combiner buffer, on hand-computed values, and
a differential test of random six-stage setups against a scalar restatement of the reference's combiner."""

from __future__ import annotations

import random

import numpy as np
import pytest

from picaemu.color.tev import TevState, combine
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of

PRIMARY, TEX0, TEX1, BUFFER, CONST, PREV = 0x0, 0x3, 0x4, 0xD, 0xE, 0xF


def _passthrough(regs: np.ndarray) -> None:
    for n in range(6):
        regs[id_of(f"TEXENV{n}_SOURCE")] = access.compose(f"TEXENV{n}_SOURCE", rgb_src0=PREV, alpha_src0=PREV)


def _stage(
    regs: np.ndarray,
    n: int,
    *,
    rgb=(PRIMARY, PRIMARY, PRIMARY),
    alpha=(PRIMARY, PRIMARY, PRIMARY),
    rgb_ops=(0, 0, 0),
    alpha_ops=(0, 0, 0),
    combine=(0, 0),
    const=(0, 0, 0, 0),
    scale=(0, 0),
) -> None:
    p = f"TEXENV{n}"
    regs[id_of(f"{p}_SOURCE")] = access.compose(
        f"{p}_SOURCE",
        **{f"rgb_src{i}": v for i, v in enumerate(rgb)},
        **{f"alpha_src{i}": v for i, v in enumerate(alpha)},
    )
    regs[id_of(f"{p}_OPERAND")] = access.compose(
        f"{p}_OPERAND",
        **{f"rgb_op{i}": v for i, v in enumerate(rgb_ops)},
        **{f"alpha_op{i}": v for i, v in enumerate(alpha_ops)},
    )
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
    _stage(
        regs, 0, rgb=(PRIMARY, TEX0, TEX1), alpha=(PRIMARY, TEX0, TEX1), combine=(op, alpha_op), scale=(scale, scale)
    )
    return _run(regs, {PRIMARY: a, TEX0: b, TEX1: c})


A, B, C = (200, 100, 50, 200), (100, 200, 64, 100), (64, 64, 200, 64)


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (0, (200, 100, 50, 200)),  # replace
        (1, (78, 78, 12, 78)),  # modulate: 200*100/255 = 78.4; 50*64/255 = 12.5
        (2, (255, 255, 114, 255)),  # add
        (3, (172, 172, 0, 172)),  # add signed: 300-128; 50+64-128 < 0
        (5, (100, 0, 0, 100)),  # subtract
        (8, (142, 142, 212, 142)),  # a*b/255 + c: (20000 + 16320)/255 = 142.4; (3200 + 51000)/255 = 212.5
    ],
)
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


@pytest.mark.parametrize(
    ("operand", "rgb"),
    [
        (0x0, (10, 20, 30)),
        (0x1, (245, 235, 225)),
        (0x2, (40, 40, 40)),
        (0x3, (215, 215, 215)),
        (0x4, (10, 10, 10)),
        (0x5, (245, 245, 245)),
        (0x8, (20, 20, 20)),
        (0x9, (235, 235, 235)),
        (0xC, (30, 30, 30)),
        (0xD, (225, 225, 225)),
    ],
)
def test_rgb_operands(operand: int, rgb: tuple) -> None:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb_ops=(operand, 0, 0))
    assert _run(regs, {PRIMARY: COLOR})[:3] == rgb


@pytest.mark.parametrize(
    ("operand", "alpha"), [(0, 40), (1, 215), (2, 10), (3, 245), (4, 20), (5, 235), (6, 30), (7, 225)]
)
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


def test_stage0_alpha_previous_reads_zero_not_slot2() -> None:
    """Only the RGB "previous" sources of slots 0-1 borrow slot 2's source in stage 0; an alpha "previous" reads 0:
    alpha = 0 + tex1.a = 20 (borrowing tex0 would give 28); rgb = tex0 + tex1."""
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PREV, TEX1, TEX0), alpha=(PREV, TEX1, TEX0), combine=(2, 2))
    assert _run(regs, {TEX0: (5, 6, 7, 8), TEX1: (1, 2, 3, 20)}) == (6, 8, 10, 20)


@pytest.mark.parametrize(
    ("scale", "expected"), [((0, 2), (1, 1, 1, 4)), ((1, 0), (2, 2, 2, 1)), ((2, 1), (4, 4, 4, 2))]
)
def test_dot3_rgba_alpha_uses_the_alpha_scale(scale: tuple[int, int], expected: tuple) -> None:
    """dot3 of (255, 0, 128) and (0, 0, 128) is 1 (see above); RGB takes the RGB scale, alpha the alpha scale."""
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    _stage(regs, 0, rgb=(PRIMARY, TEX0, PRIMARY), combine=(7, 0), scale=scale)
    assert _run(regs, {PRIMARY: (255, 0, 128, 9), TEX0: (0, 0, 128, 9)}) == expected


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


# --- differential: a scalar restatement of the reference's combiner ------------------------------------------
RGB_OPERAND = {
    0: ((0, 1, 2), False),
    1: ((0, 1, 2), True),
    2: ((3, 3, 3), False),
    3: ((3, 3, 3), True),
    4: ((0, 0, 0), False),
    5: ((0, 0, 0), True),
    8: ((1, 1, 1), False),
    9: ((1, 1, 1), True),
    12: ((2, 2, 2), False),
    13: ((2, 2, 2), True),
}
ALPHA_OPERAND = {
    0: (3, False),
    1: (3, True),
    2: (0, False),
    3: (0, True),
    4: (1, False),
    5: (1, True),
    6: (2, False),
    7: (2, True),
}
SOURCES = (PRIMARY, TEX0, TEX1, BUFFER, CONST, PREV)


def _op(op: int, a: int, b: int, c: int) -> int:
    table = {
        0: a,
        1: a * b // 255,
        2: min(a + b, 255),
        3: min(max(a + b - 128, 0), 255),
        4: (a * c + b * (255 - c)) // 255,
        5: max(a - b, 0),
        8: min((a * b + 255 * c) // 255, 255),
        9: min(a + b, 255) * c // 255,
    }
    return table[op]


def _dot3(x: list[int], y: list[int]) -> int:
    terms = [(2 * x[ch] - 255) * (2 * y[ch] - 255) + 128 for ch in range(3)]
    return min(max(sum(int(t / 256) for t in terms), 0), 255)  # each term truncated toward zero


def _scalar_tev(
    stages: list[dict], buffer_color: list[int], update: list[tuple[int, int]], inputs: dict[int, list[int]]
) -> list[int]:
    out, buf, nxt = [0, 0, 0, 0], [0, 0, 0, 0], list(buffer_color)
    for n, st in enumerate(stages):

        def source(code: int, rgb: bool, slot: int, st=st, n=n, out=out, buf=buf) -> list[int]:
            if n == 0 and rgb and slot < 2 and code == PREV:
                code = st["rgb"][2]
            return {PREV: out, BUFFER: buf, CONST: st["const"]}.get(code) or inputs[code]

        ops = [(source(st["rgb"][j], True, j), *RGB_OPERAND[st["rgb_ops"][j]]) for j in range(3)]
        vals = [[255 - s[c] if inv else s[c] for c in chans] for s, chans, inv in ops]
        shift = (st["scale"][0] % 3, st["scale"][1] % 3)  # code 3 acts as x1
        if st["combine"][0] in (6, 7):
            dot = _dot3(vals[0], vals[1])
            rgb = [dot] * 3
        else:
            rgb = [_op(st["combine"][0], vals[0][ch], vals[1][ch], vals[2][ch]) for ch in range(3)]
        if st["combine"][0] == 7:
            alpha = dot
        else:
            al = [(source(st["alpha"][j], False, j), *ALPHA_OPERAND[st["alpha_ops"][j]]) for j in range(3)]
            a = [255 - s[c] if inv else s[c] for s, c, inv in al]
            alpha = _op(st["combine"][1], *a)
        out = [min(v << shift[0], 255) for v in rgb] + [min(alpha << shift[1], 255)]
        buf = list(nxt)
        if n < 4 and update[n][0]:
            nxt[:3] = out[:3]
        if n < 4 and update[n][1]:
            nxt[3] = out[3]
    return out


@pytest.mark.parametrize("seed", range(12))
def test_matches_scalar_restatement(seed: int) -> None:
    rng = random.Random(seed)
    stages = [
        dict(
            rgb=[rng.choice(SOURCES) for _ in range(3)],
            alpha=[rng.choice(SOURCES) for _ in range(3)],
            rgb_ops=[rng.choice(list(RGB_OPERAND)) for _ in range(3)],
            alpha_ops=[rng.choice(list(ALPHA_OPERAND)) for _ in range(3)],
            combine=(rng.randrange(10), rng.choice([0, 1, 2, 3, 4, 5, 8, 9])),
            const=[rng.randrange(256) for _ in range(4)],
            scale=(rng.randrange(4), rng.randrange(4)),
        )
        for _ in range(6)
    ]
    buffer_color = [rng.randrange(256) for _ in range(4)]
    update = [(rng.randrange(2), rng.randrange(2)) for _ in range(4)]
    regs = np.zeros(0x300, np.uint32)
    for n, st in enumerate(stages):
        _stage(
            regs,
            n,
            rgb=st["rgb"],
            alpha=st["alpha"],
            rgb_ops=st["rgb_ops"],
            alpha_ops=st["alpha_ops"],
            combine=st["combine"],
            const=st["const"],
            scale=st["scale"],
        )
    regs[id_of("TEXENV_BUFFER_COLOR")] = access.compose(
        "TEXENV_BUFFER_COLOR", **dict(zip("rgba", buffer_color, strict=True))
    )
    regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose(
        "TEXENV_UPDATE_BUFFER",
        **{f"{k}_update{n}": u[i] for n, u in enumerate(update) for i, k in enumerate(("rgb", "alpha"))},
    )
    nrng = np.random.default_rng(seed)
    count = 50
    inputs = {code: nrng.integers(0, 256, (count, 4), dtype=np.uint8) for code in (PRIMARY, TEX0, TEX1)}
    got = combine(TevState.from_regs(regs), inputs, count)
    for k in range(count):
        want = _scalar_tev(stages, buffer_color, update, {c: a[k].tolist() for c, a in inputs.items()})
        assert got[k].tolist() == want, (k, seed)


def _op_array(op: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``_op`` over int64 arrays."""
    table = {
        0: lambda: a,
        1: lambda: a * b // 255,
        2: lambda: np.minimum(a + b, 255),
        3: lambda: np.clip(a + b - 128, 0, 255),
        4: lambda: (a * c + b * (255 - c)) // 255,
        5: lambda: np.maximum(a - b, 0),
        8: lambda: np.minimum((a * b + 255 * c) // 255, 255),
        9: lambda: np.minimum(a + b, 255) * c // 255,
    }
    return table[op]()


@pytest.mark.parametrize("op", [0, 1, 2, 3, 4, 5, 8, 9])
def test_stage_kernel_every_op_over_many_fragments(op: int) -> None:
    """``tev_kernels._stage`` (a pass per channel, the op chosen once per pass) against the table above, for random
    operand channels, inversions and scales over 2048 fragments of random bytes."""
    from picaemu.color.tev_kernels import _stage as stage_kernel

    rng = np.random.default_rng(op)
    n = 2048
    r = [rng.integers(0, 256, (n, 4), dtype=np.uint8) for _ in range(3)]
    for _ in range(4):
        ch = tuple(int(v) for v in rng.integers(0, 4, 9))
        inv = tuple(bool(v) for v in rng.integers(0, 2, 3))
        alpha_ch = tuple(int(v) for v in rng.integers(0, 4, 3))
        alpha_inv = tuple(bool(v) for v in rng.integers(0, 2, 3))
        shift, alpha_shift = (int(v) for v in rng.integers(0, 3, 2))
        out = np.empty((n, 4), np.uint8)
        stage_kernel(*r, r[2], r[0], r[1], ch, inv, op, shift, alpha_ch, alpha_inv, op, alpha_shift, True, out)

        def operands(sources, chans, invs):
            values = [s[:, k].astype(np.int64) for s, k in zip(sources, chans, strict=True)]
            return [255 - v if i else v for v, i in zip(values, invs, strict=True)]

        for k in range(3):
            rgb = operands(r, ch[k::3], inv)
            assert (out[:, k] == np.minimum(_op_array(op, *rgb) << shift, 255)).all()
        alpha = operands((r[2], r[0], r[1]), alpha_ch, alpha_inv)
        assert (out[:, 3] == np.minimum(_op_array(op, *alpha) << alpha_shift, 255)).all()
