"""``picaemu render``: the citro3d triangle capture to PNG, depth PNG, verbose output, bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from picaemu.cli import main

CMDLIST_PADDR = 0x20289C00
VBO_PADDR, VBO_BLOB = 0x202C9C00, "f85fb187e2828f1d_80.bin"
FILLS = ("0x18000000:384000=0x303030FF", "0x18300000:384000=0")


@pytest.fixture
def scene1(captures_dir):
    return captures_dir / "scene1_triangle"


def run(args):
    return CliRunner().invoke(main, args)


def scene_args(scene1, out, *extra):
    args = [
        "render",
        str(scene1 / "cmdlists" / "000.bin"),
        "--base",
        hex(CMDLIST_PADDR),
        "--mem",
        f"{VBO_PADDR:#x}={scene1 / 'blobs' / VBO_BLOB}",
        "-o",
        str(out),
        *extra,
    ]
    for fill in FILLS:
        args += ["--fill", fill]
    return args


def test_render_scene1_color_and_depth(scene1, tmp_path):
    out, depth = tmp_path / "c.png", tmp_path / "d.png"
    result = run(scene_args(scene1, out, "--depth", str(depth), "-v"))
    assert result.exit_code == 0, result.output
    img = np.asarray(Image.open(out))
    assert img.shape == (400, 240, 3)  # row 0 = top of the window
    # landscape (X, Y) -> window (Y, 400 - X) -> PNG row 399 - (400 - X)
    assert np.abs(img[399 - (400 - 200), 90].astype(int) - 85).max() <= 2  # centre grey
    assert tuple(img[0, 0]) == (0x30, 0x30, 0x30)
    assert img[399 - (400 - 200), 205, 0] > 240  # red apex
    d = np.asarray(Image.open(depth))
    # vertices at z = 0.5 through citro3d's ortho matrix (row z = (0, 0, 1, -1)) -> z/w = -0.5 -> depth 0.5;
    # trunc(0.5 * 0xFFFFFF) = 0x7FFFFF -> 0x7FFFFF * 255 / 0xFFFFFF = 127.49 -> 127
    assert d.shape == (400, 240) and d[0, 0] == 0 and d[399 - 200, 90] == 127
    assert "draw #0" in result.output and "1 draws" in result.output


@pytest.mark.parametrize("bad", [["--mem", "nonsense"], ["--fill", "0x10000000:16=1"], ["--fill", "1:2=3"]])
def test_bad_arguments_exit_2_with_one_line(scene1, tmp_path, bad):
    result = run(scene_args(scene1, tmp_path / "c.png", *bad))
    assert result.exit_code == 2 and result.output.startswith("error:")


def test_no_framebuffer_configured_is_an_error(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    result = run(["render", str(empty), "-o", str(tmp_path / "o.png")])
    assert result.exit_code == 2 and "framebuffer 0x1" in result.output
