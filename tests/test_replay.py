"""Replay of the shared real-world scenes (c3dcap, CiTrace in both layouts, .pica) to the pictures their README
describes, and the debugger API: frames, draws, packets, stepping backwards, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from picaemu.formats import pica
from PIL import Image

import picaemu
from picaemu.cli import main
from picaemu.errors import FormatError, PicaError
from picaemu.regs import id_of
from picaemu.replay import Replay, ReplayError, load_capture, null_replay

TOL = 2


def _sources(captures_dir: Path, scene: str) -> list[Path]:
    return [
        captures_dir / scene,
        captures_dir / "citrace" / f"{scene}.ctf",
        captures_dir / "citrace" / f"{scene}.legacy.ctf",
    ]


def _at(img: np.ndarray, x: int, y: int) -> np.ndarray:
    """Pixel at landscape (x, y) with the README's origin at the bottom-left."""
    return img[239 - y, x].astype(int)


def _close(pixel: np.ndarray, expect: tuple[int, int, int]) -> None:
    assert np.all(np.abs(pixel - np.array(expect)) <= TOL), (pixel, expect)


def check_scene1(img: np.ndarray) -> None:
    assert img.shape == (240, 400, 3)
    for x, y in ((5, 5), (395, 235), (30, 200), (370, 120)):
        _close(_at(img, x, y), (0x30, 0x30, 0x30))
    red, green, blue = _at(img, 200, 204), _at(img, 84, 32), _at(img, 314, 32)
    assert red[0] > 230 and red[1] < 25 and red[2] < 25, red
    assert green[1] > 230 and green[0] < 25 and green[2] < 25, green
    assert blue[2] > 230 and blue[0] < 25 and blue[1] < 25, blue
    _close(_at(img, 200, 90), (85, 85, 85))  # centroid of (200,210), (80,30), (320,30)


def check_scene2(img: np.ndarray) -> None:
    assert img.shape == (240, 400, 3)
    for x, y in ((50, 120), (350, 120), (200, 10), (200, 230)):
        _close(_at(img, x, y), (0x20, 0x20, 0x20))
    for cy in range(8):
        for cx in range(8):
            pixel = _at(img, 100 + 25 * cx + 12, 220 - 25 * cy - 12)
            if (cx, cy) == (0, 0):
                _close(pixel, (255, 255, 0))
            elif (cx + cy) % 2 == 0:
                _close(pixel, (255, 255, 128))
            else:
                _close(pixel, (36 * cx, 36 * (7 - cy), 80))


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["c3dcap", "ctf", "legacy-ctf"])
def test_scene1_shows_the_readme_picture_in_every_frame(captures_dir: Path, kind: int) -> None:
    replay = picaemu.open(_sources(captures_dir, "scene1_triangle")[kind])
    frames_with_picture = 0
    for i in range(len(replay.frames)):
        replay.run_to_frame(i)
        img = replay.screen("top")
        if img.max() > 0x30:  # a trace may start with a frame that shows a still-empty buffer
            check_scene1(img)
            frames_with_picture += 1
    assert frames_with_picture == 2
    assert len(replay.draws) == 2


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["c3dcap", "ctf", "legacy-ctf"])
def test_scene2_shows_the_readme_picture(captures_dir: Path, kind: int) -> None:
    replay = picaemu.open(_sources(captures_dir, "scene2_textured_quad")[kind])
    replay.run()
    check_scene2(replay.screen())
    assert [d.kind for d in replay.draws] == ["draw elements"]


def test_pica_round_trip_replays_identically(captures_dir: Path, tmp_path: Path) -> None:
    cap = load_capture(captures_dir / "citrace" / "scene2_textured_quad.legacy.ctf")
    pica.write(tmp_path / "s.pica", cap)
    replay = picaemu.open(tmp_path / "s.pica")
    replay.run()
    check_scene2(replay.screen())


def test_stepping_backwards_restores_exactly(captures_dir: Path) -> None:
    replay = picaemu.open(captures_dir / "scene1_triangle")
    replay.run_to_frame(0)
    first = replay.screen().copy()
    regs = replay.state.regs.copy()
    replay.run()
    replay.run_to(3)  # back before any drawing: the top LCD buffer is still empty
    assert replay.position == 3 and replay.screen().max() == 0
    replay.run_to_frame(0)
    np.testing.assert_array_equal(replay.screen(), first)
    np.testing.assert_array_equal(replay.state.regs, regs)


