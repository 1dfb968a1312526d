"""The debugger's GL-beside-software answer (picaemu.debug.backend_diff): the engine (a lit draw and a
procedural-texture draw GL renders, a draw it hands back, the replay left as the software reference), and the CLI
(``diff-backends --draw``); the framebuffer panel's toggle is tested in tests/test_gui_backend_diff.py. GL parts
skip without EGL like tests/test_gl.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import picaemu
from picaemu.debug.backend_diff import OVERLAY_ALPHA, BackendDiff, difference_overlay
from picaemu.gl.compare import compare, difference_image
from tests.test_gl import REPO, needs_egl

CAPTURES = REPO / "samples" / "captures"


def test_difference_overlay_by_hand() -> None:
    sw = np.zeros((2, 2, 4), np.uint8)
    gl = sw.copy()
    gl[0, 1] = (1, 0, 0, 0)  # 1 level: gray 16, shown
    gl[1, 0] = (0, 9, 0, 0)  # over 2 levels: red
    d = BackendDiff(5, sw, gl, difference_image(sw, gl), compare(sw, gl), None)
    o = difference_overlay(d)
    assert o.shape == (2, 2, 4)
    assert o[0, 0].tolist() == [0, 0, 0, 0] and o[1, 1, 3] == 0
    assert o[0, 1].tolist() == [16, 16, 16, OVERLAY_ALPHA] and o[1, 0].tolist() == [255, 0, 0, OVERLAY_ALPHA]
    assert d.summary().startswith("draw 5: rendered by GL; max error 9")


@needs_egl
def test_lit_draw_rendered_by_gl_equals_software() -> None:
    replay = picaemu.open(CAPTURES / "game_lit_300.pica")
    reference = picaemu.open(CAPTURES / "game_lit_300.pica")
    reference.run_to_draw(41)  # the state after draw 41 by the software pipeline alone
    d = replay.debugger.backend_diff(41)
    assert d.fallback is None and d.figures.max_error == 0
    assert np.array_equal(d.gl, d.software) and np.array_equal(d.software, reference.color_buffer())
    assert np.array_equal(replay.color_buffer(), reference.color_buffer())  # the replay stays the reference
    again = replay.debugger.backend_diff(41)  # GL re-uploads the restored buffers
    assert np.array_equal(again.gl, d.gl)


@needs_egl
def test_proctex_draw_rendered_by_gl() -> None:
    replay = picaemu.open(CAPTURES / "proctex.pica")
    d = replay.debugger.backend_diff(0)
    assert d.fallback is None and d.figures.max_error == 0 and np.array_equal(d.gl, d.software)


@needs_egl
def test_fallback_draw_is_named(tmp_path: Path) -> None:
    """A draw whose logic op reads a color buffer with reads disabled: GL hands it back, the summary says so."""
    from picaemu.formats import pica

    from picaemu.builder import CaptureBuilder
    from samples._common import color_frame

    b = CaptureBuilder(name="reads_disabled")
    color_frame(b, (0x30, 0x60, 0x90, 0xFF))
    b.set("COLORBUFFER_READ", enable=0)
    b.set("LOGIC_OP", op="xor")
    b.vertices(
        [
            np.array([[200, 210, 0.5, 1], [80, 30, 0.5, 1], [320, 30, 0.5, 1]], np.float32),
            np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]], np.float32),
        ]
    )
    b.draw(3)
    b.end_frame()
    path = tmp_path / "reads_disabled.pica"
    pica.write(path, b.capture())
    replay = picaemu.open(path)
    d = replay.debugger.backend_diff(0)
    assert d.fallback is not None and d.fallback.startswith("buffer reads disabled")
    assert "handed it to the software pipeline" in d.summary() and np.array_equal(d.gl, d.software)


@needs_egl
def test_cli_diff_backends_one_draw(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from picaemu.cli import main

    result = CliRunner().invoke(
        main, ["diff-backends", str(CAPTURES / "lit_sphere.pica"), "-o", str(tmp_path), "--draw", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "draw 0: rendered by GL; max error 0, 0.000 % of 96000 pixels" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["difference.png", "gl.png", "software.png"]
