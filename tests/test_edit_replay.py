"""Edit and replay (picaemu/debug/edits.py, picaemu/debug/edit_replay.py): edits at a draw re-render the rest of
the frame in a fork; expectations computed by hand from the scene's construction (rectangle areas, colours)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica
from picaemu.formats.image import read_rgba

import picaemu
from picaemu import regs as regtable
from picaemu.builder import CaptureBuilder
from picaemu.cli import main
from picaemu.command.builder import CommandBuilder
from picaemu.debug.edits import RegisterEdit, ShaderEdit, UniformEdit, edit_for_state_row, edit_text, parse_edit
from picaemu.debug.replay import DebugReplay
from picaemu.errors import EditError
from picaemu.regs import RegKind
from picaemu.replay import Replay
from samples._common import SCREEN, rect
from samples.generate import CAPTURES

# position through c0-c3, colour = the uniform c4 (the tint)
VS_TINT = """
.fvec projection[4]
.fvec tint
.out outpos position
.out outclr color
.alias inpos v0
.proc main
    dp4 outpos.x, projection[0], inpos
    dp4 outpos.y, projection[1], inpos
    dp4 outpos.z, projection[2], inpos
    dp4 outpos.w, projection[3], inpos
    mov outclr, tint
    end
.end
"""
# the same outputs, the colour a constant: yellow
VS_YELLOW = VS_TINT.replace(".fvec tint", ".constf yellow(1.0, 1.0, 0.0, 1.0)").replace("tint\n", "yellow\n")
CLEAR = (0x20, 0x20, 0x20, 0xFF)
RED, BLUE, GREEN = (1, 0, 0, 1), (0, 0, 1, 1), (0, 1, 0, 1)
# landscape rectangles (x0, y0, x1, y1) with integer corners: a rect covers (x1 - x0) * (y1 - y0) pixels
FRONT, HIDDEN, SIDE = (100, 50, 200, 150), (120, 70, 180, 130), (250, 50, 300, 100)
HIDDEN_AREA, SIDE_AREA, FRONT_AREA = 60 * 60, 50 * 50, 100 * 100


def scene() -> Replay:
    return DebugReplay(scene_capture())


def scene_capture() -> pica.Capture:
    """Draw 0: red FRONT (z 0.8); draw 1: blue HIDDEN behind it (z 0.2, depth test greater); draw 2: green SIDE.
    c4 is uploaded before every draw."""
    b = CaptureBuilder(name="edit scene")
    b.begin_frame(clear=CLEAR)
    b.shader(VS_TINT)
    b.uniforms(0, SCREEN)
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    for box, z, colour in ((FRONT, 0.8, RED), (HIDDEN, 0.2, BLUE), (SIDE, 0.5, GREEN)):
        b.uniforms(4, [colour])
        b.vertices([rect(*box, z=z)])
        b.draw(6)
    b.end_frame()
    return b.capture()


def landscape(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The pixels of a landscape rectangle in the 240x400 color buffer (PNG column = landscape y, row = x)."""
    x0, y0, x1, y1 = box
    return image[x0:x1, y0:y1]


def rgba(colour: tuple[float, ...]) -> tuple[int, ...]:
    return tuple(int(255 * c) for c in colour)


@pytest.fixture(scope="module")
def replay() -> Replay:
    r = scene()
    assert len(r.debugger.timeline.draws) == 3  # indexed once for every test
    return r


def test_depth_func_always_shows_the_hidden_rect(replay: Replay) -> None:
    result = replay.edit(1, ["DEPTH_COLOR_MASK.depth_func=always"])
    assert result.stats_original["fragments_written"] == 0
    assert result.stats_edited["fragments_written"] == HIDDEN_AREA
    grown = result.totals_edited["fragments_written"] - result.totals_original["fragments_written"]
    assert grown == HIDDEN_AREA
    assert result.changed_pixels == HIDDEN_AREA
    assert (landscape(result.edited, HIDDEN) == rgba(BLUE)).all()
    assert (landscape(result.original, HIDDEN) == rgba(RED)).all()
    assert (landscape(result.diff, HIDDEN) == (255, 0, 0)).all()  # changed pixels are red in the diff


def test_uniform_colour_this_draw_only(replay: Replay) -> None:
    result = replay.edit(0, ["c4=(0, 1, 0, 1)"], scope="draw")
    assert result.changed_pixels == FRONT_AREA
    assert (landscape(result.edited, FRONT) == rgba(GREEN)).all()
    assert (landscape(result.edited, SIDE) == rgba(GREEN)).all()  # draw 2 keeps its own upload


