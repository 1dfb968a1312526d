"""A draw's vertices as a table a person reads: one row per vertex, columns named by what they hold.

- ``vs`` / ``gs`` outputs of the unit that feeds the rasterizer: the output map's view (``map_outputs`` of
  ``picaemu.geometry.output_map``: the vertex columns the rasterizer interpolates), one column per semantic the
  map assigns, in that module's column order, named ``COLUMN_NAMES`` (position.x ... color.r ... texcoord0.u ...).
  Semantics no component maps are left out (the pipeline reads 1.0 for them). The color columns are the mapped
  values, made absolute and clamped to [0, 1] as the rasterizer sees them.
- ``vs`` outputs when a geometry shader runs (they feed the geometry shader, not the output map): the output
  registers the unit's OUTMAP_MASK enables, ``o<r>.x`` ... ``o<r>.w``.
- ``input``: the vertex loader's attribute registers the vertex shader reads (VSH_NUM_ATTR), ``v<r>.x`` ...
- ``clipped``: one row per vertex of each clipped triangle: triangle, vertex, position.x ... position.w.
"""

from __future__ import annotations

import numpy as np

from picaemu.draw_state import GS_IN_USE
from picaemu.geometry.output_map import COMPONENTS, NUM_COLUMNS, OutputMapState, map_outputs, slot_registers
from picaemu.regs import access

# the vertex column layout of picaemu.geometry.output_map, named (column -> semantic.component)
COLUMN_NAMES: tuple[str, ...] = (
    *(f"position.{c}" for c in "xyzw"),
    *(f"color.{c}" for c in "rgba"),
    "texcoord0.u",
    "texcoord0.v",
    "texcoord0.w",
    "texcoord1.u",
    "texcoord1.v",
    "texcoord2.u",
    "texcoord2.v",
    *(f"quaternion.{c}" for c in "xyzw"),
    *(f"view.{c}" for c in "xyz"),
)
assert len(COLUMN_NAMES) == NUM_COLUMNS


def _registers(data: np.ndarray, registers: list[int], prefix: str) -> tuple[list[str], np.ndarray]:
    names = [f"{prefix}{r}.{c}" for r in registers for c in COMPONENTS]
    return names, data[:, registers, :].reshape(len(data), 4 * len(registers))


def vertex_table(data: np.ndarray, stage: str, regs: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(column names, (rows, columns) float32 values) of ``data`` (``Debugger.mesh(draw, stage)``) under the
    registers ``regs`` of the draw; see the module docstring."""
    if stage == "clipped":
        tri, vertex = np.divmod(np.arange(data.shape[0] * data.shape[1]), data.shape[1])
        values = np.column_stack([tri, vertex, data.reshape(-1, 4)]).astype(np.float64)
        return ["triangle", "vertex", *COLUMN_NAMES[:4]], values
    if stage == "input":
        return _registers(data, list(range(access.raw(regs, "VSH_NUM_ATTR", "num_attrs_minus_1") + 1)), "v")
    gs_in_use = access.raw(regs, "GEOSTAGE_CONFIG", "gs_use") == GS_IN_USE
    mask = access.word(regs, "GSH_OUTMAP_MASK" if stage == "gs" else "VSH_OUTMAP_MASK")
    if stage == "vs" and gs_in_use:
        return _registers(data, slot_registers(mask), "o")
    om = OutputMapState.from_regs(regs)
    columns = om.mapped_columns()
    vertices = map_outputs(om, np.asarray(data, np.float32), mask) if len(data) else np.zeros((0, NUM_COLUMNS))
    return [COLUMN_NAMES[c] for c in columns], vertices[:, columns]
