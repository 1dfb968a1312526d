"""The capture builder: field composition checked against citro3d's real words, outmaps against the reference
example, and a built scene replayed to the picture of the shared scene 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from picaemu.formats import pica
from picaemu.formats.shbin import Output

from picaemu.builder import BuilderError, CaptureBuilder, compose, outmap, tilt_ortho
from picaemu.command.packet_list import list_packets
from picaemu.replay import Replay
from samples._common import VS_COLOR
from tests.test_replay import check_scene1


def test_compose_matches_citro3d_words() -> None:
    # words of the shared scene 1 command list (cmdlists/000.txt), written by citro3d for a 240x400 viewport
    assert compose("VIEWPORT_WIDTH", half_width=120.0) == 0x0045E000
    assert compose("VIEWPORT_INVW", inv_half_width=2 / 240) == 0x38111112
    assert compose("VIEWPORT_HEIGHT", half_height=200.0) == 0x00469000
    assert compose("VIEWPORT_INVH", inv_half_height=2 / 400) == 0x3747AE14
    assert compose("DEPTHMAP_SCALE", scale=-1.0) == 0x00BF0000
    assert (
        compose(
            "BLEND_FUNC",
            rgb_src="src alpha",
            rgb_dst="one minus src alpha",
            alpha_src="src alpha",
            alpha_dst="one minus src alpha",
        )
        == 0x76760000
    )
    assert compose("DEPTHBUFFER_LOC", address=0x18300000) == 0x03060000
    assert compose("FRAMEBUFFER_DIM", width=240, height_minus_1=399, orientation=1) == 0x0118F0F0


def test_compose_rejects_bad_names_and_values() -> None:
    with pytest.raises(BuilderError, match="not one of"):
        compose("DEPTH_COLOR_MASK", depth_func="sideways")
    with pytest.raises(BuilderError, match="no field"):
        compose("DEPTH_COLOR_MASK", colour=1)
    with pytest.raises(BuilderError, match="does not fit"):
        compose("FRAGOP_ALPHA_TEST", ref=256)
    with pytest.raises(BuilderError, match="aligned"):
        compose("COLORBUFFER_LOC", address=0x18000004)


def test_outmap_reference_example() -> None:
    # pica-formats.md §4.4: position in o0 (mask 0xF) -> 0x03020100, color in o1 -> 0x0B0A0908
    words, mask, clock, texcoords = outmap([Output(0, 0, 0xF), Output(2, 1, 0xF)])
    assert words == [0x03020100, 0x0B0A0908] and mask == 0b11 and not texcoords
    assert clock == {"position_z": True, "color": True}
    words, mask, clock, texcoords = outmap([Output(0, 0, 0xF), Output(3, 2, 0x3)])
    assert words == [0x03020100, 0x1F1F0D0C] and mask == 0b101 and texcoords  # slot 1 = o2 (rank rule)


def _triangle() -> CaptureBuilder:
    b = CaptureBuilder(name="builder triangle")
    b.begin_frame(clear=(0x30, 0x30, 0x30, 0xFF))
    b.shader(VS_COLOR)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    pos = np.array([[200, 210, 0.5, 1], [80, 30, 0.5, 1], [320, 30, 0.5, 1]], np.float32)
    col = np.eye(3, 4, dtype=np.float32) + np.array([0, 0, 0, 1], np.float32)
    b.vertices([pos, col])
    b.tev(0, rgb=("primary color",), combine="replace")
    b.passthrough_tev()
    b.draw(3)
    b.end_frame()
    return b


def test_built_triangle_replays_like_the_real_scene(tmp_path: Path) -> None:
    b = _triangle()
    b.save(tmp_path / "t.pica")
    replay = Replay(pica.read(tmp_path / "t.pica"))
    replay.run()
    check_scene1(replay.screen())
    assert len(replay.draws) == 1 and replay.draws[0].stats["primitives_rasterized"] == 1


def test_command_list_is_well_formed() -> None:
    cap = _triangle().capture()
    lists = [e for e in cap.events if isinstance(e, pica.CommandList)]
    assert len(lists) == 1 and lists[0].size % 16 == 0  # finalize pads to 16 bytes, as libctru
    data = next(
        cap.blobs[e.blob] for e in cap.events if isinstance(e, pica.MemoryWrite) and e.address == lists[0].address
    )
    packets, error = list_packets(data)
    assert error is None
    ids = [p.id for p in packets]
    assert ids[0] == 0x110 and ids[-1] == 0x010 and 0x22E in ids  # invalidate ... draw arrays ... finalize
    kinds = [type(e).__name__ for e in cap.events]
    assert kinds[-4:] == ["CommandList", "DisplayTransfer", "Present", "FrameEnd"]


def test_builder_misuse() -> None:
    b = CaptureBuilder()
    with pytest.raises(BuilderError, match="begin_frame"):
        b.draw(3)
    b.begin_frame()
    with pytest.raises(BuilderError, match="still open"):
        b.capture()
    with pytest.raises(BuilderError, match="out of vram"):
        b.alloc(8 << 20, vram=True)
