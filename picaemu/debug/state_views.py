"""Qt-free views of one GPU state for the debugger panels: register grouping / diff / JSON, textures as bound,
shader listings and uniforms, a draw's vertices. Everything here reads names, fields and enums from the register
table and decodes through the stage modules' public functions; nothing holds hardware facts of its own.

- ``register_blocks()``: [(block name, (Register, ...))] in id order, the inspector's tree.
- ``changed_ids(a, b)``: (K,) int ids where two (0x300,) uint32 register files differ.
- ``registers_json(regs, ids=None)``: {name: {"id", "value", "fields": {...}}} ready for ``json.dumps``.
- ``bound_textures(state)``: ``BoundTexture`` per unit 0-2 plus the procedural unit 3 (enabled or not).
- ``texture_image(memory, tex, face, level)``: (H, W, 4) uint8 RGBA, row 0 = top (``decode_texture``);
  ``proctex_image(state, size)``: (size, size, 4) uint8 of unit 3 over u, v in [0, 1] (v = 0 bottom row).
- ``channel_view(rgba, mode)``: (H, W, 3) uint8 of "RGB", "A" or one of "R", "G", "B".
- ``shader_view(state, unit, names)``: ``ShaderView`` (setup, listing lines of code with uniform names, entry);
  ``shader_source(state, unit)``: the bound program as re-assemblable source (for shader edits).
- ``VertexRecorder(draw)``: a ``picaemu.observer.StageObserver`` that keeps one draw's ``DrawVertices`` (loader
  inputs, VS outputs, GS inputs / emitted vertices / triangles when a geometry shader is in use, triangles before /
  after clipping) as the pipeline computes them (``picaemu.debug.probe.record_vertices`` re-runs the draw).
- ``trace_vertex(setup, inputs)`` / ``trace_geometry(setup, dv, invocation)``: instruction traces.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from picaemu import draw_state as ds_mod
from picaemu import regs as regtable
from picaemu.command.listing import decoded_fields
from picaemu.draw import DrawCall
from picaemu.errors import PicaError
from picaemu.geometry.vertex_loader import NUM_INPUTS
from picaemu.memory import PhysicalMemory
from picaemu.observer import StageObserver
from picaemu.regs import access
from picaemu.shader.setup import Unit, register_uniforms
from picaemu.state import GpuState

if TYPE_CHECKING:  # picaemu.shader loads the compiled kernels: imported where a view needs it
    from picaemu.shader import ShaderSetup

CHANNEL_MODES = ("RGB", "A", "R", "G", "B")
_CHANNEL_INDEX = {"R": 0, "G": 1, "B": 2, "A": 3}


Blocks = tuple[tuple[str, tuple[regtable.Register, ...]], ...]


def _grouped(registers: Iterable[regtable.Register]) -> Blocks:
    blocks: dict[str, list[regtable.Register]] = {}
    for reg in registers:
        blocks.setdefault(reg.block, []).append(reg)
    return tuple((name, tuple(regs)) for name, regs in blocks.items())


@cache
def register_blocks() -> Blocks:
    """The internal registers grouped by block, in id order."""
    return _grouped(regtable.all_registers())


@cache
def external_blocks() -> Blocks:
    """The external GPU registers grouped by block (memory fill, LCD framebuffer, transfer engine)."""
    return _grouped(regtable.external_registers())


def external_json(gpu: np.ndarray) -> dict[str, dict]:
    """External register name -> physical address, value and decoded fields, from the GPU register file ``gpu``
    ((0x1000,) uint32)."""
    out = {}
    for r in regtable.external_registers():
        value = access.ext_word(gpu, r.name)
        out[r.name] = {"address": r.id, "value": value, "fields": regtable.decode_fields(r, value).as_dict()}
    return out


def changed_ids(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.asarray(a, np.uint32) != np.asarray(b, np.uint32))


def registers_json(regs: np.ndarray, ids: list[int] | None = None) -> dict[str, dict]:
    """Register name -> id, value and decoded fields (every named register, or ``ids``)."""
    chosen = [regtable.get(i) for i in ids] if ids is not None else list(regtable.all_registers())
    return {
        r.name: {"id": r.id, "value": int(regs[r.id]), "fields": decoded_fields(r.id, int(regs[r.id]))} for r in chosen
    }


def diff_json(a: np.ndarray, b: np.ndarray) -> dict[str, dict]:
    """Registers that differ between two register files: {name: {"id", "before", "after"}}."""
    return {
        regtable.get(int(i)).name: {"id": int(i), "before": int(a[i]), "after": int(b[i])} for i in changed_ids(a, b)
    }


# ------------------------------------------------------------------------------------------------- textures
@dataclass(frozen=True)
class BoundTexture:
    unit: int
    enabled: bool
    kind: str  # "2D", "cube", ..., "procedural"
    format: str = ""
    width: int = 0
    height: int = 0
    addresses: tuple[int, ...] = ()
    levels: int = 1
    error: str = ""

    def text(self) -> str:
        if self.kind == "procedural":
            return f"unit 3 procedural ({'on' if self.enabled else 'off'})"
        if self.error:
            return f"unit {self.unit}: {self.error}"
        addr = ", ".join(f"0x{a:08X}" for a in self.addresses)
        return (
            f"unit {self.unit} {'on' if self.enabled else 'off'}: {self.kind} {self.format} "
            f"{self.width}x{self.height}, {self.levels} level(s) @ {addr}"
        )


def bound_textures(state: GpuState) -> list[BoundTexture]:
    """Units 0-2 as the registers configure them, then the procedural unit 3."""
    from picaemu.texture.state import NUM_UNITS, TextureUnitState

    out = []
    for unit in range(NUM_UNITS):
        enabled = bool(access.raw(state.regs, "TEXUNIT_CONFIG", f"unit{unit}_enable"))
        try:
            u = TextureUnitState.from_regs(state.regs, unit)
        except PicaError as err:
            out.append(BoundTexture(unit, enabled, "invalid", error=str(err)))
            continue
        levels = u.max_level + 1 if u.mipmapped else 1
        out.append(BoundTexture(unit, u.enabled, u.type, u.format.name, u.width, u.height, u.addresses, levels))
    out.append(BoundTexture(3, bool(access.raw(state.regs, "TEXUNIT_CONFIG", "unit3_enable")), "procedural"))
    return out


def texture_image(memory: PhysicalMemory, tex: BoundTexture, face: int = 0, level: int = 0) -> np.ndarray:
    from picaemu.texture import decode_texture

    if not tex.addresses:
        raise PicaError(f"texture unit {tex.unit} has no address")
    return decode_texture(memory, tex.addresses[face], tex.width, tex.height, tex.format, level)


def proctex_image(state: GpuState, size: int = 128) -> np.ndarray:
    from picaemu.texture.proctex import ProctexState, sample_proctex

    ps = ProctexState.from_state(state)
    c = (np.arange(size, dtype=np.float32) + 0.5) / size
    u, v = np.meshgrid(c, c[::-1])
    return sample_proctex(ps, np.stack([u.ravel(), v.ravel()], axis=1)).reshape(size, size, 4)


def channel_view(rgba: np.ndarray, mode: str) -> np.ndarray:
    if mode == "RGB":
        return np.ascontiguousarray(rgba[..., :3])
    if mode not in _CHANNEL_INDEX:
        raise ValueError(f"channel mode {mode!r} not in {CHANNEL_MODES}")
    return np.ascontiguousarray(np.repeat(rgba[..., _CHANNEL_INDEX[mode], None], 3, axis=2))


# ------------------------------------------------------------------------------------------------- shaders
@dataclass(frozen=True)
class ShaderView:
    unit: str
    setup: ShaderSetup
    lines: tuple[str, ...]
    entry: int


def shader_setup(state: GpuState, unit: str = "vs", names: dict[str, str] | None = None) -> ShaderSetup:
    """``ShaderSetup.from_state`` with ``names`` (register -> uniform name, e.g. from
    ``picaemu.shader.names.names_for``) as ``setup.names`` (listings and traces show them)."""
    from dataclasses import replace

    from picaemu.shader import ShaderSetup
    from picaemu.shader.setup import shader_unit

    setup = ShaderSetup.from_state(state, shader_unit(unit))
    return replace(setup, names=dict(names)) if names else setup


def shader_view(state: GpuState, unit: str = "vs", names: dict[str, str] | None = None) -> ShaderView:
    """The bound program of ``unit``, its uniforms labelled with ``names``."""
    from picaemu.shader.disasm import listing

    setup = shader_setup(state, unit, names)
    lines = tuple(listing(setup.code, setup.opdescs, 0, program_end(setup), setup.names))
    return ShaderView(unit, setup, lines, int(setup.entry))


def program_end(setup: ShaderSetup) -> int:
    """Words of code memory a listing shows: through the last non-zero word (and the entry point); the zeros past
    it are unwritten memory, not program."""
    used = np.flatnonzero(setup.code[: setup.code_words])
    return max(int(used[-1]) + 1 if len(used) else 0, int(setup.entry) + 1)


def shader_source(state: GpuState, unit: str = "vs") -> str:
    """Re-assemblable picasso source of the program ``unit`` runs in ``state`` (``program_end`` words, the entry
    point as ``main``): the text a shader edit starts from."""
    from picaemu.shader.disasm import disassemble

    setup = shader_setup(state, unit)
    return disassemble(setup.code[: program_end(setup)], setup.opdescs, entry=int(setup.entry))


def trace_vertex(setup: ShaderSetup, inputs: np.ndarray) -> list:
    """The instruction trace of one vertex: ``picaemu.shader.trace.TraceRecord`` per executed step."""
    from picaemu.shader.trace import trace_vertex as trace

    return trace(setup, inputs)


def trace_geometry(setup: ShaderSetup, dv: DrawVertices, invocation: int) -> list:
    """The instruction trace of GS invocation ``invocation`` of a draw (``dv`` from ``VertexRecorder``)."""
    from picaemu.shader.trace import trace_geometry as trace

    if dv.gs_inputs is None:
        raise PicaError("this draw does not use the geometry shader")
    if not 0 <= invocation < dv.gs_invocations:
        raise PicaError(f"the draw runs {dv.gs_invocations} GS invocations; there is no invocation {invocation}")
    return trace(setup, dv.gs_inputs, dv.primitive_sizes, invocation)


# ------------------------------------------------------------------------------------------------- vertices
@dataclass(frozen=True)
class DrawVertices:
    """One draw's geometry as the pipeline computed it, recorded through its stage observer (``VertexRecorder``)."""

    indices: np.ndarray  # (U,) int64 vertex indices loaded (immediate mode: 0..U-1 in submission order)
    inputs: np.ndarray  # (U, 16, 4) float32 loader output = shader inputs
    outputs: np.ndarray  # (U, 16, 4) float32 vertex shader output registers o0-o15
    order: np.ndarray  # (N,) int64 position in ``inputs`` of every vertex of the draw, in stream order
    triangles: np.ndarray  # (T, 3, 4) float32 clip-space positions of the assembled triangles
    clipped: np.ndarray  # (T', 3, 4) float32 clip-space positions after clipping
    gs_inputs: np.ndarray | None = None  # (N, K, 4) float32 VS output attributes fed to the GS, stream order
    gs_outputs: np.ndarray | None = None  # (M, 16, 4) float32 o0-o15 of every GS EMIT
    gs_triangles: np.ndarray | None = None  # (T, 3) int64 indices into ``gs_outputs``
    primitive_sizes: tuple[int, ...] | None = None  # variable-size GS mode: vertices per primitive
    gs_invocations: int = 0


