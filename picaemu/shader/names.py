"""Uniform names of the shader programs a capture binds: the optional ``shader_names`` metadata entry.

A SHBIN's DVLE names its uniforms (``projection`` = c0-c3, ...); the GPU never sees them. When
``picaemu.builder.CaptureBuilder`` binds a SHBIN it records them in ``Capture.meta[META_KEY]`` so a debugger can
label the uniforms of whatever program is bound at a draw. The value is a JSON list of entries::

    {"unit": "vs" | "gs", "entry": main offset (instruction index),
     "code_words": L, "code": SHA-1 hex of the L code words uploaded (u32 little-endian),
     "opdescs": SHA-1 hex of the operand descriptors uploaded (u32 little-endian), "opdesc_count": D,
     "names": {"c0": "projection[0]", "i0": "loop", "b3": "lit", ...}}

A bound program (``ShaderSetup``) matches an entry when unit and entry point are equal and the first L words of
its code memory and first D descriptors hash the same, so names never label some other program. Captures without
the key (older files, CiTrace, c3dcap) simply have no names. Functions:

- ``program_entry(shbin, dvle_index, unit) -> dict``: the entry for one DVLE (uniform names only; outputs keep
  their register names so traces and watch lists stay in registers).
- ``add_entry(meta, entry)``: append to ``meta[META_KEY]`` (once per distinct entry).
- ``names_for(meta, setup) -> dict[str, str]``: the names of the entry matching ``setup`` ({} if none);
  a malformed value raises ``FormatError`` naming the key.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from picaemu.errors import FormatError
from picaemu.formats.shbin import Shbin
from picaemu.shader.setup import CODE_WORDS, ShaderSetup, Unit, dvle_names

META_KEY = "shader_names"
UNIFORM_PREFIXES = ("c", "i", "b")
_FIELDS = {
    "unit": str,
    "entry": int,
    "code_words": int,
    "code": str,
    "opdescs": str,
    "opdesc_count": int,
    "names": dict,
}


def _digest(words) -> str:
    return hashlib.sha1(np.asarray(words, "<u4").tobytes()).hexdigest()


def program_entry(shbin: Shbin, dvle_index: int, unit: Unit) -> dict:
    """The metadata entry of DVLE ``dvle_index`` bound to ``unit`` (code as the builder uploads it: at most the
    unit's code memory)."""
    dvle = shbin.dvles[dvle_index]
    code = list(shbin.code)[: CODE_WORDS[unit]]
    opdescs = [d for d, _ in shbin.opdescs]
    names = {reg: name for reg, name in dvle_names(dvle).items() if reg.startswith(UNIFORM_PREFIXES)}
    return {
        "unit": unit,
        "entry": int(dvle.main_offset),
        "code_words": len(code),
        "code": _digest(code),
        "opdescs": _digest(opdescs),
        "opdesc_count": len(opdescs),
        "names": names,
    }


def entries(meta: dict[str, str]) -> list[dict]:
    """The entries of ``meta[META_KEY]`` (checked field by field); [] when the key is absent."""
    if META_KEY not in meta:
        return []
    try:
        value = json.loads(meta[META_KEY])
    except json.JSONDecodeError as err:
        raise FormatError(f"metadata {META_KEY!r} is not JSON: {err}") from None
    if not isinstance(value, list):
        raise FormatError(f"metadata {META_KEY!r} must be a JSON list")
    for i, entry in enumerate(value):
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _FIELDS.items()):
            raise FormatError(f"metadata {META_KEY!r} entry {i} lacks one of {sorted(_FIELDS)}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in entry["names"].items()):
            raise FormatError(f"metadata {META_KEY!r} entry {i}: names must map strings to strings")
    return value


def add_entry(meta: dict[str, str], entry: dict) -> None:
    """Record ``entry`` in ``meta`` unless an equal one is there."""
    known = entries(meta)
    if entry not in known:
        meta[META_KEY] = json.dumps([*known, entry], sort_keys=True)


def names_for(meta: dict[str, str], setup: ShaderSetup) -> dict[str, str]:
    """Register -> uniform name for the program ``setup`` binds, from the first matching entry."""
    for e in entries(meta):
        n, d = e["code_words"], e["opdesc_count"]
        if (
            e["unit"] == setup.unit
            and e["entry"] == int(setup.entry)
            and 0 <= n <= len(setup.code)
            and 0 <= d <= len(setup.opdescs)
            and _digest(setup.code[:n]) == e["code"]
            and _digest(setup.opdescs[:d]) == e["opdescs"]
        ):
            return dict(e["names"])
    return {}
