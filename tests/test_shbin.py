"""SHBIN reader/writer: real picasso files, built buffers, corrupt input (named errors only)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picaemu.formats import shbin
from picaemu.formats.shbin import Constant, Dvle, Label, Output, Shbin, Uniform

from picaemu.errors import FormatError

F24_ONE = 0x3F0000  # float24 1.0: exponent 63, mantissa 0


@pytest.fixture(scope="module")
def real(captures_dir):
    return {name: (captures_dir / "shaders" / f"{name}.shbin").read_bytes() for name in ("vs_color", "vs_tex")}


def test_real_files_round_trip_byte_identical(real) -> None:
    for data in real.values():
        assert shbin.build(shbin.parse(data)) == data


def test_vs_color_fields(real) -> None:
    s = shbin.parse(real["vs_color"])
    assert len(s.code) == 12 and s.code[0] == 0x4E000000 and s.code[-1] == 0x88000000  # mov ..., end
    assert len(s.opdescs) == 6 and s.opdescs[0] == (0x36E, 0)
    d = s.dvles[0]
    assert (d.shader_type, d.main_offset, d.main_end, d.output_mask) == (0, 0, 12, 0b11)
    assert d.constants == (Constant(2, 95, (F24_ONE,) * 4),)
    assert d.outputs == (Output(0, 0, 0xF), Output(2, 1, 0xF))
    assert [(d.symbol(u.symbol), u.first, u.last) for u in d.uniforms] == [
        ("projection", 0x10, 0x13),
        ("modelView", 0x14, 0x17),
    ]
    assert shbin.uniform_register_name(0x17) == "c7" and shbin.uniform_register_name(0x78) == "b0"


def _sample() -> Shbin:
    vs = Dvle(
        shader_type=0,
        main_offset=0,
        main_end=3,
        input_mask=0x3,
        output_mask=0x3,
        constants=(
            Constant(0, 2, (1, 0, 0, 0)),
            Constant(1, 1, (0x04030201, 0, 0, 0)),
            Constant(2, 90, (F24_ONE, 0, F24_ONE, 0)),
        ),
        labels=(Label(0, 1, 2, 0xFFFFFFFF, 5),),
        outputs=(Output(0, 0, 0xF), Output(3, 1, 0x3)),
        uniforms=(Uniform(0, 0x10, 0x13),),
        symbols=b"mvp\0main\0",
    )
    gs = Dvle(
        shader_type=1,
        main_offset=3,
        main_end=5,
        output_mask=0x1,
        merge_outmaps=1,
        gs_mode=2,
        gs_fixed_start=8,
        gs_variable_num=0,
        gs_fixed_num=3,
        outputs=(Output(9, 0, 0xF),),
        symbols=b"x\0y",
    )
    return Shbin(
        code=(0x4E000000, 0x21000000, 0x88000000, 0xA8000000, 0x88000000),
        opdescs=((0x36E, 0), (0x6C361, 7)),
        dvles=(vs, gs),
        dvlp_unknown=(0x68, 0),
        filename_symbols=b"a.vsh\0",
    )


def test_built_buffer_round_trips_and_shares_one_dvlp() -> None:
    s = _sample()
    data = shbin.build(s)
    assert shbin.parse(data) == s
    assert shbin.build(shbin.parse(data)) == data
    n, off0, off1 = struct.unpack_from("<3I", data, 4)
    assert n == 2 and data[off0 : off0 + 4] == b"DVLE" and data[off1 : off1 + 4] == b"DVLE"
    assert data[16:20] == b"DVLP"  # right after the 2-entry offset table
    assert s.dvles[0].constants[1].ivec == (1, 2, 3, 4)
    assert s.dvles[1].is_geometry and s.dvles[1].gs_fixed_start == 8


def _set_u32(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4 :]


@pytest.mark.parametrize(
    "mutate, offset",
    [
        (lambda d: b"DVLX" + d[4:], 0),  # bad magic
        (lambda d: _set_u32(d, 4, 100000), 4),  # DVLE count past the end
        (lambda d: _set_u32(d, 8, 0xFFFFFF), 8),  # DVLE offset past the end
        (lambda d: d[:0x20], None),  # truncated DVLP header
    ],
)
def test_corrupt_headers_raise_format_error(real, mutate, offset) -> None:
    with pytest.raises(FormatError) as err:
        shbin.parse(mutate(real["vs_color"]))
    if offset is not None:
        assert err.value.offset == offset


def test_table_count_past_end_names_field_offset(real) -> None:
    data = real["vs_color"]
    dvle = struct.unpack_from("<I", data, 8)[0]
    with pytest.raises(FormatError) as err:
        shbin.parse(_set_u32(data, dvle + 0x2C, 0x7FFFFFFF))  # output count
    assert err.value.offset == dvle + 0x28
    with pytest.raises(FormatError, match="code"):
        shbin.parse(_set_u32(data, 0x0C + 0x0C, 0x10000000))  # code word count


def test_overlapping_tables_are_rejected(real) -> None:
    data = real["vs_color"]
    dvle = struct.unpack_from("<I", data, 8)[0]
    const_off = struct.unpack_from("<I", data, dvle + 0x18)[0]
    with pytest.raises(FormatError, match="overlap"):
        shbin.parse(_set_u32(data, dvle + 0x28, const_off))  # outputs start inside the constants


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_only_named_errors(real, data) -> None:
    base = bytearray(real["vs_tex"])
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(base) - 1))
        base[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(base)))
    try:
        parsed = shbin.parse(bytes(base[:cut]))
    except FormatError:
        return
    assert isinstance(shbin.build(parsed), bytes)


@pytest.mark.parametrize(
    "field, value, what",
    [
        (0x08, 12, "main entry"),
        (0x08, 0xFFFFFFFF, "main entry"),  # vs_color has 12 code words
        (0x0C, 13, "main end"),
        (0x0C, 0x80000000, "main end"),
    ],
)
def test_dvle_offsets_outside_the_code_are_rejected(real, field, value, what) -> None:
    data = real["vs_color"]
    dvle = struct.unpack_from("<I", data, 8)[0]
    with pytest.raises(FormatError, match=what) as err:
        shbin.parse(_set_u32(data, dvle + field, value))
    assert err.value.offset == dvle + field


def test_label_outside_the_code_is_rejected() -> None:
    s = _sample()
    bad = Shbin(code=s.code, opdescs=s.opdescs, dvles=(Dvle(labels=(Label(0, 1, 6, 0, 0),)),))
    with pytest.raises(FormatError, match="label 0 at 0x6"):
        shbin.parse(shbin.build(bad))


def test_disassembler_refuses_an_entry_outside_the_program() -> None:
    from picaemu.errors import ShaderError
    from picaemu.shader.disasm import disassemble

    with pytest.raises(ShaderError, match="entry point 0x5"):
        disassemble([0x88000000] * 5, [0] * 128, entry=5)
