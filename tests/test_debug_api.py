"""The debugger's answers for Python and the CLI (picaemu/debug/api.py, picaemu/cli/debug.py), checked against
values computed by hand from the scenes' construction and against the rendered pictures."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import picaemu
from picaemu.cli import main
from picaemu.debug import state_views
from picaemu.errors import PicaError
from samples.generate import CAPTURES

BLENDING = CAPTURES / "blending.pica"
TRIANGLE = CAPTURES / "triangle.pica"
CUBES = CAPTURES / "game_cubes_300.pica"
WHITE, BLACK = (255, 255, 255, 255), (0, 0, 0, 255)


def color_png(path: Path) -> np.ndarray:
    replay = picaemu.open(path)
    replay.run()
    return replay.color_buffer()  # what `render --target color` writes, row 0 = top


def blend_half(src: tuple[int, ...], dst: tuple[int, ...]) -> tuple[int, ...]:
    """src alpha / one minus src alpha with alpha 128 (0.5 as 8 bits), channel by channel, as 8-bit products."""
    a = 128
    return tuple((s * a + d * (255 - a)) // 255 for s, d in zip(src, dst, strict=True))


def test_pixel_history_of_overlapping_blends_follows_the_framebuffer() -> None:
    """Landscape (210, 100) lies in the white quad and the red and green half-transparent quads (not the blue):
    three fragments, each written, each starting from the color the previous left."""
    image = color_png(BLENDING)
    x, y = 100, 210 - 1  # landscape (X, Y) -> color buffer PNG column Y, row X - 1 (the tilted render target)
    history = picaemu.open(BLENDING).pixel_history(x, y)
    assert [f.draw for f in history] == [0, 1, 2]
    assert all(f.fate == "written" for f in history)
    assert history[0].color_before == BLACK and history[0].color_after == WHITE
    for prev, f in itertools.pairwise(history):
        assert f.color_before == prev.color_after
    red = history[1].color_after
    assert all(abs(c - e) <= 1 for c, e in zip(red[:3], blend_half((255, 0, 0), WHITE[:3]), strict=True))
    assert tuple(image[y, x]) == history[-1].color_after  # the last fragment's result is the picture


def test_pixel_history_outside_every_draw_is_empty_and_bad_pixels_are_named() -> None:
    replay = picaemu.open(BLENDING)
    assert replay.pixel_history(5, 9) == []  # landscape (10, 5): only the black clear
    with pytest.raises(PicaError, match="outside the 240x400 color buffer"):
        replay.pixel_history(240, 0)


def test_mesh_and_trace_of_the_triangle_by_hand() -> None:
    """triangle.pica: projection rows c0 = (0, 1/120, 0, -1), c1 = (-1/200, 0, 0, 1), c2 = (0, 0, -1/2, -1/2),
    c3 = (0, 0, 0, 1) (landscape pixels tilted onto the 240x400 target); vertex 1 = (80, 30, 0.5, 1)."""
    replay = picaemu.open(TRIANGLE)
    vs = replay.mesh(0, "vs")
    np.testing.assert_allclose(vs[1, 0], [30 / 120 - 1, -80 / 200 + 1, -0.25 - 0.5, 1], atol=1e-5)
    clipped = replay.mesh(0, "clipped")
    assert clipped.shape == (1, 3, 4)  # inside the view volume: the one triangle, unclipped
    steps = replay.shader_trace(0, 1)
    assert [s["mask"] for s in steps[:4]] == ["x", "y", "z", "w"]
    assert steps[1]["result"][0] is None and steps[1]["result"][1] == pytest.approx(0.6, abs=1e-5)
    with pytest.raises(PicaError, match="no vertex 9"):
        replay.shader_trace(0, 9)
    with pytest.raises(PicaError, match="does not use the geometry shader"):
        replay.mesh(0, "gs")


def test_pipeline_state_and_diff_name_what_changed() -> None:
    """Cube 3 and cube 4 of the game scene differ by their model matrix (c4-c7) and cube 4 rebinds the texture
    (a rebind every 4 draws)."""
    replay = picaemu.open(CUBES)
    state = replay.pipeline_state(4)
    assert state["framebuffer"]["color_format"] == "RGBA8" and state["texture0"]["enabled"]
    diff = replay.diff(3, 4)
    assert set(diff["registers"]) == {"GPUREG_TEXUNIT0_ADDR1"}
    assert diff["registers"]["GPUREG_TEXUNIT0_ADDR1"]["fields"] == {"address": ["0x180BB800", "0x180BBC00"]}
    assert {"c4", "c6"} <= set(diff["uniforms"]["vs"])
    c4 = diff["uniforms"]["vs"]["c4"]
    assert len(c4["a"]) == 4 and c4["a"] != c4["b"] and c4["name"] == "model[0]"
    texture = diff["textures"]["0"]
    assert texture["changed"] == ["addresses"]  # the same picture uploaded twice: equal content hashes
    assert texture["a"]["hash"] == texture["b"]["hash"] and len(texture["a"]["hash"]) == 32
    assert "shaders" not in diff
    assert replay.diff(3, 3) == {}


def test_external_registers_at_a_draw() -> None:
    """The triangle's frame starts with a 32-bit memory fill of its color buffer (builder.begin_frame), which
    finished before draw 0: PSC0 names the buffer draw 0 renders into, busy cleared and finished set."""
    replay = picaemu.open(TRIANGLE)
    ext = replay.external_registers(0)
    assert ext["PSC0_CONTROL"]["fields"] == {"busy": False, "finished": True, "width": "32-bit"}
    color = replay.pipeline_state(0)["framebuffer"]["color_address"]
    assert ext["PSC0_START"]["fields"]["address"] == color and ext["PSC0_START"]["address"] == 0x10400010
    cli = json.loads(run("state", str(TRIANGLE), "--draw", "0", "--external", "--json"))
    assert cli == json.loads(json.dumps(state_views.state_document(ext)))
    assert cli["schema"] == 1 and cli["PSC0_START"]["address"] == "0x10400010"


def test_texture_at_a_draw_and_any_surface() -> None:
    replay = picaemu.open(CUBES)
    tex = replay.texture(0, draw=5)
    assert tex.shape == (16, 16, 4) and (tex[..., 3] == 255).all()
    assert set(map(tuple, tex.reshape(-1, 4)[:, :3].tolist())) == {(240, 200, 80), (60, 90, 200)}
    address = replay.pipeline_state(5)["texture0"]["addresses"][0]
    np.testing.assert_array_equal(replay.surface(address, "rgba8", 16, 16), tex)
    with pytest.raises(PicaError, match="unknown texture format"):
        replay.surface(address, "nope", 16, 16)


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_history_json_is_the_api_answer() -> None:
    out = json.loads(run("history", str(BLENDING), "--buffer", "--pixel", "100,209", "--json"))
    api = picaemu.open(BLENDING).pixel_history(100, 209)
    assert out["pixel"] == [100, 209] and out["frame"] == 0 and out["space"] == "buffer"
    assert out["fragments"] == json.loads(json.dumps([f.as_dict() for f in api]))
    assert [f["fate"] for f in out["fragments"]] == ["written"] * 3
    # the same pixel picked on the top screen picture: the 240x400 buffer is shown turned, buffer (x, y) at screen
    # column y, row 239 - x (a transfer without flip or downscale; picaemu.gx.lcd.lcd_to_memory)
    screen = json.loads(run("history", str(BLENDING), "--pixel", "209,139", "--json"))
    assert screen["space"] == "screen" and screen["fragments"] == out["fragments"]
    assert {f["target"]["format"] for f in out["fragments"]} == {"RGBA8"}
    assert {(f["target"]["width"], f["target"]["height"]) for f in out["fragments"]} == {(240, 400)}


def test_cli_state_diff_mesh_trace_dump() -> None:
    diff = json.loads(run("state", str(CUBES), "--draw", "4", "--diff", "3", "--json"))
    assert "c4" in diff["uniforms"]["vs"] and "GPUREG_TEXUNIT0_ADDR1" in diff["registers"]
    # the text: grouped by register (its changed fields under it), uniform and texture unit, each A -> B
    text = run("state", str(CUBES), "--draw", "4", "--diff", "3").splitlines()
    reg = diff["registers"]["GPUREG_TEXUNIT0_ADDR1"]
    at = text.index(f"  GPUREG_TEXUNIT0_ADDR1 ({reg['id']}): {reg['a']} -> {reg['b']}")
    old, new = reg["fields"]["address"]
    assert text[at + 1] == f"    address: {old} -> {new}" and text[0] == "registers:"
    c4 = diff["uniforms"]["vs"]["c4"]
    assert f"    c4 ({c4['name']}): {c4['a']} -> {c4['b']}" in text
    csv_rows = run("mesh", str(TRIANGLE), "--draw", "0", "--stage", "clipped", "--csv").splitlines()
    assert csv_rows[0] == "triangle,vertex,position.x,position.y,position.z,position.w" and len(csv_rows) == 4
    trace = [
        json.loads(line) for line in run("trace", str(TRIANGLE), "--draw", "0", "--vertex", "1", "--json").splitlines()
    ]
    assert trace[0]["text"].startswith("dp4") and trace[-1]["text"].startswith("end")
    dump = run("dump", str(TRIANGLE))
    assert "vsh c0 = (0, 0.00833333, 0, -1)" in dump and "vsh c3 = (0, 0, 0, 1)" in dump
    bad = CliRunner().invoke(main, ["history", str(TRIANGLE), "--pixel", "nope"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and bad.output.startswith("error:")


def test_a_replay_with_its_debugger_is_freed_when_unreferenced() -> None:
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        replay = picaemu.open(TRIANGLE)
        replay.pixel_history(100, 100)
        ref, engine = weakref.ref(replay), weakref.ref(replay.debugger)
        del replay
        assert ref() is None and engine() is None  # no reference cycle: refcounting frees both
    finally:
        gc.enable()


def test_render_every_draw_writes_the_color_buffer_after_each_draw(tmp_path: Path) -> None:
    run("render", str(BLENDING), "-o", str(tmp_path / "b.png"), "--every-draw")
    files = sorted(tmp_path.glob("b_draw*.png"))
    assert [f.name for f in files] == [f"b_draw{i:05d}.png" for i in range(4)]
    from PIL import Image

    last = np.asarray(Image.open(files[-1]))
    np.testing.assert_array_equal(last, color_png(BLENDING)[:, :, :3])  # after the last draw: the final buffer
    first = np.asarray(Image.open(files[0]))
    assert tuple(first[209, 100]) == WHITE[:3] and tuple(first[9, 5]) == BLACK[:3]  # the white quad alone


def test_decode_refuses_a_capture_and_points_at_dump() -> None:
    result = CliRunner().invoke(main, ["decode", str(TRIANGLE)])
    assert result.exit_code == 2 and "picaemu dump" in result.output and result.output.count("\n") == 1
