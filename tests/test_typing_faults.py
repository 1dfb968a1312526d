"""Faults mypy found (issue #29 item 5), each pinned by its behaviour."""

import typing

import pytest

from picaemu.draw import NullPipeline, observed_sink
from picaemu.errors import PicaError
from picaemu.memory import PhysicalMemory
from picaemu.shader import isa


def test_memory_read_is_annotated_with_the_builtin_bytes_not_the_bytes_method() -> None:
    hints = typing.get_type_hints(PhysicalMemory.read)
    assert hints["return"] is bytes


class _CountingSink:
    """A wrapper that only counts draws (as the batch deadline does): it runs no stages."""

    def __init__(self) -> None:
        self.draws = 0

    def draw(self, call: object) -> None:
        self.draws += 1

    def event(self, kind: object, state: object) -> None:
        return None


def test_a_stage_observer_needs_a_sink_that_runs_stages() -> None:
    null = NullPipeline()
    assert observed_sink(null) is null
    with pytest.raises(PicaError, match="_CountingSink runs no stages"):
        observed_sink(_CountingSink())


def test_encode_names_an_unknown_mnemonic() -> None:
    with pytest.raises(KeyError, match="nosuch"):
        isa.encode("nosuch")
    assert isa.encode("cmp") >> 27 == isa.CMP_OP5


def test_a_blend_or_logic_program_without_its_state_is_refused_by_name() -> None:
    from picaemu.fragment.blend import BlendMode, BlendProgram

    assert BlendProgram.build(BlendMode.REPLACE).mode is BlendMode.REPLACE
    for mode in (BlendMode.BLEND, BlendMode.LOGIC):  # was: AttributeError on None (LOGIC) or inside _factor_arrays
        with pytest.raises(ValueError, match=f"a {mode.name} blend program needs the BlendState"):
            BlendProgram.build(mode)


def test_lighting_enabled_without_its_luts_is_refused_by_name() -> None:
    from picaemu.color.lighting import LightingState, compute_lighting
    from picaemu.raster.fragments import Fragments

    with pytest.raises(ValueError, match="needs its decoded LUTs"):  # was: AttributeError on None.value
        compute_lighting(LightingState(enabled=True), Fragments.empty(1), {})


def test_an_unknown_shader_unit_is_a_named_error_everywhere_a_unit_is_named() -> None:
    from picaemu.debug import state_views
    from picaemu.shader.setup import shader_unit
    from picaemu.state import GpuState

    assert shader_unit("gs") == "gs"
    with pytest.raises(PicaError, match="unknown shader unit 'xs'"):  # was: KeyError 'xs'
        state_views.shader_view(GpuState(), "xs")


def test_open_session_without_a_path_or_capture_is_refused() -> None:
    from picaemu.debug.jobs import open_session

    with pytest.raises(PicaError, match="needs a capture path or an in-memory capture"):  # was: Session.open(None)
        open_session()


def test_a_capture_diff_side_cannot_rewind_before_it_ran_a_frame() -> None:
    from picaemu.formats import pica

    from picaemu.debug.capture_diff import open_side

    side = open_side(pica.Capture())
    with pytest.raises(PicaError, match="rewind before run_frame"):  # was: Replay.restore(None)
        side.rewind(0)


def test_texture_formats_are_one_enum_with_the_register_table() -> None:
    from picaemu.regs.blocks.texturing import TEXTURE_FORMATS
    from picaemu.texture.formats import TextureFormat

    assert {f.value: f.name for f in TextureFormat} == TEXTURE_FORMATS
    assert TextureFormat(0xD) is TextureFormat.ETC1A4 and TextureFormat["RGBA8"] == 0
