"""The shading facade: real citro3d state from the scene-2 capture, unit routing, hand-offs to lighting/proctex."""

from __future__ import annotations

import json

import numpy as np
import pytest

from picaemu.color.shading import ShadingState, alpha_test, shade
from picaemu.command.processor import CommandProcessor
from picaemu.draw import DrawCall, PipelineEventKind
from picaemu.errors import PicaError, UnsupportedFeature
from picaemu.fragment.blend import blend_program
from picaemu.fragment.reference import blend_color
from picaemu.memory import PhysicalMemory
from picaemu.raster.fragments import Fragments
from picaemu.regs import access, id_of
from picaemu.state import GpuState
from picaemu.texture import encode_texture


class _Capture:
    """A pipeline sink that keeps the state of every draw."""

    def __init__(self) -> None:
        self.states: list[GpuState] = []

    def draw(self, call: DrawCall) -> None:
        self.states.append(call.state.copy())

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        return None


def _replay_scene2(captures_dir) -> tuple[GpuState, PhysicalMemory]:
    scene = captures_dir / "scene2_textured_quad"
    manifest = json.loads((scene / "manifest.json").read_text())
    mem, sink = PhysicalMemory(), _Capture()
    proc = CommandProcessor(mem, sink)
    for event in manifest["events"]:
        if event.get("gx_cmd") != "ProcessCommandList":
            continue
        for block in event["memory"]:
            if block["file"]:
                mem.write(block["paddr"], (scene / block["file"]).read_bytes()[: block["size"]])
        proc.run_at(event["cmdlist_paddr"], event["cmdlist_size_bytes"])
    assert sink.states, "the scene has a draw"
    return sink.states[-1], mem


def _cell_fragments(color=(1.0, 1.0, 0.5, 1.0)) -> tuple[Fragments, list[tuple[int, int]]]:
    """One fragment at the centre of each 8x8 checker cell; cell (cx, cy) counts rows from the top."""
    cells = [(cx, cy) for cy in range(8) for cx in range(8)]
    frags = Fragments.empty(len(cells))
    for i, (cx, cy) in enumerate(cells):
        frags.texcoord0[i] = ((cx * 8 + 4) / 64, 1 - (cy * 8 + 4) / 64)
        frags.x[i], frags.y[i] = cx, cy
    frags.color[:] = color
    return frags, cells


def test_scene2_textured_quad_colors(captures_dir) -> None:
    state, mem = _replay_scene2(captures_dir)
    sstate = ShadingState.from_state(state)
    unit0 = sstate.texturing.units[0]
    assert (unit0.enabled, unit0.width, unit0.height, unit0.format.name) == (True, 64, 64, "RGBA8")
    assert not unit0.mag_linear and unit0.wrap_s == 0 and unit0.wrap_t == 0  # nearest, clamp to edge
    frags, cells = _cell_fragments()
    out = shade(sstate, frags, mem)
    for (cx, cy), rgba in zip(cells, out.tolist(), strict=True):
        if (cx, cy) == (0, 0):
            expected = [255, 255, 0, 255]  # the yellow marker
        elif (cx + cy) % 2 == 0:
            expected = [255, 255, 128, 255]  # white * (1, 1, 0.5): 255 * 128 / 255
        else:
            expected = [36 * cx, 36 * (7 - cy), 80, 255]  # 160 * 128 / 255 = 80.3
        assert rgba == expected, (cx, cy)


def _tex_state(**config) -> tuple[GpuState, PhysicalMemory]:
    st, mem = GpuState(), PhysicalMemory()
    regs = st.regs
    for n in range(6):
        regs[id_of(f"TEXENV{n}_SOURCE")] = access.compose(f"TEXENV{n}_SOURCE", rgb_src0=0xF, alpha_src0=0xF)
    regs[id_of("TEXUNIT_CONFIG")] = access.compose("TEXUNIT_CONFIG", **config)
    for unit, addr_reg in ((1, "TEXUNIT1_ADDR"), (2, "TEXUNIT2_ADDR")):
        img = np.zeros((8, 8, 4), np.uint8)
        img[:, :4] = (unit * 10, 0, 0, 255)  # left half colored, right half black
        mem.write(0x18000000 + unit * 0x1000, encode_texture(img, "RGBA8"))
        regs[id_of(addr_reg)] = (0x18000000 + unit * 0x1000) >> 3
        regs[id_of(f"TEXUNIT{unit}_DIM")] = access.compose(f"TEXUNIT{unit}_DIM", width=8, height=8)
    return st, mem


