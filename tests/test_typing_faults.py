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
