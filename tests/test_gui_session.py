"""Debugger core (Qt-free): timeline stepping, breakpoints, packet-exact positioning with draw checkpoints, draw
probes / pixel history, inspection helpers, raw captures, hostile input. Truth comes from the scene geometry
and the shared captures' README, and from plain linear replays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from picaemu.builder import CaptureBuilder, tilt_ortho
from picaemu.command.builder import CommandBuilder
from picaemu.debug import jobs, probe, state_views
from picaemu.debug.footprint import DIM
from picaemu.debug.session import Session, address_from_name, raw_capture
from picaemu.debug.timeline import BreakKind, Breakpoint, Cursor, Unit, breakpoint_stops
from picaemu.draw import ROUTE_COMPILED
from picaemu.errors import PicaError
from picaemu.fragment.ops import Fate
from picaemu.replay import Replay
from tests.test_builder import VS_COLOR

RED, GREEN = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0)


def rect(x0: float, y0: float, x1: float, y1: float, z: float) -> list[list[float]]:
    return [[x0, y0, z, 1], [x1, y0, z, 1], [x1, y1, z, 1], [x0, y0, z, 1], [x1, y1, z, 1], [x0, y1, z, 1]]


def begin_color_frame(b: CaptureBuilder) -> None:
    """A frame cleared to black drawing landscape pixel coordinates in the vertex color."""
    b.begin_frame(clear=(0, 0, 0, 255))
    b.shader(VS_COLOR)
    b.uniforms(0, tilt_ortho(0, 400, 0, 240, -1, 1))
    b.tev(0, rgb=("primary color",))
    b.passthrough_tev()


def rects_scene(
    specs: list[tuple[tuple[float, float, float, float], float, tuple]],
    *,
    depth: bool = False,
    frames: int = 1,
    per_draw: list[int] | None = None,
) -> CaptureBuilder:
    """Landscape rectangles (x0, y0, x1, y1) at depth z with one flat color each, per frame; one draw per
    rectangle, or ``per_draw[i]`` rectangles in draw i."""
    groups = per_draw or [1] * len(specs)
    b = CaptureBuilder()
    for _ in range(frames):
        begin_color_frame(b)
        b.depth_test(depth, "greater")
        pos = [p for box, z, _ in specs for p in rect(*box, z)]
        col = [c for _, _, c in specs for _ in range(6)]
        b.vertices([np.array(pos, np.float32), np.array(col, np.float32)])
        first = 0
        for n in groups:
            b.draw(6 * n, first=6 * first)
            first += n
        b.end_frame()
    return b


def window(x_land: int, y_land: int) -> tuple[int, int]:
    """Landscape point -> render-target window pixel under citro3d's tilt projection (README)."""
    return y_land, 400 - x_land


@pytest.fixture(scope="module")
def scene1(captures_dir) -> Session:
    s = Session.open(captures_dir / "scene1_triangle")
    s.index()
    return s


def test_timeline_of_scene1(scene1: Session) -> None:
    tl = scene1.timeline
    lists = [e for e in tl.events if e.is_list]
    assert len(lists) == 2 and len(tl.draws) == 2 and len(tl.frame_ends) == 2
    assert [d.frame for d in tl.draws] == [0, 1]
    for d in tl.draws:  # the trigger packet of every draw writes a draw register
        p = tl.events[d.event].packets[d.packet]
        assert "DRAW" in state_views.regtable.get(p.id).name
    assert tl.step(Cursor(0, 0), Unit.DRAW) == tl.after_draw(0)
    assert tl.step(tl.after_draw(0), Unit.DRAW) == tl.after_draw(1)
    assert tl.step(tl.after_draw(1), Unit.DRAW, forward=False) == tl.after_draw(0)
    assert tl.step(Cursor(0, 0), Unit.FRAME) == Cursor(tl.frame_ends[0] + 1, 0)
    first = lists[0].index
    assert tl.step(Cursor(first, 0), Unit.PACKET) == Cursor(first, 1)
    assert tl.step(Cursor(first, 1), Unit.PACKET, forward=False) == Cursor(first, 0)
    assert tl.normalize(first, len(lists[0].packets)) == Cursor(first + 1, 0)


