"""The optional ``shader_names`` capture metadata: written by the builder, kept by .pica write/read, matched to the
bound program by unit, entry point and content hashes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from picaemu.formats import pica

from picaemu.builder import CaptureBuilder
from picaemu.errors import FormatError
from picaemu.replay import Replay
from picaemu.shader import ShaderSetup, names
from picaemu.shader.asm import assemble
from tests.test_builder import VS_COLOR

VS_LIGHT = """
.fvec mvp[4], light
.ivec count
.bool lit
.out outpos position
.alias inpos v0
.proc main
    dp4 outpos.x, mvp[0], inpos
    dp4 outpos.y, mvp[1], inpos
    dp4 outpos.z, mvp[2], inpos
    dp4 outpos.w, light, inpos
    end
.end
"""


def _bound_setup(capture: pica.Capture, unit: str = "vs") -> ShaderSetup:
    replay = Replay(capture, checkpoints=False)
    replay.run()
    return ShaderSetup.from_state(replay.state, unit)


def test_builder_records_names_and_they_survive_a_round_trip(tmp_path) -> None:
    b = CaptureBuilder()
    b.begin_frame()
    b.shader(VS_LIGHT)
    b.end_frame()
    b.save(tmp_path / "c.pica")
    back = pica.read(tmp_path / "c.pica")
    assert back.meta["source"] == "picaemu.builder" and names.META_KEY in back.meta
    (entry,) = json.loads(back.meta[names.META_KEY])
    assert entry["unit"] == "vs" and entry["entry"] == 0
    got = names.names_for(back.meta, _bound_setup(back))
    # the assembler allocates .fvec in declaration order from c0, .ivec from i0, .bool from b0
    assert got == {
        "c0": "mvp[0]",
        "c1": "mvp[1]",
        "c2": "mvp[2]",
        "c3": "mvp[3]",
        "c4": "light",
        "i0": "count",
        "b0": "lit",
    }


def test_names_only_label_the_program_they_came_from() -> None:
    b = CaptureBuilder()
    b.begin_frame()
    b.shader(VS_LIGHT)
    b.shader(VS_COLOR)  # rebinding: two entries; the bound program is VS_COLOR
    b.shader(VS_COLOR)  # recorded once
    b.end_frame()
    cap = b.capture()
    assert len(json.loads(cap.meta[names.META_KEY])) == 2
    setup = _bound_setup(cap)
    assert names.names_for(cap.meta, setup) == {f"c{i}": f"projection[{i}]" for i in range(4)}
    code = np.array(setup.code)
    code[0] ^= 1  # a different program in the same place
    assert (
        names.names_for(
            cap.meta, ShaderSetup(code, setup.opdescs, setup.float_uniforms, setup.int_uniforms, setup.bool_uniforms)
        )
        == {}
    )
    assert names.names_for(cap.meta, _bound_setup(cap, "gs")) == {}  # the GS unit holds no named program
    assert names.names_for({}, setup) == {}  # captures without the key


@pytest.mark.parametrize(
    "value",
    [
        "{",
        "{}",
        "[1]",
        '[{"unit": "vs"}]',
        json.dumps([{**names.program_entry(assemble(VS_COLOR), 0, "vs"), "names": {"c0": 3}}]),
    ],
)
def test_malformed_metadata_is_a_format_error(value: str) -> None:
    setup = ShaderSetup.from_dvle(assemble(VS_COLOR))
    with pytest.raises(FormatError, match="shader_names"):
        names.names_for({names.META_KEY: value}, setup)