def test_from_this_draw_on_reapplies_after_the_capture_overwrites(replay: Replay) -> None:
    """c4 edited at the hidden draw 1: only draw 2 shows it, and only when the edit persists past the capture's
    own upload of c4 before draw 2."""
    persistent = replay.edit(1, [UniformEdit("vs", 4, (1, 1, 1, 1))])
    assert persistent.changed_pixels == SIDE_AREA
    assert (landscape(persistent.edited, SIDE) == 255).all()
    assert replay.edit(1, [UniformEdit("vs", 4, (1, 1, 1, 1))], scope="draw").changed_pixels == 0


def test_register_scope_this_draw_writes_the_old_value_back(replay: Replay) -> None:
    """depth_func never at draw 1: from then on it also kills draw 2 (the capture does not write the register
    again); for draw 1 only, the old function comes back and nothing changes."""
    persistent = replay.edit(1, [RegisterEdit("DEPTH_COLOR_MASK", "depth_func", "never")])
    assert persistent.changed_pixels == SIDE_AREA
    assert (landscape(persistent.edited, SIDE) == CLEAR).all()
    assert persistent.stats_edited["killed_depth"] == HIDDEN_AREA
    assert replay.edit(1, ["DEPTH_COLOR_MASK.depth_func=NEVER"], scope="draw").changed_pixels == 0


def test_shader_edit_with_a_constant(replay: Replay) -> None:
    result = replay.edit(2, [ShaderEdit("vs", VS_YELLOW)], scope="draw")
    assert result.changed_pixels == SIDE_AREA
    assert (landscape(result.edited, SIDE) == (255, 255, 0, 255)).all()


def test_shader_source_reassembles_to_the_bound_program(replay: Replay) -> None:
    """The disassembly a shader edit starts from: unchanged, it changes no pixel."""
    source = replay.debugger.shader_source(0)
    assert "dp4 o0.x, c0, v0" in source and "mov o1, c4" in source
    assert replay.edit(0, [ShaderEdit("vs", source)]).changed_pixels == 0


def test_the_sessions_replay_is_not_changed(replay: Replay) -> None:
    session = replay.debugger.session
    before = [cp.at for cp in session.checkpoints], session.state_at_draw(1).regs.copy()
    replay.edit(1, ["DEPTH_COLOR_MASK.depth_func=always", "c4=(1, 1, 1, 1)"])
    assert [cp.at for cp in session.checkpoints] == before[0]
    assert np.array_equal(session.state_at_draw(1).regs, before[1])
    fresh = scene()
    fresh.run()
    replay.run()
    assert np.array_equal(replay.color_buffer(), fresh.color_buffer())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NO_SUCH_REG.x=1", "unknown register"),
        ("DRAWARRAYS=1", "draw arrays register"),
        ("VSH_FLOATUNIFORM_DATA0=1", "data port register"),
        ("DEPTH_COLOR_MASK.no_field=1", "has no field 'no_field'"),
        ("DEPTH_COLOR_MASK.depth_func=sometimes", "is not one of"),
        ("DEPTH_COLOR_MASK=always", "whole register takes a number"),
        ("c5=(1, 2, 3)", "3 components, not 4"),
        ("c96=(1, 2, 3, 4)", r"outside c0\.\.c95"),
        ("vs.shader=mov o0, v0", "as @path"),
        ("vs.shader=@/no/such/file.vsh", "cannot read"),
        ("depth", "expected TARGET=VALUE"),
    ],
)
def test_bad_edits_are_named(text: str, message: str) -> None:
    with pytest.raises(EditError, match=message):
        parse_edit(text)


def test_bad_shader_source_and_draw_are_named(replay: Replay) -> None:
    with pytest.raises(EditError, match="vs shader"):
        ShaderEdit("vs", ".proc main\n    frobnicate o0\n.end\n")
    with pytest.raises(EditError, match=r"draw 3 outside 0\.\.2"):
        replay.edit(3, ["c4=(1, 1, 1, 1)"])
    with pytest.raises(EditError, match="unknown edit scope"):
        replay.edit(0, ["c4=(1, 1, 1, 1)"], scope="later")


def test_parse_edit_forms(tmp_path) -> None:
    assert parse_edit("DEPTH_COLOR_MASK.depth_func=greater_or_equal").bits() == (0x70, 7 << 4)
    assert parse_edit("gs.c7=(1,2,3,4)") == UniformEdit("gs", 7, (1.0, 2.0, 3.0, 4.0))
    assert parse_edit("GPUREG_SCISSORTEST_MODE=0x1") == RegisterEdit("GPUREG_SCISSORTEST_MODE", None, 1)
    path = tmp_path / "y.vsh"
    path.write_text(VS_YELLOW)
    shader = parse_edit(f"vs.shader=@{path}")
    assert isinstance(shader, ShaderEdit) and len(shader.code) == 6 and shader.entry == 0


