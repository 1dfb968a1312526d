"""A fragment plan's ``links``: the entries (``numba_link.Linked.entry``) of the kernels ``fragment_side`` calls by
address with that plan, (NUM_LINKS, 2) int64. Its features' rows (``features.LINK_*``: the texture units, their
LOD neighbours, fragment lighting, the procedural texture, fog; ``feature_links``) and its core's
(``fragment_kernel.core_links``: the rasterizer, the shading, the TEV stage, the per-fragment passes and the
passes they call), 0 for a kernel the plan does not call.

Which kernels a plan links, and the numba types each is compiled for, follow from two things: the kinds of the
plan's arguments (``numba_link.arguments_kind``; every entry's sample is made of the plan's arguments and of module
constants) and the values that turn a kernel on (``Switches``: a texture unit sampled, one with a per-fragment
LOD, lighting, the procedural texture, fog, an active TEV stage, the depth and color pass kinds). ``links_of``
remembers the links by both, for the process: a state met before, or another of the same kinds and switches
(another replay's, a game's other materials), costs the kinds of its arguments (~50 us) instead of asking every
kernel for its entry again (about eight entries, ~250 us a plan; bench/RESULTS.md, "pb31: fresh Replay plan
building"). A value that chooses an entry in ``feature_links``, ``core_links`` or ``fragment.kernels.pass_links``
must be one of ``Switches`` (``tests/test_fragment_links.py`` compares remembered links with links built anew).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from picaemu import numba_link
from picaemu.fused import features, layout
from picaemu.fused.fragment_kernel import NUM_LINKS, PLAN_PARAMS, core_links

_AT = {name: i for i, name in enumerate(PLAN_PARAMS)}  # a plan argument's position in ``FragmentPlan.args``
# values of the types ``fragment_side`` passes its features (``features.LINK_*``): varyings (F, A) float32, LOD
# neighbours (F, 4) int64, one slot's texels (F, 4) uint8, all slots (SLOTS, F, 4) uint8, depths (F,) float32
# (``features.NEIGHBOURS_SAMPLE`` / ``TEXELS_SAMPLE``), x, y or primitive of the fragments (F,) int32
_VARYINGS, _SLOTS, _DEPTHS = np.zeros((0, 0), np.float32), np.zeros((0, 0, 4), np.uint8), np.zeros(0, np.float32)
_NEIGHBOURS, _TEXELS, _COORDINATES = features.NEIGHBOURS_SAMPLE, features.TEXELS_SAMPLE, np.zeros(0, np.int32)
_NO_LINKS = np.zeros((NUM_LINKS, 2), np.int64)  # of the type of every plan's ``links``
LINKS: dict[tuple, np.ndarray] = {}  # (kind of a plan's arguments, its ``Switches``) -> its links


class Switches(NamedTuple):
    """What turns a plan's linked kernels on, besides the kinds of its arguments."""

    textures: bool  # a texture unit is sampled (``units``' U_USED)
    lod: bool  # one of them with a per-fragment level of detail (U_NEEDS_LOD)
    lighting: bool  # ``color_ints``' C_LIGHTING
    proctex: bool  # C_PROCTEX
    fog: bool  # C_FOG
    stages: bool  # a TEV stage is active (``tev_rows``' T_ACTIVE)
    depth_kind: int  # ``ints``' DEPTH_KIND (``fragment.kernels.pass_links``)
    color_kind: int  # ``ints``' COLOR_KIND


def switches(args: tuple) -> Switches:
    """The ``Switches`` of a plan whose arguments before its links are ``args``."""
    ints, units = args[_AT["ints"]], args[_AT["units"]]
    color_ints, used = args[_AT["color_ints"]], units[:, layout.U_USED]
    return Switches(
        bool(used.any()),
        bool((used & units[:, layout.U_NEEDS_LOD]).any()),
        bool(color_ints[layout.C_LIGHTING]),
        bool(color_ints[layout.C_PROCTEX]),
        bool(color_ints[layout.C_FOG]),
        bool(args[_AT["tev_rows"]][:, layout.T_ACTIVE].any()),
        int(ints[layout.DEPTH_KIND]),
        int(ints[layout.COLOR_KIND]),
    )


def links_of(args: tuple) -> tuple[np.ndarray, object]:
    """(the links of a plan whose arguments before them are ``args``: a new array, the plan's own; the
    ``numba_link.arguments_kind`` of its whole arguments, ``args`` and the links), remembered by that kind and the
    plan's ``Switches`` (module docstring). A plan whose kind ``arguments_kind`` cannot name gets links built anew
    (and None)."""
    kind = numba_link.arguments_kind((*args, _NO_LINKS))
    on = switches(args)
    if kind is None:
        return build(args, on), None
    key = (kind, on)
    found = LINKS.get(key)
    if found is None:
        found = LINKS[key] = build(args, on)
    return found.copy(), kind


def build(args: tuple, on: Switches) -> np.ndarray:
    """The links of a plan whose arguments before them are ``args`` and whose switches are ``on``, each entry asked
    of its kernel (compiled or loaded on first use)."""
    links = np.zeros((NUM_LINKS, 2), np.int64)
    feature_links(args, on, links)
    core_links(args, links, on.stages)
    return links


def feature_links(args: tuple, on: Switches, links: np.ndarray) -> None:
    """Fill ``links``' feature rows (``features.LINK_*``) with the entries of the feature kernels ``on`` turns on,
    for the types ``fragment_side`` passes them with a plan whose arguments before its links are ``args``."""
    ints, units, textures = args[_AT["ints"]], args[_AT["units"]], args[_AT["textures"]]
    vram, fcram, color_ints = args[_AT["vram"]], args[_AT["fcram"]], args[_AT["color_ints"]]
    if on.textures:
        sample = (0, ints, units, textures, vram, fcram, _VARYINGS, _NEIGHBOURS, _TEXELS)
        links[features.LINK_TEXTURE] = features.TEXTURE.entry(*sample)
    if on.lod:
        links[features.LINK_NEIGHBOURS] = features.NEIGHBOURS.entry(_COORDINATES, _COORDINATES, _COORDINATES)
    if on.lighting:
        links[features.LINK_LIGHTING] = features.LIGHTING.entry(color_ints, args[_AT["lighting"]], _VARYINGS, _SLOTS)
    if on.proctex:
        pt_args = args[_AT["proctex_args"]]
        links[features.LINK_PROCTEX] = features.PROCTEX.entry(color_ints, pt_args, _VARYINGS, _TEXELS)
    if on.fog:
        fog = (args[_AT["fog_lut"]], args[_AT["fog_rgb"]])
        links[features.LINK_FOG] = features.FOG.entry(color_ints, *fog, _DEPTHS, _TEXELS)