class VertexRecorder(StageObserver):
    """Keeps what the pipeline computed for one draw (``picaemu.observer.StageObserver``), as ``DrawVertices``."""

    def __init__(self, draw: int) -> None:
        self.draw = draw
        self.parts: dict = {}

    def on_vertices(self, call: DrawCall, batch) -> None:
        if call.index == self.draw:
            inputs = np.zeros((batch.attributes.shape[0], NUM_INPUTS, 4), np.float32)  # the configured ones
            inputs[:, : batch.attributes.shape[1]] = batch.attributes  # first; the rest read as 0
            self.parts.update(
                indices=batch.indices.copy(),
                inputs=inputs,
                order=batch.inverse.copy(),
                primitive_sizes=batch.primitive_sizes,
            )

    def on_vertex_outputs(self, call: DrawCall, outputs: np.ndarray) -> None:
        if call.index == self.draw:
            self.parts["outputs"] = outputs.copy()

    def on_geometry(
        self,
        call: DrawCall,
        inputs: np.ndarray,
        sizes: tuple[int, ...] | None,
        outputs: np.ndarray,
        triangles: np.ndarray,
    ) -> None:
        if call.index == self.draw:
            from picaemu.shader.geometry import invocations

            gs = call.draw_state.gs
            if gs is None:  # the pipeline reports geometry only for a draw that runs its geometry shader
                raise PicaError(f"draw {call.index}: geometry output without a geometry shader")
            self.parts.update(
                gs_inputs=inputs.copy(),
                gs_outputs=outputs.copy(),
                gs_triangles=triangles.copy(),
                gs_invocations=sum(1 for _ in invocations(gs, inputs, sizes)),
            )

    def on_triangles(self, call: DrawCall, assembled: np.ndarray, clipped: np.ndarray) -> None:
        if call.index == self.draw:
            self.parts.update(triangles=assembled[:, :, :4].copy(), clipped=clipped[:, :, :4].copy())

    def result(self) -> DrawVertices:
        """The recorded draw; ``PicaError`` when the pipeline stopped before a stage (no vertices, a fault)."""
        missing = [k for k in ("indices", "outputs", "triangles") if k not in self.parts]
        if missing:
            raise PicaError(f"draw {self.draw} produced no {missing[0]} (it has no vertices, or failed first)")
        return DrawVertices(**self.parts)


