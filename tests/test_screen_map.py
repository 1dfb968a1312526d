"""Screen pixels to render-target pixels (picaemu/debug/screen_map.py): hand-computed coordinates on both screens
(plain, vertically flipped transfer with 2x2 downscale, a flipped-orientation render target), the transfer engine
and the LCD scan-out as the oracle on random pictures, and the pick on the real game capture (both screens)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica

import picaemu
from picaemu.command.processor import CommandProcessor
from picaemu.debug import pick
from picaemu.debug.screen_map import ScreenMapError, screen_to_buffer
from picaemu.errors import PicaError
from picaemu.fragment.framebuffer import ColorFormat, DepthFormat, FramebufferState, read_color_image
from picaemu.gx import Gx, lcd
from picaemu.gx.engines import TransferFlags, TransferRecord, display_transfer
from picaemu.replay import Replay

GAME = Path(__file__).parent / "data" / "games" / "minicraft.pica"
TOP_FB, BOTTOM_FB = 0x20000000, 0x20100000  # LCD framebuffers (RGB8, linear)
TOP_RT, BOTTOM_RT = 0x18000000, 0x18100000  # render targets (RGBA8, tiled)
SIZE = 0x5C  # PDCn_FB_SIZE offset from the screen's register block
PDC = {0: 0x10400400, 1: 0x10400500}


def _gpu(screen: int, address: int, rows: int, fmt_word: int) -> np.ndarray:
    """External registers with ``screen`` scanning an RGB8 240-pixel-row framebuffer at ``address``."""
    gx = Gx(CommandProcessor())
    gx.apply(pica.Present(screen, address, address, fmt_word, 240 * 3, 0))
    gx.write(PDC[screen] + SIZE, 240 | rows << 16)
    return gx.gpu


def _fb(address: int, width: int, height: int, flipped: bool = False) -> FramebufferState:
    return FramebufferState(
        width, height, flipped, address, ColorFormat.RGBA8, 0x18400000, DepthFormat.D24S8, *(True,) * 6
    )


def _transfer(src: int, dst: int, size: tuple[int, int], flip: bool = False, scale: int = 0) -> TransferRecord:
    flags = TransferFlags(flip, False, False, False, False, 0, 1, False, scale)
    return TransferRecord(src, dst, size, size, flags, event=7)


TOP_GPU = _gpu(0, TOP_FB, 400, 0x141)  # 2D mode: 400 rows, each shown once
BOTTOM_GPU = _gpu(1, BOTTOM_FB, 320, 0x1)


@pytest.mark.parametrize(
    ("screen_xy", "buffer_xy"),
    [((0, 0), (239, 0)), ((399, 239), (0, 399)), ((10, 20), (219, 10)), ((399, 0), (239, 399))],
)
def test_top_screen_by_hand(screen_xy: tuple[int, int], buffer_xy: tuple[int, int]) -> None:
    """Top screen column x = LCD memory row x; row y from the top = pixel 239 - y of that row (lcd_to_memory);
    a transfer without flip or scale keeps (pixel, row); the render target's memory row is its PNG row."""
    fb = _fb(TOP_RT, 240, 400)
    got = screen_to_buffer(TOP_GPU, [_transfer(TOP_RT, TOP_FB, (240, 400))], [fb], "top", "left", *screen_xy)
    assert (got.x, got.y, got.samples, got.event) == (*buffer_xy, 1, 7)
    assert got.target.as_dict() == {"address": "0x18000000", "format": "RGBA8", "width": 240, "height": 400}


@pytest.mark.parametrize(("screen_xy", "buffer_xy"), [((5, 7), (464, 628)), ((0, 0), (478, 638)), ((319, 239), (0, 0))])
def test_bottom_screen_flipped_and_downscaled_by_hand(screen_xy: tuple[int, int], buffer_xy: tuple[int, int]) -> None:
    """Bottom screen (5, 7) -> LCD row 5, pixel 232 -> flip: downscaled row 320 - 1 - 5 = 314 -> 2x2 box at input
    (464, 628), its first of 4 samples."""
    fb = _fb(BOTTOM_RT, 480, 640)
    t = _transfer(BOTTOM_RT, BOTTOM_FB, (480, 640), flip=True, scale=2)
    got = screen_to_buffer(BOTTOM_GPU, [t], [_fb(TOP_RT, 240, 400), fb], "bottom", "left", *screen_xy)
    assert (got.x, got.y, got.samples) == (*buffer_xy, 4)
    assert got.target.address == BOTTOM_RT


