"""Per-draw state: every stage's registers decoded once, and reused while no write touches them.

Reads the map from register ids and data ports to *write groups* (``Group``: one bit per group, the partition
``GROUP_RANGES`` / ``PORT_GROUPS`` of ``picaemu.write_groups``, re-exported here); owns the list of state *parts*
(``PARTS``: each a builder and the groups it reads), and ``DrawStateCache``, which keeps the parts built for the
previous draw.

Receives, at every draw trigger, the ``GpuState`` and the bitmask of write groups the command processor saw
written since the previous draw (``CommandProcessor`` feeds ``DrawStateCache.invalidate``; ``ALL`` when unknown,
e.g. after a checkpoint restore). Produces one frozen ``DrawState`` (one field per part) that the pipeline's
stages receive; no stage reads the register file itself. A part is rebuilt only when a group it reads was
written; when nothing was written, the previous ``DrawState`` object itself is returned. A part that reads
registers only is remembered by their content for the whole process (``MEMO_ENTRIES`` per part): a state that
comes back, in this replay or another, costs a lookup.

A part whose registers are invalid (an ``UnsupportedFeature``, a ``PipelineError`` ...) holds a ``Failed`` value
instead; ``DrawState.check(phase)`` raises its error when the pipeline reaches that phase, so that a draw fails
where it always did (a draw with no vertices never reaches the fragment phase).
"""

from __future__ import annotations

import dataclasses
import enum
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from picaemu.color import gas, shading
from picaemu.color.fog import FogState
from picaemu.color.tev import TevState
from picaemu.fragment import framebuffer as fbm
from picaemu.fragment import ops as fragment_ops
from picaemu.fragment.blend import BlendProgram, BlendState, blend_program
from picaemu.fragment.depth_stencil import DepthStencilState
from picaemu.fragment.shadow import ShadowState
from picaemu.geometry import clipping
from picaemu.geometry.output_map import QUAT, OutputMapState
from picaemu.geometry.primitive_assembly import Topology
from picaemu.geometry.vertex_loader import VertexLoaderState
from picaemu.raster.rasterizer import ColumnPlan, RasterState
from picaemu.regs import NUM_REGS, access
from picaemu.shader.setup import ShaderSetup
from picaemu.state import GpuState
from picaemu.texture.state import NUM_UNITS, TextureUnitState, TexturingState
from picaemu.write_groups import (
    ALL,
    GS_IN_USE,
    TEXTURE_UNITS,
    WRITE_GROUPS,
    Group,
)
from picaemu.write_groups import GROUP_RANGES as GROUP_RANGES
from picaemu.write_groups import PLAN_DATA_UPLOADS as PLAN_DATA_UPLOADS
from picaemu.write_groups import PORT_GROUPS as PORT_GROUPS
from picaemu.write_groups import PROGRAM_UPLOADS as PROGRAM_UPLOADS
from picaemu.write_groups import write_group_table as write_group_table


class Phase(enum.Enum):
    """When a part's failure surfaces, in pipeline order: at the draw's start, before vertex arrays are read
    (not for immediate-mode draws), once the draw has vertices, once it has fragments to color."""

    SETUP = "setup"
    VERTEX_ARRAYS = "vertex arrays"
    VERTICES = "vertices"
    FRAGMENTS = "fragments"


@dataclass(frozen=True)
class Failed:
    """A part whose registers could not be decoded: raising ``error`` is deferred to its phase."""

    error: Exception


@dataclass(frozen=True)
class Primitives:
    """How vertices become primitives: geometry shader use, topology and the units' output register masks."""

    gs_in_use: bool
    variable_primitives: bool  # GS variable-size mode: the index stream carries primitive sizes
    topology: Topology
    vs_outmap_mask: int
    gs_outmap_mask: int


@dataclass(frozen=True)
class Varyings:
    """Which varying columns the output map fills: ``active`` (A,) int64 columns past the position (the
    rasterizer interpolates only these; ``plan``: how its fields read them), and whether the quaternion is among
    them."""

    active: np.ndarray
    quaternions: bool
    plan: ColumnPlan