def test_draws_packets_and_run_to_draw(captures_dir: Path) -> None:
    replay = picaemu.open(captures_dir / "scene1_triangle")
    replay.index()
    assert [d.index for d in replay.draws] == [0, 1]
    event = replay.draws[0].event
    packets = replay.packets(event)
    assert packets[0].id == 0x110  # FRAMEBUFFER_INVALIDATE opens citro3d's list (cmdlists/000.txt)
    assert packets[1].id == 0x11C and packets[1].params[0] == 0x03060000
    assert replay.draws[0].offset in {p.offset for p in packets}
    replay.run_to_draw(0)
    color = replay.color_buffer()
    assert color.shape == (400, 240, 4)
    assert (color[..., 0] > 200).sum() > 100  # the triangle is in the render target after draw 0
    with pytest.raises(PicaError, match="not a command list"):
        replay.packets(0)


def test_null_replay_runs_engines_without_rendering(captures_dir: Path) -> None:
    replay = null_replay(load_capture(captures_dir / "scene1_triangle"))
    replay.run()
    assert replay.gx.counts["display transfers"] == 2 and len(replay.draws) == 2
    assert set(np.unique(replay.screen())) == {0x30}  # fills and transfers ran, nothing was drawn


def test_fault_leaves_earlier_events_usable() -> None:
    cap = pica.Capture()
    cap.events = [
        pica.MemoryWrite(0x20000000, cap.blobs.add(b"\x01" * 16)),
        pica.FrameEnd(),
        pica.CommandList(0x20000000, 16),
        pica.FrameEnd(),
    ]
    replay = Replay(cap)
    with pytest.raises(ReplayError, match=r"event #2 \(CommandList 0x20000000 \(16 bytes\)\)") as info:
        replay.run()
    assert isinstance(info.value.cause, PicaError)
    assert replay.position == 2 and replay.memory.read(0x20000000, 1) == b"\x01"
    cap.events[0] = pica.MemoryWrite(0x08000000, 0)  # unmapped: the fault names the address
    with pytest.raises(ReplayError, match="0x08000000 is outside emulated memory"):
        Replay(cap).run()


