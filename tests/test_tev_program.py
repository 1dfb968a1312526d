"""The TEV program (``picaemu.color.tev_program``): its rows on hand-made states (the combiner buffer's one-stage
delay per RGB / alpha update bit, pass-through stages, the stage-0 source rules, hand-computed), and the three
consumers agreeing on random states: the reference ``tev.combine``, the fused kernel's ``_combine`` (on random
per-fragment inputs in every source slot) and the generated GLSL (a grid of flat-colored cells drawn by the GL
backend and by the software pipeline; needs EGL, skips like test_gl.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picaemu.color import tev
from picaemu.color.tev import READS_BUFFER_COLOR as COLOR
from picaemu.color.tev import READS_ZERO as ZERO
from picaemu.color.tev import TevState, combine
from picaemu.fused import layout
from picaemu.fused.fragment_kernel import _combine, stage_entry, uniform_slots
from picaemu.fused.fragments import _tev_rows
from picaemu.pipeline import Pipeline
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from tests.test_gl import needs_egl
from tests.test_gl_proctex import render
from tests.test_lighting_golden import base_state, identity_vs
from tests.test_tev import BUFFER, CONST, PREV, PRIMARY, TEX0, _passthrough, _stage

SOURCES = tuple(sorted({*tev.SRC_TEXTURES, tev.SRC_PRIMARY, tev.SRC_LIGHT_PRIMARY, tev.SRC_LIGHT_SECONDARY}))
INPUT_SLOTS = {  # source code -> the fused kernel's input slot (``fragments._build``'s placement)
    tev.SRC_PRIMARY: layout.PRIMARY_SLOT,
    **{tev.SRC_TEXTURES[u]: layout.TEX0 + u for u in range(3)},
    tev.SRC_TEXTURES[3]: layout.PROCTEX_SLOT,
    tev.SRC_LIGHT_PRIMARY: layout.LIGHT_PRIMARY,
    tev.SRC_LIGHT_SECONDARY: layout.LIGHT_SECONDARY,
}


def _regs(update: dict[str, int] | None = None, buffer_color: tuple = (0, 0, 0, 0)) -> np.ndarray:
    regs = np.zeros(0x300, np.uint32)
    _passthrough(regs)
    regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose("TEXENV_UPDATE_BUFFER", **(update or {}))
    regs[id_of("TEXENV_BUFFER_COLOR")] = access.compose(
        "TEXENV_BUFFER_COLOR", **dict(zip("rgba", buffer_color, strict=True))
    )
    return regs


def _buffers(tstate: TevState) -> list[tuple[int, int]]:
    return [(row.buffer_rgb, row.buffer_alpha) for row in tstate.program.rows]


def _fused(tstate: TevState, inputs: dict[int, np.ndarray], count: int) -> np.ndarray:
    """The fused kernel's ``_combine`` over ``inputs`` placed in their slots (unprovided sources read 0), with the
    primary color and procedural texture slots' shared colors (``uniform_slots``) as the fused shading gives them."""
    src = np.zeros((layout.NUM_SLOTS, count, 4), np.uint8)
    slot_of = {code: layout.ZERO for code in range(16)}
    slot_of[tev.SRC_CONSTANT] = layout.CONSTANT
    for code, values in inputs.items():
        src[INPUT_SLOTS[code]] = values
        slot_of[code] = INPUT_SLOTS[code]
    rows, chans, invs = _tev_rows(tstate.program, slot_of)
    color = np.array(tstate.buffer_color, np.uint8)
    uniform = uniform_slots(src, True, True)
    last = _combine(src, rows, chans, invs, color, tstate.program.uses_buffer, uniform, stage_entry())
    return src[last].copy()


# ---------------------------------------------------------------------------------------------- hand-made rows
def test_buffer_delay_per_channel_group() -> None:
    """Six stages replacing with their constant; RGB updates after stages 0 and 1, alpha after stage 2; stage 5
    reads the buffer. Stage k reads the buffer as stages 0..k-2 left it (stage 2 sees stage 0's update, not
    stage 1's); the output of stage 5 is stage 1's RGB and stage 2's alpha."""
    regs = _regs({"rgb_update0": 1, "rgb_update1": 1, "alpha_update2": 1}, (1, 2, 3, 4))
    consts = [(10 * k + 1, 10 * k + 2, 10 * k + 3, 10 * k + 4) for k in range(6)]
    for k in range(5):
        _stage(regs, k, rgb=(CONST,) * 3, alpha=(CONST,) * 3, const=consts[k])
    _stage(regs, 5, rgb=(BUFFER,) * 3, alpha=(BUFFER,) * 3, const=consts[5])
    tstate = TevState.from_regs(regs)
    prog = tstate.program
    assert prog.uses_buffer and prog.result == 5
    assert _buffers(tstate) == [(ZERO, ZERO), (COLOR, COLOR), (0, COLOR), (1, COLOR), (1, 2), (1, 2)]
    assert [row.previous for row in prog.rows] == [ZERO, 0, 1, 2, 3, 4]
    assert all(row.active for row in prog.rows)
    assert tuple(combine(tstate, {}, 1)[0]) == (11, 12, 13, 24)
    assert tuple(_fused(tstate, {}, 1)[0]) == (11, 12, 13, 24)


