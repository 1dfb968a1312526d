"""The register table: lookups, decoding, validation, and facts typed by hand from the reference."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from picaemu import regs
from picaemu.cli.regs import regs_command
from picaemu.errors import RegisterTableError
from picaemu.regs import Action, FieldType, Port, Register, RegKind, Space, access
from picaemu.regs.blocks._build import f, reg
from picaemu.regs.docs import render_markdown
from tests.conftest import REPO


def test_hand_typed_facts_from_the_reference() -> None:
    # pica-registers.md §3.2 / §9 / §10, typed by hand
    assert regs.get(0x22E).name == "GPUREG_DRAWARRAYS" and regs.get(0x22E).kind is RegKind.TRIGGER
    assert regs.get(0x22F).action is Action.DRAW_ELEMENTS
    assert regs.get(0x23C).kind is RegKind.JUMP
    assert regs.get(0x010).name == "GPUREG_FINALIZE"
    assert regs.get(0x2BA).name == "GPUREG_VSH_ENTRYPOINT"
    assert regs.get(0x28A).name == "GPUREG_GSH_ENTRYPOINT"
    assert regs.get(0x2C0).port is Port.VSH_FLOAT_UNIFORM and regs.get(0x2C0).action is Action.PORT_INDEX
    for reg_id in range(0x2C1, 0x2C9):  # alias group: all feed the float-uniform FIFO
        assert regs.get(reg_id).kind is RegKind.DATA_PORT and regs.get(reg_id).port is Port.VSH_FLOAT_UNIFORM
    for reg_id in range(0x233, 0x236):
        assert regs.get(reg_id).port is Port.FIXED_ATTRIB
    for reg_id in range(0x1C8, 0x1D0):
        assert regs.get(reg_id).port is Port.LIGHTING_LUT
    assert regs.get(0x124).port is Port.GAS_LUT


def test_decode_fields_primitive_config_and_uncovered_bits() -> None:
    # 0x25E: bits 0-3 outmap total - 1, bits 8-9 topology (3 = geometry primitive)
    d = regs.decode_fields(0x25E, 0x00000302)
    assert d.as_dict() == {"outmap_total_minus_1": 2, "topology": "geometry primitive"}
    assert d.uncovered == 0
    assert regs.decode_fields(0x25E, 0x80000001).uncovered == 0x80000000


def test_decode_attribute_format_and_address_fields() -> None:
    # GPU_ATTRIBFMT(0, 3, FLOAT) | GPU_ATTRIBFMT(1, 4, UBYTE) = (2<<2|3) | (3<<2|1)<<4
    d = regs.decode_fields(0x201, 0xB | 0xD << 4).as_dict()
    assert d["attr0_type"] == "f32" and d["attr0_components_minus_1"] == 2
    assert d["attr1_type"] == "u8" and d["attr1_components_minus_1"] == 3
    # ATTRIBBUFFERS_LOC: bits 1-28 in 16-byte units -> 0x18000000 is written as 0x03000000
    assert regs.decode_fields(0x200, 0x03000000).as_dict()["base"] == 0x18000000
    assert regs.decode_fields(0x23A, 0x04000000 >> 0).as_dict()["address"] == 0x20000000


def test_unknown_ids_decode_as_unknown() -> None:
    r = regs.get(0x045)
    assert r.name == "UNKNOWN_0x045" and not r.known and r.fields == ()
    assert regs.decode_fields(0x045, 0xDEADBEEF).uncovered == 0xDEADBEEF
    assert regs.by_name("UNKNOWN_0x045").id == 0x045


def test_lookup_by_every_kind_of_name() -> None:
    assert regs.by_name("GPUREG_NUMVERTICES").id == 0x228
    assert regs.by_name("numvertices").id == 0x228
    assert regs.by_name("PICA_REG_DRAW_VERTEX_NUM").id == 0x228  # SDK alias
    assert regs.by_name("VSH_FLOATUNIFORM_CONFIG").id == 0x2C0  # libctru spelling
    assert regs.by_name("0x2b0").name == "GPUREG_VSH_BOOLUNIFORM"
    with pytest.raises(KeyError):
        regs.by_name("NO_SUCH_REGISTER")


def test_compose_and_read_fields() -> None:
    word = access.compose("PRIMITIVE_CONFIG", outmap_total_minus_1=1, topology=2)
    assert word == 0x201
    file = np.zeros(0x300, np.uint32)
    file[0x25E] = word
    assert access.value(file, "PRIMITIVE_CONFIG", "topology") == "triangle fan"
    assert access.raw(file, "PRIMITIVE_CONFIG", "outmap_total_minus_1") == 1


def test_every_field_is_inside_its_register_and_typed() -> None:
    for r in regs.all_registers():
        taken = 0
        for fld in r.fields:
            assert 0 <= fld.lo <= fld.hi <= 31
            assert not taken & fld.mask, r.name
            taken |= fld.mask
            if fld.type is FieldType.ENUM:
                assert fld.enum


@pytest.mark.parametrize(
    "bad",
    [
        [reg(0x300, "GPUREG_X", "t", "out of range")],
        [reg(0x001, "GPUREG_X", "t", "a"), reg(0x001, "GPUREG_Y", "t", "dup")],
        [reg(0x001, "GPUREG_X", "t", "overlap", f("a", 0, 3), f("b", 3, 4))],
        [reg(0x001, "GPUREG_X", "t", "bits", f("a", 30, 33))],
        [Register(0x001, "GPUREG_X", "t", "port without port", RegKind.DATA_PORT)],
    ],
)
def test_validation_rejects_bad_tables(bad: list[Register]) -> None:
    with pytest.raises(RegisterTableError):
        regs._validate(bad)


def test_generated_register_docs_are_current() -> None:
    doc = (REPO / "docs" / "registers.md").read_text(encoding="utf-8")
    assert doc == render_markdown(), "docs/registers.md is stale: run `picaemu regs --write-docs`"


# ---------------------------------------------------------------------------------------------- external registers
def test_external_registers_hand_typed_from_the_reference() -> None:
    # pica-formats.md §3.3: PSC0 at 0x10400010 (+0xC control: bit 0 start, bit 1 finished, bits 8-9 width)
    control = regs.by_name("PSC0_CONTROL")
    assert control.id == 0x1040001C and control.space is Space.EXTERNAL and control.kind is RegKind.TRIGGER
    assert (control.field("width").lo, control.field("width").hi) == (8, 9)
    assert regs.by_name("PSC1_START").id == 0x10400020
    # §3.4: PPF at 0x10400C00; +0x18 trigger (bit 0 start, bit 8 done); +0x24 copy input line (width | gap << 16)
    assert regs.at_address(0x10400C18).name == "PPF_TRIGGER"
    assert access.bits(0x00030002, "PPF_COPY_IN", "gap") == 3
    # citrace.md: PDC0 0x1040045C FB_SIZE, 0x10400470 FB_FORMAT, 0x10400490 stride; PDC1 at +0x100
    assert regs.by_name("0x10400570").name == "PDC1_FORMAT"
    assert regs.by_name("PDC0_STRIDE").id == 0x10400490
    # the P3D window: internal id i at 0x10401000 + 4i (citrace.md: 0x104018E0 is the command-list size)
    assert regs.at_address(0x104018E0).name == "GPUREG_CMDBUF_SIZE0"
    with pytest.raises(KeyError):
        regs.at_address(0x10400004)


def test_decode_external_fields() -> None:
    # flags 0x01001003: flip, linear -> tiled, output format 1 (RGB8), downscale 1 (2x1)
    d = regs.decode_fields(regs.by_name("PPF_FLAGS"), 0x01001003).as_dict()
    assert d["flip"] and d["linear_to_tiled"] and not d["crop"]
    assert d["out_format"] == "RGB8" and d["in_format"] == "RGBA8" and d["scale"] == "2x1"
    # bit 4 is no field: uncovered
    assert regs.decode_fields(regs.by_name("PPF_FLAGS"), 0x10).uncovered == 0x10
    # an address register holds address >> 3
    assert regs.decode_fields(regs.by_name("PPF_IN_ADDR"), 0x03000000).as_dict()["address"] == 0x18000000
    assert access.put_address("PPF_OUT_ADDR", "address", 0x18000000) == 0x03000000
    gpu = np.zeros(0x1000, np.uint32)
    gpu[(0x1040045C - 0x10400000) // 4] = 0x019000F0
    assert access.ext_index("PDC0_FB_SIZE") == 0x117  # 0x45C bytes in
    assert access.ext_value(gpu, "PDC0_FB_SIZE", "height") == 400
    assert access.ext_value(gpu, "PDC0_FB_SIZE", "width") == 240


@pytest.mark.parametrize("address", [0x10400012, 0x10401000, 0x10202000])
def test_validation_rejects_external_addresses_outside_the_gpu_file(address: int) -> None:
    bad = Register(address, "X", "t", "bad", space=Space.EXTERNAL)
    with pytest.raises(RegisterTableError):
        regs._validate([bad])


def test_regs_cli_looks_up_external_registers() -> None:
    result = CliRunner().invoke(regs_command, ["0x10400C10", "--value", "0x1003"])
    assert result.exit_code == 0, result.output
    assert "PPF_FLAGS" in result.output and "out_format=RGB8" in result.output and "flip=True" in result.output
    listing = CliRunner().invoke(regs_command, []).output
    assert "0x1040001C  PSC0_CONTROL" in listing and "0x2BA       GPUREG_VSH_ENTRYPOINT" in listing


def test_external_words_libctru_writes() -> None:
    # libctru/citro3d: top screen FB_FORMAT 0x141 (RGB8, 2D row doubling, burst 1); a 32-bit fill control 0x201
    assert access.compose("PDC0_FORMAT", pixel_format=1, double=1, burst=1) == 0x141
    assert access.compose("PSC1_CONTROL", busy=1, width=2) == 0x201
    # GX_TRANSFER_OUT_FORMAT(RGB8) | GX_TRANSFER_SCALING(2x2) (gx.h: format << 12, scaling << 24)
    assert access.compose("PPF_FLAGS", out_format=1, scale=2) == 0x02001000


def test_register_write_events_are_named_by_the_table() -> None:
    from picaemu.formats import pica

    from picaemu.replay.records import describe

    size = describe(pica.RegWrite(0x1040045C, 0x019000F0))
    assert size == "RegWrite PDC0_FB_SIZE = 0x19000F0 (width=240 height=400)"
    assert describe(pica.RegWrite(0x104018E8, 0x04000000)).startswith("RegWrite GPUREG_CMDBUF_ADDR0 = 0x4000000 (")
    assert describe(pica.RegWrite(0x10400004, 1)) == "RegWrite 0x10400004 = 0x1"  # no register there
