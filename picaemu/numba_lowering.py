"""numba's lowering with less LLVM IR for the same machine code: an array's element found by its indices, and a
struct kept in a stack slot (numba's ``_StructProxy``) made from a value.

numba builds LLVM IR as text in Python, LLVM parses it, and the function passes optimise most of it away again; every
line costs at each step (README line 1's first render: "The twenty-second session" in bench/RESULTS.md).

- An element ``a[i]``, ``a[i, j] = v`` (an integer per dimension of a C or F array): numba's ``basic_indexing``
  reads the whole shape and the strides, each packed into an LLVM array and unpacked again, for the views a slice
  would make; then ``get_item_pointer`` reads both again for the offset. It fixes a negative index even when the
  index is a constant at least 0, and the offset starts from 0 and multiplies the last index by 1. Here: the one
  dimension a wrap, a bounds check or a step needs is read (with numba's range metadata: a dimension is never
  negative), once, a constant index at least 0 is not fixed, and nothing is added to 0 or multiplied by 1. The
  value of every index, the order of the operations that remain and the pointer are numba's. Every other indexing
  (a slice, an ellipsis, ``None``, fewer indices than dimensions, an array of indices, the A layout) is numba's.
  ~1,900 elements in README line 1: 13 % of its IR.
- ``_StructProxy(context, builder, value)``: numba keeps the struct in a stack slot, zeroed where the slot is made
  (numba's own safety, kept) and zeroed again at the use, just before the value is stored over it whole. Here the
  second zeroing is left out when a value follows (a proxy made empty, whose members are set one by one, keeps it).

tests/test_numba_lowering.py compiles README line 1's kernels both ways: the optimised code is the same.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.core import cgutils, types
from numba.np import arrayobj

_NUMBA_BASIC_INDEXING = arrayobj.basic_indexing  # numba's own (tests compare the two)
_NUMBA_PROXY_INIT = cgutils._StructProxy.__init__
_NUMBA_MAKE_REFS = cgutils._StructProxy._make_refs


def _known_not_negative(value: Any) -> bool:
    """Whether LLVM value ``value`` is a constant integer at least 0."""
    return isinstance(value, ir.Constant) and isinstance(value.constant, int) and value.constant >= 0


def _dimension_reader(builder: Any, ary: Any) -> Any:
    """A function of an axis giving ``ary``'s length along it (an LLVM ``intp``), read at its first use, once."""
    read: dict[int, Any] = {}

    def dimension(axis: int) -> Any:
        if axis not in read:
            pointer = cgutils.gep_inbounds(builder, ary._get_ptr_by_name("shape"), 0, axis)
            read[axis] = builder.load(pointer)
            arrayobj.mark_positive(builder, read[axis])
        return read[axis]

    return dimension


def _element_offset(builder: Any, layout: str, indices: list[Any], dimension: Any) -> Any:
    """The element's offset in items from the data pointer: numba's sum of index × step (a step: the product of the
    later dimensions in C order, of the earlier ones in F order), without the product's 1 and the sum's 0."""
    steps = []  # numba's order: every step, then every term
    for axis in range(len(indices)):
        step = None
        for other in range(axis + 1, len(indices)) if layout == "C" else range(axis):
            step = dimension(other) if step is None else builder.mul(step, dimension(other))
        steps.append(step)
    offset = None
    for index, step in zip(indices, steps, strict=True):
        term = index if step is None else builder.mul(index, step)
        offset = term if offset is None else builder.add(offset, term)
    return offset


def _basic_indexing(
    context: Any, builder: Any, aryty: Any, ary: Any, index_types: Any, indices: Any, boundscheck: Any = None
) -> tuple[Any, list[Any], list[Any]]:
    """numba's ``basic_indexing`` (the data pointer, the view's shape and strides), for an element with less IR
    (module docstring); any other indexing goes to numba's."""
    ndim = aryty.ndim
    if (
        ndim == 0
        or len(indices) != ndim
        or aryty.layout not in "CF"
        or not isinstance(ary, cgutils._StructProxy)
        or not all(isinstance(index_type, types.Integer) for index_type in index_types)
    ):
        return _NUMBA_BASIC_INDEXING(context, builder, aryty, ary, index_types, indices, boundscheck)
    dimension = _dimension_reader(builder, ary)
    fixed = []
    for axis, (index, index_type) in enumerate(zip(indices, index_types, strict=True)):
        if not index_type.signed:
            index = context.cast(builder, index, index_type, types.uintp)
        else:
            index = context.cast(builder, index, index_type, types.intp)
            if not _known_not_negative(index):  # numba's ``slicing.fix_index``: a negative index counts from the end
                size = dimension(axis)
                negative = builder.icmp_signed("<", index, ir.Constant(size.type, 0))
                index = builder.select(negative, builder.add(index, size), index)
        if boundscheck:
            cgutils.do_boundscheck(context, builder, index, dimension(axis), axis)
        fixed.append(index)
    return builder.gep(ary.data, [_element_offset(builder, aryty.layout, fixed, dimension)]), [], []


def _proxy_init(self: Any, context: Any, builder: Any, value: Any = None, ref: Any = None) -> None:
    """numba's ``_StructProxy.__init__``, telling ``_make_refs`` whether a whole value is stored next."""
    self._zeroed_at_use = value is None
    _NUMBA_PROXY_INIT(self, context, builder, value, ref)


def _make_refs(self: Any, ref: Any) -> tuple[Any, Any]:
    """numba's ``_StructProxy._make_refs`` (the slot, and the pointer to its value: the same), the slot zeroed at
    the use only when no value is stored over it next."""
    if ref is None:
        ref = cgutils.alloca_once(self._builder, self._be_type, zfill=getattr(self, "_zeroed_at_use", True))
    return ref, ref


def install() -> None:
    """Replace numba's lowering helpers for the whole process (idempotent)."""
    arrayobj.basic_indexing = _basic_indexing
    cgutils._StructProxy.__init__ = _proxy_init
    cgutils._StructProxy._make_refs = _make_refs


install()