def test_buffer_reads_the_initial_color_in_stage_1_and_zero_in_stage_0() -> None:
    regs = _regs({"rgb_update0": 1, "alpha_update0": 1}, (5, 6, 7, 8))
    _stage(regs, 0, rgb=(BUFFER,) * 3, alpha=(BUFFER,) * 3)
    _stage(regs, 1, rgb=(BUFFER, PREV, PREV), alpha=(BUFFER,) * 3, combine=(2, 0))  # add, replace
    tstate = TevState.from_regs(regs)
    assert tstate.program.rows[0].rgb_sources == (None, None, None)  # stage 0's "previous buffer" reads 0
    assert _buffers(tstate)[:3] == [(ZERO, ZERO), (COLOR, COLOR), (0, 0)]
    assert tuple(combine(tstate, {}, 1)[0]) == (5, 6, 7, 8)  # 0 + (5, 6, 7); alpha replaces with the buffer's 8
    assert tuple(_fused(tstate, {}, 1)[0]) == (5, 6, 7, 8)


def test_pass_through_stages_pass_their_previous_to_the_buffer_and_the_next_stage() -> None:
    """Stage 1 passes stage 0's output through and updates the buffer with it: stage 3's buffer is stage 0's
    output; stage 2's "previous" is stage 0's; stages 4-5 pass stage 3's output, the result."""
    regs = _regs({"rgb_update1": 1, "alpha_update1": 1}, (9, 9, 9, 9))
    _stage(regs, 0, rgb=(CONST,) * 3, alpha=(CONST,) * 3, const=(1, 2, 3, 4))
    _stage(regs, 2, rgb=(PREV, CONST, PREV), alpha=(PREV, CONST, PREV), combine=(2, 2), const=(10, 10, 10, 10))
    _stage(regs, 3, rgb=(BUFFER, PREV, PREV), alpha=(BUFFER, PREV, PREV), combine=(2, 2))
    tstate = TevState.from_regs(regs)
    prog = tstate.program
    assert [row.active for row in prog.rows] == [True, False, True, True, False, False]
    assert [row.previous for row in prog.rows] == [ZERO, 0, 0, 2, 3, 3]
    assert _buffers(tstate)[3] == (0, 0) and prog.result == 3
    assert tuple(combine(tstate, {}, 1)[0]) == (12, 14, 16, 18)  # (1 + 10) + 1, ...
    assert tuple(_fused(tstate, {}, 1)[0]) == (12, 14, 16, 18)


def test_an_unread_buffer_reads_zero_everywhere() -> None:
    regs = _regs({"rgb_update0": 1, "alpha_update1": 1}, (9, 9, 9, 9))
    _stage(regs, 0, rgb=(PRIMARY,) * 3, alpha=(PRIMARY,) * 3)
    tstate = TevState.from_regs(regs)
    assert not tstate.program.uses_buffer
    assert _buffers(tstate) == [(ZERO, ZERO)] * 6


def test_stage_0_source_rules() -> None:
    """RGB "previous" in slot 0 / 1 reads slot 2's source; alpha "previous" and "previous buffer" read 0 (None);
    the slots the op does not read repeat slot 0."""
    regs = _regs()
    _stage(regs, 0, rgb=(PREV, BUFFER, TEX0), alpha=(PREV, CONST, CONST), combine=(1, 0))  # modulate / replace
    row = TevState.from_regs(regs).program.rows[0]
    assert row.rgb_sources == (TEX0, None, TEX0)
    assert row.alpha_sources == (None, None, None)
    _stage(regs, 0, rgb=(PREV, PREV, PREV), alpha=(CONST, PREV, PREV), combine=(4, 0))  # interpolate
    row = TevState.from_regs(regs).program.rows[0]
    assert row.rgb_sources == (None, None, None) and row.alpha_sources == (CONST,) * 3
    assert row.reads(CONST) and not row.reads(BUFFER)


