"""The structured difference of the pipeline state at two draws — of one capture (``picaemu state --draw N --diff
M``, ``Debugger.diff``, the pipeline-state panel's A/B diff) or of two captures (``picaemu diff``,
``picaemu.debug.capture_diff``). Qt-free; every name, field and meaning comes from the register table and the
stage modules.

``draw_view(state, memory, names)`` takes what a draw reads (its registers and shader memories, and the content
hash of every bound texture in ``memory`` as it stands at the draw: call it with the replay at the draw);
``state_diff(a, b)`` compares two views (``a`` the base, ``b`` the other side) and returns only what differs, as
JSON-ready data with empty sections left out:

- ``"registers"``: configuration registers whose word differs, by table name:
  ``{"GPUREG_TEXENV0_SOURCE": {"id": "0x0C0", "a": "0x00300030", "b": "0x00300031", "fields": {"rgb_src0":
  ["texture 0", "primary color"]}}}`` (ids and words as hex strings; ``fields`` holds the fields whose meaning
  differs, as [a, b]). Only the registers a draw reads: configuration registers some stage's state is built
  from (``draw_state.WRITE_GROUPS``); data ports, triggers, jumps, data-port index registers and the command
  processor's own (command-buffer sizes and addresses, interrupts) are left out (what the ports feed is compared
  below);
- ``"uniforms"``: per shader unit ("vs", and "gs" when either side uses the geometry shader), float ``c0``-``c95``
  as [x, y, z, w], integer ``i0``-``i3``, boolean ``b0``-``b15``: ``{"vs": {"c4": {"a": [...], "b": [...],
  "name": "modelView"}}}`` (``name`` when the capture names the uniform);
- ``"textures"``: per unit 0-2 whose binding (enabled, kind, format, size, addresses, levels) or content differs:
  ``{"0": {"a": {... "hash"}, "b": {... "hash"}, "changed": ["hash", ...]}}``; ``hash``: BLAKE2b-128 (hex) of
  every level of every face as the draw reads them; unit 3 (procedural) by its enable only (its state is
  registers and LUTs);
- ``"shaders"``: per unit whose program (code memory + operand descriptors + entry point) differs:
  ``{"vs": {"a": "HASH@0xENTRY", "b": ..., "diff": [unified diff lines of the two programs' disassembly]}}``;
- ``"attribute_buffers"``: the vertex input's attribute-buffer ranges (``DrawState.vertex_range``) as [a, b].
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from picaemu import draw_state as ds_mod
from picaemu import regs as regtable
from picaemu.command.listing import decoded_fields
from picaemu.debug import state_views
from picaemu.debug.find import program_hash
from picaemu.errors import PicaError
from picaemu.memory import PhysicalMemory
from picaemu.regs import access
from picaemu.regs.schema import Action, FieldType, RegKind
from picaemu.shader.setup import REG_PREFIX, UNITS, Unit
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.debug.session import Session

HASH_DIGITS = 8  # program hashes as ``find --programs`` shows them
DIFF_CONTEXT = 2  # lines of context around each change of a program diff
# the registers a draw reads: configuration registers some stage's state is built from (``WRITE_GROUPS``), the
# index registers of data ports (where the next upload goes) excepted
_STATE_IDS = np.array(
    [
        r.id
        for r in regtable.all_registers()
        if r.kind is RegKind.CONFIG and ds_mod.WRITE_GROUPS[r.id] and r.action is not Action.PORT_INDEX
    ],
    np.int64,
)


@dataclass(frozen=True)
class DrawView:
    """What ``state_diff`` compares of one draw: its state, the bound textures with their content hashes, and the
    uniform names of its programs (unit -> register -> name)."""

    state: GpuState
    textures: tuple[dict[str, Any], ...]
    names: dict[str, dict[str, str]] = field(default_factory=dict)


def texture_hash(memory: PhysicalMemory, tex: state_views.BoundTexture) -> str:
    """BLAKE2b-128 (hex) of every level of every face of ``tex`` in ``memory``; "unreadable: why" when the texture
    leaves mapped memory or has no valid size."""
    from picaemu.texture.formats import level_bytes, texture_format

    try:
        fmt = texture_format(tex.format)
        size = sum(level_bytes(tex.width >> j, tex.height >> j, fmt) for j in range(tex.levels))
        digest = hashlib.blake2b(digest_size=16)
        for address in tex.addresses:
            digest.update(memory.bytes(address, size, f"texture unit {tex.unit}").data)
    except (PicaError, KeyError, ValueError) as err:
        return f"unreadable: {err}"
    return digest.hexdigest()


def _texture_facts(memory: PhysicalMemory, tex: state_views.BoundTexture) -> dict[str, Any]:
    facts: dict[str, Any] = {"enabled": tex.enabled, "kind": tex.kind}
    if tex.kind == "procedural":
        return facts
    if tex.error:
        return facts | {"error": tex.error}
    facts |= {
        "format": tex.format,
        "size": [tex.width, tex.height],
        "addresses": [f"0x{a:08X}" for a in tex.addresses],
        "levels": tex.levels,
    }
    return facts | {"hash": texture_hash(memory, tex)} if tex.enabled else facts


def draw_view(state: GpuState, memory: PhysicalMemory, names: dict[str, dict[str, str]] | None = None) -> DrawView:
    """The view of a draw whose trigger state is ``state``, with ``memory`` as the draw read it (textures are
    hashed now); ``names``: unit -> uniform names (``Session.uniform_names``)."""
    textures = tuple(_texture_facts(memory, t) for t in state_views.bound_textures(state))
    return DrawView(state.copy(), textures, dict(names or {}))


def state_diff(a: DrawView, b: DrawView) -> dict[str, Any]:
    """What differs between two draws' views (module docstring); {} when nothing does."""
    out = {
        "registers": register_diff(a.state.regs, b.state.regs),
        "uniforms": _uniform_diff(a, b),
        "textures": _texture_diff(a.textures, b.textures),
        "shaders": _shader_diff(a.state, b.state),
        "attribute_buffers": _attribute_diff(a.state, b.state),
    }
    return {k: v for k, v in out.items() if v}


