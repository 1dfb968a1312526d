"""``picaemu.fused.stored_items.load_item`` (one member of a stored tuple) and ``picaemu.numba_refcounts`` (the
reference-count walk that extracts only members holding a meminfo)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from llvmlite import ir
from numba.core import types
from numba.core.errors import TypingError
from numba.core.registry import cpu_target
from numba.core.runtime import context

from picaemu import numba_link, numba_refcounts
from picaemu.fused.stored_items import load_item


@numba.njit
def _members(address, like):
    """Every member of the stored (int, 2-d float32, bool, float, 1-d uint8, int) tuple, loaded one by one."""
    return (
        load_item(like, address, 0),
        load_item(like, address, 1),
        load_item(like, address, 2),
        load_item(like, address, 3),
        load_item(like, address, 4),
        load_item(like, address, 5),
    )


@numba.njit
def _write_through(address, like):
    """A loaded array is the stored one's memory, not a copy."""
    grid = load_item(like, address, 1)
    grid[1, 2] = 7.5


def test_each_member_loads_as_stored() -> None:
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    raw = np.arange(5, dtype=np.uint8)
    value = (3, grid, True, 0.25, raw, -(1 << 40))
    stored = numba_link.Stored(value)
    like = types.TypeRef(stored.type)
    got = _members(stored.address, like)
    assert got[0] == 3 and got[2] is True and got[3] == 0.25 and got[5] == -(1 << 40)
    assert got[1].tobytes() == grid.tobytes() and got[1].shape == (3, 4)
    assert got[4].tobytes() == raw.tobytes()
    _write_through(stored.address, like)
    assert grid[1, 2] == 7.5


@numba.njit
def _out_of_range(address, like):
    return load_item(like, address, 6)


def test_a_member_past_the_end_is_a_typing_error() -> None:
    stored = numba_link.Stored((1, 2))
    with pytest.raises(TypingError, match="has no member 6"):
        _out_of_range(stored.address, types.TypeRef(stored.type))


ARRAY_2D = types.Array(types.float32, 2, "C")
VALUES = [
    ARRAY_2D,
    types.Tuple((types.int64, ARRAY_2D, types.Tuple((types.boolean, types.Array(types.uint8, 1, "C"))))),
    types.UniTuple(types.Array(types.int64, 3, "C"), 3),
    types.Tuple((types.int64, types.float64)),
    types.Optional(ARRAY_2D),
]


@pytest.mark.parametrize("ty", VALUES, ids=str)
def test_the_walk_finds_numba_s_meminfos_with_fewer_extractions(
    ty: types.Type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same (type, meminfo) list as numba's own walk, from at most as many instructions (a tuple of arrays: a
    fraction of them)."""
    assert context.NRTContext.get_meminfos is numba_refcounts.get_meminfos  # installed on import
    # an NRT context of the test's own: the base context's ``nrt`` property would cache a disabled one, which every
    # later compile copies (and then fails: "NRT required but not enabled")
    nrt = context.NRTContext(cpu_target.target_context, True)
    llty = cpu_target.target_context.get_value_type(ty)

    def walk() -> tuple[list[types.Type], int]:  # the meminfos found and the instructions emitted
        fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [llty]), "f")
        builder = ir.IRBuilder(fn.append_basic_block())
        found = nrt.get_meminfos(builder, ty, fn.args[0])
        return [t for t, _ in found], len(builder.block.instructions)

    mine, emitted = walk()
    monkeypatch.setattr(context.NRTContext, "get_meminfos", numba_refcounts._NUMBA_GET_MEMINFOS)
    theirs, numba_emitted = walk()
    assert mine == theirs
    assert emitted <= numba_emitted
    if ty == VALUES[1]:
        assert 4 * emitted < numba_emitted
