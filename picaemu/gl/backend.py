"""``GLPipeline``: the rendering pipeline with rasterization and every fragment stage in OpenGL.

Vertex processing is the software pipeline's (``picaemu.pipeline.Pipeline``: vertex loader, shader unit, output
map, primitive assembly, clipping, viewport, culling); its ``_fragments`` seam receives the window triangles
(12.4 fixed-point x y, z/w, 1/w, varyings premultiplied by 1/w) and here they become one vertex buffer drawn
with the draw's generated program (``shadergen``, cached by ``ProgramKey``), its uniform block, textures
(``textures``) and fixed-function state (``fixed``) into the GL copies of its buffers (``targets``).

GL's rasterizer with the lower-left origin covers exactly the samples PICA's rule does (left and bottom edges in,
right and top edges out; positions on a 1/16 pixel grid are exact in GL's 8 sub-pixel bits), and the fragment
shader divides the interpolated premultiplied varyings by the interpolated 1/w as the software rasterizer does.

Draws that use a rule of ``rules.RULES`` — and every draw while a fragment observer is attached (fragment fates
come from the software pipeline only) — run in the software pipeline after a memory sync: the log names the
rule once per pipeline (logger ``picaemu.gl``) and ``fallbacks`` counts draws per rule. Per-draw counters from
the rasterizer on (``fragments_rasterized``, ``killed_*``, ``fragments_written``, ``texels_fetched``) stay 0 for
draws GL renders (GL does not report them without a pipeline stall per draw).
"""

from __future__ import annotations

import ctypes
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from OpenGL import GL as gl
from OpenGL.raw.GL.VERSION import GL_1_1 as raw11
from OpenGL.raw.GL.VERSION import GL_2_0 as raw20
from OpenGL.raw.GL.VERSION import GL_3_0 as raw30
from OpenGL.raw.GL.VERSION import GL_4_4 as raw44

from picaemu.color.lighting_luts import DecodedLuts
from picaemu.draw import DrawCall, PipelineEventKind
from picaemu.draw_state import DrawState
from picaemu.errors import PicaError, PipelineError
from picaemu.fragment import framebuffer as fbm
from picaemu.geometry import clipping
from picaemu.gl import glsl_lib, proctexgen, rules, shadergen
from picaemu.gl.context import shared_context
from picaemu.gl.fixed import FixedState
from picaemu.gl.lightgen import LUT_BINDING
from picaemu.gl.targets import TargetCache, TargetKey
from picaemu.gl.textures import TableTexture, TextureCache, as_sampled, byte_ranges, lighting_table
from picaemu.memory import PhysicalMemory
from picaemu.pipeline import Pipeline
from picaemu.state import GpuState
from picaemu.texture.proctex import ProctexState
from picaemu.texture.state import TextureUnitState

log = logging.getLogger("picaemu.gl")
VERTEX_FLOATS = 4 * glsl_lib.VERTEX_VEC4S
VARYING_COLUMNS = 18  # picaemu.geometry.output_map columns 4..21
PLAN_ENTRIES = 256  # draw-state combinations remembered (all forgotten when full)
STREAM_BYTES = 32 << 20  # the stream buffer of vertices and uniform blocks (a glFinish each time it fills)


def _compile(kind: int, source: str) -> int:
    shader = gl.glCreateShader(kind)
    gl.glShaderSource(shader, source)
    gl.glCompileShader(shader)
    if not gl.glGetShaderiv(shader, gl.GL_COMPILE_STATUS):
        raise PipelineError(f"generated GLSL does not compile: {gl.glGetShaderInfoLog(shader).decode().strip()}")
    return shader


class ProgramCache:
    """Linked programs by ``shadergen.ProgramKey``."""

    def __init__(self) -> None:
        self._vertex = _compile(gl.GL_VERTEX_SHADER, glsl_lib.VERTEX_SHADER)
        self.programs: dict[shadergen.ProgramKey, tuple[int, int]] = {}

    def get(self, key: shadergen.ProgramKey) -> tuple[int, int]:
        """(program, location of u_size)."""
        entry = self.programs.get(key)
        if entry is None:
            program = gl.glCreateProgram()
            fragment = _compile(gl.GL_FRAGMENT_SHADER, shadergen.fragment_source(key))
            gl.glAttachShader(program, self._vertex)
            gl.glAttachShader(program, fragment)
            gl.glLinkProgram(program)
            gl.glDeleteShader(fragment)
            if not gl.glGetProgramiv(program, gl.GL_LINK_STATUS):
                raise PipelineError(f"generated GLSL does not link: {gl.glGetProgramInfoLog(program).decode().strip()}")
            entry = self.programs[key] = (program, gl.glGetUniformLocation(program, "u_size"))
        return entry


