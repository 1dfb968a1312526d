"""The compiled draw loop: the command kernel's loop (``picaemu.command.kernel.run``) that also runs draw triggers
itself, without leaving compiled code, while it has plans for their state.

Receives the kernel's arguments as one tuple (``KERNEL_ARGS``), then a ``plan_table.PlanTable``'s arguments (up to
``TABLE_SLOTS`` states' plans: each a ``picaemu.fused.vertices.VertexPlan`` and ``picaemu.fused.fragments.FragmentPlan``
kept in native form at an address, with the values of the ``PLAN_KEY_IDS`` registers it was made under and of the
``WATCHED`` ones), each slot's entries of the kernels it and its draws call by address (``LINK_*``: the command
kernel, ``_draw``, which is given the slot's plan addresses, ``vertex_side``, which reads its plan there, and
``fragment_side``, the last three compiled for that slot's plan types): the loop itself never holds the plans, and is
compiled once whatever their types, ``_draw`` once per plan type, and slots of different types share the table.
Then the rows array it fills (one per draw it ran) and ``fstate`` (int64 slots ``FS_*``: rows filled, the write
groups its draws took, the last draw it may run, a draw handed over to run first, the current table slot). Produces
pixels in emulated memory, the kernel's own draw log entries (``_record_draw``) and the rows.
``picaemu.fused.driver`` drives it for the command processor.

A draw trigger is run here when all of these hold, else the loop returns the trigger's ``S_STOP`` to Python
untouched (Python asks the sink for that state's plans and hands the draw back, or renders it):
- only *live* write groups were written since the previous draw (``LIVE_GROUPS``: float uniforms, the draw
  range, the primitive configuration, texture and attribute buffer addresses, TEV and light colors) — or others, but the
  registers then hold the key values of one of the table's states (no program or LUT upload,
  ``PLAN_DATA_UPLOADS``: their digest is part of the plans' keys, Python's to check) — and every *watched*
  register (the primitive and geometry-stage configuration, the VS bool / int uniforms) holds the value the
  current plans were made under;
- the draw index is at most the plans' ``draw_limit``, and the work the loop ran with these plans has not reached
  their ``work_left`` (the replay's stop-after and mid-list checkpoint draws: the loop returns right after running
  that one, and the sink acts on it);
- the vertex and fragment sides both accept the draw at run time (they answer before writing anything).

Pipeline events the kernel queues between draws (a restart with every draw, cache clears, flushes) reach the
pipeline when the loop returns, after the draws it ran (the pipeline defers no work, so only the restart acts
on what the loop's draws see). The loop follows the restarts itself: a draw
runs only when the assembler holds nothing of its topology (``_starts_fresh``: a restart queued since the
previous draw, a previous draw of this call that left nothing of that topology buffered, or the draw Python
handed over after asking its assembler); a strip or fan continued without a restart goes to Python. The rows
record each draw's topology and whether a restart preceded it, the last draw's buffered vertices come back in
``held``, and ``CompiledDraws.assemble`` leaves the pipeline's assembler as the staged path would.

Live fields are read from the registers at each draw with field positions taken from the register table
(``LIVE_FIELDS``): vertex count, first vertex, index buffer offset and format, the attribute base, the base
address of texture units 0-2 (written into the fragment plan's ``TEXTURE_ADDRESS_SLOT`` entries), the TEV's
constant and buffer colors (``LIVE_COLORS``, into its TEV rows and buffer color: a material's tint shares its
plans), the light colors (``picaemu.fused.live_lights``: a lit material shares its plans too) and each loader's
offset (with the base, written into the vertex plan's read table: a game's vertex buffer per object shares its
layout's plans).

Row columns (``R_*``): draw index, kind (``K.D_ARRAYS`` / ``K.D_ELEMENTS``), the trigger packet's word position,
the buffer's packet count at the trigger, 1 when the trigger was its packet's last write, the word position after
it, the vertex count, the topology (``Topology`` value), 1 when a restart was queued since the previous draw,
then the vertex counters (``VERTEX_COUNTERS``), the fragment counters
(``FRAGMENT_COUNTERS``) and the 12.4 extent box (x lo, x hi, y lo, y hi; meaningful when a triangle was kept).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import OrderedDict
from dataclasses import dataclass

import numba
import numpy as np

from picaemu import numba_link
from picaemu.command import kernel as K
from picaemu.command.draw_log import KINDS
from picaemu.draw import DrawCall, DrawKind
from picaemu.draw_state import PLAN_DATA_UPLOADS, WRITE_GROUPS, Group, part_groups
from picaemu.fused import live_lights
from picaemu.fused.fragments import (
    ARG_BUFFER_COLOR,
    ARG_COLOR_INTS,
    ARG_LIGHTING,
    ARG_TEV_ROWS,
    FRAGMENT_COUNTERS,
    TEXTURE_ADDRESS_SLOT,
    FragmentPlan,
    fragment_side,
)
from picaemu.fused.layout import T_CONSTANT
from picaemu.fused.stored_items import load_item
from picaemu.fused.vertices import ADDRESS as READ_ADDRESS
from picaemu.fused.vertices import LOADER as READ_LOADER
from picaemu.fused.vertices import OFFSET as READ_OFFSET
from picaemu.fused.vertices import P_READS, P_TOPOLOGY, VERTEX_COUNTERS, VERTEX_PARTS, VertexPlan, vertex_side
from picaemu.geometry.output_map import NUM_COLUMNS
from picaemu.geometry.primitive_assembly import Assembler, Topology
from picaemu.geometry.vertex_loader import INDEX_DTYPES
from picaemu.regs import access, blocks, id_of
from picaemu.regs.blocks.geometry import NUM_LOADERS

LIVE_GROUPS = int(
    Group.VS_UNIFORMS
    | Group.GS_UNIFORMS
    | Group.DRAW_RANGE
    | Group.PRIMITIVE
    | Group.TEXTURE_ADDRESS
    | Group.ATTRIBUTE_ADDRESS
    | Group.TEV_COLOR
    | Group.LIGHT_COLOR
)
# registers of live groups whose value the plans depend on: they must hold the value the plans were made under
WATCHED = (
    "GEOSTAGE_CONFIG",
    "GEOSTAGE_CONFIG2",
    "PRIMITIVE_CONFIG",
    "VSH_BOOLUNIFORM",
    "VSH_INTUNIFORM_I0",
    "VSH_INTUNIFORM_I1",
    "VSH_INTUNIFORM_I2",
    "VSH_INTUNIFORM_I3",
)
WATCHED_IDS = np.array([id_of(name) for name in WATCHED], np.int64)
DRAW_TRIGGERS = {id_of("DRAWARRAYS"): K.D_ARRAYS, id_of("DRAWELEMENTS"): K.D_ELEMENTS}
_ARRAYS_ID, _ELEMENTS_ID = (reg for reg, _kind in sorted(DRAW_TRIGGERS.items(), key=lambda item: item[1]))

# live fields: rows of (register id, lowest bit, mask, bytes per unit)
LIVE_NAMES = (
    ("NUMVERTICES", "count"),
    ("VERTEX_OFFSET", "offset"),
    ("INDEXBUFFER_CONFIG", "offset"),
    ("INDEXBUFFER_CONFIG", "format"),
    ("ATTRIBBUFFERS_LOC", "base"),
    ("TEXUNIT0_ADDR1", "address"),
    ("TEXUNIT1_ADDR", "address"),
    ("TEXUNIT2_ADDR", "address"),
    *((f"ATTRIBBUFFER{j}_OFFSET", "offset") for j in range(NUM_LOADERS)),
)
F_COUNT, F_FIRST, F_INDEX_OFFSET, F_INDEX_FORMAT, F_BASE, F_TEXTURE = range(6)  # F_TEXTURE + unit
F_LOADER = F_TEXTURE + 3  # + loader: its OFFSET


def _live_fields() -> np.ndarray:
    rows = []
    for reg_name, field_name in LIVE_NAMES:
        reg_id, fld = access.locate(reg_name, field_name)
        rows.append((reg_id, fld.lo, (1 << fld.width) - 1, fld.scale))
    return np.array(rows, np.int64)


LIVE_FIELDS = _live_fields()
# the TEV's live colors: (register id, lowest bit of r, g, b, a) of each stage's constant, then the buffer's
COLOR_NAMES = (*(f"TEXENV{i}_COLOR" for i in range(6)), "TEXENV_BUFFER_COLOR")
LIVE_COLORS = np.array(
    [(id_of(name), *(access.locate(name, ch)[1].lo for ch in "rgba")) for name in COLOR_NAMES], np.int64
)
# registers whose content determines the plans: every register a stage reads (``WRITE_GROUPS``) outside the live
# groups, and the watched ones (their values are part of the plans); the shader programs come in by a digest
# (``picaemu.fused.driver``)
PLAN_KEY_IDS = np.union1d(
    np.flatnonzero((WRITE_GROUPS[: K.NUM_REGS] != 0) & ((WRITE_GROUPS[: K.NUM_REGS] & LIVE_GROUPS) == 0)), WATCHED_IDS
)
# of those, the ones a vertex plan depends on (the groups of the draw-state parts ``VertexPlan.of`` reads, as
# ``vertices.PlanCache`` keys them) and the watched ones: states equal in these share a vertex plan (``PlanCache``)
VERTEX_KEY_IDS = np.union1d(
    np.intersect1d(PLAN_KEY_IDS, np.flatnonzero(WRITE_GROUPS[: K.NUM_REGS] & part_groups(VERTEX_PARTS))), WATCHED_IDS
)
PLAN_CACHE_ENTRIES = 64
DIGEST_BYTES = 16  # of the programs and LUTs a plan key starts with (``picaemu.fused.driver``)
PROGRAM_GROUPS = int(PLAN_DATA_UPLOADS)  # writes that may change what a plan key digests: Python keys anew
INDEX_U16 = next(code for code, name in blocks.geometry.INDEX_TYPES.items() if INDEX_DTYPES[name].itemsize == 2)
TEXTURE_SLOTS = np.array(TEXTURE_ADDRESS_SLOT, np.int64)

R_INDEX, R_KIND, R_STOP_POS, R_PACKETS, R_DONE, R_POS, R_VERTICES, R_TOPOLOGY, R_RESTART = range(9)
R_VERTEX = 9  # + VERTEX_COUNTERS
R_ASSEMBLED = R_VERTEX + VERTEX_COUNTERS.index("primitives_assembled")
R_SHADED = R_VERTEX + VERTEX_COUNTERS.index("vertices_shaded")
R_FRAGMENT = R_VERTEX + len(VERTEX_COUNTERS)  # + FRAGMENT_COUNTERS
R_RASTERIZED = R_FRAGMENT + FRAGMENT_COUNTERS.index("fragments_rasterized")
R_BOX = R_FRAGMENT + len(FRAGMENT_COUNTERS)  # 4 columns
ROW_LEN = R_BOX + 4
ROWS = 1024  # rows per chunk: the loop returns to Python when they are full
# fstate slots: rows filled, groups the loop's draws took, draw limit, a pending draw to run first and its groups,
# the plan table's current slot; the assembler as the loop's draws left it: the last draw's topology + 1 (0: no
# draw yet in this call), the vertices it left buffered (rows of ``held``), the queued events already looked at;
# the work the loop may still run (``CompiledPlans.work_left``), the weight of a vertex shaded and of a draw in it
FS_ROWS, FS_DIRTY, FS_LIMIT, FS_PENDING, FS_PENDING_DIRTY, FS_CURRENT, FS_TOPOLOGY, FS_HELD, FS_EVENTS = range(9)
FS_WORK_LEFT, FS_VERTEX_WORK, FS_DRAW_WORK = 9, 10, 11
FSTATE_LEN = 12
HELD_SHAPE = (2, NUM_COLUMNS)  # ``held``: the vertices the last draw left buffered (float32)
# RESTART_PRIMITIVE: the queued event that empties the assembler when its ``restart`` bit is set
_RESTART = access.locate("RESTART_PRIMITIVE", "restart")
RESTART_ID, RESTART_GATE = _RESTART[0], ((1 << _RESTART[1].width) - 1) << _RESTART[1].lo
TABLE_SLOTS = 32  # plans the loop switches between by register content
S_ROWS_FULL, S_DECLINED = K.S_ROWS_FULL, K.S_DECLINED
# positions of ``K.run``'s arguments in the loop's ``kernel`` tuple (``KERNEL_ARGS``: K.run's parameters)
KERNEL_ARGS = tuple(inspect.signature(K.run.py_func).parameters)
A_REGS, A_FU, A_COUNTERS, A_CURSOR, A_EVENTS, A_DRAW_INFO, A_SHADOW, A_CHANGES = (
    KERNEL_ARGS.index(name) for name in ("regs", "fu", "counters", "cursor", "events", "draw_info", "shadow", "changes")
)
# the kernels the loop and its draws call by address (``picaemu.numba_link``: each compiled once, on its own): their
# slots in the loop's ``links`` argument, their link ids (``picaemu.fused.features`` holds 0-3)
LINK_COMMAND, LINK_VERTEX_SIDE, LINK_FRAGMENT_SIDE, LINK_DRAW = range(4)
NUM_LINKS = 4
COMMAND_ID, FRAGMENT_SIDE_ID, VERTEX_SIDE_ID, DRAW_ID = 4, 5, 6, 13
COMMAND = numba_link.register(COMMAND_ID, K.run, numba.types.int64)
FRAGMENT_SIDE = numba_link.register(FRAGMENT_SIDE_ID, fragment_side, numba.types.int64)
# values of the types the loop passes ``fragment_side`` around a plan's arguments: the triangles as
# ``vertex_side`` gives them (x, y (T, 3) int64; zndc, 1/w (T, 3) float32; varyings (T, 3, V) float32; primitive (T,)
# int32), then the row's fragment counters (int64)
TRIANGLES_SAMPLE = (
    np.zeros((0, 3), np.int64),
    np.zeros((0, 3), np.int64),
    np.zeros((0, 3), np.float32),
    np.zeros((0, 3), np.float32),
    np.zeros((0, 3, NUM_COLUMNS - 4), np.float32),
    np.zeros(0, np.int32),
)
COUNTS_SAMPLE = np.zeros(len(FRAGMENT_COUNTERS), np.int64)
VERTEX_COUNTS_SAMPLE = np.zeros(len(VERTEX_COUNTERS), np.int64)
LIVE_SAMPLE = (False, 0, 0, 0, False)  # ``vertex_side``'s live fields: elements, count, first, index address, u16
# ``vertex_side`` answers (ok, the triangles, the 12.4 box, the vertices it leaves buffered (k, NUM_COLUMNS)); its
# last parameter is its plan's type, which the loop's ``_draw`` does not pass
VERTEX_SIDE = numba_link.register(
    VERTEX_SIDE_ID,
    vertex_side,
    numba.types.Tuple(
        (
            numba.types.boolean,
            numba.typeof(TRIANGLES_SAMPLE),
            numba.types.UniTuple(numba.types.int64, 4),
            numba.typeof(np.zeros((0, NUM_COLUMNS), np.float32)),
        )
    ),
    types_only=1,
)


@dataclass(frozen=True)
class CompiledPlans:
    """What the loop needs to run draws of one state: both plans, the watched registers' values, and where it
    returns to Python (the replay's stop and checkpoint points): after draw ``draw_limit``, or after the draw that
    brings the work it ran to ``work_left`` (a draw's work: ``draw_work`` + fragments rasterized + ``vertex_work``
    x vertices shaded, the replay's ``draw_work``)."""

    vertices: VertexPlan
    fragments: FragmentPlan
    watched: np.ndarray  # (len(WATCHED),) uint32
    draw_limit: int = 1 << 62  # the last draw the loop may run before returning to Python
    work_left: int = 1 << 62
    vertex_work: int = 0
    draw_work: int = 0

    def with_limit(self, limit: int) -> CompiledPlans:
        """These plans for the draws up to ``limit`` (included) only."""
        return self if limit >= self.draw_limit else dataclasses.replace(self, draw_limit=limit)

    def with_work(self, work_left: int, vertex_work: int, draw_work: int) -> CompiledPlans:
        """These plans for ``work_left`` of work only, a vertex shaded weighing ``vertex_work`` fragments and a draw
        ``draw_work``."""
        return dataclasses.replace(self, work_left=work_left, vertex_work=vertex_work, draw_work=draw_work)


COUNTER_NAMES = (*VERTEX_COUNTERS, *FRAGMENT_COUNTERS)  # columns R_VERTEX .. R_BOX
TOPOLOGIES = tuple(Topology)  # by code (column R_TOPOLOGY)


@dataclass(frozen=True)
class CompiledDraws:
    """The draws one loop call ran, for the sink (``picaemu.draw.CompiledSink``): ``rows`` (n, ROW_LEN) int64 is
    the loop's buffer (valid during the call only); the rest places them as ``CommandProcessor._act`` places a
    draw it hands to Python."""

    rows: np.ndarray
    packet_base: int  # packets run before this buffer, counted from where the running list started
    address: int  # physical address of the buffer (0: not in emulated memory)
    words: int  # words in the buffer
    seconds: float  # wall time of the loop call: each draw's ``time_s`` is an equal share
    held: np.ndarray  # (k <= 2, NUM_COLUMNS) float32 vertices the last draw left buffered (valid during the call)
    restart_after: bool  # a restart was queued after the last draw (it empties the assembler)

    def assemble(self, assembler: Assembler) -> None:
        """Bring ``assembler`` to the state the staged path leaves after these draws and the restarts queued
        between and after them (rows ``R_TOPOLOGY``, ``R_RESTART``, ``R_ASSEMBLED``): from the last restart on
        (nothing before it shows), each draw starting with nothing buffered (the loop's rule)."""
        restarts = np.flatnonzero(self.rows[:, R_RESTART])
        first = int(restarts[-1]) if restarts.size else 0
        if restarts.size:
            assembler.reset()
        last = len(self) - 1
        for i, (topology, triangles) in enumerate(self.rows[first:, [R_TOPOLOGY, R_ASSEMBLED]].tolist(), first):
            assembler.advance(TOPOLOGIES[topology], triangles, self.held if i == last else None)
        if self.restart_after:
            assembler.reset()

    def __len__(self) -> int:
        return self.rows.shape[0]

    @property
    def first_index(self) -> int:
        """The draw number of the first draw (the loop runs at least one a call)."""
        return int(self.rows[0, R_INDEX])

    def first_from(self, index: int) -> int:
        """The row of the first draw numbered ``index`` or later (``len(self)`` when none is)."""
        return int(np.searchsorted(self.rows[:, R_INDEX], index))

    def totals(self, *names: str) -> tuple[int, ...]:
        """The sums over these draws of the counters ``names`` (``COUNTER_NAMES``)."""
        return tuple(int(self.rows[:, R_VERTEX + COUNTER_NAMES.index(n)].sum()) for n in names)

    def packets(self) -> np.ndarray:
        """Per draw, the number of its trigger packet (``DrawFacts``' packet): packets counted from where the
        running list started, the trigger's own included unless the loop moved past it."""
        return self.packet_base + self.rows[:, R_PACKETS] - self.rows[:, R_DONE]

    def each(self, first: int = 0) -> list[DrawFacts]:
        """Per draw from row ``first`` on, what a ``DrawCall`` of it would hold: (index, kind, byte offset, packet,
        resume, stats, bounds) as ``DrawFacts`` tuples."""
        share = self.seconds / max(len(self), 1)
        address, words = self.address, self.words
        out = []
        for row, packet in zip(self.rows[first:].tolist(), self.packets()[first:].tolist(), strict=True):
            done = row[R_DONE]
            stats = dict(zip(COUNTER_NAMES, row[R_VERTEX:R_BOX], strict=True))
            stats["time_s"] = share
            out.append(
                (
                    row[R_INDEX],
                    KINDS[row[R_KIND]],
                    4 * row[R_STOP_POS],
                    packet,
                    (address + 4 * row[R_POS], 4 * (words - row[R_POS])) if done and address else None,
                    stats,
                    tuple(row[R_BOX:ROW_LEN]) if stats["primitives_rasterized"] else None,
                )
            )
        return out


# one draw the loop ran, as ``CompiledDraws.each`` gives it: index, kind, byte offset of its trigger packet, packet
# number, resume position (``DrawCall.resume``), counters, bounds
DrawFacts = tuple[
    int, DrawKind, int, int, tuple[int, int] | None, dict[str, int | float], tuple[int, int, int, int] | None
]


@numba_link.compiled_only(nogil=True)
def _live_values(regs, out):  # pragma: no cover - compiled
    """Every live field of ``LIVE_FIELDS`` into ``out`` (its rows' order; in bytes for address fields). One call a
    draw, not one a field: a field read inlined at each of ``_draw``'s sites made ``LIVE_FIELDS`` an array value four
    times a site (a quarter of ``_draw``'s LLVM IR), and a kernel of its own called at each site cost 0.4 s of
    compile (its Python entry)."""
    for row in range(LIVE_FIELDS.shape[0]):
        word = np.int64(regs[LIVE_FIELDS[row, 0]])
        out[row] = ((word >> LIVE_FIELDS[row, 1]) & LIVE_FIELDS[row, 2]) * LIVE_FIELDS[row, 3]


@numba_link.compiled_only(nogil=True)
def _live_colors(regs, tev_rows, buffer_color):  # pragma: no cover - compiled
    """Each TEV stage's constant color into its ``tev_rows`` row, the buffer's initial color (``LIVE_COLORS``)."""
    stages = tev_rows.shape[0]
    for k in range(LIVE_COLORS.shape[0]):
        word = np.int64(regs[LIVE_COLORS[k, 0]])
        for c in range(4):
            value = (word >> LIVE_COLORS[k, 1 + c]) & 0xFF
            if k < stages:
                tev_rows[k, T_CONSTANT + c] = value
            else:
                buffer_color[c] = value


@numba_link.compiled_only(nogil=True)
def _watched_hold(regs, watched):  # pragma: no cover - compiled
    for j in range(WATCHED_IDS.shape[0]):  # noqa: SIM110 - a generator in numba costs more than the loop
        if regs[WATCHED_IDS[j]] != watched[j]:
            return False
    return True


@numba_link.kernel(nogil=True)
def _restarted(events, start, end):  # pragma: no cover - compiled
    """Whether one of the queued events ``events[start:end]`` restarts primitive assembly."""
    for e in range(start, end):  # noqa: SIM110 - a generator in numba costs more than the loop
        if events[e, 0] == RESTART_ID and events[e, 1] & RESTART_GATE:
            return True
    return False


@numba_link.compiled_only(nogil=True)
def _starts_fresh(topology, handed, restart, fstate):  # pragma: no cover - compiled
    """Whether a draw of ``topology`` starts with nothing buffered in the assembler (and a strip parity of 0): the
    draw Python handed over (it asked its assembler), a restart queued since the loop's previous draw, or a
    previous draw of this call that left nothing of this topology buffered. Otherwise only Python's assembler
    knows (the loop's first draw after a return to Python)."""
    if handed or restart:
        return True
    last = fstate[FS_TOPOLOGY] - 1
    return last >= 0 and (last != topology or fstate[FS_HELD] == 0)


@numba_link.compiled_only(nogil=True)
def _draw(
    regs, fu, kind, handed, restart, watched, slot, links, row, held, fstate, vertex_type, fragment_type
):  # pragma: no cover - compiled
    """Run the draw the registers describe with the plans stored at ``slot`` ((2,) int64: where ``numba_link.Stored``
    keeps the vertex plan's arguments, of type ``vertex_type``, and the fragment plan's, of type ``fragment_type``;
    ``plan_table.PlanTable``) into ``row``, the vertices it leaves buffered into ``held`` and the ``FS_TOPOLOGY`` /
    ``FS_HELD`` slots; False (nothing written) when a side refuses it or the assembler may hold vertices of an
    earlier draw (``_starts_fresh``). Called by address (``DRAW``): the loop compiles without the plans' types, this
    once per plan kind; ``links`` the slot's entries (its plans' ``vertex_side`` and ``fragment_side``). The vertex
    side reads its plan where it is stored; only the members written here are loaded before it (a plan loaded
    whole is copied field by field and reference-counted at each exit: bench/RESULTS.md, "ir30")."""
    topology = load_item(vertex_type, slot[0], P_TOPOLOGY)
    if not _watched_hold(regs, watched) or not _starts_fresh(topology, handed, restart, fstate):
        return False
    live = numba_link.empty(LIVE_FIELDS.shape[0], np.int64)
    _live_values(regs, live)
    count, base = live[F_COUNT], live[F_BASE]
    index_address = base + live[F_INDEX_OFFSET]  # as ``VertexLoaderState.with_range``
    reads = load_item(vertex_type, slot[0], P_READS)  # this draw's attribute addresses, as ``_loader_reads``
    for r in range(reads.shape[0]):
        reads[r, READ_ADDRESS] = base + live[F_LOADER + reads[r, READ_LOADER]] + reads[r, READ_OFFSET]
    vcounts = row[R_VERTEX:R_FRAGMENT]
    elements, first, u16 = kind == K.D_ELEMENTS, live[F_FIRST], live[F_INDEX_FORMAT] == INDEX_U16
    arguments = (elements, count, first, index_address, u16, fu[0], slot[0], vcounts)
    ok, tris, box, kept = numba_link.call(VERTEX_SIDE_ID, links[LINK_VERTEX_SIDE], arguments)
    if not ok:
        return False
    fragment_args = numba_link.load(fragment_type, slot[1])
    ints = fragment_args[0]  # the plan's ``ints``
    for u in range(TEXTURE_SLOTS.shape[0]):
        ints[TEXTURE_SLOTS[u]] = live[F_TEXTURE + u]
    _live_colors(regs, fragment_args[ARG_TEV_ROWS], fragment_args[ARG_BUFFER_COLOR])
    live_lights.write_colors(regs, fragment_args[ARG_COLOR_INTS], fragment_args[ARG_LIGHTING])
    triangles = (tris[0], tris[1], tris[2], tris[3], tris[4], tris[5])
    fcounts = row[R_FRAGMENT:R_BOX]
    drawn = numba_link.call(FRAGMENT_SIDE_ID, links[LINK_FRAGMENT_SIDE], triangles + fragment_args + (fcounts,)) == 0
    if drawn:  # one exit while the fragment plan is held (each exit reference-counts its arrays)
        row[R_VERTICES], row[R_TOPOLOGY], row[R_RESTART] = count, topology, restart
        for j in range(4):
            row[R_BOX + j] = box[j]
        fstate[FS_TOPOLOGY], fstate[FS_HELD] = topology + 1, kept.shape[0]
        for i in range(kept.shape[0]):  # element copies: an array assignment compiles numba's shape-mismatch error
            for c in range(kept.shape[1]):
                held[i, c] = kept[i, c]
    return drawn


DRAW = numba_link.register(DRAW_ID, _draw, numba.types.boolean, types_only=2)


@numba_link.compiled_only(nogil=True)
def _commit(cursor, regs, counters, kind, dirty, draw_info, shadow, changes, row, fstate):  # pragma: no cover
    """Book a draw ``_draw`` ran at the trigger the kernel stopped at: its row, its log entry, its groups."""
    row[R_INDEX] = cursor[K.K_DRAWS]
    row[R_KIND] = kind
    row[R_STOP_POS] = cursor[K.K_STOP_PACKET]
    row[R_PACKETS] = cursor[K.K_PACKETS]
    row[R_DONE] = cursor[K.K_PARAM] == 0
    row[R_POS] = cursor[K.K_POS]
    fstate[FS_ROWS] += 1
    fstate[FS_DIRTY] |= dirty
    counters[K.C_DIRTY] = 0
    K._record_draw(cursor, kind, cursor[K.K_STOP_PACKET], regs, dirty, draw_info, shadow, changes)


@numba_link.compiled_only(nogil=True)
def _match(regs, keys, count, first):  # pragma: no cover - compiled
    """The table slot whose key registers (``PLAN_KEY_IDS``) hold the values of ``regs`` (slot ``first`` tried
    first), or -1."""
    for n in range(count):
        j = (first + n) % count
        same = True
        for i in range(PLAN_KEY_IDS.shape[0]):
            if regs[PLAN_KEY_IDS[i]] != keys[j, i]:
                same = False
                break
        if same:
            return j
    return -1


@numba_link.kernel(nogil=True, _nrt=False)
def run(kernel, keys, count, watched, slots, links, rows, held, fstate):  # pragma: no cover - compiled
    """``K.run`` (``kernel``: its arguments, ``KERNEL_ARGS``) until something needs Python that is not a draw this
    loop can run (module docstring); returns the kernel's status, ``S_ROWS_FULL``, or ``S_DECLINED`` when the
    pending draw (``fstate[FS_PENDING]``: the trigger the kernel last stopped at, whose groups Python already took
    into ``FS_PENDING_DIRTY``) is left to Python. The plans are ``PlanTable.args``: ``count`` slots, slot
    ``fstate[FS_CURRENT]`` current, each a row of ``slots`` (TABLE_SLOTS, 2) int64: the addresses ``_draw`` and the
    vertex side read the vertex and the fragment plan from (the loop never holds the plans: one machine code
    whatever their types); ``links`` (TABLE_SLOTS, NUM_LINKS, 2) int64 each slot's entries (``PlanTable.links``).
    ``held`` (``HELD_SHAPE``) float32 receives the vertices the last draw left buffered (``FS_HELD`` rows).
    Compiled without numba's reference counting (``_nrt=False``): it allocates nothing and takes no array from a
    callee, and the counting of the kernel's ~30 arrays at each of its exits was two thirds of its LLVM IR."""
    regs, fu, counters, cursor = kernel[A_REGS], kernel[A_FU], kernel[A_COUNTERS], kernel[A_CURSOR]
    events, draw_info, shadow, changes = kernel[A_EVENTS], kernel[A_DRAW_INFO], kernel[A_SHADOW], kernel[A_CHANGES]
    while True:
        if fstate[FS_ROWS] >= rows.shape[0]:
            return S_ROWS_FULL
        if cursor[K.K_RECORD_DRAWS] and (
            cursor[K.K_NDRAW] >= draw_info.shape[0] or cursor[K.K_NCHANGE] + K.NUM_REGS > changes.shape[0]
        ):
            return K.S_DRAWS_FULL
        j = fstate[FS_CURRENT]
        handed = fstate[FS_PENDING] != 0
        if handed:
            fstate[FS_PENDING] = 0
            dirty = fstate[FS_PENDING_DIRTY]
            status = S_DECLINED
        else:
            status = numba_link.call(COMMAND_ID, links[0, LINK_COMMAND], kernel)  # every slot holds it
            if status != K.S_STOP:
                return status
            dirty = counters[K.C_DIRTY]
            # another state: one of the table's, or Python's to plan (a watched register, such as a bool uniform
            # toggled between draws, is keyed too: a state with the other value may be in the table)
            if dirty & ~LIVE_GROUPS or not _watched_hold(regs, watched[j]):
                if dirty & PROGRAM_GROUPS:
                    return status
                j = _match(regs, keys, count, j)
                if j < 0:
                    return status
        reg = cursor[K.K_STOP_ID]
        if (reg != _ARRAYS_ID and reg != _ELEMENTS_ID) or cursor[K.K_DRAWS] > fstate[FS_LIMIT]:
            return status
        if fstate[FS_WORK_LEFT] <= 0 and not handed:  # the work ran out at the previous draw: Python's turn
            return status
        kind = K.D_ARRAYS if reg == _ARRAYS_ID else K.D_ELEMENTS
        row = rows[fstate[FS_ROWS]]
        row[:] = 0
        restart = _restarted(events, fstate[FS_EVENTS], cursor[K.K_NEV])
        drawn = (regs, fu, kind, handed, restart, watched[j], slots[j], links[j], row, held, fstate)
        numba_link.arena_restart()  # the previous draw's allocations are dead (``picaemu.numba_arena``)
        if not numba_link.call(DRAW_ID, links[j, LINK_DRAW], drawn):  # the slot's own: its plans' types
            return status
        fstate[FS_CURRENT], fstate[FS_EVENTS] = j, cursor[K.K_NEV]
        _commit(cursor, regs, counters, kind, dirty, draw_info, shadow, changes, row, fstate)
        fstate[FS_WORK_LEFT] -= fstate[FS_DRAW_WORK] + row[R_RASTERIZED] + fstate[FS_VERTEX_WORK] * row[R_SHADED]
        if cursor[K.K_DRAWS] > fstate[FS_LIMIT] or fstate[FS_WORK_LEFT] <= 0:  # Python acts after this draw
            return S_ROWS_FULL


class PlanCache:
    """A sink's plans by ``DrawCall.plan_key`` (the ``PLAN_CACHE_ENTRIES`` most recent), so that a state seen
    before costs a dictionary lookup instead of a draw state and two plans."""

    def __init__(self) -> None:
        self._plans: OrderedDict[bytes, CompiledPlans | None] = OrderedDict()
        # vertex plans by the program digest and ``VERTEX_KEY_IDS``: states that differ in their fragment side only
        # (a game's materials) share one (the loop writes each draw's live fields into it before the draw runs)
        self._vertices: OrderedDict[bytes, VertexPlan | str] = OrderedDict()

    def plans(self, call: DrawCall, assembler: Assembler) -> CompiledPlans | None:
        """``plans_for(call)``, remembered by ``call.plan_key`` (when set); None while ``assembler`` holds vertices
        of an unfinished primitive of the draw's topology (the loop's draws start with nothing buffered)."""
        key = call.plan_key
        if key is None:
            plans = plans_for(call)
        elif key in self._plans:  # None too: a state the loop does not cover
            plans = self._plans[key]
        else:
            vertex_key = key[:DIGEST_BYTES] + call.state.regs[VERTEX_KEY_IDS].tobytes()
            vertices = self._vertices.get(vertex_key)
            plans = self._plans[key] = plans_for(call, vertices)
            if vertices is None and plans is not None:
                self._vertices[vertex_key] = plans.vertices
            for kept in (self._plans, self._vertices):
                if len(kept) > PLAN_CACHE_ENTRIES:
                    kept.popitem(last=False)
        if plans is None or not assembler.takes_whole_triangles(plans.vertices.topology):
            return None
        return plans


def plan_key(digest: bytes, regs: np.ndarray) -> bytes:
    """The key of a draw's plans (``DrawCall.plan_key``): the ``DIGEST_BYTES`` digest of the programs and LUTs,
    then the ``PLAN_KEY_IDS`` registers of ``regs``."""
    return digest + regs[PLAN_KEY_IDS].tobytes()


def plans_for(call: DrawCall, vertices: VertexPlan | str | None = None) -> CompiledPlans | None:
    """The plans of ``call``'s draw state (its vertex plan ``vertices`` when given), or None: a part failed to
    decode, or a side does not cover the state. The fragment plan is the loop's own, not one the pipeline's fused
    fragment side caches: the loop writes each draw's texture addresses into its ``ints``."""
    ds = call.draw_state
    if ds.failed:
        return None
    if vertices is None:
        vertices = VertexPlan.of(ds, call.memory, call.state.fixed_attribs)
    if isinstance(vertices, str) or vertices.geometry:  # a GS draw runs compiled from the pipeline
        return None
    fragments = FragmentPlan.of(ds, call.memory)
    if isinstance(fragments, str):
        return None
    return CompiledPlans(vertices, fragments, call.state.regs[WATCHED_IDS])
