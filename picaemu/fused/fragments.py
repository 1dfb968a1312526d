"""Fused fragment side: rasterization, texture units 0-2, the procedural texture, fragment lighting, TEV, fog, alpha
test and the per-fragment operations of one draw in ONE compiled call (``fragment_kernel.fragment_side``), for the
draws whose state the plan covers.

``FragmentPlan.of(ds, memory)`` packs the draw state's fragment parts into numba-friendly arguments once per
state (a ``PlanCache`` remembers plans by the identity of the parts, as the draw-state cache hands the same objects
to draws that did not change them, and by the content of the fog, procedural-texture and lighting states, which it
makes anew at every TEV write), or returns the reason the draw is not covered. ``run(plan, wt, stats)`` runs a
draw's ``clipping.WindowTriangles`` through it and adds the ``FRAGMENT_COUNTERS`` to ``stats``: the same pixels and
counters as the staged path (``Pipeline._fragments``), or False having written nothing (the caller runs the staged
path: a big draw, a division by zero the staged path raises on, a texture outside VRAM/FCRAM; ``attempt`` returns
the kernel's code instead, which ``DECLINED`` names). A draw a stage observer of fates watches uses the same plan
through ``picaemu.fused.observed`` (its shading, ``fragment_kernel.shade_fragments``, with the recorded
per-fragment pass).

Covered: any raster state (scissor included); texture units 0-2 with 2D textures, and unit 0's projection textures
(s / w, t / w) and cube maps (the face of each fragment's (s, t, texcoord0.w) by ``filtering.cube_face``, each face
read at its own address), in the 12 ``formats.PACKED`` formats and ETC1 / ETC1A4, on one level
(``TextureUnitState.needs_lod`` False: level ``min_level`` with the magnification filter) or with the per-fragment
LOD (``texture.lod``: bias, min / max level, magnification, minification and nearest / linear mip filters), any wrap
mode and border color; the procedural texture (unit 3, ``proctex.texels_level0``: every clamp, mapping, shift,
noise, separate alpha, nearest and linear filters); fragment lighting (``lighting_kernel.light_fragments`` as
``lighting.compute_lighting`` calls it, bump and tangent maps included; while the TEV reads it every enabled unit is
sampled, as the staged path does); the six TEV stages with the combiner buffer, constants and dot3 (lighting and
unit 3 read while disabled read 0); fog (``fog.fog_colors``: the LUT by depth, the fog color, z flip); the alpha
test; every depth / stencil / blend / logic-op / write-mask mode and color / depth format of
``fragment_ops.resolve``. Refused (``of`` returns the reason): a state that does not decode (the staged path raises
its error at that draw), shadow-map rendering, gas, fragment lighting with a shadow term or a bump map of a disabled
unit, a mip-filtered procedural texture (its LOD comes from neighbouring fragments), shadow textures (2D and cube), a
depth or color buffer outside memory.

The command processor's compiled loop (``picaemu.fused.loop``) may call ``fragment_side(x, y, zndc, inv_w, varyings,
primitive, *plan.args, counts)`` itself (``counts`` (len(FRAGMENT_COUNTERS),) int64 receives the counters, added only
when it returns 0), writing ``plan.ints[TEXTURE_ADDRESS_SLOT[u]]`` (unit u's texture base physical address: nothing else
in the plan depends on it), each stage's constant color into ``plan.args[ARG_TEV_ROWS]``, the buffer's initial
color into ``plan.args[ARG_BUFFER_COLOR]`` (read only there) and, while lighting is on, each light's four colors
and the global ambient into the lighting tuple's ``lparams`` and ``ambient`` (copies the plan owns) before each
draw.

``plan.args`` (``fragment_kernel`` names the indices): ``ints`` (NUM_INTS,) int64 [texture addresses of units
0-2, VRAM base, FCRAM base, the TEV reads the combiner buffer, alpha test on, the TEV reads the primary color,
depth pass kind, color pass kind, the depth and the color buffer's address and bytes when the draw writes them
(``layout.TARGETS``: the level cache hears of them, ``features.wrote``)]; the rasterizer's ``params`` /
``dparams``; ``active`` (A,) int64 varying columns interpolated; ``color_cols`` (4,) int64 their indices of the
primary color (-1: 1.0); ``units`` (3, UNIT_INTS) int64 (filters, levels and LOD bias, each format's
``texture.fetch.channel_fields`` and texel source kind, each level's byte offset and size); the texture arguments
(``features.texture_args``: the border colors (3, 4) float32, the memory's ``texture.level_cache``: decoded levels
shared by the draws, the entry of ``features._levels`` for mipmaps and cube maps); ``tev_rows`` (6, TEV_INTS) int64 (the
rows of ``TevState.program``, sources as slots), ``tev_ch`` (6, 3, 3) int64 RGB operand channels, ``tev_inv`` (6, 3)
bool; the buffer color (4,) uint8;
``color_ints`` (COLOR_INTS,) int64 [the procedural texture is read, its u and v columns among ``active`` (-1: 1.0),
fog on, fog z flip, lighting computed, its bump unit, the quaternion's and view's columns]; the procedural
texture's ``ProctexState.kernel_args`` (a tuple of five arrays); lighting's ``lighting.kernel_arrays`` and the
LUTs' values and differences (a tuple of eight); the fog LUT (2, 128) float32 (values, deltas) and color (3,)
float32 (the off feature's are ``NO_PROCTEX`` / ``NO_LIGHTING`` / ``NO_FOG_*``, of the same types); the alpha
test's (256,) bool pass table; the VRAM and FCRAM byte arrays; ``fragment_ops.OpsParams``, the stencil tables, the
depth buffer's bytes and words, the color buffer's bytes and words, and the color pass arguments of the draw's
``OpsPlan``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from picaemu.color import lighting as lighting_mod
from picaemu.color import tev
from picaemu.color.shading import SRC_LIGHTING, SRC_PROCTEX
from picaemu.draw_state import DrawState, Phase
from picaemu.errors import MemoryFault, PicaError
from picaemu.fragment import kernels as fk
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.blend import alpha_pass_table
from picaemu.fused import features, fragment_links, layout
from picaemu.fused.fragment_kernel import fragment_side
from picaemu.geometry.clipping import WindowTriangles
from picaemu.memory import FCRAM, VRAM, PhysicalMemory
from picaemu.numba_link import arguments_kind
from picaemu.raster.rasterizer import CHUNK_FRAGMENTS, VARYING
from picaemu.texture import fetch, level_cache
from picaemu.texture import proctex as proctex_mod
from picaemu.texture.formats import ETC_FORMATS, PACKED, level_bytes, level_offset, level_size
from picaemu.texture.state import CUBE_LOW_MASK, CUBE_TYPES, SHADOW_TYPES, TextureUnitState

__all__ = [
    "DECLINED",
    "FRAGMENT_COUNTERS",
    "TEXTURE_ADDRESS_SLOT",
    "FragmentPlan",
    "PlanCache",
    "attempt",
    "fragment_side",
    "run",
]

FRAGMENT_COUNTERS = (
    "fragments_rasterized",
    "killed_scissor",
    "texels_fetched",
    "killed_alpha",
    "killed_stencil",
    "killed_depth",
    "fragments_written",
)
TEXTURE_ADDRESS_SLOT = (0, 1, 2)
# where the loop writes a draw's TEV constant colors (``tev_rows``' T_CONSTANT columns of every stage), the
# combiner buffer's initial color and the light colors (in the lighting tuple: ``lparams`` and ``ambient``,
# the plan's own copies): their positions in ``FragmentPlan.args``; ``color_ints`` says whether lighting is on
ARG_TEV_ROWS, ARG_BUFFER_COLOR, ARG_COLOR_INTS, ARG_LIGHTING = 7, 10, 11, 13
LIGHT_PARAMS, LIGHT_FLAGS, LIGHT_AMBIENT = 0, 1, 5  # in the lighting tuple (``lighting.kernel_arrays``' order)
# why ``run`` left a draw to the staged path, by the kernel's return code (the draw's route, ``DrawCall.route``)
DECLINED = {
    layout.TOO_MANY_FRAGMENTS: f"too many fragments for one pass (bound {CHUNK_FRAGMENTS})",
    layout.DIVISION_BY_ZERO: "a division by zero in the rasterizer",
    layout.TEXTURE_FAULT: "a texture outside VRAM/FCRAM",
}
PLAN_CACHE_ENTRIES = 64
# the reason a plan names for color and depth buffers that share bytes (a color write can change a later fragment's
# stored depth: ``fragment.kernels.interleaved`` runs them fragment by fragment, on the staged path; the overlap
# is also lint's ``target-overlap`` error), so that the fused side never compiles that pass
INTERLEAVED_BUFFERS = "color and depth buffers share bytes"
W_FIELD = "texcoord0_w"  # a cube map's third coordinate, a projection texture's divisor
W_TYPES = CUBE_TYPES | {"projection"}
NO_BYTES = np.zeros(0, np.uint8)
# the procedural texture's and fog's arguments when they are off (``ProctexState.kernel_args`` / ``FogState.lut``,
# ``rgb`` types)
NO_PROCTEX = (
    np.zeros(proctex_mod.P_INTS, np.int64),
    np.zeros(proctex_mod.P_REALS, np.float32),
    np.zeros((len(proctex_mod.MAP_TABLES), 2, 1), np.float32),
    np.zeros((2, 1, 4), np.float32),
    np.zeros((1, 2), np.float32),
)
NO_FOG_LUT, NO_FOG_RGB = np.zeros((2, 1), np.float32), np.zeros(3, np.float32)
NO_LIGHTING = (  # ``lighting_mod.kernel_arrays`` and the LUTs' types
    np.zeros((1, 1), np.float32),
    np.zeros((1, 1), np.int32),
    np.zeros((1, 1), np.int32),
    np.zeros(1, np.float32),
    np.zeros(1, np.int32),
    np.zeros(1, np.float32),
    np.zeros((1, 1), np.float32),
    np.zeros((1, 1), np.float32),
)


@dataclass(frozen=True, eq=False)
class FragmentPlan:
    """One fragment state's arguments of ``fragment_side`` (module docstring): ``ints`` (live texture address
    slots) and ``args``, the whole argument tuple after the triangles, ``ints`` first; ``known_kind``: the kind of
    ``args`` when its maker took it (``_build``: ``fragment_links.links_of`` does)."""

    ints: np.ndarray
    args: tuple
    known_kind: object = None

    @cached_property
    def kind(self) -> object:
        """``numba_link.arguments_kind(args)``: what the types ``fragment_side`` is compiled for with this plan
        depend on (the plan table's and ``numba_link.Stored``'s key)."""
        return self.known_kind if self.known_kind is not None else arguments_kind(self.args)

    @property
    def active(self) -> np.ndarray:
        """(A,) int64 the varying columns the plan interpolates (``ov``'s columns in the kernels)."""
        return self.args[3]

    @property
    def alpha_pass(self) -> np.ndarray:
        """(256,) bool the alpha test's pass table (every alpha passes while the test is off)."""
        return self.args[16]

    @property
    def shading_args(self) -> tuple[tuple, tuple]:
        """``fragment_kernel.shade_fragments``' ``texturing`` and ``coloring`` (``args``' entries of those names)."""
        a = self.args
        return (a[0], a[4], a[5], a[6], a[17], a[18], a[-1]), a[7:16]

    @classmethod
    def of(cls, ds: DrawState, memory: PhysicalMemory) -> FragmentPlan | str:
        """The plan of ``ds``'s fragment state drawing into ``memory``, or why the draw is not covered."""
        try:
            ds.check(Phase.FRAGMENTS)
        except PicaError:
            return "fragment state does not decode"
        if ds.failed:  # a part of another phase (the staged path raises its error before the fragments)
            return "draw state does not decode"
        refusal = _refusal(ds)
        if refusal:
            return refusal
        try:
            ops = _ops_args(ds, memory)
        except MemoryFault:
            return "render target outside memory"
        if ops[0] == fk.INTERLEAVED:
            return INTERLEAVED_BUFFERS
        return _build(ds, memory, ops)


def _refusal(ds: DrawState) -> str:
    """Why the fused kernel does not cover ``ds`` ("" when it does)."""
    if ds.shadow is not None:
        return "shadow"
    if ds.fog.mode == "gas":
        return "gas"
    lighting = ds.lighting  # set when lighting is on and the TEV reads it
    if lighting is not None and lighting.enabled:
        if lighting.shadow is not None:
            return "lighting shadow"
        if lighting.bump_mode != "none" and not ds.textures[lighting.bump_unit].enabled:
            return "lighting bump map of a disabled unit"  # the staged path raises
    if ds.proctex is not None and ds.proctex.mip is not None:
        return "procedural texture mipmap"
    for unit in _read_units(ds):
        if unit.type == "shadow cube":
            return "shadow cube map"
        if unit.type in SHADOW_TYPES:
            return "shadow texture"
        if unit.type not in ("2D", "cube", "projection"):
            return f"{unit.type} texture"
    return ""


def _read_units(ds: DrawState) -> list[TextureUnitState]:
    """The enabled texture units whose color the TEV reads, or every enabled unit while the TEV reads fragment
    lighting (as the staged path samples them, for the bump and shadow inputs)."""
    used = ds.tev.sources_used()
    every = bool(used & SRC_LIGHTING) and ds.shading.lighting_enabled
    return [u for u in ds.textures if u.enabled and (every or tev.SRC_TEXTURES[u.unit] in used)]


def _ops_args(ds: DrawState, memory: PhysicalMemory) -> tuple:
    """The operations' pass kinds (``fragment_ops.pass_kinds``, as ``resolve`` picks them for these buffers) and
    arguments (MemoryFault: a buffer the draw uses leaves memory)."""
    plan = ds.fragment_ops
    p, fb = plan.params, plan.fb
    depth_buf = fb.depth_bytes(memory) if p.use_depth else NO_BYTES
    color_buf = fb.color_bytes(memory) if p.color_write else NO_BYTES
    depth_kind, color_kind, depth_words, color_words = fragment_ops.pass_kinds(p, plan, depth_buf, color_buf, False)
    args = (
        p,
        plan.stencil_tables,
        depth_buf,
        depth_words,
        color_buf,
        color_words,
        *plan.byte_color_args,
        *plan.logic_args,
    )
    return depth_kind, color_kind, args


def _columns(ds: DrawState, fields: list[str]) -> tuple[np.ndarray, dict[str, list[int]]]:
    """The varying columns to interpolate (those of ``fields`` the output map fills) and, per field, each
    component's index among them (-1: unmapped, reads 1.0)."""
    mapped = set(ds.varyings.plan.columns.tolist())
    wanted = {name: _varying_columns(name) for name in fields}
    active = sorted({c for cols in wanted.values() for c in cols if c in mapped})
    where = {c: k for k, c in enumerate(active)}
    return np.array(active, np.int64), {name: [where.get(c, -1) for c in cols] for name, cols in wanted.items()}


def _varying_columns(name: str) -> list[int]:
    """The varying columns of a ``Fragments`` field (a slice, or one column)."""
    cols = VARYING[name]
    return list(range(cols.start, cols.stop)) if isinstance(cols, slice) else [cols]


def _unit_row(unit: TextureUnitState, cols: list[int]) -> list[int]:
    """The unit's ``units`` row (``fragment_kernel``)."""
    fmt = unit.format
    bias = unit.lod_bias * layout.LOD_BIAS_SCALE
    assert bias == int(bias), "the LOD bias register holds 1/256 levels"
    row = [0] * layout.UNIT_INTS
    row[: layout.U_COL_S] = [
        1,
        unit.width,
        unit.width.bit_length() - 1,
        unit.height,
        PACKED[fmt.name].word_bits if fmt not in ETC_FORMATS else 0,
        unit.wrap_s,
        unit.wrap_t,
        int(unit.mag_linear),
        int(unit.min_linear),
        int(unit.mip_linear),
        int(unit.needs_lod),
        unit.min_level,
        unit.last_level,
        int(bias),
    ]
    row[layout.U_COL_S : layout.U_COL_T + 1] = cols[:2]
    cube = unit.type in CUBE_TYPES
    row[layout.U_FACES] = layout.CUBE_FACES if cube else 1
    row[layout.U_COL_W] = cols[2] if unit.type in W_TYPES else -1
    row[layout.U_PROJECT] = unit.type == "projection"
    if cube:
        low = layout.U_FACE_LOW
        row[low : low + layout.CUBE_FACES - 1] = [a & CUBE_LOW_MASK for a in unit.addresses[1:]]
    if fmt in ETC_FORMATS:
        row[layout.U_KIND] = fetch.KIND_OF_ETC[fmt]
    else:
        row[layout.U_FIELDS : layout.U_KIND] = fetch.channel_fields(PACKED[fmt.name])
    for level in range(unit.min_level, unit.last_level + 1):
        w, h = level_size(unit.width, unit.height, level)
        row[layout.U_OFFSETS + level] = level_offset(unit.width, unit.height, fmt, level)
        row[layout.U_BYTES + level] = level_bytes(w, h, fmt)
    return row


def _stage_slot(ref: int) -> int:
    """The slot of a program's reference to a stage output (``tev_program``: a stage index, ``READS_ZERO`` or
    ``READS_BUFFER_COLOR``)."""
    if ref == tev.READS_ZERO:
        return layout.ZERO
    return layout.BUF_COLOR if ref == tev.READS_BUFFER_COLOR else layout.STAGE_OUT + ref


def _tev_rows(program: tev.TevProgram, slot_of: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tev_rows``, ``tev_ch``, ``tev_inv``: the program's rows with their sources in slots; ``slot_of``: source
    code -> input slot (the combiner's own sources are placed here: previous, buffer, constant)."""
    rows = np.zeros((tev.NUM_STAGES, layout.TEV_INTS), np.int64)
    chans = np.zeros((tev.NUM_STAGES, 3, 3), np.int64)
    invs = np.zeros((tev.NUM_STAGES, 3), np.bool_)
    for prow in program.rows:
        if not prow.active:
            continue
        stage, k = prow.stage, prow.index
        plan, row = stage.plan, rows[k]
        buffer = _stage_slot(prow.buffer_rgb), _stage_slot(prow.buffer_alpha)
        split = buffer[0] != buffer[1]
        buffer_slot = layout.BUF_READ if split else buffer[0]
        slots = {
            **slot_of,
            tev.SRC_PREVIOUS: _stage_slot(prow.previous),
            tev.SRC_BUFFER: buffer_slot,
            None: layout.ZERO,
        }
        row[layout.T_ACTIVE] = 1
        row[layout.T_RGB_SRC : layout.T_RGB_SRC + 3] = [slots[c] for c in prow.rgb_sources]
        row[layout.T_ALPHA_SRC : layout.T_ALPHA_SRC + 3] = [slots[c] for c in prow.alpha_sources]
        row[layout.T_RGB_OP], row[layout.T_RGB_SHIFT] = stage.rgb_op, stage.rgb_shift
        row[layout.T_ALPHA_CH : layout.T_ALPHA_CH + 3] = plan.alpha_ch
        row[layout.T_ALPHA_INV : layout.T_ALPHA_INV + 3] = plan.alpha_inv
        row[layout.T_ALPHA_OP], row[layout.T_ALPHA_SHIFT] = plan.alpha_op, stage.alpha_shift
        row[layout.T_DOT3], row[layout.T_DOT3_RGBA] = plan.dot3, stage.rgb_op == tev.OP_DOT3_RGBA
        row[layout.T_READS_CONSTANT] = prow.reads(tev.SRC_CONSTANT)
        row[layout.T_CONSTANT : layout.T_CONSTANT + 4] = stage.constant
        row[layout.T_OUT] = layout.STAGE_OUT + k
        row[layout.T_SPLIT_BUFFER] = split and prow.reads(tev.SRC_BUFFER)
        row[layout.T_BUFFER_RGB], row[layout.T_BUFFER_ALPHA] = buffer
        chans[k], invs[k] = plan.rgb_ch, plan.rgb_inv
    return rows, chans, invs


def _color_args(ds: DrawState, cols: dict[str, list[int]]) -> tuple:
    """``color_ints``, ``proctex`` (``ProctexState.kernel_args``), ``lighting`` (``lighting_mod.kernel_arrays`` and
    the LUTs), the fog LUT and color (``FogState.lut`` / ``rgb``): each a placeholder of the same types when off."""
    color_ints = np.zeros(layout.COLOR_INTS, np.int64)
    proctex, fog = ds.proctex, ds.fog
    light_args = NO_LIGHTING
    ls = ds.lighting
    if ls is not None and ls.enabled:  # ``_lit``
        color_ints[layout.C_LIGHTING], color_ints[layout.C_BUMP_UNIT] = 1, ls.bump_unit
        color_ints[layout.C_QUAT : layout.C_QUAT + 4] = cols["quat"]
        color_ints[layout.C_VIEW : layout.C_VIEW + 3] = cols["view"]
        lparams, lflags, slots, scale, flags, ambient = lighting_mod.kernel_arrays(ls)
        # the plan's own copies of what holds light colors: the compiled loop writes each draw's into them
        light_args = _writable(
            (lparams.copy(), lflags, slots, scale, flags, ambient.copy(), ls.luts.value, ls.luts.diff)
        )
    if proctex is not None:
        color_ints[layout.C_PROCTEX] = 1
        color_ints[layout.C_PROCTEX_U], color_ints[layout.C_PROCTEX_V] = cols[ds.shading.proctex_coords]
        pt_args = _writable(proctex.kernel_args)
    else:
        pt_args = NO_PROCTEX
    if fog.mode == "fog":
        color_ints[layout.C_FOG], color_ints[layout.C_FOG_FLIP] = 1, fog.z_flip
        return (color_ints, pt_args, light_args, *_writable((fog.lut, fog.rgb)))
    return color_ints, pt_args, light_args, NO_FOG_LUT, NO_FOG_RGB


def _writable(arrays: tuple) -> tuple:
    """``arrays`` with read-only ones copied: the off features' placeholders are writable, and a plan with a
    feature on must have the same numba types, or ``fragment_side`` is compiled once more for it."""
    return tuple(a if a.flags.writeable else a.copy() for a in arrays)


def _lit(ds: DrawState) -> bool:
    """Fragment lighting is computed (on, and read by the TEV): else its TEV sources read 0."""
    return ds.lighting is not None and ds.lighting.enabled


def _build(ds: DrawState, memory: PhysicalMemory, ops: tuple) -> FragmentPlan:
    """``FragmentPlan.of`` once the state is known to be covered."""
    tstate = ds.tev
    used = tstate.sources_used()
    read = _read_units(ds)
    proctex = ds.proctex  # set when unit 3 is on and the TEV reads it
    fields = [u.coords for u in read] + (["color"] if tev.SRC_PRIMARY in used else [])
    fields += [ds.shading.proctex_coords] if proctex is not None else []
    fields += ["quat", "view"] if _lit(ds) else []
    fields += [W_FIELD] if any(u.type in W_TYPES for u in read) else []
    active, cols = _columns(ds, fields)
    units = np.zeros((3, layout.UNIT_INTS), np.int64)
    border = np.zeros((3, 4), np.float32)
    ints = np.zeros(layout.NUM_INTS, np.int64)
    slot_of = {code: layout.ZERO for code in range(16)}  # disabled units, lighting and unit 3 read 0 (refused if on)
    slot_of.update({tev.SRC_PRIMARY: layout.PRIMARY_SLOT, tev.SRC_CONSTANT: layout.CONSTANT})
    for unit in read:
        u = unit.unit
        units[u] = _unit_row(unit, cols[unit.coords] + cols.get(W_FIELD, [-1]))
        border[u] = unit.border_f32
        ints[TEXTURE_ADDRESS_SLOT[u]] = unit.addresses[0]
        slot_of[tev.SRC_TEXTURES[u]] = layout.TEX0 + u
    if proctex is not None:
        slot_of[SRC_PROCTEX] = layout.PROCTEX_SLOT
    if _lit(ds):
        slot_of[tev.SRC_LIGHT_PRIMARY], slot_of[tev.SRC_LIGHT_SECONDARY] = layout.LIGHT_PRIMARY, layout.LIGHT_SECONDARY
    rows, chans, invs = _tev_rows(tstate.program, slot_of)
    regions = {r.name: r for r in memory.regions}
    vram, fcram = (memory.region_bytes(name) if name in regions else NO_BYTES for name in (VRAM.name, FCRAM.name))
    ints[layout.VRAM_BASE] = regions[VRAM.name].base if VRAM.name in regions else 0
    ints[layout.FCRAM_BASE] = regions[FCRAM.name].base if FCRAM.name in regions else 0
    ints[layout.USES_BUFFER] = tstate.program.uses_buffer
    blend = ds.blend
    ints[layout.ALPHA_TEST] = blend.alpha_test
    ints[layout.PRIMARY] = tev.SRC_PRIMARY in used
    depth_kind, color_kind, ops_args = ops
    ints[layout.DEPTH_KIND], ints[layout.COLOR_KIND] = depth_kind, color_kind
    fb, params = ds.fragment_ops.fb, ds.fragment_ops.params
    if params.use_depth:  # as ``_ops_args`` takes the buffers
        ints[layout.TARGETS : layout.TARGETS + 2] = fb.depth_extent
    if params.color_write:
        ints[layout.TARGETS + 2 : layout.TARGETS + 4] = fb.color_extent
    alpha_pass = np.array(alpha_pass_table(blend))  # a writeable copy: one numba type for every plan
    color_cols = np.array(cols.get("color", [-1] * 4), np.int64)
    rs = ds.raster
    color = _color_args(ds, cols)
    textures = features.texture_args(border, level_cache.for_memory(memory), units, vram, fcram)
    args = (
        ints,
        rs.params,
        rs.dparams,
        active,
        color_cols,
        units,
        textures,
        rows,
        chans,
        invs,
        np.array(tstate.buffer_color, np.uint8),
        *color,
        alpha_pass,
        vram,
        fcram,
        *ops_args,
    )
    links, kind = fragment_links.links_of(args)
    return FragmentPlan(ints, (*args, links), kind)


def fragment_parts(ds: DrawState) -> tuple:
    """The draw-state parts a fragment plan is made of (held by the plan cache, which compares them by identity).
    Not the ``shading`` part, nor fog: they are made anew whenever a texture, the TEV or the TEV's buffer register
    changes, while the parts here come back as the same objects when their registers do; of fog, lighting and the
    procedural texture the plan reads the values in ``_switches``. The framebuffer, depth/stencil and blend program
    are those of ``fragment_ops`` (``fragment_ops.OpsPlan``, built from them)."""
    return (ds.varyings, ds.raster, ds.texture0, ds.texture1, ds.texture2, ds.tev, ds.blend, ds.fragment_ops, ds.shadow)


def _switches(ds: DrawState) -> tuple:
    """What a plan reads of the parts made anew at every TEV write (fog, shading, procedural texture), by content:
    the fog mode (with the fog color, z flip and LUT when on), the lighting enable, and the procedural texture's
    coordinates and arrays when the TEV reads it."""
    fog, proctex = ds.fog, ds.proctex
    fog_key = (fog.mode, fog.z_flip, fog.rgb.tobytes(), fog.lut.tobytes()) if fog.mode == "fog" else fog.mode
    pt_key = light_key = None
    if proctex is not None:
        pt_key = (ds.shading.proctex_coords, *(a.tobytes() for a in proctex.kernel_args), proctex.mip)
    ls = ds.lighting
    if ls is not None and ls.enabled:
        arrays = (*lighting_mod.kernel_arrays(ls), ls.luts.value, ls.luts.diff)
        light_key = (ls.shadow, ls.bump_mode, ls.bump_unit, *(a.tobytes() for a in arrays))
    return fog_key, ds.shading.lighting_enabled, pt_key, light_key


class PlanCache:
    """``FragmentPlan.of`` remembered by the identity of a draw state's fragment parts and the memory (the newest
    ``PLAN_CACHE_ENTRIES``); the same draw state as the last lookup costs two identity checks. Owned by its user
    (a ``Pipeline``): the plans hold the memory's arrays, which must go when the user does."""

    def __init__(self) -> None:
        # (ids of the parts and memory, ``_switches``) -> (the parts and memory, held so that their ids stay theirs;
        # the plan or refusal)
        self._plans: OrderedDict[tuple, tuple[tuple, FragmentPlan | str]] = OrderedDict()
        self._last: tuple = (None, None, None)  # the last draw state, its memory and its plan

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, ds: DrawState, memory: PhysicalMemory) -> FragmentPlan | str:
        """The plan of ``ds`` drawing into ``memory``, or why the draw is not covered."""
        last = self._last
        if last[0] is ds and last[1] is memory:
            return last[2]
        if ds.failed:  # a part failed to decode: not covered (the staged path raises its error at this draw)
            return FragmentPlan.of(ds, memory)
        key = (*fragment_parts(ds), memory)
        ids = (*map(id, key), *_switches(ds))
        plans = self._plans
        hit = plans.get(ids)
        if hit is None:
            hit = plans[ids] = (key, FragmentPlan.of(ds, memory))
            if len(plans) > PLAN_CACHE_ENTRIES:
                plans.popitem(last=False)
        self._last = (ds, memory, hit[1])
        return hit[1]


def run(plan: FragmentPlan, wt: WindowTriangles, stats: dict) -> bool:
    """The draw's fragment side through ``fragment_side``; its ``FRAGMENT_COUNTERS`` are added to ``stats``.
    False: the staged path must run it (nothing was written; ``attempt`` tells why)."""
    return attempt(plan, wt, stats) == layout.DONE


def attempt(plan: FragmentPlan, wt: WindowTriangles, stats: dict) -> int:
    """``run`` that returns the kernel's code: 0 (``DONE``) ran; another one (``DECLINED`` names it) declined."""
    counts = np.zeros(len(FRAGMENT_COUNTERS), np.int64)
    code = fragment_side(
        np.ascontiguousarray(wt.x),
        np.ascontiguousarray(wt.y),
        np.ascontiguousarray(wt.zndc),
        np.ascontiguousarray(wt.inv_w),
        np.ascontiguousarray(wt.varyings),
        np.ascontiguousarray(wt.primitive, np.int32),
        *plan.args,
        counts,
    )
    if code:
        return code
    for key, value in zip(FRAGMENT_COUNTERS, counts.tolist(), strict=True):
        stats[key] = stats.get(key, 0) + value
    return layout.DONE
