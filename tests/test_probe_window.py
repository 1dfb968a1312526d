"""A probe of one pixel shades only its 3x3 neighbourhood (``StageObserver.fragment_window``,
``picaemu.debug.probe.pixel_fragments``): its fragment records and the fragment debugger's stage-by-stage values must
be exactly what a probe of the whole draw gives. Checked on draws with per-fragment texture LOD (game_rich_1000's
mipmapped atlas: the LOD reads the neighbours the window keeps), procedural textures and two screens (minicraft),
and on pixels at the edges of primitives, where a neighbour is missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import picaemu
from picaemu.debug import fragment, probe
from picaemu.debug.pixel import PixelObserver
from picaemu.debug.session import Session
from samples.generate import CAPTURES

GAME = Path(__file__).parent / "data" / "games" / "minicraft.pica"


def _whole_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every pixel probe's window the whole draw (the probe before the window existed): its observer keeps
    no window."""
    monkeypatch.setattr(PixelObserver, "fragment_window", property(lambda self: None, lambda self, box: None))


def _pixels(session: Session, draws: list[int], per_draw: int, seed: int) -> list[tuple[int, tuple[int, int]]]:
    """(draw, window pixel): for the drawing draw nearest each of ``draws``, pixels on the edges of its primitives
    (where a neighbour is missing or of another primitive) and inside them, from a probe of the whole draw."""
    rng = np.random.default_rng(seed)
    drawn = [d.index for d in session.timeline.draws if d.bounds is not None]
    out = []
    for d in (drawn[min(range(len(drawn)), key=lambda i: abs(drawn[i] - want))] for want in draws):
        whole = probe.probe_draw(session, d)
        height = whole.overdraw.shape[0]
        for mask in (whole.edges, (whole.overdraw > 0) & ~whole.edges):
            rows, cols = np.nonzero(mask)
            pick = rng.choice(rows.size, min(per_draw, rows.size), replace=False)
            out += [(d, (int(cols[i]), height - 1 - int(rows[i]))) for i in pick]
    return out


def _drawn(session: Session, pixels: list[tuple[int, tuple[int, int]]]) -> list:
    return [probe.pixel_fragments(session, d, p) for d, p in pixels]


@pytest.mark.parametrize(
    ("capture", "draws"),
    [(CAPTURES / "game_rich_1000.pica", [0, 1, 500, 999]), (GAME, [1, 65, 205, 440, 501])],
    ids=["rich_lod", "minicraft"],
)
def test_pixel_probe_equals_whole_draw_probe(capture: Path, draws: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session.open(capture)
    session.index()
    pixels = _pixels(session, draws, 6, seed=len(draws))
    windowed = _drawn(session, pixels)
    assert len(pixels) >= 4 * len(draws) and all(windowed)  # every picked pixel holds fragments
    _whole_draw(monkeypatch)
    assert _drawn(session, pixels) == windowed
    assert [probe.probe_draw(session, d, p).fragments for d, p in pixels[:4]] == windowed[:4]


def test_fragment_debugger_values_equal_whole_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texture lookups (LOD included), TEV stages, tests and buffers of fragments of the mipmapped atlas."""
    session = Session.open(CAPTURES / "game_rich_1000.pica")
    session.index()
    pixels = _pixels(session, [3, 700], 3, seed=9)
    windowed = [fragment.debug_fragment(session, d, p) for d, p in pixels]
    assert any(t.lod is not None for f in windowed for t in f.textures)  # the LOD is exercised
    _whole_draw(monkeypatch)
    assert [fragment.debug_fragment(session, d, p) for d, p in pixels] == windowed


def test_history_through_the_api_is_unchanged_by_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """minicraft's top-screen pixel history (the benchmark's pixel) and its last fragment, window or not."""
    game = picaemu.open(GAME)
    history = game.pixel_history(200, 120, space="screen")
    last = game.debug_fragment(history[-1].draw, 200, 120, space="screen")
    assert len(history) >= 5
    _whole_draw(monkeypatch)
    again = picaemu.open(GAME)
    assert again.pixel_history(200, 120, space="screen") == history
    assert again.debug_fragment(history[-1].draw, 200, 120, space="screen") == last
