"""Tables of the draws of a capture, from their ``GpuState``s alone (no session, no stage is loaded): the shader
programs each draw runs (``draw_programs``, ``program_table``; programs named by ``program_hash``) and the
textures they sample (``bound_textures``, ``texture_table``). ``picaemu.debug.find`` searches with them and
``picaemu info`` prints them. Work is done once per distinct combination of the registers read
(``distinct_draws``), and once per distinct code / descriptor array (``picaemu.state.share_unchanged`` shares the
unchanged arrays between draws).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from picaemu import write_groups as wg
from picaemu.errors import PicaError
from picaemu.regs import NUM_REGS, access
from picaemu.state import GpuState

if TYPE_CHECKING:
    from picaemu.texture.state import TextureUnitState

HASH_DIGITS = 8  # program hashes are shown (and usually typed) this long
TEXTURE_GROUPS = (
    wg.Group.TEXTURE_CONFIG | wg.Group.TEXTURE0 | wg.Group.TEXTURE1 | wg.Group.TEXTURE2 | wg.Group.TEXTURE_ADDRESS
)


def program_hash(code: np.ndarray, opdescs: np.ndarray) -> str:
    """Hex SHA-1 of a unit's code memory followed by its operand descriptors (u32 little-endian, as uploaded)."""
    digest = hashlib.sha1(np.asarray(code, "<u4").tobytes())
    digest.update(np.asarray(opdescs, "<u4").tobytes())
    return digest.hexdigest()


def distinct_draws(states: list[GpuState], groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(first draw of each distinct combination of the registers in ``groups``, (D,) combination of each draw)."""
    ids = np.flatnonzero(wg.WRITE_GROUPS[:NUM_REGS] & int(groups))
    if not states:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    stacked = np.stack([s.regs[ids] for s in states])
    _, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def bound_textures(regs: np.ndarray) -> list[TextureUnitState]:
    """The enabled texture units 0-2 of a register file, decoded (a unit the registers configure invalidly
    samples nothing and is left out)."""
    from picaemu.texture.state import NUM_UNITS, TextureUnitState

    units = []
    for unit in range(NUM_UNITS):
        if not access.raw(regs, "TEXUNIT_CONFIG", f"unit{unit}_enable"):
            continue
        try:
            units.append(TextureUnitState.from_regs(regs, unit))
        except PicaError:
            continue
    return units


def texture_table(states: list[GpuState]) -> list[dict]:
    """Every distinct texture the draws sample (enabled units 0-2), in first-use order: {"address" (level 0, the
    first cube face), "format" (name), "width", "height" (texels), "type", "draws" (count), "first", "last"}.
    Decoded once per distinct combination of the texture registers."""
    first, inverse = distinct_draws(states, TEXTURE_GROUPS)
    bound = [
        {(u.addresses[0], u.format.name, u.width, u.height, u.type) for u in bound_textures(states[d].regs)}
        for d in first.tolist()
    ]
    table: dict[tuple, dict] = {}
    for draw, combination in enumerate(inverse.tolist()):
        for key in sorted(bound[combination]):
            address, fmt, width, height, kind = key
            row = table.setdefault(
                key,
                {"address": address, "format": fmt, "width": width, "height": height, "type": kind, "draws": 0,
                 "first": draw, "last": draw},
            )  # fmt: skip
            row["draws"] += 1
            row["last"] = draw
    return list(table.values())


def draw_programs(states: list[GpuState]) -> list[str]:
    """Per draw, the programs it runs: ``"vs 1a2b3c4d@0x0"``, plus ``", gs ..."`` when the geometry shader is in
    use. Hashed once per distinct code / descriptor array (the index shares unchanged arrays between draws)."""
    from picaemu.shader.setup import REG_PREFIX, Unit

    hashes: dict[tuple[int, int], str] = {}

    def text(state: GpuState, unit: Unit) -> str:
        mem = state.vs if unit == "vs" else state.gs
        key = (id(mem.code), id(mem.opdescs))
        if key not in hashes:
            hashes[key] = program_hash(mem.code, mem.opdescs)[:HASH_DIGITS]
        entry = access.raw(state.regs, REG_PREFIX[unit] + "ENTRYPOINT", "entry")
        return f"{unit} {hashes[key]}@0x{entry:X}"

    out = []
    for s in states:
        gs = access.raw(s.regs, "GEOSTAGE_CONFIG", "gs_use") == wg.GS_IN_USE
        out.append(text(s, "vs") + (", " + text(s, "gs") if gs else ""))
    return out


def program_table(states: list[GpuState]) -> list[dict]:
    """The distinct ``draw_programs`` texts in first-use order: {"program", "draws" (count), "first", "last"}."""
    table: dict[str, dict] = {}
    for draw, text in enumerate(draw_programs(states)):
        row = table.setdefault(text, {"program": text, "draws": 0, "first": draw, "last": draw})
        row["draws"] += 1
        row["last"] = draw
    return list(table.values())


__all__ = [
    "HASH_DIGITS",
    "TEXTURE_GROUPS",
    "bound_textures",
    "distinct_draws",
    "draw_programs",
    "program_hash",
    "program_table",
    "texture_table",
]