def test_flipped_render_target_by_hand() -> None:
    """A render target in the flipped orientation stores window row y in memory row y: PNG row = 399 - memory row."""
    fb = _fb(TOP_RT, 240, 400, flipped=True)
    got = screen_to_buffer(TOP_GPU, [_transfer(TOP_RT, TOP_FB, (240, 400))], [fb], "top", "left", 10, 20)
    assert (got.x, got.y) == (219, 389)


@pytest.mark.parametrize(
    ("screen", "flip", "flipped"), [("top", False, False), ("top", True, True), ("bottom", True, False)]
)
def test_the_engines_agree_on_random_pictures(screen: str, flip: bool, flipped: bool) -> None:
    """Oracle: run the display transfer and the LCD scan-out on a random render target; every screen pixel equals
    the colour-buffer pixel the map names."""
    s = lcd.SCREENS[screen]
    rows, lcd_fb, rt = (400, TOP_FB, TOP_RT) if s == 0 else (320, BOTTOM_FB, BOTTOM_RT)
    gx = Gx(CommandProcessor())
    gpu = _gpu(s, lcd_fb, rows, 0x141 if s == 0 else 0x1)
    fb = _fb(rt, 240, rows, flipped)
    gx.memory.write(rt, np.random.default_rng(s).integers(0, 256, 240 * rows * 4, dtype=np.uint8))
    t = _transfer(rt, lcd_fb, (240, rows), flip=flip)
    display_transfer(gx.memory, t.src, t.dst, t.in_dim, t.out_dim, t.flags)
    picture, buffer = lcd.screen_image(gx.memory, gpu, screen), read_color_image(gx.memory, fb)
    for x, y in np.random.default_rng(9).integers(0, (rows, 240), (300, 2)).tolist():
        got = screen_to_buffer(gpu, [t], [fb], screen, "left", x, y)
        assert picture[y, x].tolist() == buffer[got.y, got.x, :3].tolist(), (x, y, got)


def test_refusals_name_the_reason() -> None:
    fb = _fb(TOP_RT, 240, 400)
    with pytest.raises(ScreenMapError, match="no display transfer wrote top screen pixel"):
        screen_to_buffer(TOP_GPU, [], [fb], "top", "left", 1, 1)
    with pytest.raises(ScreenMapError, match="outside the 400x240 top screen"):
        screen_to_buffer(TOP_GPU, [], [fb], "top", "left", 400, 0)
    with pytest.raises(ScreenMapError, match="no render target of the frame holds"):
        screen_to_buffer(TOP_GPU, [_transfer(0x18300000, TOP_FB, (240, 400))], [fb], "top", "left", 1, 1)


@pytest.fixture(scope="module")
def game() -> Replay:
    return picaemu.open(GAME)


@pytest.mark.parametrize(("screen", "target"), [("top", 0x18000000), ("bottom", 0x1805DC00)])
def test_game_screens_map_to_their_targets(game: Replay, screen: str, target: int) -> None:
    """minicraft draws both screens: each screen pixel of the last frame is the colour-buffer pixel of its own
    render target as the transfer found it (the colour buffer right before the transfer event)."""
    dbg = game.debugger
    session, span = dbg.session, dbg._frame_span(None)
    session.goto(span[1])
    picture = game.screen(screen)
    picks = [
        pick.pick(session, span, x, y, space="screen", screen=screen)
        for x, y in np.random.default_rng(3).integers(0, picture.shape[1::-1], (60, 2)).tolist()
    ]
    assert {p.target.address for p in picks} == {target}
    session.goto(session.timeline.normalize(picks[0].event, 0))
    fb = next(f for f in pick.frame_targets(session, *span) if f.color_address == target)
    buffer = read_color_image(game.memory, fb)
    for p, (x, y) in zip(
        picks, np.random.default_rng(3).integers(0, picture.shape[1::-1], (60, 2)).tolist(), strict=True
    ):
        assert picture[y, x].tolist() == buffer[p.y, p.x, :3].tolist()


def test_game_history_covers_one_target_unless_asked(game: Replay) -> None:
    """Default: the fragments of the target the top screen shows; ``all_targets``: the bottom screen's too, at the
    same colour-buffer pixel; each fragment names its target."""
    one = game.pixel_history(120, 100)
    every = game.pixel_history(120, 100, all_targets=True)
    assert one and {f.target["address"] for f in one} == {"0x18000000"}
    assert {f.target["address"] for f in every} == {"0x18000000", "0x1805DC00"}
    assert [f for f in every if f.target["address"] == "0x18000000"] == one
    bottom = game.pixel_history(120, 100, screen="bottom")
    assert bottom and {f.target["address"] for f in bottom} == {"0x1805DC00"}
    with pytest.raises(PicaError, match="unknown coordinate space"):
        game.pixel_history(1, 1, space="window")
