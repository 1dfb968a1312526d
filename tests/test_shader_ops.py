"""Every arithmetic opcode through the project's assembler, against values computed by hand from the ISA reference."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.shader.quick import run_source

INF, NAN = np.inf, np.nan
A = (1.0, 2.0, 3.0, 4.0)
B = (5.0, 6.0, 7.0, 8.0)


def run1(body: str, v0=A, v1=B, v2=(0, 0, 0, 0), floats=None, ints=None, out: int = 0) -> np.ndarray:
    src = f".proc main\n{body}\n    end\n.end\n"
    inputs = np.zeros((1, 16, 4), np.float32)
    inputs[0, 0], inputs[0, 1], inputs[0, 2] = v0, v1, v2
    return run_source(src, inputs, floats=floats, ints=ints)[0, out]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("add o0, v0, v1", (6, 8, 10, 12)),
        ("dp3 o0, v0, v1", (38,) * 4),  # 5 + 12 + 21
        ("dp4 o0, v0, v1", (70,) * 4),  # 38 + 32
        ("dph o0, v0, v1", (46,) * 4),  # 38 + v1.w
        ("dst o0, v0, v1", (1, 12, 3, 8)),  # (1, a.y*b.y, a.z, b.w)
        ("mul o0, v0, v1", (5, 12, 21, 32)),
        ("sge o0, v0, v1.xyxy", (0, 0, 0, 0)),
        ("sge o0, v1, v0.xxww", (1, 1, 1, 1)),
        ("slt o0, v0, v1.xxxx", (1, 1, 1, 1)),
        ("max o0, v0, v1.wzyx", (8, 7, 6, 5)),
        ("min o0, v0, v1.wzyx", (1, 2, 3, 4)),
        ("mov o0, -v0.wzyx", (-4, -3, -2, -1)),
        ("mov o0.xz, v0.yyww", (2, 0, 4, 0)),  # masked lanes keep 0
        ("ex2 o0, v0.z", (8, 8, 8, 8)),
        ("lg2 o0, v1.w", (3, 3, 3, 3)),
        ("rcp o0, v0.w", (0.25,) * 4),
        ("rsq o0.xy, v0.w", (0.5, 0.5, 0, 0)),
        ("mad o0, v0, v1, v0", (6, 14, 24, 36)),
        ("mad o0, v0, v1, -v0.x", (4, 11, 20, 31)),
    ],
)
def test_arithmetic(body: str, expected) -> None:
    np.testing.assert_array_equal(run1(body), np.array(expected, np.float32))


def test_flr_rounds_down() -> None:
    np.testing.assert_array_equal(run1("flr o0, v0", v0=(-0.5, 1.5, 2.0, -2.5)), [-1, 1, 2, -3])


def test_inverted_forms_with_uniform_second_operand() -> None:
    c = {10: (2.0, 6.0, 7.0, 1.0)}
    np.testing.assert_array_equal(run1("sge o0, v0, c10", floats=c), [0, 0, 0, 1])  # SGEI
    np.testing.assert_array_equal(run1("slt o0, v0, c10", floats=c), [1, 1, 1, 0])  # SLTI
    np.testing.assert_array_equal(run1("dph o0, v0, c10", floats=c), [36] * 4)  # 2+12+21+1
    np.testing.assert_array_equal(run1("dst o0, v0, c10", floats=c), [1, 12, 3, 1])  # DSTI
    np.testing.assert_array_equal(run1("mad o0, v0, v1, c10", floats=c), [7, 18, 28, 33])  # MADI


def test_float24_rules() -> None:
    np.testing.assert_array_equal(run1("mul o0, v0, v1", v0=(0, INF, 2, 0), v1=(INF, 0, 3, NAN)), [0, 0, 6, NAN])
    np.testing.assert_array_equal(run1("dp4 o0, v0, v1", v0=(0, 1, 1, 0), v1=(INF, 2, 3, 0)), [5] * 4)
    np.testing.assert_array_equal(
        run1("mad o0, v0, v1, v2", v0=(0, 1, 0, 0), v1=(-INF, 1, 0, 0), v2=(1, 1, 1, 1)), [1, 2, 1, 1]
    )
    assert run1("rcp o0, -v0.x", v0=(0, 0, 0, 0))[0] == INF  # rcp(-0) = +inf: no negative zero
    assert run1("rsq o0, -v0.x", v0=(0, 0, 0, 0))[0] == INF
    assert run1("rcp o0, v0.x", v0=(INF, 0, 0, 0))[0] == 0
    assert np.isnan(run1("rsq o0, v0.x", v0=(-2, 0, 0, 0))[0])
    # max/min: second operand wins whenever the compare fails (NaN order of the hardware)
    r = run1("max o0, v0, v1", v0=(0, NAN, 0, 0), v1=(NAN, 0, INF, -INF))
    np.testing.assert_array_equal(r, [NAN, 0, INF, 0])
    r = run1("min o0, v0, v1", v0=(0, NAN, 0, 0), v1=(NAN, 0, INF, -INF))
    np.testing.assert_array_equal(r, [NAN, 0, 0, -INF])
    np.testing.assert_array_equal(run1("sge o0, v0, v1", v0=(NAN, 1, 0, 0), v1=(0, NAN, 0, 0)), [0, 0, 1, 1])
    np.testing.assert_array_equal(run1("slt o0, v0, v1", v0=(NAN, 1, 0, 0), v1=(0, NAN, 0, 0)), [0, 0, 0, 0])


def test_litp_and_its_flags() -> None:
    src = "litp r0, v0\n    mov o0, r0\n    ifc cmp.x && cmp.y\n    mov o1, v1\n    .end"
    r = run1(src, v0=(-1, 200, 5, -2))
    np.testing.assert_array_equal(r, np.array([0, 127.9961, 0, 0], np.float32))
    assert run1(src, v0=(-1, 200, 5, -2), out=1).tolist() == [0, 0, 0, 0]
    np.testing.assert_array_equal(run1(src, v0=(2, -1, 5, 3)), [2, -1, 0, 3])
    assert run1(src, v0=(2, -1, 5, 3), out=1).tolist() == list(B)


@pytest.mark.parametrize(
    "opx, opy, expect",
    [
        ("eq", "ne", (False, False)),
        ("ne", "eq", (True, True)),
        ("lt", "le", (True, True)),
        ("gt", "ge", (False, True)),
        ("6", "7", (True, True)),
    ],
)
def test_cmp_operators(opx, opy, expect) -> None:
    body = f"cmp v0, {opx}, {opy}, v1\n    ifc cmp.x\n    mov o0, v0\n    .end\n    ifc cmp.y\n    mov o1, v0\n    .end"
    v0, v1 = (1, 2, 0, 0), (3, 2, 0, 0)
    got = (bool(run1(body, v0, v1)[0]), bool(run1(body, v0, v1, out=1)[0]))
    assert got == expect


def test_mova_truncates_toward_zero() -> None:
    floats = {k: (k, k, k, k) for k in range(96)}
    r = run1("mova a0.xy, v0\n    mov o0, c10[a0.x]\n    mov o1, c10[a0.y]", v0=(2.7, -1.5, 0, 0), floats=floats)
    assert r[0] == 12
    assert run1("mova a0.xy, v0\n    mov o1, c10[a0.y]", v0=(2.7, -1.5, 0, 0), floats=floats, out=1)[0] == 9


def test_large_batches_start_from_zeroed_registers() -> None:
    """Large batches reuse register memory; every register a program can touch must still start at 0."""
    n = 5000
    dirty = run_source(
        ".proc main\n    mov r5, v0\n    mov o0, v0\n    mov o3, v0\n    end\n.end\n",
        np.full((n, 16, 4), 7, np.float32),
    )
    assert (dirty[:, 3] == 7).all()
    clean = run_source(
        ".proc main\n    add o0.x, r5, v2\n    mov o1, r5\n    end\n.end\n", np.full((n, 2, 4), 3, np.float32)
    )  # only v0, v1 delivered: v2 reads 0
    assert (clean[:, 0] == [0, 0, 0, 0]).all() and (clean[:, 1] == 0).all() and (clean[:, 3] == 0).all()
