"""``picaemu diff`` / ``picaemu.debug.capture_diff`` on hand-built captures whose differences are known: a uniform,
a TEV constant, a texture's content, the vertex program, a draw more, a difference a later draw covers again;
the first differing draw, the state difference there, the pixels it changed and the exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.cli import main
from picaemu.debug.capture_diff import diff_captures
from samples._common import VS_COLOR, VS_TEX, rect, rect_uv, solid

VS_SWIZZLED = VS_COLOR.replace("mov outclr, inclr", "mov outclr, inclr.zyxw")
RECTS = [(20, 20, 60, 60), (200, 100, 240, 140), (100, 100, 120, 110), (300, 30, 380, 90)]  # landscape x0 y0 x1 y1


def scene(
    *,
    shift_at: int | None = None,
    tev_at: int | None = None,
    program_at: int | None = None,
    extra: bool = False,
    cover: bool = False,
    texel: int = 0,
) -> pica.Capture:
    """Two frames of four solid rectangles (draws 0-3, 4-7), then a textured one (draw 8). Variants: from draw
    ``shift_at`` on the projection moves everything 4 pixels right (only c1 changes); draw ``tev_at`` takes its
    color from a TEV constant instead; from draw ``program_at`` on the vertex program swizzles the color; ``extra``:
    one draw more at the end of frame 1; ``cover``: draw 1 is green, and a rectangle over the whole screen follows
    it; ``texel``: the texture's first texel's red."""
    b = CaptureBuilder(name="diff scene")
    draw = 0
    for frame in range(2):
        b.begin_frame(clear=(0x20, 0x20, 0x20, 0xFF))
        b.shader(VS_COLOR)
        b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
        b.tev(0, rgb=("primary color",))
        b.passthrough_tev()
        for k, (x0, y0, x1, y1) in enumerate(RECTS):
            if draw == shift_at:
                b.uniforms(0, tilt_ortho(-4, 396, 0, 240, -1, 1))
            if draw == program_at:
                b.shader(VS_SWIZZLED)
            if draw == tev_at:
                b.tev(0, rgb=("constant",), color=(255, 255, 0, 255))
            color = (0.0, 1.0, 0.0, 1.0) if cover and draw == 1 else (0.25 * (k + 1), 0.5, 1 - 0.2 * k, 1.0)
            b.vertices([rect(x0, y0, x1, y1), solid(6, color)])
            b.draw(6)
            if draw == tev_at:
                b.tev(0, rgb=("primary color",))
            if cover and draw == 1:
                b.vertices([rect(0, 0, 400, 240, z=0.9), solid(6, (0.1, 0.1, 0.1, 1.0))])
                b.draw(6)
            draw += 1
        if frame == 1:
            _textured(b, texel)
            if extra:
                b.vertices([rect(0, 0, 10, 10), solid(6, (1, 1, 1, 1))])
                b.draw(6)
        b.end_frame()
    return b.capture()


def _textured(b: CaptureBuilder, texel: int) -> None:
    picture = np.full((8, 8, 4), 200, np.uint8)
    picture[0, 0] = (texel, 0, 0, 255)
    b.shader(VS_TEX)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.texture(0, picture)
    b.tev(0, rgb=("texture 0",))
    b.vertices([rect(160, 160, 168, 168), rect_uv(), solid(6, (1, 1, 1, 1))])
    b.draw(6)


def test_equal_captures() -> None:
    result = diff_captures(scene(), scene())
    assert result.equal and result.first_draw is None and result.state is None
    out = result.as_dict()
    assert out["schema"] == 1 and out["equal"] and out["first_draw"] is None
    assert [f["screens_equal"] for f in out["frames"]] == [True, True]
    assert out["a"]["draws"] == 9 and out["a"]["frames"] == 2


def test_a_moved_uniform_is_the_first_differing_draw() -> None:
    result = diff_captures(scene(), scene(shift_at=6))
    assert (result.first_draw, result.first_draw_b, result.frame, result.draw_in_frame) == (6, 6, 1, 2)
    assert set(result.state) == {"uniforms"}  # the same registers, programs and textures
    (c1,) = result.state["uniforms"]["vs"].items()
    assert c1[0] == "c1" and c1[1]["name"] == "projection[1]" and c1[1]["a"][3] != c1[1]["b"][3]
    # the 20x10 rectangle moved 4 pixels along its 20-pixel side: 4 x 10 pixels at each end changed
    assert result.pixels["color"] == {"count": 80, "bbox": [100, 100, 109, 123]}
    assert result.pixels["depth"] == result.pixels["color"]  # the rectangles write depth too, at z 0.5
    picture_a, picture_b = result.pictures  # the color buffers right after the draw, row 0 at the top
    assert picture_a.shape == (400, 240, 4) and int((picture_a != picture_b).any(axis=2).sum()) == 80
    assert result.pixels["target"]["color_format"] == "RGBA8"


def test_registers_by_field_textures_by_content_programs_by_disassembly() -> None:
    tev = diff_captures(scene(), scene(tev_at=5))
    assert tev.first_draw == 5
    assert tev.state["registers"]["GPUREG_TEXENV0_SOURCE"]["fields"]["rgb_src0"] == ["primary color", "constant"]
    assert tev.state["registers"]["GPUREG_TEXENV0_COLOR"]["fields"] == {"r": [0, 255], "g": [0, 255], "a": [0, 255]}
    assert tev.state["registers"]["GPUREG_TEXENV0_SOURCE"]["id"] == "0x0C0"
    assert tev.pixels["color"]["count"] == 40 * 40  # the whole 40x40 rectangle turns yellow

    texture = diff_captures(scene(), scene(texel=255))
    assert texture.first_draw == 8 and set(texture.state) == {"textures"}
    unit0 = texture.state["textures"]["0"]
    assert unit0["changed"] == ["hash"] and unit0["a"]["addresses"] == unit0["b"]["addresses"]
    assert texture.pixels["color"]["count"] == 1  # one texel, one pixel (8x8 texture on 8x8 pixels)

    program = diff_captures(scene(), scene(program_at=2))
    assert program.first_draw == 2 and set(program.state) == {"shaders"}
    vs = program.state["shaders"]["vs"]
    assert vs["a"] != vs["b"]
    changed = [line for line in vs["diff"] if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
    assert changed == ["-    mov o1, v1", "+    mov o1, v1.zyxw"]  # the color output, swizzled


def test_a_draw_one_side_lacks() -> None:
    result = diff_captures(scene(), scene(extra=True))
    assert result.first_draw is None and result.first_draw_b == 9 and result.missing == "a"
    assert (result.frame, result.draw_in_frame) == (1, 5) and not result.equal


def test_every_draw_finds_a_difference_a_later_draw_covers() -> None:
    a, b = scene(cover=True), scene(cover=True)
    b_changed = scene(cover=True, tev_at=1)  # draw 1 differs, draw 2 covers the whole screen
    assert diff_captures(a, b).equal
    coarse = diff_captures(a, b_changed)
    assert coarse.equal  # at 32 draws a frame, the checksums agree again before anyone looked
    exact = diff_captures(a, b_changed, every=1)
    assert exact.first_draw == 1 and exact.pixels["color"]["count"] == 40 * 40


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_cli_exit_status_json_and_text(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pica", tmp_path / "b.pica"
    pica.write(a, scene())
    pica.write(b, scene(shift_at=6))
    same = _run("diff", str(a), str(a), "--json")
    assert same.exit_code == 0 and json.loads(same.stdout)["first_draw"] is None
    differ = _run("diff", str(a), str(b), "--json")
    assert differ.exit_code == 1, differ.stderr
    out = json.loads(differ.stdout)
    assert out["first_draw"] == 6 and out["pixels"]["color"]["count"] == 80 and "c1" in out["state"]["uniforms"]["vs"]
    text = _run("diff", str(a), str(b))
    assert text.exit_code == 1 and text.stdout.startswith("first differing draw: draw 6, frame 1")
    assert "    c1 (projection[1]): " in text.stdout and " -> " in text.stdout  # the uniform, A -> B
    missing = _run("diff", str(a), str(tmp_path / "nope.pica"))
    assert missing.exit_code == 2 and missing.stderr.startswith("error:")
    (tmp_path / "bad.pica").write_bytes(b"not a capture")
    bad = _run("diff", str(a), str(tmp_path / "bad.pica"))
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1


def test_state_diff_names_the_program_change_within_one_capture(tmp_path: Path) -> None:
    path = tmp_path / "p.pica"
    pica.write(path, scene(program_at=2))
    out = _run("state", str(path), "--draw", "2", "--diff", "1", "--json")
    assert out.exit_code == 0, out.stderr
    diff = json.loads(out.stdout)
    assert diff["shaders"]["vs"]["a"] != diff["shaders"]["vs"]["b"]
    assert "+    mov o1, v1.zyxw" in diff["shaders"]["vs"]["diff"]


def test_one_capture_under_two_backends() -> None:
    """The cube sample drawn by the OpenGL backend is the software pipeline's picture, draw for draw."""
    from picaemu.errors import BackendUnavailable
    from samples.generate import CAPTURES

    try:
        result = diff_captures(CAPTURES / "cube.pica", CAPTURES / "cube.pica", backend_b="gl")
    except BackendUnavailable as err:
        pytest.skip(f"no OpenGL here: {err}")
    assert result.equal and result.b["backend"] == "gl" and result.a["draws"] == 1


def test_real_captures_in_two_layouts_are_equal(captures_dir: Path) -> None:
    """The two CiTrace register-write layouts of one real citro3d capture draw the same; its c3dcap recording
    spends no frame on setup, so frame by frame the CiTrace's first draw has no counterpart there."""
    citrace = captures_dir / "citrace"
    for name in ("scene1_triangle", "scene2_textured_quad"):
        result = diff_captures(citrace / f"{name}.ctf", citrace / f"{name}.legacy.ctf")
        assert result.equal and result.a["draws"] == result.b["draws"] > 0, name
    shifted = diff_captures(captures_dir / "scene2_textured_quad", citrace / "scene2_textured_quad.ctf")
    assert (shifted.first_draw, shifted.missing, shifted.frame) == (0, "b", 0)
