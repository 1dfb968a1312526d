"""``picaemu info`` (what a capture holds, without rendering) and ``picaemu trim`` (frames A..B as a capture of
their own): counts checked by hand against the captures, trimmed frames pixel-identical to the original's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from picaemu.formats import pica

from picaemu import replay as rp
from picaemu.cli import main
from picaemu.gx.lcd import LcdError
from picaemu.replay.info import capture_info
from picaemu.replay.trim import TrimError, overwritten_first, parse_frames, trim

ROOT = Path(__file__).resolve().parent.parent
GAME = ROOT / "tests/data/games/minicraft.pica"
SAMPLES = ROOT / "samples/captures"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# --------------------------------------------------------------------------------------------------- info
def test_info_counts_minicraft_by_hand() -> None:
    """The game capture, counted by hand: 39 frame ends, one citro2d program, five sprite sheets."""
    answer = json.loads(run("info", str(GAME), "--json").stdout)
    assert answer["format"] == {"kind": "pica", "version": "1.0"}
    assert answer["bytes"] == GAME.stat().st_size
    assert answer["frames"] == 39
    assert answer["events"] == {
        "MemoryWrite": 9252,
        "Present": 80,
        "MemoryFill": 80,
        "DisplayTransfer": 78,
        "CommandList": 40,
        "FrameEnd": 39,
    }
    assert answer["draws_per_frame"] == [8] * 10 + [12] * 5 + [3] * 2 + [17] * 18 + [11] * 4
    assert answer["draws_after_last_frame"] == 11  # the 40th command list, after the last FrameEnd
    assert answer["draws"] == 507
    assert answer["memory"]["initial_blocks"] == 0 and answer["memory"]["writes"] == 9252
    assert answer["shaders"] == [{"program": "vs d33d66fe@0x0", "draws": 507, "first": 0, "last": 506}]
    assert [(t["address"], t["format"], t["width"], t["height"]) for t in answer["textures"]] == [
        ("0x2040B180", "RGBA8", 512, 512),
        ("0x2060B280", "RGBA8", 256, 64),
        ("0x2050B200", "RGBA8", 1024, 256),
        ("0x2061B300", "RGBA8", 512, 256),
        ("0x203BAF00", "RGBA8", 128, 128),
    ]
    assert answer["screens"]["top"] == {
        "presents": 40,
        "formats": ["RGB8"],
        "framebuffers": ["0x20100000", "0x2018CA00"],
    }
    assert answer["screens"]["bottom"]["presents"] == 40


def test_info_draws_agree_with_a_rendering_replay() -> None:
    """Draws per frame, programs and textures: the rendering replay's own records say the same."""
    path = SAMPLES / "game_cubes_300.pica"
    got = capture_info(path)
    replay = rp.open(path, checkpoints=False)
    replay.run()
    assert got.draws == len(replay.draws) == 300
    assert got.draws_per_frame == [sum(1 for d in replay.draws if d.frame == f) for f in range(len(replay.frames))]
    assert [row["program"] for row in got.shaders] == ["vs 316a665f@0x0"]  # README: find --shader 316a665f
    assert len(got.textures) == 8 and sum(row["draws"] for row in got.textures) == 300
    assert {row["address"] for row in got.textures} == {
        0x180BB800 + 0x400 * k for k in range(8)
    }  # README: find --texture 0x180BBC00


@pytest.mark.parametrize(
    ("path", "kind", "version"),
    [
        ("tests/data/captures/citrace/scene1_triangle.ctf", "citrace", "1, new layout"),
        ("tests/data/captures/citrace/scene1_triangle.legacy.ctf", "citrace", "1, legacy layout"),
        ("tests/data/captures/scene1_triangle", "c3dcap", "c3dcap-1"),
        ("samples/captures/triangle.pica", "pica", "1.0"),
    ],
)
def test_info_reads_every_format(path: str, kind: str, version: str) -> None:
    res = run("info", str(ROOT / path))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].endswith(f"{kind} {version}, {capture_info(ROOT / path).bytes} bytes")
    assert "draws: " in res.stdout and "shaders: 1" in res.stdout