@dataclass(frozen=True)
class DrawState:
    """Everything the stages of one draw read besides memory, one field per part (see ``PARTS``). Immutable:
    a later draw gets a new object (sharing every part that did not change)."""

    gas: None  # the gas check passed (its failure is ``picaemu.color.gas.GasUnsupported``)
    framebuffer: fbm.FramebufferState
    primitives: Primitives
    loader: VertexLoaderState  # attribute layout; the index buffer and vertex range of ``vertex_range``
    vertex_range: VertexLoaderState
    vs_program: ShaderSetup  # the VS program with zero uniforms
    vs: ShaderSetup
    gs: ShaderSetup | None
    output_map: OutputMapState
    varyings: Varyings
    clip: clipping.ClipState
    viewport: clipping.ViewportState
    raster: RasterState
    texture0: TextureUnitState
    texture1: TextureUnitState
    texture2: TextureUnitState
    tev: TevState
    fog: FogState
    blend: BlendState
    lighting: Any | None  # picaemu.color.lighting.LightingState, when the TEV reads lighting
    proctex: Any | None  # picaemu.texture.proctex.ProctexState, when the TEV reads the procedural texture
    shading: shading.ShadingState
    blend_program: BlendProgram
    depth_stencil: DepthStencilState
    shadow: ShadowState | None  # set in shadow-map rendering mode (COLOR_OPERATION fragment_mode)
    fragment_ops: fragment_ops.OpsPlan  # the compiled passes' constants of framebuffer + depth/stencil + blend
    failed: tuple[tuple[Phase, Exception], ...] = ()  # the parts that failed to decode, in ``PARTS`` order

    @property
    def textures(self) -> tuple[TextureUnitState, ...]:
        return (self.texture0, self.texture1, self.texture2)

    def need(self, name: str) -> Any:
        """Part ``name``, or its decoding error raised (for consumers outside the pipeline's phase order)."""
        value = getattr(self, name)
        if isinstance(value, Failed):
            raise value.error
        return value

    def check(self, phase: Phase) -> None:
        """Raise the error of the first part of ``phase`` that failed to decode."""
        for failed_phase, error in self.failed:
            if failed_phase is phase:
                raise error


Builder = Callable[[GpuState, dict[str, Any]], Any]


@dataclass(frozen=True)
class Part:
    """One field of ``DrawState``: its builder (the state and the parts built before it -> value), the groups it
    reads (directly or through the parts it uses), the phase its failure belongs to, and whether it reads
    registers only (``memo``: its value is remembered by the content of those registers, so a state that comes
    back — a texture rebound, a TEV setup switched back — costs a lookup)."""

    name: str
    groups: int
    phase: Phase
    build: Builder
    memo: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", int(self.groups))  # a plain int: IntFlag's ``&`` costs ~50x more

    def register_ids(self) -> np.ndarray:
        """(R,) int64 register ids in this part's groups (the content key of its memo)."""
        return np.flatnonzero(WRITE_GROUPS[:NUM_REGS] & self.groups)


def _need(built: dict[str, Any], name: str) -> Any:
    """A part built earlier; its error when it failed (the dependent part fails with it)."""
    value = built[name]
    if isinstance(value, Failed):
        raise value.error
    return value


def _gas(state: GpuState, built: dict[str, Any]) -> None:
    gas.check_gas(state)


def _framebuffer(state: GpuState, built: dict[str, Any]) -> fbm.FramebufferState:
    fb = fbm.FramebufferState.from_regs(state.regs)
    fb.check_size()
    return fb


def _primitives(state: GpuState, built: dict[str, Any]) -> Primitives:
    regs = state.regs
    gs_in_use = access.raw(regs, "GEOSTAGE_CONFIG", "gs_use") == GS_IN_USE
    return Primitives(
        gs_in_use,
        gs_in_use and bool(access.raw(regs, "GEOSTAGE_CONFIG", "variable_primitive")),
        Topology(access.raw(regs, "PRIMITIVE_CONFIG", "topology")),
        access.word(regs, "VSH_OUTMAP_MASK"),
        access.word(regs, "GSH_OUTMAP_MASK"),
    )


def _vertex_range(state: GpuState, built: dict[str, Any]) -> VertexLoaderState:
    return _need(built, "loader").with_range(state.regs)


def _vs(state: GpuState, built: dict[str, Any]) -> ShaderSetup:
    return _need(built, "vs_program").with_uniforms_of(state)


def _gs(state: GpuState, built: dict[str, Any]) -> ShaderSetup | None:
    return ShaderSetup.from_state(state, "gs") if _need(built, "primitives").gs_in_use else None


def _varyings(state: GpuState, built: dict[str, Any]) -> Varyings:
    columns = _need(built, "output_map").mapped_columns()
    active = np.array([c - 4 for c in columns if c >= 4], np.int64)
    return Varyings(active, QUAT.start in columns, ColumnPlan.of(active))