def _source(st: GpuState, code: int) -> None:
    st.regs[id_of("TEXENV0_SOURCE")] = access.compose("TEXENV0_SOURCE", rgb_src0=code, alpha_src0=code)


@pytest.mark.parametrize(("unit2_coords", "expected_red"), [(0, [20, 0]), (1, [0, 20])])
def test_unit2_reads_texcoord2_or_texcoord1(unit2_coords: int, expected_red: list[int]) -> None:
    st, mem = _tex_state(unit2_enable=1, unit2_coords=unit2_coords)
    _source(st, 0x5)
    frags = Fragments.empty(2)
    frags.texcoord2[:] = [[0.1, 0.5], [0.9, 0.5]]  # left, right
    frags.texcoord1[:] = [[0.9, 0.5], [0.1, 0.5]]  # right, left
    assert shade(ShadingState.from_state(st), frags, mem)[:, 0].tolist() == expected_red


def test_unit1_enabled_and_disabled() -> None:
    st, mem = _tex_state(unit1_enable=1)
    _source(st, 0x4)
    frags = Fragments.empty(1)
    frags.texcoord1[:] = [0.1, 0.5]
    assert shade(ShadingState.from_state(st), frags, mem).tolist() == [[10, 0, 0, 255]]
    st.regs[id_of("TEXUNIT_CONFIG")] = 0
    assert shade(ShadingState.from_state(st), frags, mem).tolist() == [[0, 0, 0, 0]]


def test_primary_color_is_rounded() -> None:
    st, mem = _tex_state()
    _source(st, 0x0)
    frags = Fragments.empty(1)
    frags.color[:] = [0.5, 1.0, 0.0, 0.2]  # 127.5 -> 128, 51
    assert shade(ShadingState.from_state(st), frags, mem).tolist() == [[128, 255, 0, 51]]


def test_lighting_off_reads_zero() -> None:
    st, mem = _tex_state()
    _source(st, 0x2)
    st.regs[id_of("TEXENV0_OPERAND")] = access.compose("TEXENV0_OPERAND", rgb_op0=1, alpha_op0=1)
    assert shade(ShadingState.from_state(st), Fragments.empty(1), mem).tolist() == [[255, 255, 255, 255]]


def test_gas_fog_is_refused() -> None:
    st, mem = _tex_state()
    st.regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose("TEXENV_UPDATE_BUFFER", fog_mode=7)
    with pytest.raises(UnsupportedFeature) as err:
        shade(ShadingState.from_state(st), Fragments.empty(1), mem)
    assert err.value.register == 0x0E0


def test_alpha_test_and_blend_pass_through() -> None:
    st, _ = _tex_state()
    st.regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=1)
    st.regs[id_of("BLEND_FUNC")] = access.compose("BLEND_FUNC", rgb_src=1, alpha_src=1, rgb_dst=1, alpha_dst=1)
    st.regs[id_of("FRAGOP_ALPHA_TEST")] = access.compose("FRAGOP_ALPHA_TEST", enable=1, func=6, ref=10)
    sstate = ShadingState.from_state(st)
    src = np.array([[100, 100, 100, 5], [100, 100, 100, 50]], np.uint8)
    assert alpha_test(sstate, src).tolist() == [False, True]
    assert [blend_color(sstate.blend, tuple(c), tuple(c)) for c in src.tolist()] == [
        (200, 200, 200, 10),
        (200, 200, 200, 100),
    ]


def test_hostile_register_states_raise_named_errors_only() -> None:
    """Random words in every register this module reads: decoding and shading end in a result or a PicaError."""
    rng = np.random.default_rng(1234)
    ids = [r for r in range(0x080, 0x0A0)] + [r for r in range(0x0C0, 0x100)] + [r for r in range(0x100, 0x105)]
    mem = PhysicalMemory()
    frags = Fragments.empty(16)
    frags.texcoord0[:] = rng.normal(0, 3, (16, 2))
    frags.texcoord0[0] = np.nan
    frags.texcoord0_w[:] = rng.normal(0, 2, 16)
    frags.x[:], frags.y[:] = np.arange(16) % 4, np.arange(16) // 4
    outcomes = {"ok": 0, "error": 0}
    for _ in range(150):
        st = GpuState()
        st.regs[ids] = rng.integers(0, 2**32, len(ids), dtype=np.uint64).astype(np.uint32)
        if rng.random() < 0.7:  # keep the units small and inside VRAM more often than chance would
            for unit, addr in ((0, "TEXUNIT0_ADDR1"), (1, "TEXUNIT1_ADDR"), (2, "TEXUNIT2_ADDR")):
                st.regs[id_of(f"TEXUNIT{unit}_DIM")] = access.compose(f"TEXUNIT{unit}_DIM", width=8, height=16)
                st.regs[id_of(addr)] = (0x18000000 >> 3) + int(rng.integers(0, 1024))
        if rng.random() < 0.6:
            _valid_random_tev(st, rng)
        try:
            sstate = ShadingState.from_state(st)
            color = shade(sstate, frags, mem)
            assert color.shape == (16, 4) and color.dtype == np.uint8
            blend_program(sstate.blend)
            alpha_test(sstate, color)
            outcomes["ok"] += 1
        except PicaError:
            outcomes["error"] += 1
    assert outcomes["ok"] > 0 and outcomes["error"] > 0