# ---------------------------------------------------------------------------------------------- random states
@st.composite
def tev_registers(draw: st.DrawFn, sources: tuple[int, ...] = SOURCES) -> np.ndarray:
    """Registers of six valid stages (some pass-through), random update bits and buffer color."""
    pick = (*sources, BUFFER, CONST, PREV)
    rgb_ops = sorted(tev.ARITY)
    alpha_ops = [op for op in rgb_ops if op not in (tev.OP_DOT3_RGB, tev.OP_DOT3_RGBA)]
    update = {f"{kind}_update{k}": draw(st.integers(0, 1)) for kind in ("rgb", "alpha") for k in range(4)}
    regs = _regs(update, tuple(draw(st.integers(0, 255)) for _ in range(4)))
    for k in range(6):
        if k and draw(st.integers(0, 3)) == 0:
            continue  # pass-through (``_passthrough``)
        _stage(
            regs,
            k,
            rgb=tuple(draw(st.sampled_from(pick)) for _ in range(3)),
            alpha=tuple(draw(st.sampled_from(pick)) for _ in range(3)),
            rgb_ops=tuple(draw(st.sampled_from(sorted(tev.RGB_OPERAND_TABLE))) for _ in range(3)),
            alpha_ops=tuple(draw(st.sampled_from(sorted(tev.ALPHA_OPERAND_TABLE))) for _ in range(3)),
            combine=(draw(st.sampled_from(rgb_ops)), draw(st.sampled_from(alpha_ops))),
            const=tuple(draw(st.integers(0, 255)) for _ in range(4)),
            scale=(draw(st.integers(0, 3)), draw(st.integers(0, 3))),
        )
    return regs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tev_registers(), st.integers(0, 2**32 - 1))
def test_fused_combine_matches_the_reference(regs: np.ndarray, seed: int) -> None:
    tstate = TevState.from_regs(regs)
    rng = np.random.default_rng(seed)
    count = 24
    inputs = {code: rng.integers(0, 256, (count, 4), np.uint8) for code in SOURCES}
    for code in SOURCES:  # about half the inputs one color for every fragment (0, 255 or any), per channel
        if rng.integers(2):
            one = rng.choice([0, 255, int(rng.integers(256))], 4)
            inputs[code] = np.tile(one.astype(np.uint8), (count, 1))
    expected = combine(tstate, inputs, count)
    np.testing.assert_array_equal(_fused(tstate, inputs, count), expected)


# GL: a CELLS x CELLS grid of quads, each of one primary color (exact after rounding: no interpolation error), the
# other sources read 0 (texture units, lighting and the procedural texture off)
CELLS, CELL = 4, 8


def _grid(colors: np.ndarray) -> np.ndarray:
    """(6 CELLS^2, 2, 4) float32 triangles: position, color (``colors`` (CELLS^2, 4) uint8, one per cell)."""
    tris = []
    edges = np.linspace(-1.0, 1.0, CELLS + 1)
    for i in range(CELLS):
        for j in range(CELLS):
            x0, x1, y0, y1 = edges[j], edges[j + 1], edges[i], edges[i + 1]
            color = colors[i * CELLS + j] / np.float32(255)
            corners = [
                np.array([[x, y, -0.5, 1.0], color], np.float32) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
            ]
            a, b, c, d = corners
            tris += [a, b, c, a, c, d]
    return np.array(tris, np.float32)


def _gl_state(regs: np.ndarray) -> GpuState:
    gs = base_state((0x08, 0x09, 0x0A, 0x0B), None, (CELLS * CELL, CELLS * CELL))
    for name in ("SOURCE", "OPERAND", "COMBINER", "COLOR", "SCALE"):
        for k in range(6):
            reg = id_of(f"TEXENV{k}_{name}")
            gs.regs[reg] = regs[reg]
    for name in ("TEXENV_UPDATE_BUFFER", "TEXENV_BUFFER_COLOR"):
        gs.regs[id_of(name)] = regs[id_of(name)]
    return gs


@needs_egl
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tev_registers(), st.integers(0, 2**32 - 1))
def test_glsl_matches_the_reference(regs: np.ndarray, seed: int) -> None:
    from picaemu.gl.backend import GLPipeline

    colors = np.random.default_rng(seed).integers(0, 256, (CELLS * CELLS, 4), np.uint8)
    zero = np.zeros((CELLS * CELLS, 4), np.uint8)
    inputs = {code: zero for code in SOURCES} | {tev.SRC_PRIMARY: colors}
    expected = combine(TevState.from_regs(regs), inputs, CELLS * CELLS)
    vertices = _grid(colors)
    software = render(_gl_state(regs), vertices, Pipeline(vertex_shader=identity_vs))
    gl_pipe = GLPipeline(vertex_shader=identity_vs)
    gl = render(_gl_state(regs), vertices, gl_pipe)
    assert gl_pipe.gl_draws == 1 and not gl_pipe.fallbacks, gl_pipe.fallbacks
    np.testing.assert_array_equal(gl, software)
    centres = software[CELL // 2 :: CELL, CELL // 2 :: CELL].reshape(-1, 4)
    assert sorted(map(tuple, centres.tolist())) == sorted(map(tuple, expected.tolist()))