def _raster(state: GpuState, built: dict[str, Any]) -> RasterState:
    fb = _need(built, "framebuffer")
    return RasterState.from_regs(state.regs, fb.width, fb.height)


def _shading(state: GpuState, built: dict[str, Any]) -> shading.ShadingState:
    units = TexturingState(tuple(_need(built, f"texture{u}") for u in range(NUM_UNITS)))
    return shading.ShadingState.compose(
        state,
        units,
        _need(built, "tev"),
        _need(built, "fog"),
        _need(built, "blend"),
        _need(built, "lighting"),
        _need(built, "proctex"),
    )


def _shadow(state: GpuState, built: dict[str, Any]) -> ShadowState | None:
    if not fragment_ops.is_shadow_mode(state.regs):
        return None
    fragment_ops.check_shadow_target(_need(built, "framebuffer"), state.regs)
    return ShadowState.from_regs(state.regs)


def _texture_part(unit: int) -> Part:
    return Part(
        f"texture{unit}",
        Group.TEXTURE_CONFIG | TEXTURE_UNITS[unit] | Group.TEXTURE_ADDRESS,
        Phase.FRAGMENTS,
        lambda state, built: TextureUnitState.from_regs(state.regs, unit),
    )


S, A, V, F = Phase.SETUP, Phase.VERTEX_ARRAYS, Phase.VERTICES, Phase.FRAGMENTS
_TEXTURES = Group.TEXTURE_CONFIG | Group.TEXTURE0 | Group.TEXTURE1 | Group.TEXTURE2 | Group.TEXTURE_ADDRESS
_TEV = Group.TEV | Group.TEV_COLOR
_LIGHTING = Group.LIGHTING | Group.LIGHT_COLOR
_SHADING = _TEXTURES | _TEV | Group.FOG | Group.FRAGOP | _LIGHTING | Group.PROCTEX
_LOADER = Group.LOADER | Group.ATTRIBUTE_ADDRESS
_SHADERS = Group.PRIMITIVE | Group.SHADER_CONFIG | Group.VS_PROGRAM | Group.GS_PROGRAM
# parts that read data-port memories (code, uniforms, LUTs) besides registers take memo=False
PARTS: tuple[Part, ...] = (
    Part("gas", Group.FRAGOP | _TEV, S, _gas),
    Part("framebuffer", Group.FRAMEBUFFER, S, _framebuffer),
    Part("primitives", Group.PRIMITIVE | Group.VS_PROGRAM | Group.GS_PROGRAM, S, _primitives),
    Part("loader", _LOADER, A, lambda state, built: VertexLoaderState.layout_from_regs(state.regs)),
    Part("vertex_range", _LOADER | Group.DRAW_RANGE, A, _vertex_range),
    Part(
        "vs_program",
        Group.SHADER_CONFIG | Group.VS_PROGRAM,
        V,
        lambda state, built: ShaderSetup.program_from_state(state, "vs"),
        memo=False,
    ),
    Part("vs", Group.SHADER_CONFIG | Group.VS_PROGRAM | Group.VS_UNIFORMS, V, _vs, memo=False),
    Part("gs", _SHADERS | Group.GS_UNIFORMS, V, _gs, memo=False),
    Part("output_map", Group.OUTPUT_MAP, V, lambda state, built: OutputMapState.from_regs(state.regs)),
    Part("varyings", Group.OUTPUT_MAP, V, _varyings),
    Part("clip", Group.RASTER, V, lambda state, built: clipping.ClipState.from_regs(state.regs)),
    Part("viewport", Group.RASTER, V, lambda state, built: clipping.ViewportState.from_regs(state.regs)),
    Part("raster", Group.RASTER | Group.FRAMEBUFFER, V, _raster),
    *(_texture_part(u) for u in range(NUM_UNITS)),
    Part("tev", _TEV, F, lambda state, built: TevState.from_regs(state.regs)),
    Part("fog", _TEV | Group.FOG, F, lambda state, built: FogState.from_state(state), memo=False),
    Part("blend", Group.FRAGOP, F, lambda state, built: BlendState.from_regs(state.regs)),
    Part(
        "lighting",
        _TEV | _LIGHTING,
        F,
        lambda state, built: shading.lighting_state(state, _need(built, "tev")),
        memo=False,
    ),
    Part(
        "proctex",
        _TEV | Group.PROCTEX | Group.TEXTURE_CONFIG,
        F,
        lambda state, built: shading.proctex_state(state, _need(built, "tev")),
        memo=False,
    ),
    Part("shading", _SHADING, F, _shading, memo=False),
    Part("blend_program", Group.FRAGOP, F, lambda state, built: blend_program(_need(built, "blend"))),
    Part("depth_stencil", Group.FRAGOP, F, lambda state, built: DepthStencilState.from_regs(state.regs)),
    Part("shadow", Group.FRAGOP | Group.FRAMEBUFFER | Group.SHADOW, F, _shadow),
    Part(
        "fragment_ops",
        Group.FRAGOP | Group.FRAMEBUFFER,
        F,
        lambda state, built: fragment_ops.OpsPlan(
            _need(built, "framebuffer"), _need(built, "depth_stencil"), _need(built, "blend_program")
        ),
    ),
)
assert [p.name for p in PARTS] == [f.name for f in dataclasses.fields(DrawState)][:-1], "PARTS and DrawState differ"


