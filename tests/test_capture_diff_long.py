"""``picaemu.debug.capture_diff`` on frames long enough for pass 2 to start from a checkpoint kept in pass 1
(every ``KEEP_DRAWS`` draws) and for side A's kept render-target copies to run past their budget (CRC-32
points): the result is the one the plain way gives (pass 2 from the frame's start, every point kept as bytes)."""

from __future__ import annotations

import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.debug import output_watch
from picaemu.debug.capture_diff import diff_captures
from samples._common import VS_COLOR, rect, solid

DRAWS = 300  # one frame: past KEEP_DRAWS = 256 draws, so one checkpoint is kept before the late draws
COLUMNS = 40  # 10x10-pixel cells of the 400x240 screen


def long_frame(moved: int | None = None, covered: int | None = None, red: bool = False) -> pica.Capture:
    """One frame of ``DRAWS`` small rectangles, each in its own cell. ``moved``: that draw's rectangle is drawn 2
    pixels to the right (its projection moved; the next draw uploads the plain one again). ``covered``: the next
    draw paints that draw's cell again (``red``: the covered draw is red, a difference that lasts one draw)."""
    b = CaptureBuilder(name="long frame")
    b.begin_frame(clear=(0x20, 0x20, 0x20, 0xFF))
    b.shader(VS_COLOR)
    plain = tilt_ortho(0, 400, 0, 240, -1, 1)
    b.uniforms(0, plain)
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()
    for d in range(DRAWS):
        cell = d - 1 if covered is not None and d == covered + 1 else d
        x0, y0 = 10 * (cell % COLUMNS), 10 * (cell // COLUMNS)
        if d == moved:
            b.uniforms(0, tilt_ortho(-2, 398, 0, 240, -1, 1))
        color = (1.0, 0.0, 0.0, 1.0) if red and d == covered else ((d % 7) / 7, 0.5, 1 - (d % 5) / 5, 1.0)
        z = 0.9 if cell != d else 0.5  # the covering draw passes the depth test (as in test_capture_diff)
        b.vertices([rect(x0 + 1, y0 + 1, x0 + 9, y0 + 9, z=z), solid(6, color)])
        b.draw(6)
        if d == moved:
            b.uniforms(0, plain)
    b.end_frame()
    return b.capture()


def _plain(monkeypatch: pytest.MonkeyPatch, a: pica.Capture, b: pica.Capture) -> dict:
    """The result without kept checkpoints (pass 2 from the frame's start) and with every point kept as bytes."""
    with monkeypatch.context() as m:
        m.setattr(output_watch, "KEEP_DRAWS", 0)
        m.setattr(output_watch, "COPY_BUDGET", 1 << 40)
        return diff_captures(a, b).as_dict()


@pytest.mark.parametrize("moved", [3, 255, 256, 290, DRAWS - 1])
def test_a_late_draw_is_found_from_a_kept_checkpoint(monkeypatch: pytest.MonkeyPatch, moved: int) -> None:
    a, b = long_frame(), long_frame(moved=moved)
    result = diff_captures(a, b)
    assert (result.first_draw, result.first_draw_b, result.draw_in_frame) == (moved, moved, moved)
    assert set(result.state) == {"uniforms"} and result.pixels["color"]["count"] > 0
    assert result.as_dict() == _plain(monkeypatch, a, b)


def test_a_difference_one_draw_hides_again_past_the_kept_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draw 270 paints its cell red on one side, draw 271 paints the cell over on both: points every 32 draws
    agree, so only ``every=1`` (a point after every draw) finds draw 270."""
    a, b = long_frame(covered=270), long_frame(covered=270, red=True)
    assert diff_captures(a, b).first_draw is None
    result = diff_captures(a, b, every=1)
    assert (result.first_draw, result.pixels["color"]["count"]) == (270, 64)
    with monkeypatch.context() as m:
        m.setattr(output_watch, "KEEP_DRAWS", 0)
        assert diff_captures(a, b, every=1).as_dict() == result.as_dict()


def test_points_past_the_copy_budget_compare_by_checksum(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = long_frame(), long_frame(moved=200)
    with monkeypatch.context() as m:
        m.setattr(output_watch, "COPY_BUDGET", 2 << 20)  # a few points of 768 KB as bytes, the rest as CRC-32
        budgeted = diff_captures(a, b).as_dict()
        assert diff_captures(a, a).equal
    assert budgeted["first_draw"] == 200 and budgeted == _plain(monkeypatch, a, b)