def test_backward_positions_equal_linear_replay(captures_dir) -> None:
    """Registers and VRAM at every stop, reached in shuffled order, equal a fresh linear replay's."""
    s = Session.open(captures_dir / "scene1_triangle", memory_every=1)
    tl = s.index()
    stops = tl.stops(Unit.PACKET)[::5] + tl.stops(Unit.DRAW)
    ref = {}
    linear = Session.open(captures_dir / "scene1_triangle")
    linear.index()
    linear.goto(Cursor(0, 0))
    for c in sorted(set(stops)):
        linear.goto(c)
        ref[c] = (linear.replay.state.regs.copy(), linear.replay.memory.region_bytes("vram").copy())
    rng = np.random.default_rng(7)
    for i in rng.permutation(len(ref)):
        c = sorted(ref)[i]
        s.goto(c)
        assert np.array_equal(s.replay.state.regs, ref[c][0]), c
        assert np.array_equal(s.replay.memory.region_bytes("vram"), ref[c][1]), c


def test_mid_list_checkpoints_restore_exactly() -> None:
    """Eight draws in one list, checkpoints after every 2nd: going back to each draw matches going forward."""
    specs = [((20 + 40 * i, 20, 60 + 40 * i, 100), 0.1, RED if i % 2 else GREEN) for i in range(8)]
    cap = rects_scene(specs).capture()
    s = Session(Replay(cap), memory_every=2)
    tl = s.index()
    mids = [cp.at for cp in s.checkpoints if cp.packets]
    assert len(mids) >= 3  # after draws 1, 3, 5 (draw 7 ends next to the end of the list)
    forward = {}
    s.goto(Cursor(0, 0))
    for d in range(8):
        s.goto(tl.after_draw(d))
        forward[d] = s.replay.color_buffer().copy()
    for d in reversed(range(8)):
        s.goto(tl.after_draw(d))
        assert np.array_equal(s.replay.color_buffer(), forward[d])
        # the rectangles drawn so far are there, the later ones not yet (landscape centre of rect i)
        for i in range(8):
            x, y = window(40 + 40 * i, 60)
            px = s.replay.color_buffer()[399 - y, x, :3].tolist()
            want = ([255, 0, 0] if i % 2 else [0, 255, 0]) if i <= d else [0, 0, 0]
            assert px == want, (d, i)


def test_breakpoints() -> None:
    cap = rects_scene([((100, 50, 200, 150), 0.2, RED), ((150, 50, 250, 150), 0.4, GREEN)], frames=2).capture()
    s = Session(Replay(cap))
    tl = s.index()
    assert breakpoint_stops([Breakpoint(BreakKind.DRAW)], tl) == [tl.after_draw(d) for d in range(4)]
    assert breakpoint_stops([Breakpoint(BreakKind.DRAW, draw=2)], tl) == [tl.after_draw(2)]
    assert breakpoint_stops([Breakpoint(BreakKind.FRAME_END)], tl) == [Cursor(f + 1, 0) for f in tl.frame_ends]
    lists = breakpoint_stops([Breakpoint(BreakKind.COMMAND_LIST)], tl)
    assert lists == [Cursor(e.index, 0) for e in tl.events if e.is_list] and len(lists) == 2
    writes = breakpoint_stops([Breakpoint(BreakKind.REGISTER_WRITE, register="DRAWARRAYS")], tl)
    assert writes == [tl.after_draw(d) for d in range(4)]  # the trigger write is the draw
    assert breakpoint_stops([Breakpoint(BreakKind.REGISTER_WRITE, register="NUMVERTICES", value=7)], tl) == []
    assert len(breakpoint_stops([Breakpoint(BreakKind.REGISTER_WRITE, register="0x228", value=6)], tl)) == 4
    off = Breakpoint(BreakKind.DRAW, enabled=False)
    assert breakpoint_stops([off], tl) == []
    assert Breakpoint.from_dict(off.to_dict()) == off
    with pytest.raises(PicaError, match="names no register"):
        breakpoint_stops([Breakpoint(BreakKind.REGISTER_WRITE, register="NO_SUCH_REG")], tl)


def test_breakpoint_on_nonfinite_shader_output() -> None:
    box = (100, 50, 200, 150)
    cap = rects_scene([(box, 0.2, RED), (box, float("nan"), GREEN), (box, 0.3, RED)]).capture()
    s = Session(Replay(cap))
    tl = s.index()
    assert [d.nonfinite for d in tl.draws] == [False, True, False]
    # indexing leaves the draws on the compiled route, which counts the vertices (no stage observer)
    assert [d.route for d in tl.draws] == [ROUTE_COMPILED] * 3
    assert [d.stats["vertices_nonfinite"] > 0 for d in tl.draws] == [False, True, False]
    assert tl.draws[1].stats["vertices_nonfinite"] == tl.draws[1].stats["vertices_shaded"]
    assert breakpoint_stops([Breakpoint(BreakKind.SHADER_NONFINITE)], tl) == [tl.after_draw(1)]


