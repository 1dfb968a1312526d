"""Reference counting that emits only what it counts: numba's ``NRTContext.get_meminfos``, which finds the NRT meminfos
inside a value before each increment or decrement, walking only the members that hold one.

numba's own walk takes every member of the value out of its LLVM struct before looking at its type: an array's seven
fields and each element of its shape and strides (a 2-d array: 11 ``extractvalue`` instructions for its one
meminfo), a tuple of arrays all of theirs, at every reference count a kernel makes. The kernels of README line 1's
first render emitted ~250 k lines of LLVM IR, 60-75 % of them ``extractvalue`` (bench/RESULTS.md, "ir30: ...,
fifteenth session"); numba builds that text in Python and LLVM parses and optimises it away again. ``install``
replaces the walk with one that asks, by type, whether a member holds a meminfo anywhere inside (the same
``traverse`` of the data model numba's walk follows, so it finds the same meminfos in the same order) and takes out
only those members. The machine code is the same: LLVM removed the unused extractions anyway.
"""

from __future__ import annotations

from typing import Any

from numba.core import types
from numba.core.runtime import context

_HOLDS: dict[types.Type, bool] = {}  # whether a value of the type holds an NRT meminfo (``_holds``)
_NUMBA_GET_MEMINFOS = context.NRTContext.get_meminfos  # numba's own walk (tests compare the two)


def _holds(manager: Any, ty: types.Type, builder: Any) -> bool:
    """Whether a value of type ``ty`` holds an NRT meminfo: its model has one or a member it traverses holds one."""
    found = _HOLDS.get(ty)
    if found is None:
        model = manager[ty]
        found = model.has_nrt_meminfo() or any(
            _holds(manager, member, builder) for member, _ in model.traverse(builder)
        )
        _HOLDS[ty] = found
    return found


def get_meminfos(self: context.NRTContext, builder: Any, ty: types.Type, val: Any) -> list[tuple[types.Type, Any]]:
    """The (type, meminfo) pairs inside ``val`` of type ``ty``, as numba's ``NRTContext.get_meminfos`` lists them,
    extracting only the members that hold one."""
    manager = self._context.data_model_manager
    model = manager[ty]
    meminfos = [(ty, model.get_nrt_meminfo(builder, val))] if model.has_nrt_meminfo() else []
    for member, getter in model.traverse(builder):
        if _holds(manager, member, builder):
            meminfos.extend(get_meminfos(self, builder, member, getter(val)))
    return meminfos


def install() -> None:
    """Make numba's reference counting use ``get_meminfos`` (idempotent)."""
    context.NRTContext.get_meminfos = get_meminfos


install()
