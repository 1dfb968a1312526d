"""``picaemu.debug.find`` / ``Debugger.find`` / ``picaemu find`` on the 1000-draw game scene. Expected draws come
from the scene generator's rules (``samples/game_scene.py``: the texture unit is rebound every 4 draws, cycling
through 8 textures uploaded in order; one vertex shader), the texture addresses from the capture's own uploads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from picaemu.formats import pica

import picaemu
from picaemu.cli import main
from picaemu.debug import find as F
from picaemu.errors import PicaError
from picaemu.texture import encode_texture
from samples.game_scene import TEXTURES, _checker

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "game_cubes_1000.pica"
TEXTURE_BYTES = 16 * 16 * 4  # the scene's 16x16 RGBA8 checkerboards


@pytest.fixture(scope="module")
def debugger():
    replay = picaemu.open(CAPTURE)  # the debugger holds its replay weakly: keep it alive
    yield replay.debugger


@pytest.fixture(scope="module")
def texture_addresses() -> list[int]:
    """The 8 textures' addresses, in upload order: where the capture's memory writes hold the encoded checkerboard
    (the writer merges adjacent uploads into one write, so each write is searched in texture-sized steps)."""
    cap = pica.read(CAPTURE)
    texels = bytes(encode_texture(_checker(), "RGBA8"))
    found = []
    for e in cap.events:
        if isinstance(e, pica.MemoryWrite):
            blob = cap.blobs[e.blob]
            at = [
                k
                for k in range(0, len(blob) - TEXTURE_BYTES + 1, TEXTURE_BYTES)
                if blob[k : k + TEXTURE_BYTES] == texels
            ]
            found += [e.address + k for k in at]
    assert len(found) == TEXTURES
    return found


def test_texture_search_finds_the_draws_that_bind_each_texture(debugger, texture_addresses) -> None:
    for k, address in enumerate(texture_addresses):
        hits = debugger.find(texture=address)
        expected = [i for i in range(1000) if (i // 4) % TEXTURES == k]  # rebinding every 4 draws, cycling
        assert [h.draw for h in hits] == expected
        tl = debugger.timeline
        assert [h.cursor for h in hits] == [tl.after_draw(i) for i in expected]
    assert debugger.find(texture=texture_addresses[0] + 4) == []  # inside a texture, not its base


def test_register_search_lists_every_bind_and_value_narrows_it(debugger, texture_addresses) -> None:
    hits = debugger.find(register="TEXUNIT0_ADDR1")
    # b.texture() binds each texture once while uploading it, then the frame rebinds every 4 draws
    assert len(hits) == TEXTURES + 1000 // 4
    binds = hits[TEXTURES:]
    assert [h.draw for h in binds] == list(range(0, 1000, 4))  # each bind reaches the draw right after it
    assert binds[1].text == f"GPUREG_TEXUNIT0_ADDR1 = 0x{texture_addresses[1] >> 3:08X}"  # address in 8-byte units
    same = debugger.find(register="GPUREG_TEXUNIT0_ADDR1", value=texture_addresses[1] >> 3)
    assert [h.draw for h in same][1:] == [i for i in range(0, 1000, 4) if (i // 4) % TEXTURES == 1]
    assert {h.text for h in debugger.find(value=texture_addresses[1] >> 3)} >= {same[0].text}


def test_field_conditions_find_the_blend_toggles(debugger) -> None:
    """The scene sets blending every 7 draws: (one, zero) when i % 14 == 7, (src alpha, 1 - src alpha) when
    i % 14 == 0, the latter also once while the frame is set up (before draw 0)."""
    one = debugger.find(register="BLEND_FUNC", field="rgb_src=one")
    assert [h.draw for h in one] == [i for i in range(1000) if i % 14 == 7]
    alpha = debugger.find(register="GPUREG_BLEND_FUNC", field="rgb_src = src alpha")
    assert [h.draw for h in alpha] == [0] + [i for i in range(1000) if i % 14 == 0]
    assert debugger.find(register="BLEND_FUNC", field="rgb_src=0") == []  # "zero" (raw 0) is only ever a dst
    assert [h.draw for h in debugger.find(register="BLEND_FUNC", field="rgb_dst=0")] == [h.draw for h in one]
    for kwargs, words in (
        ({"field": "rgb_src=one"}, "needs its register"),
        ({"register": "BLEND_FUNC", "field": "nope=1"}, "has no field 'nope'"),
        ({"register": "BLEND_FUNC", "field": "rgb_src"}, "FIELD=MEANING"),
    ):
        with pytest.raises(PicaError, match=words):
            debugger.find(**kwargs)


def test_shader_search_by_hash_prefix_and_entry(debugger) -> None:
    programs = debugger.programs()
    assert len(programs) == 1000 and len(set(programs)) == 1  # one vertex shader, no geometry shader
    vs = debugger.session.state_at_draw(0).vs
    digest = hashlib.sha1(vs.code.astype("<u4").tobytes() + vs.opdescs.astype("<u4").tobytes()).hexdigest()
    assert programs[0] == f"vs {digest[: F.HASH_DIGITS]}@0x0"  # main at instruction 0 (the .proc main comes first)
    assert len(debugger.find(shader=digest[:4])) == 1000
    assert len(debugger.find(shader=f"{digest[:8]}@0")) == 1000
    assert debugger.find(shader=f"{digest[:8]}@1") == []
    other = "0" if digest[0] != "0" else "1"
    assert debugger.find(shader=other) == []


def test_criteria_combine_and_bad_queries_are_named(debugger, texture_addresses) -> None:
    digest = debugger.programs()[0].split()[1]
    both = debugger.find(texture=texture_addresses[2], shader=digest)
    assert [h.draw for h in both] == [h.draw for h in debugger.find(texture=texture_addresses[2])]
    assert "runs vs" in both[0].text and "samples texture" in both[0].text
    for kwargs, words in (
        ({}, "needs a criterion"),
        ({"register": "NOPE"}, "search names no register"),
        ({"register": "TEXUNIT0_ADDR1", "texture": 1}, "cannot be combined"),
        ({"shader": "xyz"}, "hex program hash"),
    ):
        with pytest.raises(PicaError, match=words):
            debugger.find(**kwargs)


def test_parse_query_reads_the_search_box_words() -> None:
    assert F.parse_query("texture 0x18000000") == {"texture": 0x18000000}
    assert F.parse_query("reg TEXUNIT0_ADDR1=0x3000") == {"register": "TEXUNIT0_ADDR1", "value": 0x3000}
    assert F.parse_query("tex 0x10 shader ab@0") == {"texture": 0x10, "shader": "ab@0"}
    assert F.parse_query("value 7") == {"value": 7}
    assert F.parse_query("reg BLEND_FUNC.rgb_src = src alpha shader ab") == {
        "register": "BLEND_FUNC",
        "field": "rgb_src=src alpha",
        "shader": "ab",
    }
    for bad in ("colour red", "texture", "texture zz", "value 0xg", "reg BLEND_FUNC.rgb_src", "reg X.f ="):
        with pytest.raises(PicaError, match="search"):
            F.parse_query(bad)


def test_cli_find_prints_the_api_hits(debugger, texture_addresses) -> None:
    address = texture_addresses[3]
    out = CliRunner().invoke(main, ["find", str(CAPTURE), "--texture", hex(address), "--json"])
    assert out.exit_code == 0, out.output
    assert [json.loads(line) for line in out.output.splitlines()] == [
        h.as_dict() for h in debugger.find(texture=address)
    ]
    out = CliRunner().invoke(main, ["find", str(CAPTURE), "--programs"])
    assert out.output.strip().endswith("1000 draws (0..999)")
    out = CliRunner().invoke(main, ["find", str(CAPTURE), "--register", "BLEND_FUNC", "--field", "rgb_src=one"])
    assert len(out.output.splitlines()) == len([i for i in range(1000) if i % 14 == 7])
    bad = CliRunner().invoke(main, ["find", str(CAPTURE), "--register", "NOPE"])
    assert bad.exit_code == 2 and "error: search names no register: 'NOPE'" in bad.output
