"""Output a person reads: ``picaemu mesh --csv`` one row per vertex with columns named by the output map's
semantics, and ``picaemu state --json`` as a versioned document with addresses as hex strings."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import picaemu
from picaemu.cli import main
from picaemu.debug import mesh_table, state_views
from picaemu.geometry import output_map

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_column_names_follow_the_output_map_layout() -> None:
    names = mesh_table.COLUMN_NAMES
    assert [names[c] for c in range(*output_map.POS.indices(99))] == ["position.x", "position.y", "position.z",
                                                                     "position.w"]  # fmt: skip
    assert names[output_map.COLOR.start] == "color.r" and names[output_map.TC0.start] == "texcoord0.u"
    assert names[output_map.TC0W] == "texcoord0.w" and names[output_map.TC2.start] == "texcoord2.u"
    assert names[output_map.QUAT.start] == "quaternion.x" and names[output_map.VIEW.stop - 1] == "view.z"


def test_mesh_csv_is_one_row_per_vertex_named_by_semantic() -> None:
    capture = SAMPLES / "cube.pica"
    rows = _rows(_run("mesh", str(capture), "--draw", "0", "--stage", "vs", "--csv"))
    replay = picaemu.open(capture)
    outputs = replay.mesh(0, "vs")
    assert rows[0] == ["vertex", *(f"position.{c}" for c in "xyzw"), *(f"color.{c}" for c in "rgba")]
    assert len(rows) == 1 + len(outputs)  # one row per vertex, not per output register
    # the values are the output-mapped vertex: position from the register the map names for it
    state = replay.debugger.session.state_at_draw(0)
    om = output_map.OutputMapState.from_regs(state.regs)
    mapped = output_map.map_outputs(om, outputs, int(state.regs[picaemu.regs.id_of("VSH_OUTMAP_MASK")]))
    np.testing.assert_array_equal(np.array(rows[1:], float)[:, 1:5], mapped[:, output_map.POS])
    np.testing.assert_array_equal(np.array(rows[1:], float)[:, 5:9], mapped[:, output_map.COLOR])


def test_mesh_csv_with_a_geometry_shader() -> None:
    capture = str(SAMPLES / "gs_sprites.pica")
    gs = _rows(_run("mesh", capture, "--draw", "0", "--stage", "gs", "--csv"))
    assert gs[0][:5] == ["vertex", "position.x", "position.y", "position.z", "position.w"]
    vs = _rows(_run("mesh", capture, "--draw", "0", "--stage", "vs", "--csv"))  # feeds the GS: registers
    assert vs[0] == ["vertex", *(f"o{r}.{c}" for r in (0, 1) for c in "xyzw")]
    inputs = _rows(_run("mesh", capture, "--draw", "0", "--stage", "input", "--csv"))
    assert inputs[0] == ["vertex", *(f"v{r}.{c}" for r in (0, 1) for c in "xyzw")]
    assert len(inputs) == len(vs) == 1 + len(picaemu.open(capture).mesh(0, "input"))
    clipped = _rows(_run("mesh", capture, "--draw", "0", "--stage", "clipped", "--csv"))
    assert clipped[0] == ["triangle", "vertex", "position.x", "position.y", "position.z", "position.w"]
    assert [r[:2] for r in clipped[1:4]] == [["0", "0"], ["0", "1"], ["0", "2"]]


def test_state_json_is_versioned_with_hex_addresses() -> None:
    capture = str(SAMPLES / "cube.pica")
    doc = json.loads(_run("state", capture, "--draw", "0", "--json"))
    api = picaemu.open(capture).pipeline_state(0)
    assert doc["schema"] == state_views.STATE_SCHEMA == 1
    assert doc["framebuffer"]["color_address"] == f"0x{api['framebuffer']['color_address']:08X}" == "0x18000000"
    assert doc["loader"]["reads"][0]["address"] == f"0x{api['loader']['reads'][0]['address']:08X}"
    assert doc["texture0"]["addresses"] == [f"0x{a:08X}" for a in api["texture0"]["addresses"]]
    assert doc["framebuffer"]["width"] == api["framebuffer"]["width"]  # other numbers stay numbers
    assert doc["raster"]["depth_offset"] == api["raster"]["depth_offset"]


def test_state_document_rules() -> None:
    value = {"a": {"address": 16, "base": [1, 2], "flag": True, "index_address": 0}, "count": 3, "x_address": None}
    assert state_views.state_document(value) == {
        "schema": 1,
        "a": {
            "address": "0x00000010",
            "base": ["0x00000001", "0x00000002"],
            "flag": True,
            "index_address": "0x00000000",
        },
        "count": 3,
        "x_address": None,
    }