def test_a_noop_edit_at_game_scale_reproduces_the_frame() -> None:
    """A mid-list draw of the 300-cube frame (started from a mid-list checkpoint): setting a field to the value it
    holds replays the rest of the frame to the very same picture and counters."""
    replay = picaemu.open(CAPTURES / "game_cubes_300.pica")
    draw = 150
    func = replay.debugger.pipeline_state(draw)["depth_stencil"]["depth_func"]
    result = replay.edit(draw, [RegisterEdit("DEPTH_COLOR_MASK", "depth_func", func)])
    assert result.draws_replayed == 150
    assert result.changed_pixels == 0 and np.array_equal(result.original, result.edited)
    assert result.totals_edited == result.totals_original


def test_render_edit_cli(tmp_path) -> None:
    capture = tmp_path / "scene.pica"
    pica.write(capture, scene_capture())
    out, orig, diff = tmp_path / "e.png", tmp_path / "o.png", tmp_path / "d.png"
    result = CliRunner().invoke(
        main,
        [
            "render",
            str(capture),
            "--edit",
            "1:DEPTH_COLOR_MASK.depth_func=always",
            "--edit",
            "1:c4=(1, 1, 1, 1)",
            "-o",
            str(out),
            "--original",
            str(orig),
            "--diff",
            str(diff),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{HIDDEN_AREA + SIDE_AREA} pixels changed" in result.output  # white hidden rect and white side rect
    assert f"fragments written 0 -> {HIDDEN_AREA}" in result.output
    edited, original = read_rgba(out), read_rgba(orig)
    assert (landscape(edited, HIDDEN)[..., :3] == 255).all()
    assert (landscape(original, HIDDEN)[..., :3] == (255, 0, 0)).all()
    assert (landscape(read_rgba(diff), SIDE)[..., :3] == (255, 0, 0)).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--edit", "1:c4=(1,1,1,1)", "--edit", "2:c4=(1,1,1,1)"], "one edit-and-replay run edits one draw"),
        (["--edit", "x:c4=(1,1,1,1)"], "expected DRAW:EDIT"),
        (["--edit", "1:c4=(1,1,1,1)", "--frame", "0"], "--frame and --edit cannot be used together"),
        (["--diff", "d.png"], "--original and --diff go with --edit"),
    ],
)
def test_render_edit_cli_errors(tmp_path, args: list[str], message: str) -> None:
    capture = tmp_path / "scene.pica"
    pica.write(capture, scene_capture())
    result = CliRunner().invoke(main, ["render", str(capture), "-o", str(tmp_path / "e.png"), *args])
    assert result.exit_code != 0 and message in result.output


def test_state_shader_cli_prints_the_source_an_edit_reassembles(tmp_path) -> None:
    capture = tmp_path / "scene.pica"
    pica.write(capture, scene_capture())
    result = CliRunner().invoke(main, ["state", str(capture), "--draw", "2", "--shader", "vs"])
    assert result.exit_code == 0, result.output
    edit = ShaderEdit("vs", result.output)
    assert edit.code == ShaderEdit("vs", VS_TINT).code  # the bound program, re-assembled word for word


def test_edit_text_reads_back_as_the_value_held() -> None:
    """Every field of every editable register at a real draw: the edit ``edit_text`` writes for it, parsed back,
    asks for no change (enum names, bools, hex addresses, floats and numbers round-trip through the table)."""
    state = picaemu.open(CAPTURES / "game_cubes_300.pica").debugger.session.state_at_draw(7)
    checked = 0
    for reg in regtable.all_registers():
        if reg.kind is not RegKind.CONFIG or reg.action is not None:
            continue
        for fld in (None, *reg.fields):
            text = edit_text(state.regs, reg, fld)
            assert not parse_edit(text).packets(state, CommandBuilder()), text
            checked += 1
    assert checked > 500
    depth = regtable.by_name("DEPTH_COLOR_MASK")
    assert edit_text(state.regs, depth, depth.field("depth_func")) == "GPUREG_DEPTH_COLOR_MASK.depth_func=greater"
    assert edit_text(state.regs, depth, depth.field("depth_test")) == "GPUREG_DEPTH_COLOR_MASK.depth_test=true"


def test_edit_for_a_pipeline_state_row(replay: Replay) -> None:
    regs = replay.debugger.session.state_at_draw(1).regs
    shown = replay.pipeline_state(1)
    assert shown["depth_stencil"]["depth_func"] == 6  # greater, as the builder set it
    assert edit_for_state_row("depth_stencil.depth_func", "6", regs) == "GPUREG_DEPTH_COLOR_MASK.depth_func=greater"
    assert (
        edit_for_state_row("vs_uniforms.float_uniforms.c4", "0.0, 0.0, 1.0, 1.0", regs) == "vs.c4=(0.0, 0.0, 1.0, 1.0)"
    )
    with pytest.raises(EditError, match="no single register field holds it"):
        edit_for_state_row("depth_stencil.depth_func", "5", regs)  # no depth_func field holds 5 here
