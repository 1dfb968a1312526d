"""Geometry shader: feeds VS output vertices to GS invocations in the configured mode and collects EMITs.

``run_geometry_shader(setup, vertices, primitive_sizes=None) -> GeometryOutput``
- ``setup``: a GS ``ShaderSetup`` (``setup.geometry`` = mode and fixed/variable parameters, ``num_inputs`` and
  ``input_permutation`` from GSH_INPUTBUFFER_CONFIG / GSH_ATTRIBUTES_PERMUTATION, ``output_mask`` from
  GSH_OUTMAP_MASK).
- ``vertices``: (N, K, 4) float32, the VS output *attributes* of each delivered vertex in stream order (attribute
  j = the j-th enabled VS output register; indices already resolved by the loader).
- ``primitive_sizes``: variable-size mode only — the vertex count that prefixes each primitive in the index
  stream (the prefix itself is not a vertex).

Modes (pica-shader-isa.md §11.4): point (0) — the attributes of consecutive vertices are concatenated and every
``num_inputs`` attributes become v0-v15 of one invocation through the permutation (a trailing partial buffer
runs nothing); variable (1) — c0 = (N, N, N, N), then the first ``variable_main`` vertices write all K
attributes and the others only their first attribute to c1, c2, …, and the GS runs once per primitive; fixed
(2) — each vertex writes K registers from c[fixed_start + k*stride], and the GS runs after every
``fixed_vertices`` vertices. Uniforms not overwritten keep their configured values.

Invocations run in order on one unit, as on hardware: temporaries, both output banks, the emit buffer
(3 slots, not cleared between primitives or invocations) and the SETEMIT latch carry over, and b15 becomes true
after every invocation. EMIT copies the current bank's outputs into slot VTXID and flips the bank; with PRIMEMIT
the triangle (slot 0, 1, 2) — first two swapped when WINDING is set — is emitted.

Returns ``GeometryOutput``: ``vertices`` (M, 16, 4) float32 (o0-o15 of each EMIT; registers outside the output
mask are 0), ``triangles`` (T, 3) int64 indices into ``vertices`` in rasterization order, ``winding`` (T,) bool.

For the compiled route (``picaemu.fused.geometry``), ``invocation_traces(setup)`` runs the interpreter's sequencer
without the arithmetic (``InvocationTrace``, an ``interpreter.UniformTrace``) when every flow instruction the program
reaches depends on the bool / int uniforms only: each invocation then follows the same path but for b15 and the
loop register aL it starts with (aL carries over from the invocation before; it changes only the aL of the
arithmetic runs before the first LOOP). Each trace lists the invocation's *events* in order — arithmetic runs
``("arith", pc, stop pc, aL)``, ``("setemit", vtxid, primemit, winding)`` and ``("emit",)`` — and the instructions
it executes. Trace 0 is the first invocation's (b15 as configured, aL 0); the next starts where the previous
ended (b15 true, its final aL), until one starts and ends alike: every later invocation runs that last trace (a
path's final aL is its start or a constant, so at most 3 traces).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from picaemu.errors import PipelineError, ShaderError
from picaemu.shader.interpreter import STEP_BUDGET, Control, DataFlow, Effect, Lanes, Machine, UniformTrace
from picaemu.shader.reference import ScalarMachine
from picaemu.shader.setup import ShaderSetup

# picaemu: kernel constants (NUM_SLOTS and MODES: ``picaemu.fused.geometry``'s kernels freeze them)
NUM_SLOTS = 3
B15 = 15
MODES = {0: "point", 1: "variable", 2: "fixed"}


@dataclass(frozen=True)
class GeometryOutput:
    vertices: np.ndarray  # (M, 16, 4) float32
    triangles: np.ndarray  # (T, 3) int64
    winding: np.ndarray  # (T,) bool


class EmitCollector:
    """The emit buffer and the emitted-primitive list of one GS unit."""

    def __init__(self, output_mask: int) -> None:
        self.keep = output_keep(output_mask)
        self.vertices: list[np.ndarray] = []
        self.slots: list[int | None] = [None] * NUM_SLOTS
        self.triangles: list[tuple[int, int, int]] = []
        self.winding: list[bool] = []

    def emit(self, outputs: np.ndarray, emitter: tuple[int, bool, bool], pc: int | None = None) -> None:
        """outputs (16, 4) of the current bank; emitter = (vtxid, primemit, winding)."""
        vtx, prim, wind = emitter
        self.vertices.append(np.where(self.keep[:, None], outputs, np.float32(0)).astype(np.float32))
        self.slots[vtx] = len(self.vertices) - 1
        if prim:
            if any(s is None for s in self.slots):
                raise ShaderError("primitive emitted before all three emit slots were written", pc=pc)
            a, b, c = self.slots
            self.triangles.append((b, a, c) if wind else (a, b, c))  # type: ignore[arg-type]
            self.winding.append(wind)

    def result(self) -> GeometryOutput:
        verts = np.array(self.vertices, np.float32).reshape(-1, 16, 4)
        tris = np.array(self.triangles, np.int64).reshape(-1, 3)
        return GeometryOutput(verts, tris, np.array(self.winding, bool))


def output_keep(output_mask: int) -> np.ndarray:
    """(16,) bool: the output registers GSH_OUTMAP_MASK ``output_mask`` enables (an EMIT keeps only those)."""
    return np.array([(output_mask >> i) & 1 for i in range(16)], bool)


def fixed_layout_error(setup: ShaderSetup, attributes: int) -> str | None:
    """Why fixed-size mode's layout cannot hold ``attributes`` attributes per vertex in c0-c95 (None: it fits)."""
    g = setup.geometry
    if g.fixed_stride < attributes or g.fixed_start + g.fixed_stride * g.fixed_vertices > len(setup.float_uniforms):
        return (
            f"fixed-size GS layout (start c{g.fixed_start}, stride {g.fixed_stride}, "
            f"{g.fixed_vertices} vertices) does not fit {attributes} attributes in c0-c95"
        )
    return None


