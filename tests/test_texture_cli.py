"""``picaemu texture decode`` / ``encode`` on the command line, including bad input (exit status 2, one line)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner
from picaemu.formats.image import read_rgba, write_rgba

from picaemu.cli import main


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_decode_scene2_texture(tmp_path: Path, captures_dir) -> None:
    blob = captures_dir / "scene2_textured_quad" / "blobs" / "448ff2b1e5621025_4000.bin"
    out = tmp_path / "tex.png"
    res = _run("texture", "decode", str(blob), "--format", "RGBA8", "--width", "64", "--height", "64", "-o", str(out))
    assert res.exit_code == 0, res.output
    img = read_rgba(out)
    assert img.shape == (64, 64, 4)
    assert tuple(img[4, 4]) == (255, 255, 0, 255)  # yellow marker at the top-left
    assert tuple(img[4, 12]) == (36, 252, 160, 255)  # cell (1, 0)


def test_encode_then_decode_with_offset_and_level(tmp_path: Path) -> None:
    img = np.zeros((16, 16, 4), np.uint8)
    img[..., 0] = np.arange(16)[None, :] * 16  # RGBA4 keeps the top 4 bits: column x -> x, decoded x * 17
    img[..., 3] = 255
    src = tmp_path / "in.png"
    write_rgba(src, img)
    res = _run("texture", "encode", str(src), "--format", "RGBA4", "-o", str(tmp_path / "l0.bin"))
    assert res.exit_code == 0, res.output
    level0 = (tmp_path / "l0.bin").read_bytes()
    assert len(level0) == 16 * 16 * 2
    level1 = bytes([0x0F, 0xF0]) * 64  # 8x8 of 0xF00F: R 15, G 0, B 0, A 15
    (tmp_path / "all.bin").write_bytes(b"HEAD" + level0 + level1)
    for level in ("0", "1"):
        out = tmp_path / f"out{level}.png"
        res = _run(
            "texture",
            "decode",
            str(tmp_path / "all.bin"),
            "--format",
            "4",
            "--width",
            "16",
            "--height",
            "16",
            "--offset",
            "4",
            "--level",
            level,
            "-o",
            str(out),
        )
        assert res.exit_code == 0, res.output
        dec = read_rgba(out)
        if level == "1":
            assert dec.shape == (8, 8, 4) and tuple(dec[3, 3]) == (255, 0, 0, 255)
        else:
            assert dec[0, :, 0].tolist() == [17 * x for x in range(16)]


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "d.bin"
    data.write_bytes(bytes(100))
    cases = [
        ("decode", str(data), "--format", "RGBA8", "--width", "8", "--height", "8", "-o", str(tmp_path / "a.png")),
        ("decode", str(data), "--format", "RGBA9", "--width", "8", "--height", "8", "-o", str(tmp_path / "a.png")),
        ("decode", str(data), "--format", "I4", "--width", "12", "--height", "8", "-o", str(tmp_path / "a.png")),
        ("decode", str(data), "--format", "14", "--width", "8", "--height", "8", "-o", str(tmp_path / "a.png")),
        ("encode", str(data), "--format", "RGBA8", "-o", str(tmp_path / "b.bin")),  # not an image
    ]
    for args in cases:
        res = _run("texture", *args)
        assert res.exit_code == 2, (args, res.output)
        assert res.output.startswith("error: ") and res.output.count("\n") == 1


def test_encode_refuses_etc_and_bad_sizes(tmp_path: Path) -> None:
    src = tmp_path / "odd.png"
    write_rgba(src, np.zeros((8, 12, 4), np.uint8))
    assert _run("texture", "encode", str(src), "--format", "RGBA8", "-o", str(tmp_path / "x")).exit_code == 2
    write_rgba(src, np.zeros((8, 8, 4), np.uint8))
    assert _run("texture", "encode", str(src), "--format", "ETC1", "-o", str(tmp_path / "x")).exit_code == 2