# -- the state as a JSON document (``picaemu state --json``) -------------------------------------------------
STATE_SCHEMA = 1  # version of the ``picaemu state --json`` document; raise it when a key changes meaning


def _address_key(key: object) -> bool:
    """Whether a state key holds emulated physical addresses: ``address``, ``addresses``, ``base``, ``*_address``."""
    return isinstance(key, str) and (key in ("address", "addresses", "base") or key.endswith("_address"))


def _hex(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | list):
        return value
    return [_hex(v) for v in value] if isinstance(value, list) else f"0x{value:08X}"


def _hex_addresses(value: Any, key: object = None) -> Any:
    if isinstance(value, dict):
        return {k: _hex_addresses(v, k) for k, v in value.items()}
    if _address_key(key):
        return _hex(value)
    if isinstance(value, list):
        return [_hex_addresses(v) for v in value]
    return value


def state_document(value: dict[str, Any]) -> dict[str, Any]:
    """A state answer (``pipeline_state``, ``diff``, ``external_registers``) as the JSON document the CLI prints:
    ``"schema": STATE_SCHEMA`` first, every address (``_address_key``; a diff's [before, after] pair too) as a
    "0x1F000000" string; other numbers stay numbers."""
    return {"schema": STATE_SCHEMA, **_hex_addresses(value)}