def _valid_random_tev(st: GpuState, rng: np.random.Generator) -> None:
    """Random but defined combiner, fog and blend settings (the register fields, not the whole words)."""
    pick = lambda options: int(rng.choice(options))  # noqa: E731
    sources, rgb_ops = [0, 3, 4, 5, 13, 14, 15], [0, 1, 2, 3, 4, 5, 8, 9, 12, 13]
    for n in range(6):
        p = f"TEXENV{n}"
        st.regs[id_of(f"{p}_SOURCE")] = access.compose(
            f"{p}_SOURCE", **{f"{k}_src{i}": pick(sources) for k in ("rgb", "alpha") for i in range(3)}
        )
        st.regs[id_of(f"{p}_OPERAND")] = access.compose(
            f"{p}_OPERAND",
            **{f"rgb_op{i}": pick(rgb_ops) for i in range(3)},
            **{f"alpha_op{i}": pick(range(8)) for i in range(3)},
        )
        st.regs[id_of(f"{p}_COMBINER")] = access.compose(
            f"{p}_COMBINER", rgb_combine=pick(range(10)), alpha_combine=pick([0, 1, 2, 3, 4, 5, 8, 9])
        )
    st.regs[id_of("TEXENV_UPDATE_BUFFER")] = access.compose(
        "TEXENV_UPDATE_BUFFER",
        fog_mode=pick([0, 5]),
        fog_z_flip=pick([0, 1]),
        **{f"{k}_update{i}": pick([0, 1]) for k in ("rgb", "alpha") for i in range(4)},
    )
    st.regs[id_of("COLOR_OPERATION")] = access.compose("COLOR_OPERATION", blend_mode=pick([0, 1]))
    st.regs[id_of("BLEND_FUNC")] = access.compose(
        "BLEND_FUNC",
        **{k: pick(range(15)) for k in ("rgb_src", "rgb_dst", "alpha_src", "alpha_dst")},
        rgb_equation=pick(range(8)),
        alpha_equation=pick(range(8)),
    )
    st.fog_lut[:] = rng.integers(0, 1 << 24, 128)


@pytest.mark.parametrize(("filt", "expect_level1"), [(2, True), (0, False)])  # mip nearest / no mip filter
def test_proctex_gets_its_lod_from_derivatives(filt: int, expect_level1: bool) -> None:
    from tests.test_proctex import SCALE, _lod_state

    st = _lod_state(filt)  # LOD bias 1.0, width 128, level offsets 0x00, 0x80, ...
    for n in range(6):
        st.regs[id_of(f"TEXENV{n}_SOURCE")] = access.compose(f"TEXENV{n}_SOURCE", rgb_src0=0xF, alpha_src0=0xF)
    st.regs[id_of("TEXUNIT_CONFIG")] |= np.uint32(access.compose("TEXUNIT_CONFIG", unit3_enable=1))
    _source(st, 0x6)
    frags = Fragments.empty(4)
    frags.x[:] = np.arange(4)  # one row of one primitive: du/dx = 1/64, dv = 0
    frags.texcoord0[:, 0] = 0.25 + np.arange(4) / 64
    red = shade(ShadingState.from_state(st), frags, PhysicalMemory())[0, 0]
    # LOD = log2(128 * 1/64) = 1 -> mip nearest level 1 (offset 0x80, width 64); without a mip filter level 0
    want = round(0x80 + 0.25 * SCALE * 63) if expect_level1 else round(0.25 * SCALE * 127)
    assert red == want


def test_texels_fetched_counter() -> None:
    st, mem = _tex_state(unit1_enable=1)
    _source(st, 0x4)
    frags = Fragments.empty(3)
    counters: dict = {}
    shade(ShadingState.from_state(st), frags, mem, counters=counters)
    assert counters == {"texels_fetched": 3}  # nearest: one tap per fragment
