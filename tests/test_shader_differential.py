"""Differential test: the vectorized interpreter against the one-vertex-at-a-time reference on seeded random
programs (arithmetic, swizzles, negation, relative addressing, divergent ifc/else, loops with breakc, calls,
forward jumps) and random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.shader import run_vertex_shader
from picaemu.shader.quick import setup_from_source
from picaemu.shader.reference import run_reference

BINARY = ("add", "dp3", "dp4", "dph", "dst", "mul", "sge", "slt", "max", "min")
UNARY = ("ex2", "lg2", "flr", "rcp", "rsq", "mov", "litp")
MASKS = ("", ".x", ".xy", ".xyz", ".yw", ".z", ".xzw")
SWIZ = ("", ".x", ".yx", ".wzyx", ".zzw", ".yyyy", ".xwyz")
CONDS = ("cmp.x", "!cmp.x", "cmp.y", "cmp.x && cmp.y", "!cmp.x || cmp.y", "cmp.x && !cmp.y")
CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge")


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.labels = 0

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def narrow(self) -> str:
        reg = self.pick(("v0", "v1", "v2", "r0", "r1", "r2", "r3", "r4", "r5"))
        return ("-" if self.rng.random() < 0.3 else "") + reg + self.pick(SWIZ)

    def wide(self, in_loop: bool) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.narrow()
        neg = "-" if self.rng.random() < 0.3 else ""
        if r < 0.75:
            return f"{neg}c{int(self.rng.integers(0, 12))}{self.pick(SWIZ)}"
        rel = self.pick(("a0.x", "a0.y") + (("aL",) * 2 if in_loop else ()))
        return f"{neg}c20[{rel}+{int(self.rng.integers(0, 6))}]{self.pick(SWIZ)}"

    def dst(self) -> str:
        return f"r{int(self.rng.integers(0, 6))}{self.pick(MASKS)}"

    def arith(self, in_loop: bool) -> str:
        r = self.rng.random()
        if r < 0.45:
            return f"{self.pick(BINARY)} {self.dst()}, {self.wide(in_loop)}, {self.narrow()}"
        if r < 0.6:
            return f"{self.pick(UNARY)} {self.dst()}, {self.wide(in_loop)}"
        if r < 0.72:
            return f"mad {self.dst()}, {self.narrow()}, {self.wide(in_loop)}, {self.narrow()}"
        if r < 0.85:
            return f"cmp {self.wide(in_loop)}, {self.pick(CMP_OPS)}, {self.pick(CMP_OPS)}, {self.narrow()}"
        if r < 0.92:
            return f"mova a0{self.pick(('.x', '.y', '.xy'))}, {self.narrow()}\n    nop"
        return f"sge {self.dst()}, {self.narrow()}, c{int(self.rng.integers(0, 12))}"  # SGEI form

    def block(self, depth: int, in_loop: bool, n: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            r = self.rng.random()
            if depth < 2 and r < 0.12:
                out += [f"ifc {self.pick(CONDS)}", *self.block(depth + 1, in_loop, 3)]
                if self.rng.random() < 0.5:
                    out += [".else", *self.block(depth + 1, in_loop, 2)]
                out.append(".end")
            elif depth < 2 and r < 0.2:
                out += [f"for i{int(self.rng.integers(0, 3))}", *self.block(depth + 1, True, 3)]
                if self.rng.random() < 0.6:
                    out.append(f"breakc {self.pick(CONDS)}")
                out.append(".end")
            elif r < 0.26:
                out.append(self.pick((f"callc {self.pick(CONDS)}, sub", "callu b1, sub", "call sub")))
            elif r < 0.3:
                self.labels += 1
                label = f"skip{self.labels}"
                out += [f"jmpc {self.pick(CONDS)}, {label}", self.arith(in_loop), f"{label}:", self.arith(in_loop)]
            else:
                out.append(self.arith(in_loop))
        return out

    def program(self) -> str:
        body = [
            "mov r0, v0",
            "mov r1, v1",
            "mov r2, c1",
            "mov r3, v2.wzyx",
            "cmp v0, lt, ge, v1",
            *self.block(0, False, 14),
        ]
        body += [f"mov o{k}, r{k}" for k in range(6)] + ["end"]
        sub = [self.arith(False) for _ in range(3)] + ["ifc cmp.y", self.arith(False), self.arith(False), ".end"]
        return "\n".join([".proc main", *body, ".end", ".proc sub", *sub, "nop", ".end"]) + "\n"


def _inputs(rng: np.random.Generator, n: int) -> np.ndarray:
    a = np.zeros((n, 16, 4), np.float32)
    a[:, :3] = rng.integers(-4, 5, size=(n, 3, 4))
    noisy = rng.random(n) < 0.5
    a[noisy, :3] += rng.normal(size=(int(noisy.sum()), 3, 4)).astype(np.float32)
    return a


@pytest.mark.parametrize("seed", range(40))
def test_vectorized_matches_reference(seed: int) -> None:
    gen = Gen(seed)
    src = gen.program()
    rng = np.random.default_rng(1000 + seed)
    floats = rng.integers(-3, 4, size=(96, 4)).astype(np.float32)
    floats[:12] += rng.normal(size=(12, 4)).astype(np.float32) * (rng.random() < 0.5)
    ints = {k: (int(rng.integers(0, 4)), int(rng.integers(0, 4)), int(rng.integers(0, 3)), 0) for k in range(3)}
    setup = setup_from_source(src, floats=floats, ints=ints, bools={1: bool(seed % 2)})
    attrs = _inputs(rng, 24)
    vec = run_vertex_shader(setup, attrs)
    ref = run_reference(setup, attrs)
    np.testing.assert_allclose(vec, ref, rtol=1e-6, atol=0, equal_nan=True, err_msg=src)
