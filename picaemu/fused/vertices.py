"""Fused vertex side: a draw's vertex loading and its vertex front end (``picaemu.geometry.front_end``) as ONE
compiled call, ``vertex_side``, callable from Python (``run``) and from other compiled code (the command loop).

Receives a ``VertexPlan`` (``VertexPlan.of(ds, memory, fixed_attribs)``: the loader layout, the front end's
plan, the viewport and framebuffer size and the memory regions, packed once per state and remembered by
identity of the draw-state parts, ``PlanCache``; ``vertex_side`` reads it where ``VertexPlan.stored`` keeps it in
native form, member by member) and the draw's live fields (draw kind, vertex count, first vertex, index buffer
address and format, the VS float uniforms). Produces what the staged path computes:
``load_batch`` (``configured_only``) then ``front_end.run`` — the culled ``WindowTriangles`` arrays, the window
box the pipeline stores in ``call.bounds`` (``clipping.window_box``) and the counters ``VERTEX_COUNTERS``.

Loading is ``picaemu.fused.loading``'s (``vertex_loader``'s rules; the fixed attributes come from the state's store, a
live array: the plan holds the store itself, which uploads write in place).

A draw with the geometry shader in use gets a plan too (``VertexPlan.geometry``: its args are
``picaemu.fused.geometry.plan_args``'), which ``run`` hands to ``geometry.geometry_side`` (loading, VS, the GS
invocations, then this front end on the emitted triangles, in one compiled call); the command loop leaves such a
draw to the pipeline (``loop.plans_for``). It does not touch the primitive assembler, as the staged GS path.

Covered topologies: triangle lists, "geometry primitive" draws without the geometry shader (citro3d's indexed
lists: assembled as lists), strips and fans, each starting with nothing buffered in the assembler (so a strip
starts at parity 0); the triangles come from the assembler's own compiled rule
(``primitive_assembly.triangle_positions``) and the vertices a strip or fan leaves buffered
(``kept_positions``: its last two, a fan's centre and last) come back as ``held``, which ``run`` hands to the
``Assembler`` (``advance``) for a later draw that continues it without a restart.

Not covered (``VertexPlan.of`` answers why, as a str): immediate-mode draws (no plan is asked for), a part of the draw's
vertex side that failed to decode, the geometry shader's own refusals (``picaemu.fused.geometry``), vertex-shader flow
control that depends on vertex data (``ifc`` / ``callc`` / ``jmpc`` / ``breakc`` reached; flow steered by the bool / int
uniforms only is covered: ``front_end.plan_for``), memory without VRAM / FCRAM. At run time ``vertex_side`` answers
``ok`` False, having changed nothing, when the draw is not the common case: no vertices, more than
``MAX_DRAW_VERTICES``, a list count not a multiple of 3, a strip or fan of fewer than 3 vertices, an index or attribute
read not wholly inside VRAM or FCRAM (the staged path then raises its named
``MemoryFault``, or reads another region). ``run`` also leaves the draw to the staged path when the primitive assembler
holds vertices of an earlier draw of the same topology (a strip or fan continued without a restart, a list of an
incomplete triangle). Triangles crossing the clip volume or the user clip plane are clipped in the call (the front end's
kernel, ``clipping.classify`` then ``clip_classified``, as the staged path).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from picaemu import numba_link
from picaemu.draw import DrawKind
from picaemu.draw_state import DrawState, Phase
from picaemu.errors import PicaError
from picaemu.fused import geometry
from picaemu.fused.loading import ADDRESS, LOADER, OFFSET, _load, _stream, _unique, read_table
from picaemu.fused.stored_items import load_item
from picaemu.geometry import clipping, front_end
from picaemu.geometry.front_end import FRONT_END_ID
from picaemu.geometry.output_map import NUM_COLUMNS
from picaemu.geometry.primitive_assembly import TRIPLES, Assembler, Topology, kept_positions, triangle_positions
from picaemu.geometry.vertex_loader import MAX_DRAW_VERTICES
from picaemu.memory import PhysicalMemory

VERTEX_COUNTERS = (
    "vertices",
    "vertices_loaded",
    "vertices_shaded",
    "shader_instructions",
    "primitives_assembled",
    "primitives_invalid",
    "primitives_clipped_away",
    "primitives_clipped",
    "primitives_culled",
    "primitives_rasterized",
    "vertices_nonfinite",
)
ASSEMBLED = VERTEX_COUNTERS.index("primitives_assembled")
# the members of a plan's ``args`` (without the GS), in order (``VertexPlan``): ``vertex_side`` loads each by its
# position, a constant of its own (numba types a member by a literal index only)
PLAN_MEMBERS = (
    *("topology", "reads", "fixed", "fixed_values", "num_attributes"),
    *("pairs", "program", "segments", "written", "source"),
    *("quaternions", "half_w", "half_h", "vx", "vy", "drop_sign", "planes", "offsets"),
    *("callees", "front_end", "instructions", "width", "height", "vram", "vram_base", "fcram", "fcram_base"),
)
P_TOPOLOGY, P_READS, P_FIXED, P_FIXED_VALUES, P_NUM_ATTRIBUTES = range(5)
P_PAIRS, P_PROGRAM, P_SEGMENTS, P_WRITTEN, P_SOURCE = range(5, 10)
P_QUATERNIONS, P_HALF_W, P_HALF_H, P_VX, P_VY, P_DROP_SIGN, P_PLANES, P_OFFSETS = range(10, 18)
P_CALLEES, P_FRONT_END, P_INSTRUCTIONS, P_WIDTH, P_HEIGHT = range(18, 23)
P_VRAM, P_VRAM_BASE, P_FCRAM, P_FCRAM_BASE = range(23, len(PLAN_MEMBERS))
EMPTY_BOX = geometry.EMPTY_BOX  # ``vertex_side``'s box when no triangle is left
__all__ = [
    "ADDRESS",
    "LOADER",
    "OFFSET",
    "VERTEX_COUNTERS",
    "PlanCache",
    "VertexPlan",
    "read_table",
    "run",
    "vertex_side",
]


@dataclass(frozen=True)
class VertexPlan:
    """``topology``: how the draw's stream forms triangles. ``args``: the values ``vertex_side`` takes after the
    live fields, in its order: the topology's code (``Topology`` value), reads (R, 7) int64 (the columns above;
    addresses are bytes of vertex index 0), fixed (F,) int64 attributes from the store, the store (16, 4) float32
    (live), K the configured attribute count, the front end's pairs / plan rows / segments / written outputs /
    source table, quaternions, viewport half width, half height, x, y (floats), the cull drop sign, the clip
    planes (P, 4) and offsets (P,) float64 (``ClipState``: the fixed ones, then the user plane when enabled), the
    entries of the kernels the front end calls by address (``front_end.front_end_links``), the front end's
    (``front_end.front_end_entry``: the vertex side calls it by address), instructions per vertex, framebuffer
    width and height, then VRAM (uint8 array, live) and its base address, FCRAM and its base address (``PLAN_MEMBERS``
    names them). ``vertex_side`` reads them where ``stored`` keeps them."""

    topology: Topology
    args: tuple
    geometry: bool = False  # a geometry-shader draw: ``args`` are ``geometry.geometry_side``'s (``geometry.plan_args``)

    @classmethod
    def of(cls, ds: DrawState, memory: PhysicalMemory, fixed_attribs: np.ndarray) -> VertexPlan | str:
        """The plan of a draw-arrays / draw-elements draw of ``ds`` reading ``memory``, its fixed attributes from
        ``fixed_attribs`` (the state's (16, 4) float32 store); a str naming why the draw is not covered."""
        if any(phase is not Phase.FRAGMENTS for phase, _ in ds.failed):
            return "a part of the vertex side failed to decode"
        prim, loader = ds.primitives, ds.loader
        names = {region.name: region for region in memory.regions}
        if "vram" not in names or "fcram" not in names:
            return "memory without VRAM and FCRAM regions"
        try:
            fe = front_end.plan_for(ds, loader.num_attributes)
        except PicaError as err:  # the staged path raises it at the output map
            return f"output map: {err}"
        if fe is None:
            return "flow control on vertex data in the vertex shader (or its entry outside the program)"
        reads, fixed = read_table(loader), np.array(loader.fixed, np.int64)
        vp, fb = ds.viewport, ds.framebuffer
        quaternions, planes, offsets = bool(ds.varyings.quaternions), ds.clip.planes, ds.clip.offsets
        view = (quaternions, *_viewport(vp), int(clipping.CULL_DROPS[vp.cull_mode]), planes, offsets)
        links = (front_end.front_end_links(), front_end.front_end_entry(fe, quaternions, planes, offsets))
        vram, fcram = names["vram"], names["fcram"]
        regions = (memory.region_bytes("vram"), int(vram.base), memory.region_bytes("fcram"), int(fcram.base))
        if prim.gs_in_use:
            loading = (reads, fixed, fixed_attribs, int(loader.num_attributes), *regions)
            args = geometry.plan_args(ds, fe, loading, (*view, int(fb.width), int(fb.height)), links)
            return args if isinstance(args, str) else cls(prim.topology, args, geometry=True)
        shading = (fe.pairs, fe.plan, fe.segments, fe.written, fe.source)
        inputs = (prim.topology.value, reads, fixed, fixed_attribs, int(loader.num_attributes))
        tail = (int(fe.instructions), int(fb.width), int(fb.height), *regions)
        return cls(prim.topology, (*inputs, *shading, *view, *links, *tail))

    @cached_property
    def kind(self) -> object:
        """``numba_link.arguments_kind(args)`` (the plan table's and ``stored``'s key)."""
        return numba_link.arguments_kind(self.args)

    @cached_property
    def stored(self) -> numba_link.Stored:
        """``args`` kept in native form, where ``vertex_side`` reads them (made once, living as long as this plan)."""
        return numba_link.Stored(self.args, self.kind)

    @cached_property
    def stored_type(self) -> numba.types.TypeRef:
        """The type ``vertex_side`` takes ``stored``'s address with."""
        return numba.types.TypeRef(self.stored.type)


def _viewport(vp: clipping.ViewportState) -> tuple[float, float, float, float]:
    """The viewport's half width, half height, x and y, as the kernels take them."""
    return float(vp.half_width), float(vp.half_height), float(vp.x), float(vp.y)


# the draw-state parts ``VertexPlan.of`` reads (``PlanCache``'s key, with the memory and the fixed-attribute store)
VERTEX_PARTS = (
    "loader",
    "vs_program",
    "vs",
    "output_map",
    "varyings",
    "primitives",
    "clip",
    "viewport",
    "framebuffer",
    "gs",
)


class PlanCache:
    """The last draw's ``VertexPlan.of``, remembered for its loader layout, program, output map, varyings, primitives,
    clip, viewport, framebuffer, memory, fixed store and GS setup (by identity: the draw-state cache hands the same part
    objects to draws that did not change them) and, for a program with flow control, the bool and int uniforms its path
    follows (``front_end.flow_key``); the float uniforms and the draw range are live. One per owner (the pipeline): the
    plan holds the memory's arrays, which must die with their replay."""

    def __init__(self) -> None:
        self._key: tuple = ()
        self._flow: bytes | None = None  # ``front_end.flow_key`` of the last draw: the uniforms a flow path follows
        self._plan: VertexPlan | str = "no draw yet"

    def plan_of(self, ds: DrawState, memory: PhysicalMemory, fixed_attribs: np.ndarray) -> VertexPlan | str:
        """``VertexPlan.of(ds, memory, fixed_attribs)``, from the memo when every key object is the last one's."""
        key = (
            ds.loader,
            ds.vs_program,
            ds.output_map,
            ds.varyings,
            ds.primitives,
            ds.clip,
            ds.viewport,
            ds.framebuffer,
            memory,
            fixed_attribs,
            ds.gs,
        )
        last = self._key
        if (
            last
            and not ds.failed
            and all(a is b for a, b in zip(last, key, strict=True))
            and (self._flow is None or self._flow == front_end.flow_key(ds))
        ):
            return self._plan
        self._key, self._plan = key, VertexPlan.of(ds, memory, fixed_attribs)
        self._flow = None if ds.failed else front_end.flow_key(ds)
        return self._plan


def run(
    plan: VertexPlan, ds: DrawState, kind: DrawKind, assembler: Assembler, stats: dict
) -> tuple[clipping.WindowTriangles, tuple[int, int, int, int] | None] | None:
    """The draw's culled window triangles and window bounds (None when no triangle is left), its counters added to
    ``stats``, the assembler advanced (not for a GS draw: the GS forms the triangles); or None (nothing changed): the
    staged path runs the draw (module docstring). ``kind``: ARRAYS or ELEMENTS, the range from ``ds.vertex_range``."""
    vr = ds.vertex_range
    live = (kind is DrawKind.ELEMENTS, vr.count, vr.first, vr.index_address, vr.index_dtype.itemsize == 2)
    if plan.geometry:
        assert ds.gs is not None  # the plan exists for a draw with the GS unit in use only
        floats = (ds.vs.float_uniforms, ds.gs.float_uniforms)
        ok, arrays, box, totals = front_end.with_clipper(geometry.geometry_side, *live, *floats, *plan.args)
        if not ok:
            return None
        counts = np.array(totals, np.int64)
    else:
        if not assembler.takes_whole_triangles(plan.topology):
            return None
        counts = np.zeros(len(VERTEX_COUNTERS), np.int64)
        # writeable, as the loop passes them (a view of its kernel's uniforms): the draw state's read-only array would
        # compile ``vertex_side`` a second time (~1.5 s of a capture's first clipped draw)
        uniforms = ds.vs.float_uniforms.copy()
        ok, arrays, box, held = front_end.with_clipper(
            vertex_side, *live, uniforms, plan.stored.address, counts, plan.stored_type
        )
        if not ok:
            return None
        assembler.advance(plan.topology, int(counts[ASSEMBLED]), held)
    for key, value in zip(VERTEX_COUNTERS, counts.tolist(), strict=True):
        stats[key] = stats.get(key, 0) + value
    wt = clipping.WindowTriangles(*arrays)
    return wt, (box if len(wt) else None)


@numba_link.compiled_only()
def _none_held():  # pragma: no cover - compiled
    """No vertex left buffered (``vertex_side``'s held rows of a failure)."""
    return numba_link.empty((0, NUM_COLUMNS), np.float32)


@numba_link.kernel()
def vertex_side(
    kind_elements, count, first, index_address, index_u16, floats, plan, counts, plan_type
):  # pragma: no cover
    """(ok, (x, y, zndc, inv_w, varyings, primitive), (x0, y0, x1, y1), held): one draw's vertex side (module
    docstring), the arrays as ``clipping.WindowTriangles`` after culling, the box as ``clipping.window_box``
    (``EMPTY_BOX`` when no triangle is left), held the (k <= 2, NUM_COLUMNS) float32 output-mapped vertices the
    draw leaves buffered in the assembler (``kept_positions``: a strip's last two, a fan's centre and last);
    ``counts`` (len(VERTEX_COUNTERS),) int64 receives the counters. ok False: not the common case, ``counts``
    untouched. Live fields: ``kind_elements`` (bool), ``count`` (NUMVERTICES), ``first`` (VERTEX_OFFSET),
    ``index_address`` (bytes), ``index_u16`` (bool), ``floats`` (96, 4) float32 VS float uniforms; ``plan`` the
    address where ``numba_link.Stored`` keeps ``VertexPlan.args`` (``VertexPlan.stored``), of type ``plan_type``
    (a ``types.TypeRef``). Each member is loaded where it is used (``stored_items.load_item``): a member held from
    the start is reference-counted again at every refusal below (~1 k lines of LLVM IR each). The draw starts with
    nothing buffered and a strip parity of 0 (the callers' check: ``Assembler.takes_whole_triangles``)."""
    topology = load_item(plan_type, plan, P_TOPOLOGY)
    triples = topology == TRIPLES[0] or topology == TRIPLES[1]
    ok = not (count == 0 or (count % 3 if triples else count < 3) or count > MAX_DRAW_VERTICES)
    # one return (each return site reference-counts the answer's arrays: ~600 lines of LLVM IR), so the refusals
    # nest instead of returning early
    arrays, box, held = front_end.no_triangles(), EMPTY_BOX, _none_held()
    if ok:
        vram, vram_base = load_item(plan_type, plan, P_VRAM), load_item(plan_type, plan, P_VRAM_BASE)
        fcram, fcram_base = load_item(plan_type, plan, P_FCRAM), load_item(plan_type, plan, P_FCRAM_BASE)
        ok, stream = _stream(kind_elements, count, first, index_address, index_u16, vram, vram_base, fcram, fcram_base)
        if ok:
            if kind_elements:
                unique, inverse = _unique(stream)
            else:
                unique, inverse = stream, numba_link.indices(count)
            reads, fixed = load_item(plan_type, plan, P_READS), load_item(plan_type, plan, P_FIXED)
            fixed_values = load_item(plan_type, plan, P_FIXED_VALUES)
            num_attributes = load_item(plan_type, plan, P_NUM_ATTRIBUTES)
            loaded = (reads, fixed, fixed_values, num_attributes, vram, vram_base, fcram, fcram_base)
            ok, attrs = _load(unique, *loaded)
            if ok:
                ok, arrays, box, held = _shaded(
                    kind_elements, count, topology, triples, floats, unique, inverse, attrs, plan, counts, plan_type
                )
    return ok, arrays, box, held


@numba_link.kernel(inline="always")
def _shaded(
    kind_elements, count, topology, triples, floats, unique, inverse, attrs, plan, counts, plan_type
):  # pragma: no cover - compiled
    """``vertex_side``'s answer from its loaded vertices on (``attrs`` of the ``unique`` ones, ``inverse`` each
    submitted vertex's row): the front end's, or ok False (its arrays hold no triangle) when it declined for want
    of the clipper (``front_end.link_clipper``). Inlined: one site."""
    corners = inverse
    if not triples:  # element by element: a fancy index compiles numba's advanced-indexing machinery
        positions = triangle_positions(topology, count, 0)
        corners = numba_link.empty(positions.size, np.int64)
        for t in range(positions.shape[0]):
            for k in range(3):
                corners[3 * t + k] = inverse[positions[t, k]]
    shading = (
        attrs,
        load_item(plan_type, plan, P_PAIRS),
        load_item(plan_type, plan, P_PROGRAM),
        load_item(plan_type, plan, P_SEGMENTS),
        front_end.uniform_table(floats),
        load_item(plan_type, plan, P_WRITTEN),
        corners,
        triples and not kind_elements,  # identity
        load_item(plan_type, plan, P_SOURCE),
        load_item(plan_type, plan, P_QUATERNIONS),
        load_item(plan_type, plan, P_HALF_W),
        load_item(plan_type, plan, P_HALF_H),
        load_item(plan_type, plan, P_VX),
        load_item(plan_type, plan, P_VY),
        load_item(plan_type, plan, P_DROP_SIGN),
        load_item(plan_type, plan, P_PLANES),
        load_item(plan_type, plan, P_OFFSETS),
        load_item(plan_type, plan, P_CALLEES),
    )  # ``front_end._front_end``'s arguments
    ok, arrays, (invalid, away, clipped), culled, extent, vert, nonfinite = numba_link.call(
        FRONT_END_ID, load_item(plan_type, plan, P_FRONT_END), shading
    )
    kept = kept_positions(topology, count) if ok else numba_link.empty(0, np.int64)
    held = numba_link.empty((kept.shape[0], NUM_COLUMNS), np.float32)
    for i in range(kept.shape[0]):
        for c in range(NUM_COLUMNS):  # element copies: an array assignment compiles numba's shape-mismatch error
            held[i, c] = vert[inverse[kept[i]], c]
    box = EMPTY_BOX
    if ok:
        u, triangles, kept_triangles = unique.shape[0], corners.shape[0] // 3, arrays[0].shape[0]
        shaded = load_item(plan_type, plan, P_INSTRUCTIONS) * u
        totals = (count, u, u, shaded, triangles, invalid, away, clipped, culled, kept_triangles, nonfinite)
        for i in range(len(totals)):
            counts[i] = totals[i]
        if kept_triangles:
            box = clipping.window_box(extent, load_item(plan_type, plan, P_WIDTH), load_item(plan_type, plan, P_HEIGHT))
    return ok, arrays, box, held
