"""Fragment debugging (picaemu/debug/fragment.py, ``Debugger.debug_fragment``, ``picaemu fragment``) on a hand-built
scene whose every per-stage value is computed here by hand from the reference rules (TEV: 8-bit products truncated,
add clamped, subtract clamped at 0; fog: rgb = trunc(F rgb + (1 - F) fog); depth = (Z + 1) / 2 for ``tilt_ortho``).

Scene (landscape rectangle X 100..180, Y 40..120, uv 0..1 across it; the pixel is PNG column 74, row 135 = window
(74, 264), centre at landscape (135.5, 74.5): s = 35.5 / 80, t = 34.5 / 80 -> nearest texel column 3, row 3 from the
bottom = image row 4 of the 8x8 texture):

- draw 0: opaque red at Z 0.5 (depth 0.75), writes stencil 5;
- draw 1: the textured quad at Z 0.8 (depth 0.9); stencil equal 5 (mask 0x0F), alpha test greater 128, fog on;
  TEV 0 rgb = modulate(texture 0, primary), alpha = modulate(texture 0 a, primary a); TEV 1 rgb =
  add(previous, 1 - constant), alpha = replace(constant a); TEV 2 rgb = subtract(previous, previous buffer),
  alpha = replace(previous a); buffer color (10, 20, 30, 40), no buffer updates; stages 3-5 pass through;
- draw 2: the same state at Z 0.0 (depth 0.5): fails the depth test (greater) against 0.9;
- draw 3: stencil ref 6 at Z 0.95: fails the stencil test, never reaches the depth test;
- draw 4: a 64x64 texture with 4 mip levels, each one solid color (``LEVEL_COLORS``), nearest filters, on a 16x16
  rectangle (X 200..216, Y 40..56, Z 0.3, stencil off): 64 / 16 = 4 texels per pixel, so LOD = log2(4) = 2 and the
  lookup reads level 2's color. PNG pixel (48, 208) = window (48, 191), centre at landscape (208.5, 48.5).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica

import picaemu
from picaemu.builder import CaptureBuilder
from picaemu.cli import main
from picaemu.debug import probe
from picaemu.debug.fragment import differences, sections
from picaemu.debug.replay import DebugReplay
from picaemu.errors import PicaError
from picaemu.fragment.ops import Fate
from picaemu.observer import StageObserver
from picaemu.raster import rasterizer
from picaemu.texture import encode_texture
from samples._common import SCREEN, VS_TEX, rect, rect_uv
from samples.generate import CAPTURES

PIXEL = (74, 135)
PRIMARY = (128, 255, 64, 255)
CONSTANT = (200, 100, 50, 255)
BUFFER = (10, 20, 30, 40)
FOG_RGB = (0, 0, 255)


def _texture() -> np.ndarray:
    """8x8 RGBA: texel [row, col] = (32 col + 16, 32 row + 16, 100, 255 - 8 row)."""
    row, col = np.mgrid[0:8, 0:8]
    return np.stack([32 * col + 16, 32 * row + 16, np.full((8, 8), 100), 255 - 8 * row], axis=-1).astype(np.uint8)


TEXEL = tuple(int(v) for v in _texture()[4, 3])  # (112, 144, 100, 223)
LEVEL_COLORS = tuple((60 * k, 255 - 60 * k, 50, 255) for k in range(4))
MIP_PIXEL = (48, 208)


def _mipmapped(b: CaptureBuilder) -> None:
    """Bind the 64x64 mip chain of ``LEVEL_COLORS`` to unit 0 (levels 0-3, nearest, nearest between levels)."""
    levels = [np.full((64 >> k, 64 >> k, 4), LEVEL_COLORS[k], np.uint8) for k in range(4)]
    b.texture(0, levels[0])
    address = b.upload(b"".join(encode_texture(level, "RGBA8") for level in levels), vram=True)
    b.set("TEXUNIT0_ADDR1", address=address)
    b.set("TEXUNIT0_LOD", bias=0.0, max_level=3, min_level=0)
    b.set("TEXUNIT0_PARAM", mag_filter="nearest", min_filter="nearest", mip_filter="nearest", type="2D")


def _quad(b: CaptureBuilder, z: float, color: tuple[int, ...]) -> None:
    col = np.tile(np.array(color, np.float32) / 255, (6, 1))
    b.vertices([rect(100, 40, 180, 120, z), rect_uv(), col])
    b.draw(6)


def build(path: Path) -> Path:
    b = CaptureBuilder(name="fragment debug scene")
    b.begin_frame(clear=(0x30, 0x30, 0x30, 0xFF))
    b.shader(VS_TEX)
    b.uniforms(0, SCREEN)
    b.blend()
    b.tev(0, rgb=("primary color",), combine="replace")
    b.passthrough_tev()
    b.stencil(True, "always", 5, depth_pass="replace")
    _quad(b, 0.5, (255, 0, 0, 255))
    b.texture(0, _texture())
    b.tev(0, rgb=("texture 0", "primary color"), combine="modulate")
    b.tev(
        1,
        rgb=("previous", "constant"),
        alpha=("constant",),
        rgb_ops=("src.rgb", "1 - src.rgb"),
        combine="add",
        alpha_combine="replace",
        color=CONSTANT,
    )
    b.tev(2, rgb=("previous", "previous buffer"), alpha=("previous",), combine="subtract", alpha_combine="replace")
    b.passthrough_tev(3)
    b.set("TEXENV_BUFFER_COLOR", r=BUFFER[0], g=BUFFER[1], b=BUFFER[2], a=BUFFER[3])
    b.stencil(True, "equal", 5, mask=0x0F)
    b.alpha_test(True, "greater", 128)
    b.fog(FOG_RGB, 1 - 0.5 * np.linspace(0, 1, 129))
    _quad(b, 0.8, PRIMARY)
    _quad(b, 0.0, PRIMARY)
    b.stencil(True, "equal", 6, mask=0x0F)
    _quad(b, 0.95, PRIMARY)
    b.stencil(False)
    _mipmapped(b)
    col = np.tile(np.array(PRIMARY, np.float32) / 255, (6, 1))
    b.vertices([rect(200, 40, 216, 56, 0.3), rect_uv(), col])
    b.draw(6)
    b.end_frame()
    out = path / "fragment.pica"
    b.save(out)
    return out


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("fragment"))


def _stage0() -> tuple[int, ...]:
    return tuple(t * p // 255 for t, p in zip(TEXEL, PRIMARY, strict=True))  # (56, 144, 25, 223)


def test_written_fragment_stage_by_stage(scene: Path) -> None:
    frag = picaemu.open(scene).debug_fragment(1, *PIXEL)
    assert frag.window == (74, 264) and frag.fragments_at_pixel == 1 and frag.fate == "written"
    np.testing.assert_allclose(frag.primary_color, np.array(PRIMARY) / 255, atol=1e-4)
    [lookup] = frag.textures
    assert lookup.unit == 0 and lookup.lod is None and lookup.texel == TEXEL == (112, 144, 100, 223)
    assert lookup.s == pytest.approx(35.5 / 80, abs=1e-4) and lookup.t == pytest.approx(34.5 / 80, abs=1e-4)
    s0, s1, s2, *rest = frag.tev
    assert s0.rgb_sources == ("texture 0", "primary color") and s0.rgb_operands == (TEXEL[:3], PRIMARY[:3])
    assert s0.alpha_operands == (223, 255) and s0.output == _stage0() == (56, 144, 25, 223)
    assert s0.buffer == (0, 0, 0, 0)  # stage 0 reads 0 as the previous buffer
    inverted = tuple(255 - c for c in CONSTANT[:3])  # (55, 155, 205)
    assert s1.rgb_operands == ((56, 144, 25), inverted) and s1.alpha_operands == (255,)
    assert s1.output == (111, 255, 230, 255) and s1.buffer == BUFFER
    assert s2.rgb_sources == ("previous", "previous buffer") and s2.rgb_operands == ((111, 255, 230), BUFFER[:3])
    assert s2.output == (101, 235, 200, 255) and s2.buffer == BUFFER  # no update bits: stage 2 reads the initial
    assert all(s.passthrough and s.output == s2.output for s in rest) and frag.tev_output == s2.output
    factor = 1 - 0.5 * 0.9
    assert frag.fog["factor"] == pytest.approx(factor, abs=2e-3)
    expected = [int(factor * c + (1 - factor) * f) for c, f in zip(s2.output[:3], FOG_RGB, strict=True)]
    assert all(abs(a - e) <= 1 for a, e in zip(frag.fog["result"][:3], expected, strict=True))
    scissor, alpha, stencil, depth = frag.tests
    assert (scissor.enabled, scissor.passed) == (False, True)
    assert alpha.passed and alpha.values == {"func": "greater", "ref": 128, "alpha": 255}
    assert stencil.passed and stencil.values["stored"] == 5 and stencil.values["ref_masked"] == 5
    assert depth.passed and depth.values["func"] == "greater"
    assert depth.values["fragment"] == pytest.approx(0.9, abs=1e-4)
    assert depth.values["stored"] == pytest.approx(0.75, abs=1e-4)
    assert frag.color_before == (255, 0, 0, 255) and frag.color_after == (*frag.fog["result"][:3], 255)
    assert frag.depth_before == pytest.approx(0.75, abs=1e-4) and frag.depth_after == pytest.approx(0.9, abs=1e-4)


def test_fate_and_buffers_come_from_the_compiled_route_and_agree_with_the_reference(scene: Path) -> None:
    """Every draw of the scene is covered by the compiled route: the fragment's fate and buffers come from it,
    and the per-stage run (the readable reference) agrees on every compared field."""
    replay = picaemu.open(scene)
    for draw, pixel in ((1, PIXEL), (2, PIXEL), (3, PIXEL), (4, MIP_PIXEL)):
        frag = replay.debug_fragment(draw, *pixel)
        assert frag.route == "compiled" and frag.reference_differences == ()
        assert sections(frag)["fragment"]["per-stage values"] == "the readable reference, which agrees with the route"
        assert "reference differences" not in sections(frag)


def test_differences_name_each_field_the_two_runs_disagree_on() -> None:
    """``differences`` on hand-made records: equal records agree; a changed TEV output and depth are named with
    both values; a missing fragment is named by the counts."""
    a = probe.FragmentRecord(1, 74, 264, Fate.WRITTEN, "written", tev=(1, 2, 3, 4), depth_after=0.5)
    b = dataclasses.replace(a, tev=(1, 2, 3, 5), depth_after=0.25)
    assert differences((a,), (a,)) == ()
    assert differences((a, a), (a, b)) == (
        "fragment 1: tev (1, 2, 3, 4) on the route, (1, 2, 3, 5) in the reference",
        "fragment 1: depth_after 0.5 on the route, 0.25 in the reference",
    )
    assert differences((a,), ()) == ("fragments at the pixel: 1 on the route, 0 in the reference",)
    frag = picaemu.open(CAPTURES / "lit_sphere.pica").debug_fragment(0, 120, 200)
    shown = sections(dataclasses.replace(frag, reference_differences=differences((a,), (b,))))
    assert shown["fragment"]["per-stage values"].endswith("DISAGREES with the route")
    assert next(iter(shown["reference differences"].values())).startswith("fragment 0: tev")


def test_depth_and_stencil_failures_name_their_values(scene: Path) -> None:
    replay = picaemu.open(scene)
    behind = replay.debug_fragment(2, *PIXEL)
    assert behind.fate == "depth test" and behind.tev_output == (101, 235, 200, 255)  # shaded like draw 1
    _, _, stencil, depth = behind.tests
    assert stencil.passed and depth.passed is False
    assert depth.values["fragment"] == pytest.approx(0.5, abs=1e-4) and depth.values["stored"] == pytest.approx(
        0.9, abs=1e-4
    )
    assert behind.color_after == behind.color_before and behind.depth_after == behind.depth_before
    masked = replay.debug_fragment(3, *PIXEL)
    _, _, stencil, depth = masked.tests
    assert masked.fate == "stencil test" and stencil.passed is False and depth.passed is None
    assert stencil.values["ref_masked"] == 6 and stencil.values["stored_masked"] == 5
    with pytest.raises(PicaError, match="there is no fragment 1"):
        replay.debug_fragment(1, *PIXEL, index=1)
    with pytest.raises(PicaError, match="rasterized 0 fragment"):
        replay.debug_fragment(1, 5, 5)


def test_mip_level_of_detail(scene: Path) -> None:
    frag = picaemu.open(scene).debug_fragment(4, *MIP_PIXEL)
    [lookup] = frag.textures
    assert lookup.lod == pytest.approx(2.0, abs=1e-3) and lookup.texel == LEVEL_COLORS[2]
    assert lookup.s == pytest.approx(8.5 / 16, abs=1e-4) and lookup.t == pytest.approx(8.5 / 16, abs=1e-4)
    assert frag.fate == "written" and frag.tev[0].rgb_operands[0] == LEVEL_COLORS[2][:3]


def test_pixel_history_carries_buffer_depths(scene: Path) -> None:
    history = picaemu.open(scene).pixel_history(*PIXEL)
    assert [f.draw for f in history] == [0, 1, 2, 3]
    assert history[0].depth_before == 0 and history[0].depth_after == pytest.approx(0.75, abs=1e-4)
    assert history[1].depth_after == pytest.approx(0.9, abs=1e-4)
    assert history[2].depth_before == history[2].depth_after == history[3].depth_after


def test_cli_fragment_json_is_the_api_answer(scene: Path) -> None:
    result = CliRunner().invoke(
        main, ["fragment", str(scene), "--draw", "1", "--buffer", "--pixel", "74,135", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads(json.dumps(picaemu.open(scene).debug_fragment(1, *PIXEL).as_dict()))
    text = CliRunner().invoke(main, ["fragment", str(scene), "--draw", "2", "--buffer", "--pixel", "74,135"])
    assert text.exit_code == 0 and "depth test" in text.output and "stage 0" in text.output


def test_lighting_terms_of_the_lit_sphere_by_hand() -> None:
    """samples/lit_sphere.py at the picture's centre, the sphere's front pole: N = V = (0, 0, 1) in eye space,
    L = normalize(-0.55, 0.5, 0.67). Primary = global ambient (24, 24, 36) + diffuse (210, 50, 40) x N.L; secondary
    = specular 255 x D0(N.H) with D0(x) = x^24 (the LUT, 256 entries); TEV stage 0 adds them."""
    light = np.array([-0.55, 0.5, 0.67]) / np.linalg.norm([-0.55, 0.5, 0.67])
    n_dot_l = light[2]
    half = light + np.array([0.0, 0.0, 1.0])  # L + V
    n_dot_h = half[2] / np.linalg.norm(half)
    primary = np.array([24, 24, 36]) + np.array([210, 50, 40]) * n_dot_l  # (164.6, 57.5, 62.8)
    secondary = 255 * n_dot_h**24  # 29.1
    frag = picaemu.open(CAPTURES / "lit_sphere.pica").debug_fragment(0, 120, 200)
    assert np.abs(np.array(frag.lighting["primary"][:3]) - primary).max() <= 2
    assert np.abs(np.array(frag.lighting["secondary"][:3]) - secondary).max() <= 2
    stage = frag.tev[0]
    assert stage.rgb_sources == ("fragment primary color", "fragment secondary color")
    assert stage.rgb_operands == (frag.lighting["primary"][:3], frag.lighting["secondary"][:3])
    assert stage.output[:3] == tuple(min(p + s, 255) for p, s in zip(*stage.rgb_operands, strict=True))


def test_draws_shaded_in_several_raster_chunks(monkeypatch) -> None:
    """game_cubes_300's draw 162 covers pixel (120, 200) twice (front and back faces). With raster chunks of 64
    bounding-box pixels every triangle is shaded in its own call: the history and the fragment debugger must
    gather the pixel's fragments across calls and give what one chunk gives."""
    cubes = CAPTURES / "game_cubes_300.pica"
    history = picaemu.open(cubes).pixel_history(120, 200)
    second = picaemu.open(cubes).debug_fragment(162, 120, 200, 1)
    assert [(f.draw, f.fate) for f in history] == [(162, "written"), (162, "depth test")]
    monkeypatch.setattr(rasterizer, "CHUNK_FRAGMENTS", 64)
    assert picaemu.open(cubes).pixel_history(120, 200) == history
    assert picaemu.open(cubes).debug_fragment(162, 120, 200, 1) == second


class _Counting(StageObserver):
    """Counts the fragment hooks it receives."""

    def __init__(self, values: bool) -> None:
        self.fragment_values = values
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def on_tev_stage(self, stage, rgb, alpha, output, buffer) -> None:
        self._count("tev")

    def on_fog(self, factor, color) -> None:
        self._count("fog")

    def on_depth_stencil(self, *args) -> None:
        self._count("depth_stencil")


def test_fragment_hooks_only_for_an_observer_that_asks(scene: Path) -> None:
    """An observer of vertices gets no fragment hook (nothing is computed for it); one that asks for values gets
    six TEV stages and a fog call per shaded chunk (one chunk per draw here: 5 draws), and no depth/stencil hooks
    unless it asks for ``fragment_tests``."""
    for values, want in ((False, {}), (True, {"tev": 6 * 5, "fog": 5})):
        replay = DebugReplay(pica.read(scene))
        replay.pipeline.stage_observer = observer = _Counting(values)
        replay.run()
        assert observer.calls == want
