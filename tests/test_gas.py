"""Gas registers, LUT decoding and the gas-mode switch (pica-registers.md §6-7; pica-pipeline.md §14.2).

The gas arithmetic itself is not specified by the reference: drawing with gas must raise a named error.
"""

from __future__ import annotations

import numpy as np
import pytest

from picaemu import numeric
from picaemu.color.gas import GasState, GasUnsupported, check_gas, decode_gas_lut, gas_usage
from picaemu.errors import UnsupportedFeature
from picaemu.regs import access, id_of
from picaemu.state import GpuState


def put(state: GpuState, name: str, **fields: int) -> None:
    state.regs[id_of(name)] |= np.uint32(access.compose(name, **fields))


def test_lut_colors_and_difference_encodings():
    raw = np.zeros(16, np.uint32)
    raw[8] = 0x00332211
    raw[15] = 0x00FFFFFF
    raw[0] = 0x0085107F  # r = +127, g = +16, b = 0x85: -5 sign-magnitude, -123 two's complement
    lut = decode_gas_lut(raw)
    assert lut.colors[0].tolist() == [0x11, 0x22, 0x33] and lut.colors[7].tolist() == [255, 255, 255]
    assert lut.diff_sign_magnitude[0].tolist() == [127, 16, -5]
    assert lut.diff_twos_complement[0].tolist() == [127, 16, -123]
    assert lut.sign_ambiguous[0].tolist() == [False, False, True]
    assert not lut.sign_ambiguous[1:].any()


def test_state_decodes_every_register():
    s = GpuState()
    put(s, "GAS_ATTENUATION", attenuation=numeric.to_f16(0.5))
    put(s, "GAS_ACCMAX", accmax=numeric.to_f16(2.0))
    put(s, "GAS_LIGHT_XY", min=10, max=200, attenuation=30)
    put(s, "GAS_LIGHT_Z", min=1, max=2, attenuation=3)
    put(s, "GAS_LIGHT_Z_COLOR", effect=77, lut_input=1)
    put(s, "GAS_DELTAZ_DEPTH", delta_z=0x180, depth_func=2)
    put(s, "TEXENV_UPDATE_BUFFER", gas_density_source=1)
    g = GasState.from_state(s)
    assert (g.attenuation, g.accmax, g.delta_z) == (0.5, 2.0, 1.5)
    assert (g.planar.min, g.planar.max, g.planar.attenuation) == (10, 200, 30)
    assert (g.view.min, g.view.max, g.view.attenuation) == (1, 2, 3)
    assert (g.line_of_sight_effect, g.lut_input, g.depth_func) == (77, "light factor", "greater/gequal")
    assert g.density_source == "depth density"


def test_fragment_shadow_register_fields():
    word = access.compose("FRAGOP_SHADOW", constant=numeric.to_f16(1.5), linear=numeric.to_f16(-1.0))
    assert word == 0x3E00 | (0xBC00 << 16)


@pytest.mark.parametrize(
    ("reg", "fields", "register"),
    [
        ("TEXENV_UPDATE_BUFFER", dict(fog_mode=7), 0x0E0),
        ("COLOR_OPERATION", dict(fragment_mode=1), 0x100),
    ],
)
def test_gas_draws_raise_named_error(reg: str, fields: dict[str, int], register: int):
    s = GpuState()
    put(s, reg, **fields)
    assert gas_usage(s.regs).any
    with pytest.raises(GasUnsupported) as info:
        check_gas(s)
    assert isinstance(info.value, UnsupportedFeature) and info.value.register == register


@pytest.mark.parametrize(("fog_mode", "fragment_mode"), [(0, 0), (5, 0), (0, 3)])
def test_non_gas_draws_pass(fog_mode: int, fragment_mode: int):
    s = GpuState()
    put(s, "TEXENV_UPDATE_BUFFER", fog_mode=fog_mode)
    put(s, "COLOR_OPERATION", fragment_mode=fragment_mode)
    assert not gas_usage(s.regs).any
    check_gas(s)


def test_lut_through_the_command_processor():
    from picaemu.command.builder import CommandBuilder
    from picaemu.command.processor import CommandProcessor

    b = CommandBuilder()
    b.upload_lut("gas", [0x0000107F] + [0] * 7 + [0x00332211] * 8)
    proc = CommandProcessor()
    proc.run(b.words())
    lut = GasState.from_state(proc.state).lut
    assert lut.colors.tolist() == [[0x11, 0x22, 0x33]] * 8 and lut.diff_sign_magnitude[0].tolist() == [127, 16, 0]
