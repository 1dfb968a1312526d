"""The light colors the compiled draw loop reads from the registers at each draw (``picaemu.fused.loop``).

citro3d writes a light's colors as material x light (``LIGHTn_SPECULAR0`` / ``SPECULAR1`` / ``DIFFUSE`` /
``AMBIENT``) and the global ambient (``LIGHTING_AMBIENT``) whenever the material changes, so a lit game switches
light colors between most draws. They form the live write group ``LIGHT_COLOR``: no plan depends on them (they are
not part of the plans' keys), and ``write_colors`` writes the draw's values into its fragment plan's lighting
arrays (the plan's own copies of ``lparams`` and ``ambient``: ``picaemu.fused.fragments``), each channel decoded as
``picaemu.color.lighting`` decodes it (the register's field / ``COLOR_ONE``, float32). A row of ``lparams`` is the
hardware light its ``lflags[LF_LIGHT]`` names (the permutation is part of the plan).
"""

from __future__ import annotations

import numpy as np

from picaemu import numba_link
from picaemu.color.lighting import COLOR_ONE
from picaemu.color.lighting_kernel import LF_LIGHT, LP_AMBIENT, LP_DIFFUSE, LP_SPEC0, LP_SPEC1
from picaemu.fused.fragments import LIGHT_AMBIENT, LIGHT_FLAGS, LIGHT_PARAMS
from picaemu.fused.layout import C_LIGHTING
from picaemu.regs import access, id_of
from picaemu.regs.blocks.lighting import NUM_LIGHTS

# each light's color registers (by name suffix) and the ``lparams`` columns they fill
COLORS = (("SPECULAR0", LP_SPEC0), ("SPECULAR1", LP_SPEC1), ("DIFFUSE", LP_DIFFUSE), ("AMBIENT", LP_AMBIENT))
COLOR_IDS = np.array([[id_of(f"LIGHT{n}_{name}") for name, _ in COLORS] for n in range(NUM_LIGHTS)], np.int64)
COLOR_COLUMNS = np.array([column for _, column in COLORS], np.int64)
AMBIENT_ID = id_of("LIGHTING_AMBIENT")


def _fields(name: str) -> list[tuple[int, int]]:
    """(lowest bit, mask) of a color register's r, g, b fields."""
    return [(fld.lo, (1 << fld.width) - 1) for fld in (access.locate(name, channel)[1] for channel in "rgb")]


FIELDS = np.array(_fields("LIGHTING_AMBIENT"), np.int64)  # (3, 2): every light color register has this layout
if any(not np.array_equal(_fields(f"LIGHT{n}_{name}"), FIELDS) for n in range(NUM_LIGHTS) for name, _ in COLORS):
    raise ValueError("the light color registers' r, g, b fields differ: write_colors reads one layout")


@numba_link.kernel(nogil=True, inline="always")
def _color_into(word, out, at):  # pragma: no cover - compiled
    """The r, g, b of a light color register's ``word`` into ``out[at:at + 3]`` (float32 0..1)."""
    for ch in range(3):
        out[at + ch] = np.float32((np.int64(word) >> FIELDS[ch, 0]) & FIELDS[ch, 1]) / np.float32(COLOR_ONE)


@numba_link.compiled_only()
def write_colors(regs, color_ints, lighting):  # pragma: no cover - compiled
    """While the plan computes lighting (``color_ints[C_LIGHTING]``): each row's light colors and the global
    ambient from ``regs`` into the plan's ``lighting`` tuple (module docstring)."""
    if not color_ints[C_LIGHTING]:
        return
    lparams, lflags = lighting[LIGHT_PARAMS], lighting[LIGHT_FLAGS]
    for k in range(lparams.shape[0]):
        n = lflags[k, LF_LIGHT]
        for c in range(COLOR_IDS.shape[1]):
            _color_into(regs[COLOR_IDS[n, c]], lparams[k], COLOR_COLUMNS[c])
    _color_into(regs[AMBIENT_ID], lighting[LIGHT_AMBIENT], 0)
