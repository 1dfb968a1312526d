"""Output mapping: OUTMAP_MASK slots, SH_OUTMAP semantics, unmapped = 1.0, color conditioning."""

from __future__ import annotations

import numpy as np
import pytest

from picaemu.errors import PipelineError, UnsupportedFeature
from picaemu.geometry import output_map as om
from picaemu.regs import access, id_of


def regs_with(slots: list[tuple[int, int, int, int]]) -> np.ndarray:
    regs = np.zeros(0x300, np.uint32)
    regs[id_of("SH_OUTMAP_TOTAL")] = len(slots)
    for i, (x, y, z, w) in enumerate(slots):
        regs[id_of(f"SH_OUTMAP_O{i}")] = access.compose(f"SH_OUTMAP_O{i}", x=x, y=y, z=z, w=w)
    return regs


def test_citro3d_layout_with_mask_gaps_and_unmapped_semantics():
    # o0 position, o2 color (o1 disabled), o5 texcoord0 u v + view x y
    regs = regs_with([(0, 1, 2, 3), (8, 9, 10, 11), (0x0C, 0x0D, 0x12, 0x13)])
    out = np.zeros((1, 16, 4), np.float32)
    out[0, 0] = (1, 2, 3, 4)
    out[0, 1] = (99, 99, 99, 99)
    out[0, 2] = (-0.5, 2.0, 0.25, 1.0)
    out[0, 5] = (0.1, 0.2, 0.3, 0.4)
    v = om.map_outputs(om.OutputMapState.from_regs(regs), out, 0b100101)[0]
    assert v[om.POS].tolist() == [1, 2, 3, 4]
    assert v[om.COLOR].tolist() == [0.5, 1.0, 0.25, 1.0]  # |c| clamped to 1
    assert v[om.TC0].tolist() == pytest.approx([0.1, 0.2])
    assert v[om.VIEW].tolist() == pytest.approx([0.3, 0.4, 1.0])  # view.z unmapped -> 1
    assert v[om.QUAT].tolist() == [1, 1, 1, 1] and v[om.TC0W] == 1.0
    assert v[om.TC1].tolist() == [1, 1] and v[om.TC2].tolist() == [1, 1]


def test_later_component_wins_and_none_codes_are_dropped():
    regs = regs_with([(0, 0, 0x11, 0x1F)])
    out = np.zeros((1, 16, 4), np.float32)
    out[0, 0] = (5, 6, 7, 8)
    v = om.map_outputs(om.OutputMapState.from_regs(regs), out, 1)[0]
    assert v[0] == 6 and v[1:4].tolist() == [1, 1, 1]


def test_invalid_semantic_and_missing_registers():
    with pytest.raises(UnsupportedFeature, match="0x18"):
        om.OutputMapState.from_regs(regs_with([(0x18, 1, 2, 3)]))
    state = om.OutputMapState.from_regs(regs_with([(0, 1, 2, 3), (8, 9, 10, 11)]))
    with pytest.raises(PipelineError, match="OUTMAP_MASK"):
        om.map_outputs(state, np.zeros((1, 16, 4), np.float32), 0b1)
    with pytest.raises(PipelineError, match=r"lack a register the output map reads \(o5\)"):
        om.map_outputs(state, np.zeros((1, 4, 4), np.float32), 0b100001)  # slot 1 -> o5, outputs hold o0-o3