class StreamBuffer:
    """One GL buffer, mapped once (persistent, coherent), filled front to back with each draw's data (vertices,
    uniform blocks) at a fresh offset by plain memory copies — no GL call per draw.

    llvmpipe renders a draw's fragments later than the draw call (at the next flush) and reads storage and
    uniform buffers then: data replaced in place (``glBufferData`` on the same buffer, measured: the fragments
    of every draw read the last draw's triangles; ``glBufferSubData`` waits for the draws that read the buffer)
    would reach earlier draws or stall. So nothing written is overwritten before a ``glFinish``, which runs only
    when the buffer is full (then writing starts over at 0; ``finishes`` counts it)."""

    def __init__(self, size: int, alignment: int = 256) -> None:
        self.buffer = gl.glGenBuffers(1)
        self.size, self.alignment, self.offset = size, alignment, 0
        self.finishes = 0
        flags = gl.GL_MAP_WRITE_BIT | gl.GL_MAP_PERSISTENT_BIT | gl.GL_MAP_COHERENT_BIT
        gl.glBindBuffer(gl.GL_COPY_WRITE_BUFFER, self.buffer)
        raw44.glBufferStorage(gl.GL_COPY_WRITE_BUFFER, size, None, flags)
        pointer = raw30.glMapBufferRange(gl.GL_COPY_WRITE_BUFFER, 0, size, flags)
        if not pointer:
            raise PipelineError("OpenGL cannot map the stream buffer persistently")
        self.memory = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(pointer))

    def reserve(self, nbytes: int) -> tuple[int, np.ndarray]:
        """(byte offset, uint8 view of ``nbytes`` there) for the caller to fill."""
        if nbytes > self.size:
            raise PipelineError(f"draw data of {nbytes} bytes exceeds the GL stream buffer ({self.size})")
        if self.offset + nbytes > self.size:
            gl.glFinish()
            self.offset = 0
            self.finishes += 1
        at = self.offset
        self.offset = -(-(at + nbytes) // self.alignment) * self.alignment
        return at, self.memory[at : at + nbytes]

    def put(self, data: bytes) -> int:
        """Copy ``data`` in; returns its byte offset."""
        at, view = self.reserve(len(data))
        view[:] = np.frombuffer(data, np.uint8)
        return at


@dataclass(frozen=True, eq=False)
class Plan:
    """What one draw state asks of GL, decided once per combination of its parts (``GLPipeline._plan``)."""

    parts: tuple  # the draw state parts it was made from (kept alive, so that their ids stay theirs)
    units: tuple[TextureUnitState, ...]  # the texture units the TEV or the lighting reads
    luts: DecodedLuts | None  # the lighting LUTs, when the program lights fragments
    proctex: ProctexState | None  # the procedural texture's tables, when the program reads unit 3
    color: TargetKey
    depth: TargetKey | None  # None: the draw neither tests nor writes depth/stencil
    fixed: FixedState
    program: int
    size_location: int
    block: bytes  # the uniform block
    unmapped: np.ndarray  # varying columns the output map leaves at 1.0
    writes_color: bool
    writes_depth: bool
    derivatives: bool  # the program takes LOD derivatives: the vertices carry their primitive's siblings

    @classmethod
    def of(cls, ds: DrawState, programs: ProgramCache, parts: tuple) -> Plan:
        fb = ds.framebuffer
        depth_used = ds.depth_stencil.uses_depth_buffer(fb.depth_format)
        fixed = FixedState.of(ds, depth_used)
        quantize = (
            any(bits < 8 for _, _, bits in fbm.COLOR_LAYOUTS[fb.color_format])
            and fixed.blend is None
            and fixed.logic is None
        )
        key = shadergen.program_key(ds, depth_used, quantize)
        program, size_location = programs.get(key)
        return cls(
            parts,
            tuple(map(as_sampled, shadergen.units_used(ds))),
            ds.lighting.luts if ds.lighting is not None else None,  # set when the TEV reads lit colors
            ds.proctex,
            TargetKey(fb.color_address, fb.color_format, fb.width, fb.height, fb.flipped),
            TargetKey(fb.depth_address, fb.depth_format, fb.width, fb.height, fb.flipped) if depth_used else None,
            fixed,
            program,
            size_location,
            shadergen.uniform_block(ds, fbm.depth_max(fb.depth_format)),
            np.setdiff1d(np.arange(VARYING_COLUMNS), ds.varyings.active),
            any(fixed.color_mask),
            bool(fixed.depth and fixed.depth[1]) or bool(fixed.stencil and fixed.stencil[6]),
            shadergen.takes_derivatives(key),
        )


def vertex_data(
    wt: clipping.WindowTriangles, unmapped: np.ndarray, out: np.ndarray | None = None, with_siblings: bool = True
) -> np.ndarray:
    """(T * 3, VERTEX_FLOATS) float32 vertices of ``glsl_lib.VERTEX_SHADER`` (into ``out``'s bytes when given);
    the ``unmapped`` varying columns read 1.0 (stored as 1/w, divided by the interpolated 1/w); each triangle's
    first vertex carries its ``siblings`` (``glsl_lib.SIBLING_FLOATS``; 0 without ``with_siblings``: a program that
    takes no derivatives does not read them)."""
    t = len(wt)
    data = np.empty((t, 3, VERTEX_FLOATS), np.float32) if out is None else out.view(np.float32).reshape(t, 3, -1)
    data[:, :, 4 + VARYING_COLUMNS :] = 0.0
    data[:, :, 0] = wt.x * (1.0 / clipping.SUBPIXEL)
    data[:, :, 1] = wt.y * (1.0 / clipping.SUBPIXEL)
    data[:, :, 2] = wt.zndc
    data[:, :, 3] = wt.inv_w
    data[:, :, 4 : 4 + VARYING_COLUMNS] = wt.varyings[:, :, :VARYING_COLUMNS]
    data[:, :, 4 + unmapped] = wt.inv_w[:, :, None]
    if with_siblings:
        first, count = siblings(wt.primitive)
        data[:, 0, glsl_lib.SIBLING_FLOATS] = first
        data[:, 0, glsl_lib.SIBLING_FLOATS + 1] = count
    return data.reshape(t * 3, VERTEX_FLOATS)


def siblings(primitive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each window triangle (T,): the index of the first triangle of its run of equal ``primitive`` numbers
    (the fan clipping made of one primitive, in submission order) and the run's length, each (T,) int64."""
    t = len(primitive)
    starts = np.flatnonzero(np.r_[True, primitive[1:] != primitive[:-1]]) if t else np.zeros(0, np.int64)
    lengths = np.diff(np.r_[starts, t])
    return np.repeat(starts, lengths), np.repeat(lengths, lengths)


class GLPipeline(Pipeline):
    """See the module docstring; ``BackendUnavailable`` when no EGL context can be made."""

    def __init__(self, **kwargs: Any) -> None:  # Pipeline's keyword arguments
        context = shared_context()
        super().__init__(**kwargs)
        self.context = context
        self.targets = TargetCache()
        self.textures = TextureCache()
        self.programs = ProgramCache()
        self.luts = TableTexture(LUT_BINDING, 24, 256, 2)
        self.proctex_luts = TableTexture(proctexgen.LUT_BINDING, proctexgen.LUT_LAYERS, 256, 4)
        self.fallbacks: Counter[str] = Counter()
        self.gl_draws = 0
        self.memory: PhysicalMemory | None = None
        self._fixed: FixedState | None = None
        self._block_of: Plan | None = None
        self._block_generation = 0
        self._plans: dict[tuple[int, ...], Plan] = {}
        self._bound: tuple[int, int, int] = (0, 0, 0)  # (program, width, height) last set
        self._block: tuple[int, int] = (0, 0)  # (offset, size) of the current uniform block in the stream
        self.stream = StreamBuffer(STREAM_BYTES, VERTEX_FLOATS * 4 * 3)
        self._vao = gl.glGenVertexArrays(1)
        gl.glBindVertexArray(self._vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.stream.buffer)
        gl.glEnableVertexAttribArray(0)
        gl.glVertexAttribPointer(0, 4, gl.GL_FLOAT, False, VERTEX_FLOATS * 4, ctypes.c_void_p(0))

    def event(self, kind: PipelineEventKind, state: GpuState) -> None:
        super().event(kind, state)
        if kind is PipelineEventKind.MEMORY_SYNC:
            self.sync()

    def sync(self) -> None:
        """Write every GL render target back into memory (``targets.TargetCache.sync``)."""
        self.context.make_current()
        self.targets.sync(self.memory)

    def draw(self, call: DrawCall) -> None:
        if self.memory is not call.memory:
            self.sync()
            self.memory = call.memory
        super().draw(call)

    def _fragments(self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict) -> None:
        if len(wt) == 0:
            return
        ds = call.draw_state
        obs = self.stage_observer  # an observer of fragments gets the software pass's own records
        watched = obs is not None and (obs.fragment_fates or obs.fragment_values or obs.fragment_tests)
        reason = "fragment observer attached" if watched else rules.fallback_reason(ds)
        if reason is None:
            try:
                self._render(call.memory, ds, wt)
                self.gl_draws += 1
                return
            except PicaError as err:  # a buffer outside memory: the software pipeline faults where it should
                reason = f"{type(err).__name__}"
        self._software(call, wt, stats, reason)

    def _software(self, call: DrawCall, wt: clipping.WindowTriangles, stats: dict, reason: str) -> None:
        if not self.fallbacks[reason]:
            log.warning("draw #%d and every later draw using %s run in the software pipeline", call.index, reason)
        self.fallbacks[reason] += 1
        self.sync()  # the software pipeline reads and writes memory; GL re-checks its copies afterwards
        super()._fragments(call, wt, stats)

    def _plan(self, ds: DrawState) -> Plan:
        """The draw's GL setup, reused while the parts it is made of are the same objects."""
        fog = ds.fog if ds.fog.mode == "fog" else None  # rebuilt at every TEV write: identity only when it is used
        parts = (
            ds.framebuffer,
            ds.depth_stencil,
            ds.tev,
            *ds.textures,
            ds.blend,
            ds.raster,
            fog,
            ds.varyings,
            ds.lighting,
            ds.proctex,
        )  # the coordinate set of unit 3 is in TEXUNIT_CONFIG: a new ds.proctex
        ids = tuple(map(id, parts))
        plan = self._plans.get(ids)
        if plan is None:
            if len(self._plans) >= PLAN_ENTRIES:
                self._plans.clear()
            plan = self._plans[ids] = Plan.of(ds, self.programs, parts)
        return plan

    def _render(self, memory: PhysicalMemory, ds: DrawState, wt: clipping.WindowTriangles) -> None:
        self.context.make_current()
        plan = self._plan(ds)
        for unit in plan.units:
            for address, size in byte_ranges(unit):
                self.targets.write_back_overlapping(address, size, memory)
        color = self.targets.claim(plan.color, memory)
        depth = self.targets.claim(plan.depth, memory) if plan.depth is not None else None
        for unit in plan.units:
            self.textures.bind(unit, memory, unit.unit, self.targets.epoch)
        luts, proctex = plan.luts, plan.proctex  # locals: the closures see them narrowed
        if luts is not None:
            self.luts.bind(luts, lambda: lighting_table(luts))
        if proctex is not None:
            self.proctex_luts.bind(proctex, lambda: proctexgen.proctex_table(proctex))
        self.targets.framebuffer(color, depth)
        fb = ds.framebuffer
        plan.fixed.apply(self._fixed)
        self._fixed = plan.fixed
        bound = (plan.program, fb.width, fb.height)
        if bound != self._bound:  # program, its u_size and the viewport: set when they change
            raw11.glViewport(0, 0, fb.width, fb.height)
            raw20.glUseProgram(plan.program)
            raw20.glUniform2f(plan.size_location, float(fb.width), float(fb.height))
            self._bound = bound
        nbytes = len(wt) * 3 * VERTEX_FLOATS * 4
        at, view = self.stream.reserve(nbytes)  # first: a glFinish on a full stream comes before the block's offset
        vertex_data(wt, plan.unmapped, view, plan.derivatives)
        if self._block_of is not plan or self._block_generation != self.stream.finishes:
            self._block = (self.stream.put(plan.block), len(plan.block))
            self._block_of, self._block_generation = plan, self.stream.finishes
        raw30.glBindBufferRange(gl.GL_UNIFORM_BUFFER, 0, self.stream.buffer, *self._block)
        raw30.glBindBufferRange(gl.GL_SHADER_STORAGE_BUFFER, 1, self.stream.buffer, at, nbytes)
        raw11.glDrawArrays(gl.GL_TRIANGLES, at // (VERTEX_FLOATS * 4), len(wt) * 3)
        color.dirty = color.dirty or plan.writes_color
        if depth is not None:
            depth.dirty = depth.dirty or plan.writes_depth
