"""The work the debugger hands its worker thread: plain functions of the ``Session`` that return immutable
results (Qt-free, so they are testable without a GUI). Each takes the session first; the main window binds the
other arguments with ``functools.partial`` and submits them under a kind (see ``gui.worker``).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from picaemu import lint as lint_mod
from picaemu.debug import find as find_mod
from picaemu.debug import fragment as fragment_mod
from picaemu.debug import history as history_mod
from picaemu.debug import probe, state_views
from picaemu.debug import surface as surface_mod
from picaemu.debug.bookmarks import MarkerGroup, marker_groups
from picaemu.debug.edit_replay import Editor, EditResult
from picaemu.debug.replay import DebugReplay
from picaemu.debug.session import Session
from picaemu.debug.snapshot import Snapshot, take
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.errors import PicaError
from picaemu.formats import pica
from picaemu.lint import Finding
from picaemu.replay import load_capture


def open_session(
    path: str | os.PathLike[str] | None = None,
    capture: pica.Capture | None = None,
    label: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> Session:
    """Open and index a capture file / directory, or an in-memory capture."""
    if capture is not None:  # a DebugReplay: the Python console's ``replay`` answers as ``picaemu.open``'s does
        session = Session(DebugReplay(capture, checkpoints=False), path=label)
    elif path is not None:
        replay = DebugReplay(load_capture(path))
        replay.path = str(path)
        session = Session(replay, path=str(path))
    else:
        raise PicaError("open_session needs a capture path or an in-memory capture")
    session.index(progress)
    return session


@dataclass(frozen=True)
class Opened:
    """What the GUI needs after an open: the timeline, the indexing fault (if any), the capture's marker groups."""

    timeline: Timeline
    fault: PicaError | None
    markers: tuple[MarkerGroup, ...] = ()


def opened(session: Session) -> Opened:
    return Opened(session.timeline, session.fault, tuple(marker_groups(session.timeline, session.replay.events)))


def footprints(
    session: Session, draws: list[int], zoom: bool = False, stop: Callable[[], bool] = lambda: False
) -> tuple[Timeline, bool, dict[int, np.ndarray]]:
    """(the timeline they belong to, ``zoom``, draw -> ``picaemu.debug.footprint`` thumbnail (h, w, 3) uint8).
    ``stop()`` is asked before each draw: when it says so, the draws built so far come back (the rest are asked
    for again; the debugger stops a batch when a move waits)."""
    from picaemu.debug.footprint import footprint

    images: dict[int, np.ndarray] = {}
    for d in draws:
        if images and stop():
            break
        images[d] = footprint(session, d, zoom=zoom).image
    return session.timeline, zoom, images


def snapshot(session: Session, cursor: Cursor) -> Snapshot:
    return take(session, cursor)


def _draw_state(session: Session, cursor: Cursor):
    tl = session.timeline
    last = tl.last_draw(cursor)
    return (last, session.state_at_draw(last)) if last is not None else (None, session.replay.state.copy())


def textures(session: Session, cursor: Cursor) -> tuple[int | None, list[state_views.BoundTexture]]:
    """(the draw the bindings belong to, the bound units) at ``cursor``."""
    session.goto(cursor)
    draw, state = _draw_state(session, cursor)
    return draw, state_views.bound_textures(state)


def texture_picture(session: Session, cursor: Cursor, request: tuple) -> tuple[np.ndarray, str]:
    """Decode a bound unit (``("unit", unit, face, level)``) or any memory (``("free", address, format, w, h,
    level)``) at ``cursor``: ((H, W, 4) uint8 RGBA, description)."""
    session.goto(cursor)
    if request[0] == "free":
        _, address, fmt, w, h, level = request
        from picaemu.texture import decode_texture

        img = decode_texture(session.replay.memory, address, w, h, fmt, level)
        return img, f"free view: {fmt} {w}x{h} level {level} @ 0x{address:08X}"
    _, unit, face, level = request
    draw, state = _draw_state(session, cursor)
    where = f" (as bound at draw {draw})" if draw is not None else " (no draw yet: current registers)"
    tex = state_views.bound_textures(state)[unit]
    if tex.kind == "procedural":
        return state_views.proctex_image(state), tex.text() + " — 128x128 over u, v in [0, 1]" + where
    if tex.error:
        raise PicaError(tex.error)
    if face >= len(tex.addresses):
        raise PicaError(f"texture unit {unit} has {len(tex.addresses)} face(s); face {face} does not exist")
    if level >= tex.levels:
        raise PicaError(f"texture unit {unit} has {tex.levels} level(s); level {level} does not exist")
    img = state_views.texture_image(session.replay.memory, tex, face, level)
    return img, f"{tex.text()} — face {face} level {level}{where}"


def shader(session: Session, cursor: Cursor, unit: str) -> state_views.ShaderView:
    _, state = _draw_state(session, cursor)
    return state_views.shader_view(state, unit, session.uniform_names(state, unit))


def vertices(session: Session, draw: int) -> state_views.DrawVertices:
    return probe.record_vertices(session, draw)


def trace(session: Session, draw: int, vertex: int, unit: str = "vs") -> list:
    """The trace of vertex ``vertex`` ("vs") or of GS invocation ``vertex`` ("gs") of draw ``draw``."""
    dv = vertices(session, draw)
    state = session.state_at_draw(draw)
    setup = state_views.shader_setup(state, unit, session.uniform_names(state, unit))
    if unit == "gs":
        return state_views.trace_geometry(setup, dv, vertex)
    if not 0 <= vertex < len(dv.inputs):
        raise PicaError(f"draw {draw} loads {len(dv.inputs)} vertices; there is no vertex {vertex}")
    return state_views.trace_vertex(setup, dv.inputs[vertex])