def test_pixel_history_scene1_centre(scene1: Session) -> None:
    x, y = window(200, 90)  # centroid of the triangle: (85, 85, 85) on screen
    history = probe.pixel_history(scene1, (x, y))
    assert [f.draw for f in history] == [0, 1]
    for f in history:
        assert f.fate == "written" and (f.x, f.y) == (x, y)
        assert all(abs(c - 85) <= 2 for c in f.blended[:3]) and f.tev == f.blended
    assert probe.pixel_history(scene1, window(20, 220)) == []  # background: no fragment


def expected_fates(depths: list[float]) -> list[str]:
    """Depth test GREATER against a buffer cleared to 0, write on: a fragment passes when deeper than the max."""
    stored, out = 0.0, []
    for d in depths:
        out.append("written" if d > stored else "depth test")
        stored = max(stored, d)
    return out


def test_pixel_history_depth_fates() -> None:
    """Red (z 0.2), green (z 0.6), red again (z 0.2) over the same pixels with depth GREATER."""
    box = (100, 50, 200, 150)
    cap = rects_scene([(box, 0.2, RED), (box, 0.6, GREEN), (box, 0.2, RED)], depth=True).capture()
    s = Session(Replay(cap))
    tl = s.index()
    hist = probe.pixel_history(s, window(150, 100))
    assert [f.draw for f in hist] == [0, 1, 2]
    assert hist[0].depth == hist[2].depth != hist[1].depth
    assert [f.fate for f in hist] == expected_fates([f.depth for f in hist])
    assert hist[2].fate == "depth test"  # never deeper than the first, equal depth fails GREATER
    s.goto(tl.end)
    x, y = window(150, 100)
    last = [f for f in hist if f.fate == "written"][-1]
    assert s.replay.color_buffer()[399 - y, x].tolist() == list(last.blended)


