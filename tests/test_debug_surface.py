"""The surface viewer's engine (picaemu/debug/surface.py), the LCD orientation mapping (picaemu/gx/lcd.py) and
``picaemu surface``: words placed by hand at the addresses the tiling rule of pica-pipeline.md §9.6 gives, and the
render target against the picture the LCD scans out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats.image import read_rgba

import picaemu
from picaemu.cli import main
from picaemu.debug.surface import SurfaceError, auto_range, decode_surface, readout, render_surface
from picaemu.errors import MemoryFault
from picaemu.gx.lcd import lcd_to_memory, memory_to_lcd, upright
from picaemu.memory import PhysicalMemory
from samples.generate import CAPTURES

VRAM = 0x18000000
BLENDING = CAPTURES / "blending.pica"


def _memory(words: dict[int, int], dtype: str, address: int = VRAM) -> PhysicalMemory:
    """Memory with ``words`` {pixel index: word} of ``dtype`` at ``address``."""
    mem = PhysicalMemory()
    for index, word in words.items():
        size = np.dtype(dtype).itemsize
        mem.write(address + index * size, np.array([word], dtype).tobytes())
    return mem


def test_tiled_non_power_of_two_rgb565_by_hand() -> None:
    """24x16 tiled: pixel (9, 2) is memory pixel (2 & ~7) * 24 + (9 & ~7) * 8 + morton(1, 2) = 64 + 9 = 73; (23, 15)
    is 8 * 24 + 16 * 8 + morton(7, 7) = 383. RGB565 0xF800 is pure red, 0x07E0 pure green."""
    s = decode_surface(_memory({73: 0xF800, 383: 0x07E0}, "<u2"), VRAM, "rgb565", 24, 16)
    assert s.rgba.shape == (16, 24, 4)
    assert readout(s, 9, 2) == {"x": 9, "y": 2, "raw": 0xF800, "rgba": (255, 0, 0, 255)}
    assert readout(s, 23, 15)["rgba"] == (0, 255, 0, 255)
    assert np.count_nonzero(s.words) == 2


def test_linear_any_size_and_four_bit_texels() -> None:
    """Linear 5x3 RGBA8: pixel (x, y) is word 5y + x. Linear A4 10x1: texel i in byte i/2, low nibble first."""
    s = decode_surface(_memory({5 * 2 + 4: 0x11223344}, "<u4"), VRAM, "RGBA8", 5, 3, tiled=False)
    assert readout(s, 4, 2)["rgba"] == (0x11, 0x22, 0x33, 0x44)
    a4 = decode_surface(_memory({3: 0xF0}, "<u1"), VRAM, "A4", 10, 1, tiled=False)
    assert a4.words[0, 6] == 0 and a4.words[0, 7] == 0xF and tuple(a4.rgba[0, 7]) == (0, 0, 0, 255)


def test_depth_surfaces_decode_depth_and_stencil() -> None:
    """D24S8 0x05BFFFFF: depth 0xBFFFFF / 0xFFFFFF = 0.75, stencil 5. D16 linear 0x4000 = 0.25."""
    s = decode_surface(_memory({0: 0x05BFFFFF, 1: 0x00FFFFFF}, "<u4"), VRAM, "D24S8", 8, 8)
    r = readout(s, 0, 0)
    assert r["stencil"] == 5 and r["depth_raw"] == 0xBFFFFF and r["depth"] == pytest.approx(0xBFFFFF / 0xFFFFFF)
    assert auto_range(s) == (0.0, 1.0) and auto_range(s, "stencil") == (0.0, 5.0)
    grey = render_surface(s)  # auto-range: 0 black, 1 white
    assert tuple(grey[0, 1]) == (255, 255, 255, 255) and tuple(grey[7, 7]) == (0, 0, 0, 255)
    assert grey[0, 0, 0] == round(0.75 * 255)
    assert render_surface(s, depth_range=(0.5, 1.0))[0, 0, 0] == round((0xBFFFFF / 0xFFFFFF - 0.5) / 0.5 * 255)
    assert render_surface(s, plane="stencil")[0, 0, 0] == 255
    d16 = decode_surface(_memory({3: 0x4000}, "<u2"), VRAM, "d16", 4, 1, tiled=False)
    assert readout(d16, 3, 0)["depth"] == pytest.approx(0x4000 / 0xFFFF) and readout(d16, 3, 0)["stencil"] is None
    with pytest.raises(SurfaceError, match="holds no stencil"):
        render_surface(d16, plane="stencil")


def test_channel_toggles() -> None:
    s = decode_surface(_memory({0: 0x11223344}, "<u4"), VRAM, "RGBA8", 8, 8)
    assert tuple(render_surface(s, "rg")[0, 0]) == (0x11, 0x22, 0, 255)
    assert tuple(render_surface(s, "b")[0, 0]) == (0x33, 0x33, 0x33, 255)  # one channel alone: grey
    assert tuple(render_surface(s, "a")[0, 0]) == (0x44, 0x44, 0x44, 255)
    with pytest.raises(SurfaceError, match="subset of r, g, b, a"):
        render_surface(s, "x")


def test_bad_requests_are_named() -> None:
    mem = PhysicalMemory()
    with pytest.raises(SurfaceError, match="multiples of 8"):
        decode_surface(mem, VRAM, "RGBA8", 12, 8)
    with pytest.raises(SurfaceError, match="no linear ETC"):
        decode_surface(mem, VRAM, "ETC1", 8, 8, tiled=False)
    with pytest.raises(SurfaceError, match="depth formats: D16"):
        decode_surface(mem, VRAM, "RGBA9", 8, 8)
    with pytest.raises(SurfaceError, match=r"1\.\.4096"):
        decode_surface(mem, VRAM, "RGBA8", 0, 8)
    with pytest.raises(SurfaceError, match="negative address"):
        decode_surface(mem, -8, "RGBA8", 8, 8)
    with pytest.raises(MemoryFault):
        decode_surface(mem, 0x10, "RGBA8", 8, 8)


def test_lcd_mapping_both_ways() -> None:
    """Memory pixel 0 of row 0 is the bottom-left corner of the screen (lcd.py); the mapping agrees with
    ``upright`` at every pixel and the two directions invert each other."""
    h, w = 24, 16
    image = np.arange(h * w).reshape(h, w)
    turned = upright(image)
    assert turned.shape == (w, h) and turned[w - 1, 0] == image[0, 0]
    assert memory_to_lcd(0, 0, w) == (0, w - 1)
    for my in range(h):
        for mx in range(w):
            lx, ly = memory_to_lcd(mx, my, w)
            assert turned[ly, lx] == image[my, mx] and lcd_to_memory(lx, ly, w) == (mx, my)


def test_render_target_as_the_lcd_shows_it() -> None:
    """The color buffer read as a tiled RGBA8 surface is ``render --target color``'s picture; turned for the LCD it
    is the top screen the display transfer and scan-out produce."""
    replay = picaemu.open(BLENDING)
    replay.run()
    fb = replay.framebuffer_state()
    s = replay.debugger.surface_view(fb.color_address, "RGBA8", fb.width, fb.height)
    replay.run()
    np.testing.assert_array_equal(s.rgba, replay.color_buffer())
    np.testing.assert_array_equal(render_surface(s, lcd_view=True)[..., :3], replay.screen())


def test_cli_surface_png_and_readout(tmp_path: Path) -> None:
    out = tmp_path / "c.png"
    args = ["surface", str(BLENDING), "--address", "0x18000000", "--format", "RGBA8", "--size", "240x400"]
    result = CliRunner().invoke(main, [*args, "--lcd", "-o", str(out), "--pixel", "0,239"])
    assert result.exit_code == 0, result.output
    replay = picaemu.open(BLENDING)
    replay.run()
    np.testing.assert_array_equal(read_rgba(out)[..., :3], replay.screen())
    reading = json.loads(result.output.splitlines()[-1])
    assert (reading["x"], reading["y"]) == (0, 0)  # the LCD's bottom-left pixel is memory pixel 0 of row 0
    assert tuple(reading["rgba"]) == tuple(int(v) for v in replay.color_buffer()[0, 0])
    after = CliRunner().invoke(main, [*args, "--after-draw", "0", "--pixel", "100,209"])
    assert json.loads(after.output)["rgba"] == [255, 255, 255, 255]  # draw 0 is the white quad (test_debug_api)
    bad = CliRunner().invoke(main, [*args[:-1], "12x8", "--pixel", "0,0"])
    assert bad.exit_code == 2 and "multiples of 8" in bad.output
