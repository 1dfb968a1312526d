"""``picaemu.debug.footprint`` on the 1000-draw game scene: the pixels a draw wrote (from the pipeline's fates)
against the color buffer's own change across the draw, its bounds box, the dimming, and the step reduction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import picaemu
from picaemu.debug.footprint import BOX_RGB, DIM, footprint
from picaemu.errors import PicaError

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "game_cubes_1000.pica"


@pytest.fixture(scope="module")
def session():
    replay = picaemu.open(CAPTURE)  # the debugger holds its replay weakly: keep it alive
    yield replay.debugger.session


@pytest.mark.parametrize("draw", [0, 37, 999])
def test_full_resolution_footprint_is_what_the_draw_changed(session, draw: int) -> None:
    tl = session.timeline
    session.goto(tl.before_draw(draw))
    before = session.replay.color_buffer()[:, :, :3]
    fp = footprint(session, draw, step=1)
    after = session.replay.color_buffer()[:, :, :3]
    changed = np.any(before != after, axis=2)
    assert changed.any() and not (changed & ~fp.written).any()  # every changed pixel was written by this draw
    x0, y0, x1, y1 = tl.draws[draw].bounds
    h = after.shape[0]
    assert fp.bounds == (x0, h - 1 - y1, x1 - x0 + 1, y1 - y0 + 1)
    col, row, w, hh = fp.bounds
    box = np.zeros_like(fp.written)
    box[row : row + hh, col : col + w] = True
    assert not ((fp.written | fp.killed) & ~box).any()  # fragments only inside the recorded window bounds
    assert fp.written.sum() <= tl.draws[draw].stats["fragments_written"]
    outside = ~(fp.written | fp.killed)
    outside[max(row - 1, 0) : row + hh + 1, max(col - 1, 0) : col + w + 1] = False  # the outline and what it holds
    assert np.array_equal(fp.image[outside], np.round(after[outside] * np.float32(DIM)).astype(np.uint8))
    assert np.array_equal(fp.image[fp.written], after[fp.written])  # the draw's own pixels at full brightness
    ring = fp.image[row - 1, col - 1 : col + w + 1] if row else fp.image[row + hh, col - 1 : col + w + 1]
    assert (ring == BOX_RGB).all()


def test_step_keeps_every_cell_a_fragment_reached(session) -> None:
    full = footprint(session, 37, step=1)
    small = footprint(session, 37, step=4)
    h, w = full.written.shape
    assert small.image.shape == (-(-h // 4), -(-w // 4), 3)
    cells = full.written.reshape(h // 4, 4, w // 4, 4).any(axis=(1, 3))
    assert np.array_equal(small.written, cells)


def test_bad_arguments_are_named(session) -> None:
    with pytest.raises(PicaError, match=r"draw 1000 outside 0\.\.999"):
        footprint(session, 1000)
    with pytest.raises(PicaError, match="step 0"):
        footprint(session, 3, step=0)


def test_cli_footprint_writes_the_api_image(session, tmp_path: Path) -> None:
    from click.testing import CliRunner
    from PIL import Image

    from picaemu.cli import main

    out = tmp_path / "fp.png"
    result = CliRunner().invoke(main, ["footprint", str(CAPTURE), str(out), "--draw", "37"])
    assert result.exit_code == 0, result.output
    assert np.array_equal(np.asarray(Image.open(out)), footprint(session, 37).image)
    bad = CliRunner().invoke(main, ["footprint", str(CAPTURE), str(out), "--draw", "5000"])
    assert bad.exit_code == 2 and "draw 5000 outside 0..999" in bad.output


def test_zoom_shows_the_draws_neighbourhood_at_the_targets_aspect(session) -> None:
    """Draw 37 is a 10 x 10 box: zoomed, the picture covers 3 x 10/240 of the 240 x 400 target's width, i.e. a
    30 x 50 region centred on the box -- each of its pixels 2 x 2 cells of the 60 x 100 picture."""
    full = footprint(session, 37, step=1)
    after = session.replay.color_buffer()[:, :, :3]
    zoomed = footprint(session, 37, zoom=True)
    col, row, w, h = zoomed.region
    bc, br, bw, bh = zoomed.bounds
    assert (w, h) == (30, 50) and (col + w // 2, row + h // 2) == (bc + bw // 2, br + bh // 2)
    assert zoomed.image.shape == (100, 60, 3)
    inside = full.written[row : row + h, col : col + w]
    assert zoomed.written.sum() == 4 * inside.sum() == 4 * full.written.sum()  # the whole footprint, doubled
    assert np.array_equal(zoomed.written[::2, ::2], inside)
    assert np.array_equal(zoomed.image[::2, ::2][inside], after[row : row + h, col : col + w][inside])


def test_zoom_stays_inside_the_target_and_a_large_draw_keeps_it_whole(session, tmp_path: Path) -> None:
    corner = footprint(session, 0, zoom=True)  # draw 0 touches the top edge: the region is moved down to fit
    col, row, w, h = corner.region
    assert row == 0 and col >= 0 and col + w <= 240 and h == 50
    replay = picaemu.open(Path(__file__).resolve().parent.parent / "samples" / "captures" / "cube.pica")
    big = footprint(replay.debugger.session, 0, zoom=True)  # 147 x 144 pixels: 3x that exceeds the target
    assert big.region == (0, 0, 240, 400)
    assert np.array_equal(big.image, footprint(replay.debugger.session, 0).image)
