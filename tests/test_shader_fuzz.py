"""Hostile programs: random instruction words and descriptors never crash or hang either interpreter (only
ShaderError), both interpreters agree whenever they finish, and the disassembler prints anything."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picaemu.errors import ShaderError
from picaemu.shader import ShaderSetup, run_vertex_shader
from picaemu.shader.disasm import disassemble, listing
from picaemu.shader.reference import ScalarMachine

PROGRAM_WORDS = 24
BUDGET = 3000


def _setup(words: list[int], descs: list[int], ints: list[int], bools: int) -> ShaderSetup:
    code = np.zeros(4096, np.uint32)
    code[: len(words)] = words
    code[len(words)] = 0x88000000  # END after the random words
    ops = np.zeros(128, np.uint32)
    ops[: len(descs)] = descs
    rng = np.random.default_rng(len(words))
    return ShaderSetup(
        code=code,
        opdescs=ops,
        float_uniforms=rng.normal(size=(96, 4)).astype(np.float32),
        int_uniforms=np.array(ints, np.uint8).reshape(4, 4),
        bool_uniforms=[(bools >> i) & 1 for i in range(16)],
    )


def _outcome(run):
    try:
        return run()
    except ShaderError as err:
        return err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=PROGRAM_WORDS),
    descs=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8),
    ints=st.lists(st.integers(0, 6), min_size=16, max_size=16),
    bools=st.integers(0, 0xFFFF),
)
def test_random_programs(words, descs, ints, bools) -> None:
    # keep targets inside the program most of the time so that flow is exercised, not just rejected
    words = [(w & ~(0xFFF << 10)) | ((w >> 10) % (PROGRAM_WORDS + 2)) << 10 for w in words]
    setup = _setup(words, descs, ints, bools)
    rng = np.random.default_rng(7)
    attrs = rng.integers(-2, 3, size=(6, 16, 4)).astype(np.float32)
    vec = _outcome(lambda: run_vertex_shader(setup, attrs, step_budget=BUDGET))
    ref = [_outcome(lambda a=a: ScalarMachine(setup).run(a, step_limit=BUDGET)) for a in attrs]
    if isinstance(vec, np.ndarray):
        # the batch's group steps bound every lane's steps, so each lane also finished alone
        assert all(isinstance(r, np.ndarray) for r in ref)
        np.testing.assert_allclose(vec, np.stack(ref), rtol=1e-6, equal_nan=True)
    else:
        budget = "budget" in str(vec)
        assert budget or any(isinstance(r, ShaderError) for r in ref)
    text = disassemble(setup.code[: len(words) + 1], setup.opdescs)
    assert text.startswith(".proc") or text.startswith("; entry")
    assert len(listing(setup.code, setup.opdescs, 0, len(words) + 1)) == len(words) + 1


INVALID_OR_GS = {0x10, 0x11, 0x14, 0x15, 0x16, 0x17, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x2A, 0x2B}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=PROGRAM_WORDS),
    descs=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8),
    ints=st.lists(st.integers(0, 4), min_size=16, max_size=16),
    bools=st.integers(0, 0xFFFF),
)
def test_random_valid_programs_agree(words, descs, ints, bools) -> None:
    """Random words with the invalid/GS-only opcodes and BREAK replaced by MUL: mostly programs that finish,
    with arbitrary unstructured flow, so the two interpreters are compared on their results."""
    fixed = []
    for w in words:
        if w >> 26 in INVALID_OR_GS and w >> 27 != 0x17:
            w = (w & 0x03FFFFFF) | (0x08 << 26)
        fixed.append((w & ~(0xFFF << 10)) | ((w >> 10) % (PROGRAM_WORDS + 1)) << 10)
    setup = _setup(fixed, descs, ints, bools)
    attrs = np.random.default_rng(3).integers(-2, 3, size=(8, 16, 4)).astype(np.float32)
    vec = _outcome(lambda: run_vertex_shader(setup, attrs, step_budget=BUDGET))
    ref = [_outcome(lambda a=a: ScalarMachine(setup).run(a, step_limit=BUDGET)) for a in attrs]
    if isinstance(vec, np.ndarray):
        assert all(isinstance(r, np.ndarray) for r in ref)
        np.testing.assert_allclose(vec, np.stack(ref), rtol=1e-6, equal_nan=True)