def test_foreign_bytes_named_pica_are_not_a_capture(tmp_path: Path) -> None:
    junk = tmp_path / "x.pica"
    junk.write_bytes(np.random.default_rng(7).integers(0, 256, 300, dtype=np.uint8).tobytes())
    for args in (["render", str(junk), "-o", str(tmp_path / "x.png")], ["info", str(junk)]):
        res = run(*args)
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith("error: not a picaemu capture") and len(res.stderr.splitlines()) == 1
    with pytest.raises(rp.NotACapture):
        rp.load_capture(junk)


# --------------------------------------------------------------------------------------------------- trim
def screens(replay: rp.Replay, frame: int) -> list[np.ndarray | str]:
    """Both screens (or why one cannot be shown) and the render target after ``frame``."""
    replay.run_to_frame(frame)
    out: list[np.ndarray | str] = []
    for screen in ("top", "bottom"):
        try:
            out.append(replay.screen(screen))
        except LcdError as err:  # a capture that never set the screen up says so, in both
            out.append(str(err))
    return [*out, replay.color_buffer()]


def assert_same_frames(original: Path, trimmed: Path, first: int, count: int) -> None:
    a, b = rp.open(original, checkpoints=False), rp.open(trimmed, checkpoints=False)
    assert len(b.frames) == count
    for k in range(count):
        for want, got in zip(screens(a, first + k), screens(b, k), strict=True):
            assert np.array_equal(want, got) if isinstance(want, np.ndarray) else want == got, f"frame {first + k}"


def test_trim_minicraft_is_pixel_identical_and_smaller(tmp_path: Path) -> None:
    out = tmp_path / "mc.pica"
    res = run("trim", str(GAME), "--frames", "20-21", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert_same_frames(GAME, out, 20, 2)
    assert out.stat().st_size < 0.7 * GAME.stat().st_size
    meta = pica.read(out).meta
    assert meta["trimmed_frames"] == "20-21" and meta["trimmed_from"] == "minicraft.pica"


@pytest.mark.parametrize(("name", "first", "last"), [("animation.pica", 2, 3), ("game_lit_300.pica", 0, 0)])
def test_trim_sample_is_pixel_identical(tmp_path: Path, name: str, first: int, last: int) -> None:
    out = tmp_path / "t.pica"
    pica.write(out, trim(rp.load_capture(SAMPLES / name), first, last))
    assert_same_frames(SAMPLES / name, out, first, last - first + 1)


def test_trim_drops_memory_the_frames_overwrite_before_reading() -> None:
    """Frame 20's fills and memory writes before its command list cover the render targets and the uploads:
    those pages are not in the initial state."""
    capture = rp.load_capture(GAME)
    frames = [i for i, e in enumerate(capture.events) if isinstance(e, pica.FrameEnd)]
    kept = capture.events[frames[19] + 1 : frames[20] + 1]
    ranges = overwritten_first(kept, capture.blobs)
    fills = [u for e in kept if isinstance(e, pica.MemoryFill) for u in e.units if u.control & 1]
    assert fills and all(any(lo <= u.start and u.end <= hi for lo, hi in ranges) for u in fills)
    trimmed = trim(capture, 20, 20)
    for address, blob in trimmed.state.memory:
        size = trimmed.blobs.size(blob)
        assert not any(lo <= address and address + size <= hi for lo, hi in ranges)


def test_trim_refusals(tmp_path: Path) -> None:
    src = tmp_path / "a.pica"
    src.write_bytes((SAMPLES / "animation.pica").read_bytes())
    res = run("trim", str(src), "--frames", "0", "-o", str(src))
    assert res.exit_code == 2 and "refusing to overwrite the input" in res.stderr
    assert src.read_bytes() == (SAMPLES / "animation.pica").read_bytes()
    res = run("trim", str(src), "--frames", "9", "-o", str(tmp_path / "b.pica"))
    assert res.exit_code == 2 and "the capture has frames 0..3" in res.stderr
    res = run("trim", str(src), "--frames", "1", "-o", str(tmp_path / "b.png"))
    assert res.exit_code == 2 and "a trimmed capture is a .pica file" in res.stderr
    assert not (tmp_path / "b.pica").exists() and not (tmp_path / "b.png").exists()
    assert parse_frames("3") == (3, 3) and parse_frames("2-5") == (2, 5)
    for bad in ("5-2", "x", "-1", "1-"):
        with pytest.raises(TrimError):
            parse_frames(bad)