def part_groups(names: tuple[str, ...]) -> int:
    """The write groups the parts ``names`` read (a ``Group`` bitmask)."""
    groups = 0
    for part in PARTS:
        groups |= part.groups if part.name in names else 0
    return groups


_READERS: dict[int, tuple[str, ...]] = {}  # a group mask -> the names of the parts that read one of its groups
MEMO_ENTRIES = 256  # per part: distinct register contents remembered (least recently used dropped)
# the memos are the process's: a part is a value of its registers, so every replay shares them (a capture replayed
# again, the two sides of a diff, a debugger and its probes decode a state once); the lock keeps their order whole
# when replays run on several threads
_MEMO: dict[str, OrderedDict[bytes, Any]] = {p.name: OrderedDict() for p in PARTS if p.memo}
_MEMO_IDS = {p.name: p.register_ids() for p in PARTS if p.memo}
_MEMO_LOCK = threading.Lock()


class DrawStateCache:
    """The parts built for the previous draw, dropped as writes touch their groups, and per part a memo of values
    by register content, shared by the process (see the module docstring and ``Part``)."""

    def __init__(self) -> None:
        self._parts: dict[str, Any] = {}
        self._last: DrawState | None = None

    def invalidate(self, groups: int) -> None:
        """Forget every part that reads one of ``groups`` (a ``Group`` bitmask; ``ALL`` forgets everything)."""
        if not groups:
            return
        self._last = None
        if groups == ALL:
            self._parts.clear()
            return
        names = _READERS.get(groups)
        if names is None:
            names = _READERS[groups] = tuple(part.name for part in PARTS if part.groups & groups)
        for name in names:
            self._parts.pop(name, None)

    def build(self, state: GpuState) -> DrawState:
        """The draw state of ``state``: the previous object when nothing was invalidated, else a new one that
        reuses every cached part. Failed parts are not cached (rebuilt, and failing again, at the next draw)."""
        if self._last is not None:
            return self._last
        built: dict[str, Any] = {}
        failed: list[tuple[Phase, Exception]] = []
        for part in PARTS:
            value = self._parts.get(part.name, self)
            if value is self:
                try:
                    value = self._parts[part.name] = self._make(part, state, built)
                except Exception as err:  # deferred to the part's phase (DrawState.check)
                    value = Failed(err)
                    failed.append((part.phase, err))
            built[part.name] = value
        # a frozen dataclass's __init__ sets 28 fields one object.__setattr__ at a time; filling the instance
        # dictionary at once builds the same object (DrawState has no __post_init__) at a fifth of the cost
        draw_state = object.__new__(DrawState)
        draw_state.__dict__.update(built, failed=tuple(failed))
        self._last = None if failed else draw_state
        return draw_state

    def _make(self, part: Part, state: GpuState, built: dict[str, Any]) -> Any:
        """Build one part, through its memo when it has one."""
        if not part.memo:
            return part.build(state, built)
        memo = _MEMO[part.name]
        key = state.regs[_MEMO_IDS[part.name]].tobytes()
        with _MEMO_LOCK:
            value = memo.get(key, memo)
            if value is not memo:
                memo.move_to_end(key)
                return value
        value = part.build(state, built)  # outside the lock: a failing part raises here and is not remembered
        with _MEMO_LOCK:
            memo[key] = value
            if len(memo) > MEMO_ENTRIES:
                memo.popitem(last=False)
        return value


def build_draw_state(state: GpuState) -> DrawState:
    """The draw state of ``state`` built from scratch (no cache)."""
    return DrawStateCache().build(state)