def test_render_cli_on_captures(captures_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "top.png"
    res = runner.invoke(
        main, ["render", str(captures_dir / "citrace" / "scene2_textured_quad.legacy.ctf"), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    check_scene2(np.asarray(Image.open(out)))
    res = runner.invoke(
        main, ["render", str(captures_dir / "scene1_triangle"), "-o", str(tmp_path / "f.png"), "--all-frames"]
    )
    assert res.exit_code == 0, res.output
    for i in (0, 1):
        check_scene1(np.asarray(Image.open(tmp_path / f"f_{i:04d}.png")))
    res = runner.invoke(
        main,
        [
            "render",
            str(captures_dir / "scene1_triangle"),
            "-o",
            str(tmp_path / "d.png"),
            "--target",
            "depth",
            "--draw",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    assert np.asarray(Image.open(tmp_path / "d.png")).shape == (400, 240)


def test_convert_cli_and_bad_input(captures_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["convert", str(captures_dir / "scene1_triangle"), "-o", str(tmp_path / "a.pica")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        main, ["convert", str(tmp_path / "a.pica"), "-o", str(tmp_path / "a.ctf"), "--layout", "legacy"]
    )
    assert res.exit_code == 0, res.output
    replay = picaemu.open(tmp_path / "a.ctf")
    replay.run()
    check_scene1(replay.screen())
    bad = tmp_path / "bad.pica"
    bad.write_bytes((tmp_path / "a.pica").read_bytes()[:90])
    res = runner.invoke(main, ["render", str(bad), "-o", str(tmp_path / "x.png")])
    assert res.exit_code == 2 and "byte offset" in res.output
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"CiTr" + bytes(20))
    with pytest.raises(FormatError, match="shorter than"):
        picaemu.open(junk)


def test_texture_access_matches_readme(captures_dir: Path) -> None:
    replay = picaemu.open(captures_dir / "scene2_textured_quad")
    replay.run()
    tex = replay.texture(0)
    assert tex.shape == (64, 64, 4)
    for cy in range(8):
        for cx in range(8):
            texel = tuple(tex[8 * cy + 4, 8 * cx + 4, :3])
            if (cx, cy) == (0, 0):
                assert texel == (255, 255, 0)
            elif (cx + cy) % 2 == 0:
                assert texel == (255, 255, 255)
            else:
                assert texel == (36 * cx, 36 * (7 - cy), 160)


def test_outline_and_describe(captures_dir: Path) -> None:
    replay = picaemu.open(captures_dir / "citrace" / "scene1_triangle.legacy.ctf")
    frames = replay.outline()
    assert len(frames) == 3  # a still-empty first frame, then the two triangle frames
    texts = [node.text for frame in frames for node in frame]
    assert texts[0] == "RegWrite PDC0_LEFT_A = 0x20100000 (address=0x20100000)"  # named by the register table
    kicks = [node for frame in frames for node in frame if node.draws]
    assert [node.draws for node in kicks] == [(0,), (1,)]
    assert kicks[0].text == "RegWrite GPUREG_CMDBUF_JUMP0 = 0x1" and kicks[0].frame == 1  # the P3D window


def test_run_to_draw_then_forward_matches_a_plain_run(captures_dir: Path) -> None:
    plain = picaemu.open(captures_dir / "scene1_triangle")
    plain.run()
    replay = picaemu.open(captures_dir / "scene1_triangle")
    replay.run_to_draw(1)
    replay.run()
    np.testing.assert_array_equal(replay.screen(), plain.screen())
    np.testing.assert_array_equal(replay.state.regs, plain.state.regs)
    assert len(replay.draws) == 2


def test_render_cli_capture_extras(captures_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    scene = str(captures_dir / "scene2_textured_quad")
    res = runner.invoke(main, ["render", scene, "-o", str(tmp_path / "t.png"), "--depth", str(tmp_path / "d.png")])
    assert res.exit_code == 0, res.output
    depth = np.asarray(Image.open(tmp_path / "d.png"))
    assert depth.shape == (400, 240) and depth.max() > 0 and depth.min() == 0  # quad drawn over depth cleared to 0
    res = runner.invoke(main, ["render", scene, "-o", str(tmp_path / "x.png"), "--mem", "0x20000000=foo"])
    assert res.exit_code == 2 and "not to a capture" in res.output


def _packet_states(path: Path, event: int) -> dict[int, tuple]:
    """A linear replay through the list of ``event``, one packet further each time: k -> (position, registers,
    VRAM, draws run)."""
    replay = picaemu.open(path, checkpoints=False)
    replay.run_to(event)
    out, k = {}, 0
    while replay.position == event:
        k += 1
        replay.run_to(event, packets=k)
        out[k] = (
            replay.position,
            replay.state.regs.copy(),
            replay.memory.region_bytes("vram").copy(),
            replay.processor.draw_count,
        )
    return out


@pytest.mark.parametrize("source", ["scene1_triangle", "citrace/scene1_triangle.ctf"], ids=["c3dcap", "ctf"])
def test_packet_positions_equal_a_linear_replay(captures_dir: Path, source: str) -> None:
    """run_to(event, packets=k) in shuffled order (backwards through checkpoints) equals a forward linear replay;
    the end of the list equals applying the whole event; right after each draw's trigger packet equals
    run_to_draw (a different mechanism: the pipeline sink stops the processor)."""
    path = captures_dir / source
    replay = picaemu.open(path)
    replay.index()
    event = replay.draws[0].event
    packets = replay.packets(event)  # a CiTrace kick (register write) has packets too
    linear = _packet_states(path, event)
    # the list ends at its first FINALIZE when that raises the interrupt (citro3d pads with a second one), else
    # at the end of the buffer
    end = len(linear)
    assert end in (1 + [p.id for p in packets].index(id_of("FINALIZE")), len(packets))
    assert linear[end][0] == event + 1 and linear[end - 1][0] == event
    whole = picaemu.open(path)
    whole.run_to(event + 1)
    np.testing.assert_array_equal(linear[end][1], whole.state.regs)
    np.testing.assert_array_equal(linear[end][2], whole.memory.region_bytes("vram"))
    order = np.random.default_rng(3).permutation(list(linear))
    for k in order:
        replay.run_to(event, packets=int(k))
        position, regs, vram, draws = linear[int(k)]
        assert replay.position == position and replay.packet == (int(k) if position == event else 0)
        np.testing.assert_array_equal(replay.state.regs, regs)
        np.testing.assert_array_equal(replay.memory.region_bytes("vram"), vram)
        assert replay.processor.draw_count == draws
    for d in replay.draws_of(event):
        k = sum(1 for p in packets if p.offset <= d.offset)  # through the packet holding the trigger write
        assert linear[k][3] == d.index + 1 and linear[k - 1][3] == d.index
        stopped = picaemu.open(path)
        stopped.run_to_draw(d.index)
        replay.run_to(event, packets=k)
        np.testing.assert_array_equal(replay.color_buffer(), stopped.color_buffer())


def test_checkpoint_and_restore_inside_a_list(captures_dir: Path) -> None:
    path = captures_dir / "scene1_triangle"
    plain = picaemu.open(path)
    plain.run()
    replay = picaemu.open(path, checkpoints=False)
    replay.index()
    event = replay.draws[1].event
    replay.run_to(event, packets=5)
    cp = replay.checkpoint()
    assert cp.at == (event, 5) and cp.nbytes > 0
    regs = replay.state.regs.copy()
    replay.run()
    replay.restore(cp)
    assert (replay.position, replay.packet) == (event, 5)
    np.testing.assert_array_equal(replay.state.regs, regs)
    replay.run()  # continues the half-run list where the checkpoint left it
    np.testing.assert_array_equal(replay.screen(), plain.screen())
    assert replay.processor.draw_count == len(replay.processor.draws) == 2
    with pytest.raises(PicaError, match="no packet positions"):
        replay.run_to(0, packets=1)
    replay.run_to_draw(0)  # lands on the packet after the draw's trigger: a position like any other
    assert (replay.position, replay.packet) == (replay.draws[0].event, replay.draws[0].packet + 1)
    assert replay.checkpoint().at == (replay.position, replay.packet)


def test_streaming_replay_memory_does_not_grow_with_frames() -> None:
    """Without per-draw records and checkpoints, replaying 40 frames peaks close to what 20 frames do (the capture
    itself aside; the bounded caches of compiled plans and draw-state parts are full by then); with records, it
    grows by every draw's record."""
    import tracemalloc

    from samples.game_scene import cubes

    def peak(frames: int, record: bool) -> int:
        replay = Replay(cubes(25, frames=frames), checkpoints=False, record_draws=record)
        replay.run_to_frame(0)
        tracemalloc.start()
        for i in range(1, frames):
            replay.run_to_frame(i)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert replay.draw_count == 25 * frames
        return top

    streaming = peak(40, record=False) - peak(20, record=False)
    recording = peak(40, record=True) - peak(20, record=True)
    # every draw's record (~0.3 KiB; its logged register changes fill a draw-log chunk allocated before)
    assert recording > 20 * 25 * 256
    assert streaming < recording / 4  # what is left: numba's typing of tuple arguments (~0.3 KiB per draw)


def test_run_to_draw_starts_from_a_checkpoint_inside_the_list() -> None:
    """After indexing, a jump to any draw of a 300-draw command list replays at most ``checkpoint_draws`` draws,
    and lands on the picture a linear replay gives there."""
    from samples.game_scene import cubes

    capture = cubes(300)
    replay = Replay(capture, checkpoint_draws=8)
    replay.index()
    assert all(d.packet >= 0 for d in replay.draws)
    ran: list[int] = []
    inner = replay.pipeline.draw
    replay.pipeline.draw = lambda call: (ran.append(call.index), inner(call))[1]
    try:
        for target in (290, 17, 150, 151, 299):
            ran.clear()
            replay.run_to_draw(target)
            assert len(ran) <= 8 and (not ran or ran[-1] == target), (target, ran)  # none: a checkpoint is there
            linear = Replay(capture, checkpoints=False)
            linear.run_to_draw(target)
            assert np.array_equal(linear.color_buffer(), replay.color_buffer()), target
    finally:
        del replay.pipeline.draw