def tev_equations(tev: Any) -> list[str]:
    """One line per TEV stage: ``stage 0: rgb = modulate(texture 0 [src.rgb], primary color [src.rgb]) x1;
    alpha = replace(texture 0 [src.a]) x1`` (sources and operands by name; pass-through stages say so)."""
    from picaemu.regs.blocks.tev import ALPHA_OPERANDS, COMBINE_OPS, RGB_OPERANDS, TEV_SOURCES

    def args(sources: tuple, operands: tuple, table: dict, slots: tuple[int, ...]) -> str:
        return ", ".join(
            f"{TEV_SOURCES.get(sources[i], sources[i])} [{table.get(operands[i], operands[i])}]" for i in slots
        )

    lines = []
    for stage in tev.stages:
        if stage.passthrough:
            lines.append(f"stage {stage.index}: previous (pass-through)")
            continue
        rgb = (
            f"rgb = {COMBINE_OPS.get(stage.rgb_op, stage.rgb_op)}("
            f"{args(stage.rgb_sources, stage.rgb_operands, RGB_OPERANDS, stage.slots_read('RGB'))})"
            f" x{1 << stage.rgb_shift}"
        )
        alpha_slots = stage.slots_read("alpha")
        alpha = (
            "alpha from the dot3 result"
            if not alpha_slots
            else f"alpha = {COMBINE_OPS.get(stage.alpha_op, stage.alpha_op)}("
            f"{args(stage.alpha_sources, stage.alpha_operands, ALPHA_OPERANDS, alpha_slots)})"
            f" x{1 << stage.alpha_shift}"
        )
        lines.append(f"stage {stage.index}: {rgb}; {alpha}")
    return lines


def uniform_files(state: GpuState, unit: Unit) -> dict[str, dict[str, Any]]:
    """A unit's uniforms by register name: float ``c0``-``c95`` as [x, y, z, w], int ``i0``-``i3`` as [x, y, z, w],
    bool ``b0``-``b15``."""
    mem = state.vs if unit == "vs" else state.gs
    floats = {f"c{i}": [float(v) for v in mem.float_uniforms[i]] for i in range(len(mem.float_uniforms))}
    bool_list, int_list = register_uniforms(state.regs, unit)
    ints = {f"i{i}": list(v) for i, v in enumerate(int_list)}
    bools = {f"b{i}": v for i, v in enumerate(bool_list)}
    return {"float_uniforms": floats, "int_uniforms": ints, "bool_uniforms": bools}


def plain(value: Any) -> Any:
    """JSON-ready data from decoded state: dataclasses -> dicts, enums -> names, arrays -> lists (large ones
    summarised by shape), failed parts -> {"error": text}."""
    if isinstance(value, ds_mod.Failed):
        return {"error": str(value.error)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 64 else {"shape": list(value.shape), "dtype": str(value.dtype)}
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list | frozenset | set):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return f"<{type(value).__name__}>"  # an execution plan (compiled-pass tables), not state to read