def test_pixel_history_orders_fates_inside_one_draw() -> None:
    """Draw 1 holds two rectangles over the pixel: the shallower is killed first, the deeper then written."""
    box = (100, 50, 200, 150)
    cap = rects_scene(
        [(box, 0.2, RED), (box, -0.2, GREEN), (box, 0.6, (0.0, 0.0, 1.0, 1.0))], depth=True, per_draw=[1, 2]
    ).capture()
    s = Session(Replay(cap))
    s.index()
    hist = probe.pixel_history(s, window(150, 100))
    assert [(f.draw, f.primitive // 2) for f in hist] == [(0, 0), (1, 0), (1, 1)]
    assert [f.fate for f in hist] == expected_fates([f.depth for f in hist]) == ["written", "depth test", "written"]
    assert hist[2].blended == (0, 0, 255, 255) and hist[1].blended is None


def test_probe_overlays_and_scissor() -> None:
    cap = rects_scene([((100, 50, 200, 150), 0.2, RED), ((150, 50, 250, 150), 0.4, GREEN)]).capture()
    s = Session(Replay(cap))
    s.index()
    p = probe.probe_draw(s, 1)
    assert p.overdraw.shape == (400, 240) and int(p.overdraw.sum()) == 100 * 100
    assert int(p.edges.sum()) > 0 and not p.edges[p.overdraw == 0].any()
    assert probe.wireframe_overlay(p)[p.edges][0].tolist() == list(probe.WIRE_RGBA)
    mode, box = probe.scissor_rect(s.state_at_draw(1).regs, 400)
    assert box is None and mode.startswith("disabled")


# ---------------------------------------------------------------------------- exact fates (fragment observer)
BLUE = (0.0, 0.0, 1.0, 1.0)


def wrect(xa: int, ya: int, xb: int, yb: int, z: float) -> list[list[float]]:
    """Two triangles covering exactly the window pixels x in [xa, xb], y in [ya, yb] (y up) under the tilt
    projection: window (x, y) is landscape (400 - y, x), so pixel centres sit half a pixel inside the edges."""
    return rect(400 - yb - 1, xa, 400 - ya, xb + 1, z)


def fates_scene() -> CaptureBuilder:
    """Depth GREATER (cleared to 0), D24S8 cleared to stencil 0; window rectangles:

    - draw 0, A = [20, 119]^2, z 0.6, red: stencil ALWAYS ref 1, replace on pass -> stencil 1 under A;
    - draw 1, B = [70, 169]^2, z 0.5, green, no stencil: fails depth on A's 50x50 corner, written elsewhere;
    - draw 2, C = x [10, 209] x y [100, 139], z 0.4, blue: stencil NOT EQUAL 1 (no writes) and the scissor in
      include mode over x [40, 179] (all rows).
    """
    b = CaptureBuilder()
    begin_color_frame(b)
    specs = [((20, 20, 119, 119), 0.6, RED), ((70, 70, 169, 169), 0.5, GREEN), ((10, 100, 209, 139), 0.4, BLUE)]
    b.vertices(
        [
            np.array([p for box, z, _ in specs for p in wrect(*box, z)], np.float32),
            np.array([c for _, _, c in specs for _ in range(6)], np.float32),
        ]
    )
    b.depth_test(True, "greater")
    b.stencil(True, "always", 1, depth_pass="replace")
    b.draw(6)
    b.stencil(False)
    b.draw(6, first=6)
    b.stencil(True, "not equal", 1, write_mask=0)
    b.set("SCISSORTEST_MODE", mode=3)  # include: reject pixels outside the box
    b.set("SCISSORTEST_POS", x1=40, y1=0)
    b.set("SCISSORTEST_DIM", x2=179, y2=399)
    b.draw(6, first=12)
    b.end_frame()
    return b


# Hand-worked from the rectangles above. Draw 2 rasterizes 200 x 40 = 8000 fragments: 60 columns x 40 rows
# outside the scissor box (2400); inside it (140 x 40 = 5600), A's part x [40, 119] x y [100, 119] holds
# stencil 1 (80 x 20 = 1600 stencil kills); B's part outside A, x [70, 169] x y [100, 139] minus x [70, 119] x
# y [100, 119], holds depth 0.5 > 0.4 (4000 - 1000 = 3000 depth kills); the remaining 1000 are written.
DRAW2_MASKS = {Fate.SCISSOR: 2400, Fate.STENCIL: 1600, Fate.DEPTH: 3000, Fate.WRITTEN: 1000, Fate.ALPHA: 0}
HISTORIES = {  # window pixel -> [(draw, fate)]
    (15, 120): [(2, "scissor test")],  # C left of the box
    (195, 130): [(2, "scissor test")],  # C right of the box
    (100, 110): [(0, "written"), (1, "depth test"), (2, "stencil test")],  # A, B over A, C over A
    (150, 120): [(1, "written"), (2, "depth test")],  # B, C over B
    (175, 130): [(2, "written")],  # C alone inside the box
    (30, 30): [(0, "written")],  # A alone
}


@pytest.fixture(scope="module")
def fates_session() -> Session:
    s = Session(Replay(fates_scene().capture()))
    s.index()
    return s


def test_pixel_history_exact_fates(fates_session: Session) -> None:
    s = fates_session
    for pixel, want in HISTORIES.items():
        hist = probe.pixel_history(s, pixel)
        assert [(f.draw, f.fate) for f in hist] == want, pixel
        assert all((f.x, f.y) == pixel and f.fate == probe.FATE_TEXT[f.code] for f in hist)
    scissored = probe.pixel_history(s, (15, 120))[0]  # rasterized (primitive known), never interpolated nor shaded
    assert scissored.code is Fate.SCISSOR and scissored.tev is None and scissored.texcoord0 is None
    assert scissored.primitive in (0, 1) and scissored.color_before == scissored.color_after
    hist = probe.pixel_history(s, (100, 110))
    assert [f.blended for f in hist] == [(255, 0, 0, 255), None, None] and hist[0].tev == (255, 0, 0, 255)
    # the pass's records: A writes red, the killed fragments of B and C leave it
    assert [(f.color_before, f.color_after) for f in hist[1:]] == [((255, 0, 0, 255), (255, 0, 0, 255))] * 2
    assert hist[1].tev == (0, 255, 0, 255) and hist[1].depth < hist[0].depth  # shaded, then killed
    written = probe.pixel_history(s, (175, 130))[0]
    assert written.blended == (0, 0, 255, 255) and written.primitive in (0, 1)
    s.goto(s.timeline.end)
    assert s.replay.color_buffer()[399 - 130, 175].tolist() == [0, 0, 255, 255]
    assert probe.pixel_history(s, (100, 110), until=s.timeline.after_draw(1))[-1].draw == 1  # stops before draw 2
    assert probe.pixel_history(s, (230, 390)) == []  # background


def test_fate_overlays_count_exact_masks(fates_session: Session) -> None:
    p = probe.probe_draw(fates_session, 2)
    assert p.fates.shape == (len(Fate), 400, 240)
    for fate, n in DRAW2_MASKS.items():
        assert int(probe.fate_mask(p, fate).sum()) == n == int(p.fates[fate].sum()), fate
    assert int(p.overdraw.sum()) == 5600 and int(p.fates.sum()) == 8000
    assert p.stats["killed_scissor"] == 2400 and p.stats["killed_depth"] == 3000 and p.stats["killed_stencil"] == 1600
    overlay = probe.fate_overlay(p, Fate.DEPTH)
    assert overlay[399 - 120, 150].tolist() == list(probe.FATE_RGBA[Fate.DEPTH])  # (150, 120): B under C
    assert overlay[399 - 110, 100, 3] == 0  # a stencil kill is not a depth kill
    p1 = probe.probe_draw(fates_session, 1)
    assert int(probe.fate_mask(p1, Fate.DEPTH).sum()) == 50 * 50 and not probe.fate_mask(p1, Fate.STENCIL).any()
    assert int(probe.fate_mask(p1, Fate.WRITTEN).sum()) == 100 * 100 - 50 * 50


def test_pixel_history_color_mask_and_stencil_sample() -> None:
    """samples/stencil.py: the hexagon (color mask off) passes and writes only stencil, so the color written is the
    old one; then the ramp passes the stencil test inside it and the fill fails it (and the reverse outside)."""
    from samples import stencil

    s = Session(Replay(stencil.build()))
    tl = s.index()
    inside = probe.pixel_history(s, window(200, 120))  # hexagon centre
    assert [(f.draw, f.fate) for f in inside] == [(0, "written"), (1, "written"), (2, "stencil test")]
    assert inside[0].blended == (0, 0, 0, 255) != inside[0].tev  # the cleared color, not the white hexagon
    outside = probe.pixel_history(s, window(20, 20))
    assert [(f.draw, f.fate) for f in outside] == [(1, "stencil test"), (2, "written")]
    s.goto(tl.end)
    for (x, y), last_written in ((window(200, 120), inside[1]), (window(20, 20), outside[1])):
        assert s.replay.color_buffer()[399 - y, x].tolist() == list(last_written.blended)


def test_inspection_helpers(captures_dir) -> None:
    s = jobs.open_session(captures_dir / "scene2_textured_quad")
    tl = s.timeline
    _, _, images = jobs.footprints(s, [0])  # quarter-size render target after draw 0, dimmed outside the square
    thumb = images[0]
    assert thumb.shape == (100, 60, 3) and thumb[2, 2].tolist() == [round(0x20 * DIM)] * 3
    assert len({tuple(p) for p in thumb.reshape(-1, 3).tolist()}) > 10
    draw, bound = jobs.textures(s, tl.end)
    assert draw == 0 and bound[0].enabled and (bound[0].format, bound[0].width, bound[0].height) == ("RGBA8", 64, 64)
    img, text = jobs.texture_picture(s, tl.end, ("unit", 0, 0, 0))
    assert img.shape == (64, 64, 4) and "draw 0" in text
    assert img[0, 0].tolist() == [255, 255, 0, 255]  # cell (0, 0): the yellow marker
    assert img[3, 12].tolist() == [36, 252, 160, 255]  # cell (1, 0): odd -> (36*1, 36*7, 160)
    free, _ = jobs.texture_picture(s, tl.end, ("free", bound[0].addresses[0], "RGBA8", 64, 64, 0))
    assert np.array_equal(free, img)
    assert state_views.channel_view(img, "A")[0, 0].tolist() == [255, 255, 255]
    dv = jobs.vertices(s, 0)
    assert len(dv.indices) == 4 and len(dv.order) == 6 and dv.triangles.shape == (2, 3, 4)
    assert sorted(map(tuple, dv.inputs[:, 0, :2].tolist())) == [(100, 20), (100, 220), (300, 20), (300, 220)]
    view = jobs.shader(s, tl.end, "vs")
    # the program, not all 512 words of code memory: the listing stops after the last non-zero word
    used = np.flatnonzero(view.setup.code[:512])
    assert view.lines[0].startswith("0x000:") and len(view.lines) == used[-1] + 1 < 512
    assert any(" end" in line for line in view.lines)
    steps = jobs.trace(s, 0, 0)
    assert steps and steps[-1].text.startswith("end")
    with pytest.raises(PicaError, match="no vertex 9"):
        jobs.trace(s, 0, 9)
    regs = s.state_at_draw(0).regs
    doc = state_views.registers_json(regs, [state_views.regtable.id_of("TEXUNIT0_DIM")])
    assert doc["GPUREG_TEXUNIT0_DIM"]["fields"] == {"height": 64, "width": 64}


def test_raw_capture_and_hostile_lists(tmp_path) -> None:
    address = 0x20100000
    b = CommandBuilder()  # a list that jumps to itself forever
    b.write("CMDBUF_SIZE0", 3)  # 3 x 8 bytes: the whole list
    b.write("CMDBUF_ADDR0", address >> 3)
    b.write("CMDBUF_JUMP0", 1)
    path = tmp_path / "loop.bin"
    path.write_bytes(b.words().tobytes())
    dump = tmp_path / "0x18000000_vram.bin"
    dump.write_bytes(bytes(range(16)))
    assert address_from_name(dump) == 0x18000000
    with pytest.raises(PicaError, match="hex address"):
        address_from_name(tmp_path / "vram.bin")
    s = Session(Replay(raw_capture(path, address, [(0x18000000, dump)])))
    tl = s.index()  # must not hang
    assert isinstance(s.fault, PicaError) and "repeats an earlier buffer" in str(s.fault)  # JumpCycle, named
    assert len(tl.events) == 4 and s.replay.memory.read(0x18000000, 16) == bytes(range(16))
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(PicaError, match="empty"):
        raw_capture(empty, address)


def test_mesh_of_an_immediate_mode_draw() -> None:
    """The vertices an immediate-mode draw submitted are the loader inputs; the VS outputs follow the tilt
    projection by hand: landscape (x, y) -> clip (2y/240 - 1, 1 - 2x/400)."""
    b = CaptureBuilder()
    begin_color_frame(b)
    b.set("VSH_NUM_ATTR", num_attrs_minus_1=1)
    b.set("PRIMITIVE_CONFIG", 0x2, topology="triangle list")
    corners = [(100, 48), (300, 48), (200, 192)]
    b.list.immediate_vertices([[(x, y, 0.5, 1), RED] for x, y in corners])
    b.list.write("RESTART_PRIMITIVE", 1)
    b.end_frame()
    s = Session(Replay(b.capture(), checkpoints=False))
    tl = s.index()
    assert [d.kind for d in tl.draws] == ["immediate"]
    dv = jobs.vertices(s, 0)
    assert dv.indices.tolist() == [0, 1, 2] and dv.triangles.shape == (1, 3, 4)
    np.testing.assert_array_equal(dv.inputs[:, 0], [[x, y, 0.5, 1] for x, y in corners])
    np.testing.assert_array_equal(dv.inputs[:, 1], [RED] * 3)
    want = [[2 * y / 240 - 1, 1 - 2 * x / 400] for x, y in corners]
    np.testing.assert_allclose(dv.outputs[:, 0, :2], want, atol=1e-5)
    assert dv.gs_outputs is None


def _bundled(name: str) -> Path:
    return Path(__file__).parent.parent / "samples" / "captures" / name


GS_HALF = np.array([2 * 6 / 240, 2 * 6 / 400], np.float32)  # samples/gs_sprites.py: HALF_PIXELS = 6
GS_CORNERS = np.array([(-1, -1), (1, -1), (-1, 1), (1, 1)], np.float32)  # its emit order


@pytest.fixture(scope="module")
def sprites() -> Session:
    s = Session.open(_bundled("gs_sprites.pica"))
    s.index()
    return s


def test_mesh_shows_geometry_shader_outputs(sprites: Session) -> None:
    """24 points, one GS invocation each, emit 4 corners at the point's position +- the half size (two triangles
    per point); the emitted color is the point's input color."""
    dv = jobs.vertices(sprites, 0)
    assert dv.gs_invocations == 24 and dv.gs_inputs.shape[0] == 24
    assert dv.gs_outputs.shape == (96, 16, 4) and dv.gs_triangles.shape == (48, 3) and len(dv.triangles) == 48
    centre = dv.outputs[dv.order, 0]  # VS o0 of each point in stream order
    emitted = dv.gs_outputs[:, 0].reshape(24, 4, 4)
    np.testing.assert_allclose(
        emitted[:, :, :2] - centre[:, None, :2], np.broadcast_to(GS_CORNERS * GS_HALF, (24, 4, 2)), atol=1e-5
    )
    np.testing.assert_array_equal(emitted[:, :, 2:], np.repeat(centre[:, None, 2:], 4, axis=1))
    np.testing.assert_array_equal(
        dv.gs_outputs[:, 1].reshape(24, 4, 4), np.repeat(dv.inputs[dv.order, 1][:, None], 4, axis=1)
    )


def test_geometry_shader_trace(sprites: Session) -> None:
    dv = jobs.vertices(sprites, 0)
    records = jobs.trace(sprites, 0, 5, unit="gs")
    texts = [r.text for r in records]
    assert sum(t.startswith("emit") for t in texts) == 4 and texts[-1].startswith("end")
    adds = [r.step.result for r in records if r.text.startswith("add")]  # add opos, ipos, r<k>
    np.testing.assert_allclose(np.array(adds)[:, :2], dv.outputs[dv.order[5], 0, :2] + GS_CORNERS * GS_HALF, atol=1e-5)
    with pytest.raises(PicaError, match="no invocation 24"):
        jobs.trace(sprites, 0, 24, unit="gs")
    assert jobs.trace(sprites, 0, 0, unit="vs")[-1].text.startswith("end")


def test_uniform_names_from_capture_metadata(tmp_path) -> None:
    """A capture the builder wrote (saved and read back) names the uniforms of the programs bound at a draw; a
    capture without that metadata (as older captures are) shows register names."""
    from picaemu.formats import pica

    from samples import gs_sprites

    pica.write(tmp_path / "s.pica", gs_sprites.build())
    s = Session.open(tmp_path / "s.pica")
    tl = s.index()
    at = tl.after_draw(0)
    vs = jobs.shader(s, at, "vs")
    assert {vs.setup.names[f"c{i}"] for i in range(4)} == {f"projection[{i}]" for i in range(4)}
    assert any("dp4" in line and "projection[0]" in line for line in vs.lines)
    gs = jobs.shader(s, at, "gs")
    assert gs.setup.names["c0"] == "size" and any("mul r1, size, r0" in line for line in gs.lines)
    unnamed = gs_sprites.build()
    del unnamed.meta["shader_names"]
    pica.write(tmp_path / "old.pica", unnamed)
    old = Session.open(tmp_path / "old.pica")
    old.index()
    assert jobs.shader(old, at, "gs").setup.names == {}


def test_draw_bounds_hold_every_fragment_and_pixel_history_uses_them() -> None:
    """Each draw's recorded window bounds hold its rectangle; history at a pixel re-runs only the draws whose
    bounds hold it and finds exactly the rectangles drawn over it (known by construction)."""
    boxes = [(10, 10, 60, 60), (100, 100, 150, 150), (40, 40, 120, 120), (300, 200, 390, 230)]
    s = Session(Replay(rects_scene([(b, 0.2, RED) for b in boxes]).capture()))
    tl = s.index()
    for d, (x0, y0, x1, y1) in zip(tl.draws, boxes, strict=True):
        wx0, wy0 = window(x1, y0)
        wx1, wy1 = window(x0, y1)
        bx0, by0, bx1, by1 = d.bounds
        assert bx0 <= wx0 and by0 <= wy0 and bx1 >= wx1 and by1 >= wy1  # holds the rectangle
        assert bx1 - bx0 <= wx1 - wx0 + 2 and by1 - by0 <= wy1 - wy0 + 2  # and little more
    pixel = window(50, 50)  # inside boxes 0 and 2 only
    assert probe.candidate_draws(s, pixel) == [0, 2]
    assert [f.draw for f in probe.pixel_history(s, pixel)] == [0, 2]
    assert probe.draws_at_pixel(s, pixel) == [0, 2]
    assert probe.pixel_history(s, pixel, until=tl.after_draw(1)) and [
        f.draw for f in probe.pixel_history(s, pixel, until=tl.after_draw(1))
    ] == [0]


def test_forward_jump_starts_from_the_nearest_checkpoint() -> None:
    """A jump far ahead replays at most the draws between the nearest checkpoint and the target, and gives the
    picture of a linear replay."""
    n = 200
    specs = [(((i % 40) * 9, (i // 40) * 40, (i % 40) * 9 + 8, (i // 40) * 40 + 30), 0.2, RED) for i in range(n)]
    s = Session(Replay(rects_scene(specs).capture(), checkpoints=False), memory_every=8)
    tl = s.index()
    s.goto(tl.after_draw(3))
    ran: list[int] = []
    pipe = s.replay.pipeline
    inner, compiled = pipe.draw, pipe.compiled_draws  # draws handed one by one, and those the compiled loop ran
    pipe.draw = lambda call: (ran.append(call.index), inner(call))[1]
    pipe.compiled_draws = lambda draws: (ran.extend(f[0] for f in draws.each()), compiled(draws))[1]
    try:
        s.goto(tl.after_draw(n - 5))
    finally:
        del pipe.draw, pipe.compiled_draws
    assert 0 < len(ran) <= 8 and ran[-1] == n - 5
    linear = Replay(rects_scene(specs).capture())
    linear.run_to_draw(n - 5)
    assert np.array_equal(linear.color_buffer(), s.replay.color_buffer())


def test_first_draw_highlights_what_changed_since_the_start(scene1: Session) -> None:
    """At the first draw there is no earlier draw: changes are counted from the registers the capture starts
    with (the setup the list wrote), so "changed only" is not empty."""
    tl = scene1.timeline
    snap = jobs.snapshot(scene1, tl.after_draw(0))
    assert snap.prev_draw is None and snap.prev_regs is not None
    changed = np.flatnonzero(snap.prev_regs != snap.regs)
    from picaemu.regs import id_of

    assert id_of("FRAMEBUFFER_DIM") in changed and id_of("NUMVERTICES") in changed


def test_breakpoint_conditions_on_fields_and_masks() -> None:
    """Two draws, depth test GREATER then LESS (written by the builder's depth_test): a field condition stops at
    the write that set GREATER; a masked value condition compares only the masked bits."""
    from picaemu.regs import access, id_of

    b = rects_scene([((100, 50, 200, 150), 0.2, RED)], depth=True)  # one frame: depth test GREATER
    cap = b.capture()
    s = Session(Replay(cap))
    tl = s.index()
    reg = id_of("DEPTH_COLOR_MASK")
    rows = tl.writes[tl.writes[:, 2] == reg]
    assert len(rows)
    greater = Breakpoint(BreakKind.REGISTER_WRITE, register="DEPTH_COLOR_MASK", field="depth_func", equals="greater")
    hits = greater.hits(tl)
    want = [
        tl.normalize(int(e), int(p) + 1)
        for e, p, _, v in rows
        if str(access.value(np.array([0] * reg + [int(v)], np.uint32), "DEPTH_COLOR_MASK", "depth_func")).lower()
        == "greater"
    ]
    assert hits == want and hits
    never = Breakpoint(BreakKind.REGISTER_WRITE, register="DEPTH_COLOR_MASK", field="depth_func", equals="never")
    assert never.hits(tl) == []
    word = int(rows[-1, 3])
    masked = Breakpoint(BreakKind.REGISTER_WRITE, register="DEPTH_COLOR_MASK", value=word ^ 0xFF000000, mask=0x00FFFFFF)
    assert tl.normalize(int(rows[-1, 0]), int(rows[-1, 1]) + 1) in masked.hits(tl)
    with pytest.raises(PicaError, match="has no field 'nope'"):
        Breakpoint(BreakKind.REGISTER_WRITE, register="DEPTH_COLOR_MASK", field="nope", equals="1").validate()
    assert Breakpoint.from_dict(greater.to_dict()) == greater


def test_frame_fragment_map_counts_the_rectangles_by_hand() -> None:
    """Three overlapping rectangles drawn without depth test: depth complexity is 1, 2 or 3 where they overlap,
    counted over the frame up to the cursor."""
    boxes = [(100, 50, 200, 150), (150, 50, 250, 150), (175, 60, 225, 140)]
    s = Session(Replay(rects_scene([(b, 0.2, RED) for b in boxes]).capture()))
    tl = s.index()
    counts = probe.frame_fragment_map(s, tl.end)
    assert counts.shape == (400, 240)

    def at(x_land: int, y_land: int) -> int:
        wx, wy = window(x_land, y_land)
        return int(counts[399 - wy, wx])

    assert (at(120, 100), at(160, 100), at(200, 100), at(240, 100), at(300, 100)) == (1, 2, 3, 1, 0)
    after_first = probe.frame_fragment_map(s, tl.after_draw(0))
    wx, wy = window(200, 100)
    assert int(after_first[399 - wy, wx]) == 1


class _CompilingSink:
    """The software pipeline, but draw 1 first compiles a new numba function (as a process's first draw loads the
    kernels it needs) inside the draw's own ``time_s``."""

    def __init__(self) -> None:
        from picaemu.pipeline import Pipeline

        self.inner = Pipeline()
        self.compile_s = 0.0

    def draw(self, call) -> None:
        import time

        import numba

        start = time.perf_counter()
        if call.index == 1:
            numba.njit(lambda x: x * 3 + 1)(2)  # a function of its own: compiled here, under numba's compiler lock
            self.compile_s = time.perf_counter() - start
        self.inner.draw(call)
        call.stats["time_s"] = time.perf_counter() - start

    def event(self, kind, state) -> None:
        self.inner.event(kind, state)


def test_index_moves_kernel_loading_out_of_the_draws_time() -> None:
    """A draw that loads or compiles kernels has that time in ``kernels_s``, not in ``time_s`` (the statistics
    panel's "replay time, kernel loading excluded"), as ``picaemu stats`` reports it."""
    specs = [((40, 40, 120, 120), 0.0, RED), ((80, 80, 200, 160), 0.0, GREEN), ((10, 10, 30, 30), 0.0, RED)]
    Session(Replay(rects_scene(specs).capture())).index()  # this process's kernels loaded: draws 0 and 2 load none
    sink = _CompilingSink()
    session = Session(Replay(rects_scene(specs).capture(), pipeline=sink))
    draws = session.index().draws
    assert sink.compile_s > 0.01
    assert draws[1].stats["kernels_s"] > 0.5 * sink.compile_s
    assert draws[1].stats["time_s"] < draws[1].stats["kernels_s"]
    assert draws[0].stats["kernels_s"] == draws[2].stats["kernels_s"] == 0.0