def draw_probe(session: Session, draw: int) -> probe.DrawProbe:
    return probe.probe_draw(session, draw)


def backend_diff(session: Session, draw: int):
    """The draw by both backends (``picaemu.debug.backend_diff``)."""
    from picaemu.debug.backend_diff import backend_diff as both

    return both(session, draw)


def history(session: Session, view: str, x: int, y: int, cursor: Cursor) -> history_mod.ViewHistory:
    """The history of the pixel picked at (x, y) in ``view`` at ``cursor`` (``picaemu.debug.history``): the
    picked render target's draws only."""
    return history_mod.view_history(session, cursor, view, x, y)


def pipeline_state(
    session: Session, cursor: Cursor, base: int | None = None
) -> tuple[int | None, dict | None, dict | None, int | None]:
    """(the last draw at ``cursor``, its pipeline state, the state it is compared with, that draw) as plain data
    (``picaemu.debug.api.pipeline_state_of``): the state at draw ``base`` when given (and another draw), else the
    draw before; no replay needed."""
    from picaemu.debug.api import pipeline_state_of, with_call_site

    draw = session.timeline.last_draw(cursor)
    if draw is None:
        return None, None, None, None
    since = base if base is not None and base != draw and 0 <= base < len(session.timeline.draws) else draw - 1
    draws = session.timeline.draws
    previous = with_call_site(pipeline_state_of(session.state_at_draw(since)), draws[since]) if since >= 0 else None
    state = with_call_site(pipeline_state_of(session.state_at_draw(draw)), draws[draw])
    return draw, state, previous, since if since >= 0 else None


def state_diff(session: Session, draw_a: int, draw_b: int) -> tuple[int, int, dict]:
    """(draw_a, draw_b, what differs between their states) (``picaemu.debug.state_diff``: registers by field,
    uniforms by name, textures by content hash, shader programs by disassembly)."""
    from picaemu.debug import state_diff as sd

    for draw in (draw_a, draw_b):
        if not 0 <= draw < len(session.timeline.draws):
            raise PicaError(f"draw {draw} outside 0..{len(session.timeline.draws) - 1}")
    return draw_a, draw_b, sd.state_diff(sd.session_view(session, draw_a), sd.session_view(session, draw_b))


def capture_diff(_session: Session | None, path_a: str, path_b: str):
    """Where two capture files part (``picaemu.debug.capture_diff.diff_captures``; fresh replays of both, the
    session is not used)."""
    from picaemu.debug.capture_diff import diff_captures

    return diff_captures(path_a, path_b)


def fragment_map(session: Session, cursor: Cursor, kind: str) -> np.ndarray:
    """The frame's fragment map up to ``cursor`` (``probe.frame_fragment_map``)."""
    return probe.frame_fragment_map(session, cursor, kind)


_EDITORS: weakref.WeakKeyDictionary[Session, Editor] = weakref.WeakKeyDictionary()  # one fork per session


def edit(session: Session, draw: int, edits: tuple[str, ...], scope: str) -> EditResult:
    """Edit and replay at ``draw`` (``picaemu.debug.edit_replay``); the session's fork is made once and reused."""
    editor = _EDITORS.get(session)
    if editor is None:
        editor = _EDITORS[session] = Editor(session)
    return editor.edit(draw, list(edits), scope)


def shader_source(session: Session, draw: int, unit: str) -> tuple[int, str, str]:
    """(draw, unit, the program ``unit`` runs at ``draw`` as picasso source)."""
    return draw, unit, state_views.shader_source(session.state_at_draw(draw), unit)


def surface(session: Session, cursor: Cursor, request: tuple) -> surface_mod.Surface:
    """Any memory at ``cursor`` as a surface: ``request`` = (address, format, width, height, tiled)
    (``picaemu.debug.surface.decode_surface``)."""
    session.goto(cursor)
    session.replay.sync_memory()
    return surface_mod.decode_surface(session.replay.memory, *request)


def fragment(session: Session, draw: int, window: tuple[int, int], index: int) -> fragment_mod.FragmentDebug:
    """Fragment ``index`` of ``draw`` at window pixel ``window`` (``picaemu.debug.fragment.debug_fragment``)."""
    return fragment_mod.debug_fragment(session, draw, window, index)


def why(session: Session, draw: int):
    """Where ``draw``'s work went and its verdict (``picaemu.debug.why.explain``)."""
    from picaemu.debug.why import explain

    return explain(session, draw)


def search(session: Session, text: str) -> list[find_mod.Hit]:
    """The search box: ``text`` in ``find.parse_query``'s words, answered by ``find.find``."""
    return find_mod.find(session, **find_mod.parse_query(text))


def programs(session: Session) -> list[dict]:
    """The capture's shader programs (``find.program_table``)."""
    return find_mod.program_table(session.draw_states)


def lint(session: Session) -> list[tuple[Finding, Cursor]]:
    """The capture's lint findings (``picaemu.lint``), each with the position that shows it: right after its
    draw, after its packet, or after its event."""
    tl = session.timeline
    out = []
    for f in lint_mod.lint(session.replay.capture):
        if tl is not None and 0 <= f.draw < len(tl.draws):
            cursor = tl.after_draw(f.draw)
        elif tl is not None and f.packet >= 0 and f.event < len(tl.events):
            cursor = tl.normalize(f.event, f.packet + 1)
        else:
            cursor = Cursor(min(f.event + 1, len(session.replay.events)), 0)
        out.append((f, cursor))
    return out