def register_diff(a: np.ndarray, b: np.ndarray) -> dict[str, dict[str, Any]]:
    """Configuration registers whose word differs between register files ``a`` and ``b`` ((0x300,) uint32), by
    name, with the fields whose meaning differs (module docstring)."""
    ids = _STATE_IDS[np.asarray(a, np.uint32)[_STATE_IDS] != np.asarray(b, np.uint32)[_STATE_IDS]]
    out = {}
    for i in ids.tolist():
        wa, wb = int(a[i]), int(b[i])
        fa, fb = _fields(i, wa), _fields(i, wb)
        fields = {k: [fa.get(k), fb.get(k)] for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)}
        out[regtable.get(i).name] = {"id": f"0x{i:03X}", "a": f"0x{wa:08X}", "b": f"0x{wb:08X}", "fields": fields}
    return out


def _fields(reg_id: int, word: int) -> dict[str, Any]:
    """Field -> meaning of one register word (``decoded_fields``), addresses as hex text."""
    out = decoded_fields(reg_id, word)
    for f in regtable.get(reg_id).fields:
        if f.type is FieldType.ADDRESS and f.name in out:
            out[f.name] = f"0x{out[f.name]:08X}"
    return out


def _gs_in_use(state: GpuState) -> bool:
    return access.raw(state.regs, "GEOSTAGE_CONFIG", "gs_use") == ds_mod.GS_IN_USE


def _units(a: GpuState, b: GpuState) -> tuple[Unit, ...]:
    return UNITS if _gs_in_use(a) or _gs_in_use(b) else UNITS[:1]


def _uniform_diff(a: DrawView, b: DrawView) -> dict[str, dict[str, Any]]:
    from picaemu.debug.state_views import uniform_files

    out: dict[str, dict[str, Any]] = {}
    for unit in _units(a.state, b.state):
        fa, fb = uniform_files(a.state, unit), uniform_files(b.state, unit)
        names = {**b.names.get(unit, {}), **a.names.get(unit, {})}
        changed: dict[str, Any] = {}
        for kind in ("float_uniforms", "int_uniforms", "bool_uniforms"):
            for reg, va in fa[kind].items():
                vb = fb[kind][reg]
                if np.asarray(va, np.float64).tobytes() != np.asarray(vb, np.float64).tobytes():  # NaN == NaN
                    changed[reg] = {"a": va, "b": vb} | ({"name": names[reg]} if reg in names else {})
        if changed:
            out[unit] = changed
    return out


def _texture_diff(a: tuple[dict, ...], b: tuple[dict, ...]) -> dict[str, dict[str, Any]]:
    out = {}
    for unit, (ta, tb) in enumerate(zip(a, b, strict=True)):
        if ta != tb:
            keys = dict.fromkeys([*ta, *tb])
            out[str(unit)] = {"a": ta, "b": tb, "changed": [k for k in keys if ta.get(k) != tb.get(k)]}
    return out


def program_key(state: GpuState, unit: Unit) -> str:
    """``HASH@0xENTRY`` of the program ``unit`` runs (``find --programs``'s key)."""
    mem = state.vs if unit == "vs" else state.gs
    entry = access.raw(state.regs, REG_PREFIX[unit] + "ENTRYPOINT", "entry")
    return f"{program_hash(mem.code, mem.opdescs)[:HASH_DIGITS]}@0x{entry:X}"


def _program_text(state: GpuState, unit: str) -> list[str]:
    try:
        return state_views.shader_source(state, unit).splitlines()
    except PicaError as err:
        return [f"; the program does not disassemble: {err}"]


def _shader_diff(a: GpuState, b: GpuState) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for unit in _units(a, b):
        ka, kb = program_key(a, unit), program_key(b, unit)
        if ka != kb:
            lines = difflib.unified_diff(
                _program_text(a, unit), _program_text(b, unit), "a", "b", lineterm="", n=DIFF_CONTEXT
            )
            out[unit] = {"a": ka, "b": kb, "diff": list(lines)}
    return out


def _changed(a: Any, b: Any) -> Any:
    """Fields of two plain dicts that differ, as [before, after]."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)}
    return [a, b]


def _attribute_diff(a: GpuState, b: GpuState) -> Any:
    from picaemu.debug.state_views import plain

    la = plain(ds_mod.build_draw_state(a).vertex_range)
    lb = plain(ds_mod.build_draw_state(b).vertex_range)
    return _changed(la, lb) if la != lb else {}


def uniform_names(meta: dict[str, str], state: GpuState) -> dict[str, dict[str, str]]:
    """Unit -> register -> uniform name of the programs ``state`` runs, when the capture's metadata ``meta``
    carries them (``picaemu.shader.names``); units without a valid program give none."""
    from picaemu.shader import ShaderSetup, names

    out: dict[str, dict[str, str]] = {}
    for unit in _units(state, state):
        try:
            out[unit] = names.names_for(meta, ShaderSetup.from_state(state, unit))
        except PicaError:
            continue
    return out


def session_view(session: Session, draw: int) -> DrawView:
    """``draw_view`` of draw ``draw`` of an indexed debugger session (moves it to just before the draw, so that
    the textures are hashed as the draw read them)."""
    session.goto(session.timeline.before_draw(draw))
    state = session.state_at_draw(draw)
    return draw_view(state, session.replay.memory, uniform_names(session.replay.capture.meta, state))
