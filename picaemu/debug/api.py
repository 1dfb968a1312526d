"""The debugger's answers for Python and the CLI: ``Debugger(replay)``, also reached as ``replay.debugger`` on the
object ``picaemu.open()`` returns (``Replay.pixel_history`` and the other calls below delegate to it).

Receives a ``Replay``; indexes it once (``Session.index``: one rendering pass that records every packet, write,
draw, each draw's register state and window bounds, with the replay's checkpoints) and answers, for any draw:

- ``pixel_history(x, y, frame, space=, screen=, eye=, all_targets=)``: every fragment at a pixel of one render
  target (every target with ``all_targets``), in draw order (``PixelFragment``, naming its target);
- ``debug_fragment(draw, x, y, index, space=, screen=, eye=)``: one fragment stage by stage
  (``picaemu.debug.fragment.FragmentDebug``);
- ``mesh(draw, stage)``: vertices at a stage of the geometry front end ("input", "vs", "gs", "clipped");
- ``shader_trace(draw, vertex, unit)``: one vertex (or GS invocation) instruction by instruction;
- ``pipeline_state(draw)``: every stage's decoded state as plain data (``picaemu.draw_state.DrawState``);
- ``diff(draw_a, draw_b)``: the structured state difference (``picaemu.debug.state_diff``): registers by field,
  uniforms by name, textures by binding and content hash, shader programs by disassembly, attribute buffers;
- ``external_registers(draw)``: the external GPU registers (memory fill, LCD framebuffer, transfer engine) at a
  draw, decoded by the register table;
- ``texture(draw, unit, level, face)`` and ``surface(address, format, width, height)``: decoded RGBA pictures;
- ``backend_diff(draw)``: the draw's color buffer from the software pipeline and from the OpenGL backend, with
  their difference image and figures (``picaemu.debug.backend_diff.BackendDiff``; needs EGL);
- ``edit(draw, edits, scope)``: the rest of the draw's frame re-rendered with register / uniform / shader edits
  made at the draw, beside the original (``picaemu.debug.edit_replay.EditResult``; the session is not changed);
- ``surface_view(address, format, width, height, tiled, after_draw)``: any memory as texture, color or depth
  pixels with the raw words behind them (``picaemu.debug.surface``);
- ``why(draw)``: where the draw's work went stage by stage and the verdict (``picaemu.debug.why.Why``);
  ``draw_of(frame, n)``: the global index of draw ``n`` of a frame;
- ``footprint(draw, step, zoom)``: the draw's thumbnail, its own pixels highlighted (``picaemu.debug.footprint``);
- ``markers()``: the capture's marker groups; ``bookmarks()``, ``add_bookmark(name, draw)``,
  ``rename_bookmark(old, new)``, ``remove_bookmark(name)``: the user's bookmarks, kept beside the capture file
  (``picaemu.debug.bookmarks``; a replay of an in-memory capture has nowhere to keep them: ``PicaError``);
- ``find(register=, value=, field=, texture=, shader=)``: writes or draws matching (``picaemu.debug.find``), and
  ``programs()``: each draw's shader programs by hash, for ``find(shader=...)``.

Pixel coordinates (``space="buffer"``, the default) address the color buffer as ``picaemu render --target color``
writes it to PNG: x = column, y = row, row 0 at the top, of the render target the chosen screen shows; with
``space="screen"`` they address the screen picture ``picaemu render --screen top|bottom [--eye]`` writes and are
traced back to the render target (``picaemu.debug.pick``). Calls move the replay (it is left where the last answer
was computed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from picaemu import draw_state as ds_mod
from picaemu.debug import bookmarks, fragment, history, mesh_table, probe, state_diff, state_views
from picaemu.debug import find as find_mod
from picaemu.debug import pick as pick_mod
from picaemu.debug import surface as surface_mod
from picaemu.debug.bookmarks import Bookmark, MarkerGroup  # the method ``bookmarks`` hides the module in the class
from picaemu.debug.edit_replay import Editor, EditResult
from picaemu.debug.edits import Edit
from picaemu.debug.footprint import Footprint
from picaemu.debug.footprint import footprint as footprint_of
from picaemu.debug.screen_map import RenderTarget
from picaemu.debug.session import Session
from picaemu.debug.state_views import plain, tev_equations, uniform_files
from picaemu.debug.timeline import Cursor, Timeline
from picaemu.errors import PicaError
from picaemu.shader import linemap
from picaemu.shader.setup import shader_unit
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.replay import Replay
    from picaemu.replay.records import DrawRecord

STAGES = ("input", "vs", "gs", "clipped")


@dataclass(frozen=True)
class PixelFragment:
    """One fragment at the asked pixel: its draw and primitive, depth (0..1 after the depth map), the TEV output
    (RGBA 0..255, None for fragments the scissor rejected before shading), the color buffer's value before and
    after it (RGBA 0..255; equal unless the fragment was written with color writes on), the depth buffer's value
    before and after it (0..1; None when the depth buffer cannot be read), and its fate: "written", "scissor",
    "alpha", "stencil", "depth", or the written variants the probe names (no color write, shadow)."""

    draw: int
    primitive: int | None
    depth: float | None
    fate: str
    tev: tuple[int, ...] | None
    color_before: tuple[int, ...] | None  # ``probe.FragmentRecord``'s: the probe fills both for every fragment
    color_after: tuple[int, ...] | None
    depth_before: float | None
    depth_after: float | None
    target: dict[str, Any]  # the render target: address (hex text), format, width, height

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Debugger:
    """The debugger engine over one replay; see the module docstring."""

    def __init__(self, replay: Replay) -> None:
        self.session = Session(replay)
        self.session.index()
        self.fault: PicaError | None = self.session.fault  # everything before a fault stays answerable
        self.editor = Editor(self.session)

    @property
    def timeline(self) -> Timeline:
        return self.session.timeline

    def _draw(self, draw: int):
        draws = self.session.timeline.draws
        if not 0 <= draw < len(draws):
            raise PicaError(f"draw {draw} outside 0..{len(draws) - 1}")
        return draws[draw]

    def frame(self, frame: int | None = None) -> int:
        """``frame``, or by default the last frame holding a draw."""
        tl = self.session.timeline
        if frame is not None:
            return frame
        return tl.draws[-1].frame if tl.draws else max(len(tl.frame_ends) - 1, 0)

    def _frame_span(self, frame: int | None) -> tuple[Cursor, Cursor]:
        """(start, end) cursors of ``frame`` (default: the last frame holding a draw)."""
        tl = self.session.timeline
        ends = list(tl.frame_ends)
        frame = self.frame(frame)
        if not 0 <= frame <= len(ends):
            raise PicaError(f"frame {frame} outside 0..{max(len(ends) - 1, 0)}")
        end = Cursor(ends[frame] + 1, 0) if frame < len(ends) else tl.end
        return tl.frame_start(frame), end

    # -- pixels ------------------------------------------------------------------------------------------
    def pixel_history(
        self,
        x: int,
        y: int,
        frame: int | None = None,
        *,
        space: str = "buffer",
        screen: str = "top",
        eye: str = "left",
        all_targets: bool = False,
    ) -> list[PixelFragment]:
        """Every fragment of ``frame``'s draws at pixel (x, y), in draw order: (x, y) in ``space`` "buffer" (the
        colour-buffer PNG of the target ``screen`` / ``eye`` shows) or "screen" (the ``screen`` / ``eye`` picture;
        ``picaemu.debug.pick``). Only the draws into that render target whose window bounds hold the pixel are
        re-run, each from its nearest checkpoint; with ``all_targets``, the draws into every render target of the
        frame at the same colour-buffer pixel. Each fragment names its target. A screen pixel's history covers the
        draws of the frame its display transfer ran in, up to that transfer (what the picture shows)."""
        session, span = self.session, self._frame_span(frame)
        at = pick_mod.pick(session, span, x, y, space=space, screen=screen, eye=eye)
        draws = history.target_draws(session, history.shown_span(session.timeline, at, span), at, all_targets)
        return [
            PixelFragment(
                draw,
                f.primitive,
                f.depth,
                f.fate,
                f.tev,
                f.color_before,
                f.color_after,
                f.depth_before,
                f.depth_after,
                target.as_dict(),
            )
            for draw, target, window in draws
            for f in probe.pixel_fragments(session, draw, window)
        ]

    def debug_fragment(
        self,
        draw: int,
        x: int,
        y: int,
        index: int = 0,
        *,
        space: str = "buffer",
        screen: str = "top",
        eye: str = "left",
    ) -> fragment.FragmentDebug:
        """Fragment ``index`` of ``draw`` at pixel (x, y), stage by stage: texture lookups, lighting, each TEV
        stage's operands and output, fog, every per-fragment test with its values, the buffers before and after
        (``picaemu.debug.fragment.FragmentDebug``; ``as_dict()`` for JSON, naming the render target). (x, y) is in
        the draw's colour-buffer PNG (``space="buffer"``) or in the ``screen`` / ``eye`` picture at the end of the
        draw's frame (``space="screen"``: the pixel must come from the draw's render target)."""
        fb = pick_mod.draw_target(self.session, self._draw(draw).index)
        if fb is None:
            raise PicaError(f"draw {draw} names no usable color buffer")
        if space == "screen":
            at = pick_mod.pick(
                self.session, self._frame_span(self._draw(draw).frame), x, y, space=space, screen=screen, eye=eye
            )
            if at.target != RenderTarget.of(fb):
                raise PicaError(
                    f"{screen} screen pixel ({x}, {y}) shows render target {at.target.text()}; draw {draw} drew into "
                    f"{RenderTarget.of(fb).text()}"
                )
            x, y = at.x, at.y
        elif space != "buffer":
            raise PicaError(f"unknown coordinate space {space!r}: one of buffer, screen")
        window = pick_mod.window_pixel(fb, x, y)
        return fragment.debug_fragment(self.session, draw, window, index)

    # -- vertices ----------------------------------------------------------------------------------------
    def mesh(self, draw: int, stage: str = "vs") -> np.ndarray:
        """Vertices of ``draw`` at ``stage``: "input" (U, 16, 4) loader output, "vs" (U, 16, 4) vertex shader
        outputs, "gs" (M, 16, 4) geometry shader outputs, "clipped" (T, 3, 4) clip-space triangles after
        clipping."""
        if stage not in STAGES:
            raise PicaError(f"unknown stage {stage!r}: one of {', '.join(STAGES)}")
        dv = self._vertices(draw)
        if stage == "gs":
            if dv.gs_outputs is None:
                raise PicaError(f"draw {draw} does not use the geometry shader")
            return dv.gs_outputs
        return {"input": dv.inputs, "vs": dv.outputs, "clipped": dv.clipped}[stage]

    def mesh_table(self, draw: int, stage: str = "vs") -> tuple[list[str], np.ndarray]:
        """``mesh(draw, stage)`` as one row per vertex with named columns (``picaemu.debug.mesh_table``: the
        output map's semantics, position.x ... texcoord0.u ..., for the unit that feeds the rasterizer)."""
        data = self.mesh(draw, stage)
        return mesh_table.vertex_table(data, stage, self.session.state_at_draw(draw).regs)

    def _vertices(self, draw: int) -> state_views.DrawVertices:
        self._draw(draw)
        return probe.record_vertices(self.session, draw)

    def shader_trace(self, draw: int, vertex: int, unit: str = "vs", line_map: Any = None) -> list[dict[str, Any]]:
        """Vertex ``vertex`` of ``draw`` (or GS invocation ``vertex`` with ``unit="gs"``) through its shader: one
        dict per executed instruction (pc, text, the source values read, the result, the destination write
        mask; ``result`` holds only the components the mask writes). With a ``picaemu.shader.linemap.LineMap``
        that matches the draw's shader code, each dict also has ``"source": "file:line"`` (a mismatch is a
        ``LineMapWarning``)."""
        shader_unit(unit)  # PicaError for an unknown unit, before any work
        dv = self._vertices(draw)
        state = self.session.state_at_draw(draw)
        setup = state_views.shader_setup(state, unit, self.session.uniform_names(state, unit))
        if unit == "gs":
            records = state_views.trace_geometry(setup, dv, vertex)
        else:
            if not 0 <= vertex < len(dv.inputs):
                raise PicaError(f"draw {draw} loads {len(dv.inputs)} vertices; there is no vertex {vertex}")
            records = state_views.trace_vertex(setup, dv.inputs[vertex])
        line_map = linemap.check(line_map, setup.code, f"draw {draw} ({unit})")
        steps = [r.as_dict() for r in records]
        for step in steps if line_map is not None else []:
            where = line_map.at(step["pc"])
            if where:
                step["source"] = where
        return steps

    # -- state -------------------------------------------------------------------------------------------
    def pipeline_state(self, draw: int) -> dict[str, Any]:
        """Every stage's decoded state at ``draw`` as plain data (``pipeline_state_of``)."""
        self._draw(draw)
        state = self.session.state_at_draw(draw)
        out = with_call_site(pipeline_state_of(state), self._draw(draw))
        names = self.session.uniform_names(state, "vs")
        if names:
            out["vs_uniform_names"] = names
        return out

    def external_registers(self, draw: int) -> dict[str, dict[str, Any]]:
        """The external GPU registers as they stand at ``draw``: name -> {"address", "value", "fields"}
        (``state_views.external_json``; the register table's second address space)."""
        self._draw(draw)
        self.session.goto(self.session.timeline.before_draw(draw))
        return state_views.external_json(self.session.replay.gx.gpu)

    def diff(self, draw_a: int, draw_b: int) -> dict[str, Any]:
        """What differs between the states at two draws (``picaemu.debug.state_diff.state_diff``, ``draw_a`` the
        "a" side): registers by field, uniforms by name, textures by binding and content hash, shader programs by
        disassembly, attribute buffers; empty sections left out."""
        self._draw(draw_a)
        self._draw(draw_b)
        a = state_diff.session_view(self.session, draw_a)
        return state_diff.state_diff(a, state_diff.session_view(self.session, draw_b))

    def why(self, draw: int):
        """Where draw ``draw``'s work went, stage by stage, and its verdict (``picaemu.debug.why.explain``)."""
        from picaemu.debug.why import explain

        self._draw(draw)
        return explain(self.session, draw)

    def draw_of(self, frame: int, n: int) -> int:
        """The global index of draw ``n`` (from 0) of frame ``frame``."""
        in_frame = [d.index for d in self.session.timeline.draws if d.frame == frame]
        if not 0 <= n < len(in_frame):
            raise PicaError(f"frame {frame} has {len(in_frame)} draw(s); there is no draw {n} in it")
        return in_frame[n]

    def footprint(self, draw: int, step: int = 4, zoom: bool = False) -> Footprint:
        """Draw ``draw``'s footprint: ``image`` (ceil(H/step), ceil(W/step), 3) uint8, the target after the draw
        (``zoom``: the region around the draw), its own pixels bright, the rest dimmed, its bounds outlined;
        ``written`` / ``killed`` cell masks; ``region`` the part of the target shown."""
        return footprint_of(self.session, draw, step, zoom)

    # -- markers and bookmarks ---------------------------------------------------------------------------
    def markers(self) -> list[MarkerGroup]:
        """One group per capture ``Marker`` event: its text and the events / draws after it."""
        return bookmarks.marker_groups(self.session.timeline, self.session.replay.events)

    def _capture_path(self) -> str:
        path = self.session.replay.path
        if not path:
            raise PicaError("this replay was not opened from a file: there is nowhere to keep bookmarks")
        return path

    def bookmarks(self) -> list[Bookmark]:
        return bookmarks.load(self._capture_path())

    def add_bookmark(self, name: str, draw: int) -> list[Bookmark]:
        """Bookmark the position right after ``draw`` as ``name``; returns every bookmark."""
        self._draw(draw)
        return bookmarks.add(self._capture_path(), name, self.session.timeline.after_draw(draw))

    def rename_bookmark(self, old: str, new: str) -> list[Bookmark]:
        return bookmarks.rename(self._capture_path(), old, new)

    def remove_bookmark(self, name: str) -> list[Bookmark]:
        return bookmarks.remove(self._capture_path(), name)

    # -- search ------------------------------------------------------------------------------------------
    def find(
        self,
        *,
        register: str | None = None,
        value: int | None = None,
        texture: int | None = None,
        shader: str | None = None,
        field: str = "",
    ) -> list[find_mod.Hit]:
        """Register writes (``field="depth_func=greater"``: a field condition) or draws matching the criteria, in
        order (``picaemu.debug.find.find``)."""
        return find_mod.find(self.session, register=register, value=value, texture=texture, shader=shader, field=field)

    def programs(self) -> list[str]:
        """Per draw, the shader programs it runs as ``"vs HASH@0xENTRY"`` (``find.draw_programs``)."""
        return find_mod.draw_programs(self.session.draw_states)

    # -- pictures ----------------------------------------------------------------------------------------
    def backend_diff(self, draw: int):
        """``picaemu.debug.backend_diff.BackendDiff`` of ``draw`` (``BackendUnavailable`` without EGL)."""
        from picaemu.debug.backend_diff import backend_diff

        self._draw(draw)
        return backend_diff(self.session, draw)

    def texture(self, draw: int, unit: int, level: int = 0, face: int = 0) -> np.ndarray:
        """(H, W, 4) uint8 RGBA of texture unit ``unit`` as bound at ``draw`` (memory as the draw read it)."""
        self._draw(draw)  # checks the number
        bound = [t for t in state_views.bound_textures(self.session.state_at_draw(draw)) if t.unit == unit]
        if not bound or bound[0].kind == "procedural":
            raise PicaError(f"texture unit {unit} is not one of the sampled units 0-2")
        if bound[0].error:
            raise PicaError(f"texture unit {unit} at draw {draw}: {bound[0].error}")
        if not 0 <= face < len(bound[0].addresses):
            raise PicaError(f"texture unit {unit} has {len(bound[0].addresses)} face(s), not face {face}")
        self.session.goto(self.session.timeline.before_draw(draw))
        return state_views.texture_image(self.session.replay.memory, bound[0], face, level)

    def surface(self, address: int, fmt: str, width: int, height: int, level: int = 0) -> np.ndarray:
        """(H, W, 4) uint8 RGBA of any memory decoded as texture format ``fmt`` (a ``TextureFormat`` name) at the
        replay's current position."""
        from picaemu.texture import decode_texture
        from picaemu.texture.formats import TextureFormat

        try:
            code = TextureFormat[fmt.upper()].value
        except KeyError:
            raise PicaError(
                f"unknown texture format {fmt!r}: one of {', '.join(f.name for f in TextureFormat)}"
            ) from None
        return decode_texture(self.session.replay.memory, address, width, height, code, level)

    def surface_view(
        self, address: int, fmt: str, width: int, height: int, tiled: bool = True, after_draw: int | None = None
    ) -> surface_mod.Surface:
        """Any memory as a surface (``picaemu.debug.surface.decode_surface``: texture, color or depth formats, any
        size, tiled or linear) at the replay's current position, or just after draw ``after_draw``."""
        if after_draw is not None:
            self._draw(after_draw)
            self.session.goto(self.session.timeline.after_draw(after_draw))
        self.session.replay.sync_memory()
        return surface_mod.decode_surface(self.session.replay.memory, address, fmt, width, height, tiled)

    # -- edit and replay -----------------------------------------------------------------------------------
    def edit(self, draw: int, edits: list[Edit | str], scope: str = "from") -> EditResult:
        """``draw``'s frame re-rendered from ``draw`` on with ``edits`` (``picaemu.debug.edits``: objects or text such
        as ``"DEPTH_COLOR_MASK.depth_func=always"``, ``"c5=(1, 0, 0, 1)"``); ``scope`` "from" (this draw on) or
        "draw" (this draw only). The session's replay is left at the end of the frame."""
        return self.editor.edit(draw, edits, scope)

    def shader_source(self, draw: int, unit: str = "vs") -> str:
        """Re-assemblable picasso source of the program ``unit`` runs at ``draw`` (``state_views.shader_source``):
        the text a shader edit starts from."""
        shader_unit(unit)  # PicaError for an unknown unit, before any work
        self._draw(draw)
        return state_views.shader_source(self.session.state_at_draw(draw), unit)


NOT_STATE = ("failed", "fragment_ops")  # DrawState fields that are not state to read: the failed parts (each shows
# its error in place) and the compiled fragment passes' plan (built from framebuffer, depth_stencil, blend_program)


def pipeline_state_of(state: GpuState) -> dict[str, Any]:
    """Every stage's decoded state as plain data: ``DrawState`` field -> dict (a part whose registers are invalid
    gives {"error": text}), plus "tev_equations" (each TEV stage written out, ``tev_equations``) and the shader
    units' uniform files as vectors ("vs_uniforms", and "gs_uniforms" when the geometry shader is in use)."""
    ds = ds_mod.build_draw_state(state)
    out = {f.name: plain(getattr(ds, f.name)) for f in dataclasses.fields(ds) if f.name not in NOT_STATE}
    if not isinstance(ds.tev, ds_mod.Failed):
        out["tev_equations"] = tev_equations(ds.tev)
    out["vs_uniforms"] = uniform_files(state, "vs")
    if isinstance(ds.primitives, ds_mod.Primitives) and ds.primitives.gs_in_use:
        out["gs_uniforms"] = uniform_files(state, "gs")
    return out


def with_call_site(state: dict[str, Any], record: DrawRecord) -> dict[str, Any]:
    """``state`` plus "call_site": the draw's recorded backtrace (``record --call-sites``), innermost first, one
    {"function", "file", "line", "address"} per frame; unchanged when none was recorded."""
    if record.call_site is not None:
        state["call_site"] = [dataclasses.asdict(f) for f in record.call_site.frames]
    return state


def changed_paths(a: Any, b: Any, prefix: str = "") -> set[str]:
    """Dotted paths (``texture0.addresses``) where two plain states differ (``pipeline_state_of``), parents included."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: set[str] = set()
        for key in set(a) | set(b):
            sub = changed_paths(a.get(key), b.get(key), f"{prefix}{key}.")
            if sub:
                out |= sub | {f"{prefix}{key}"}
        return out
    return {prefix.rstrip(".")} if a != b else set()