def invocations(
    setup: ShaderSetup, vertices: np.ndarray, primitive_sizes: Sequence[int] | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (v registers (16, 4), float uniforms (96, 4)) for every GS invocation of the draw."""
    vertices = np.asarray(vertices, np.float32)
    if vertices.ndim != 3 or vertices.shape[2] != 4:
        raise PipelineError(f"GS input vertices must be (N, K, 4), got {vertices.shape}")
    g = setup.geometry
    n, k = vertices.shape[:2]
    base = np.array(setup.float_uniforms, np.float32)
    if g.mode == 0:
        flat = vertices.reshape(-1, 4)
        per = setup.num_inputs
        for start in range(0, len(flat) - per + 1, per):
            v = np.zeros((16, 4), np.float32)
            for a in range(per):
                v[setup.input_permutation[a]] = flat[start + a]
            yield v, base
    elif g.mode == 1:
        if primitive_sizes is None:
            raise PipelineError("variable-size GS mode needs the primitive sizes from the index stream")
        pos = 0
        for size in primitive_sizes:
            if size < 1 or pos + size > n:
                raise PipelineError(f"variable-size primitive of {size} vertices runs past the {n} vertices")
            c = base.copy()
            c[0] = size
            reg = 1
            for j in range(size):
                attrs = vertices[pos + j] if j < g.variable_main else vertices[pos + j, :1]
                if reg + len(attrs) > len(c):
                    raise PipelineError(f"variable-size primitive of {size} vertices overflows c0-c95")
                c[reg : reg + len(attrs)] = attrs
                reg += len(attrs)
            pos += size
            yield np.zeros((16, 4), np.float32), c
    elif g.mode == 2:
        error = fixed_layout_error(setup, k)
        if error:
            raise PipelineError(error)
        for start in range(0, n - g.fixed_vertices + 1, g.fixed_vertices):
            c = base.copy()
            for j in range(g.fixed_vertices):
                r = g.fixed_start + j * g.fixed_stride
                c[r : r + k] = vertices[start + j]
            yield np.zeros((16, 4), np.float32), c
    else:
        raise ShaderError(f"geometry shader mode {g.mode} does not exist (0 point, 1 variable, 2 fixed)")


def run_geometry_shader(
    setup: ShaderSetup,
    vertices: np.ndarray,
    primitive_sizes: Sequence[int] | None = None,
    *,
    step_budget: int = STEP_BUDGET,
    counters: dict | None = None,
) -> GeometryOutput:
    """Run every GS invocation of a draw on the vectorized engine (one lane, sequential invocations);
    ``counters["shader_instructions"]`` (when given) grows by the instructions the invocations executed."""
    collector = EmitCollector(setup.output_mask)
    machine = Machine(setup, 1, step_budget=step_budget)
    machine.on_emit = lambda m, lanes: _emit_vector(m, collector)
    bools = np.array(setup.bool_uniforms)
    for v, c in invocations(setup, vertices, primitive_sizes):
        machine.setup = setup.with_uniforms(bools=bools)
        machine.c[: len(c)] = c
        machine.vr[:16, :, 0] = v
        machine.steps = 0
        machine.run()
        bools[B15] = True
    if counters is not None:
        counters["shader_instructions"] = counters.get("shader_instructions", 0) + machine.lane_instructions
    return collector.result()


def _emit_vector(m: Machine, collector: EmitCollector) -> None:
    collector.emit(m.out[m.bank, :, :, 0], m.emitter)
    m.bank ^= 1


def run_geometry_reference(
    setup: ShaderSetup,
    vertices: np.ndarray,
    primitive_sizes: Sequence[int] | None = None,
    on_step=None,
    trace_invocation: int | None = None,
) -> GeometryOutput:
    """The same draw on the scalar reference machine; ``on_step`` sees the steps of ``trace_invocation``."""
    collector = EmitCollector(setup.output_mask)
    machine = ScalarMachine(setup)

    def emit(m: ScalarMachine) -> None:
        collector.emit(m.o[m.bank], m.emitter)
        m.bank ^= 1

    machine.on_emit = emit
    bools = np.array(setup.bool_uniforms)
    for k, (v, c) in enumerate(invocations(setup, vertices, primitive_sizes)):
        machine.setup = setup.with_uniforms(floats=c, bools=bools)
        machine.run(v, on_step if k == trace_invocation else None)
        bools[B15] = True
    return collector.result()


MAX_TRACES = 3  # distinct invocation paths: the first, then at most two until b15 and aL settle (module docstring)


class InvocationTrace(UniformTrace):
    """One GS invocation's sequencer without its arithmetic (``UniformTrace``), starting with loop register ``al``:
    ``events`` lists its arithmetic runs, SETEMITs and EMITs in order (module docstring), ``lane_instructions`` the
    instructions it executes. EMIT and SETEMIT go through the interpreter's own handlers (SETEMIT's vertex-id check,
    the latch); any other flow on lane data raises ``DataFlow``."""

    def __init__(self, setup: ShaderSetup, al: int) -> None:
        super().__init__(setup)
        self.aL[0] = al
        self.events: list[tuple] = []
        self.on_emit = _record_emit

    def arithmetic(self, ctl: Control, lanes: Lanes, length: int) -> Control:
        last = super().arithmetic(ctl, lanes, length)
        pc, run, al = self.segments[-1]
        self.events.append(("arith", pc, pc + run, al))
        return last

    def execute(self, pc: int, lanes: Lanes) -> list[tuple[Lanes, Effect]]:
        name = self.program.instruction(pc).name
        if name not in ("emit", "setemit"):
            return super().execute(pc, lanes)
        outcome = Machine.execute(self, pc, lanes)  # EMIT reaches ``_record_emit`` through its handler
        if name == "setemit":
            vtxid, primemit, winding = self.emitter
            self.events.append(("setemit", vtxid, int(primemit), int(winding)))
        return outcome


def _record_emit(m: Machine, lanes: Lanes) -> None:
    assert isinstance(m, InvocationTrace)
    m.events.append(("emit",))


def invocation_traces(setup: ShaderSetup) -> list[InvocationTrace] | str:
    """The traces of a GS draw's invocations (module docstring): invocation i runs trace ``min(i, len - 1)``; or
    a str naming why the program has none (flow on lane data, or an error the staged runner raises)."""
    bools = np.array(setup.bool_uniforms)
    traces: list[InvocationTrace] = []
    al = 0
    while len(traces) < MAX_TRACES:
        trace = InvocationTrace(setup.with_uniforms(bools=bools.copy()), al)
        try:
            trace.run()
        except DataFlow:
            return "flow control on data in the geometry shader (ifc / callc / jmpc / breakc reached)"
        except ShaderError as err:
            return f"geometry shader: {err}"
        traces.append(trace)
        end = int(trace.aL[0])
        if bools[B15] and end == al:
            return traces
        bools[B15], al = True, end
    return f"geometry shader invocations did not settle in {MAX_TRACES} paths (aL {al})"  # see the docstring
