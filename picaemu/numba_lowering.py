"""numba's lowering with less LLVM IR for the same machine code: an array's element found by its indices, a struct
kept in a stack slot (numba's ``_StructProxy``) made from a value, and a ``for`` loop over a ``range``.

numba builds LLVM IR as text in Python, LLVM parses it, and the function passes optimise most of it away again; every
line costs at each step (README line 1's first render: "The twenty-second session" in bench/RESULTS.md).

- An element ``a[i]``, ``a[i, j] = v`` (an integer per dimension of a C or F ``types.Array``): numba copies the array
  into a stack slot, and its ``basic_indexing`` reads the whole shape and the strides, each packed into an LLVM array
  and unpacked again, for the views a slice would make; then ``get_item_pointer`` reads both again for the offset.
  It fixes a negative index even when the index is a constant at least 0, and the offset starts from 0 and
  multiplies the last index by 1. Here (``operator.getitem`` and ``setitem``, registered after numba's): the data
  pointer and the one dimension a wrap, a bounds check or a step needs are taken out of the array's value, once, a
  constant index at least 0 is not fixed, and nothing is added to 0 or multiplied by 1. The value of every index,
  the order of the operations that remain and the pointer are numba's. Every other indexing (a slice, an ellipsis,
  ``None``, fewer indices than dimensions, an array of indices, the A layout, another buffer type) is numba's.
  ~1,900 elements in README line 1: 18 % of its IR.
- ``_StructProxy(context, builder, value)``: numba keeps the struct in a stack slot, zeroed where the slot is made
  (numba's own safety, kept) and zeroed again at the use, just before the value is stored over it whole. Here the
  second zeroing is left out when a value follows (a proxy made empty, whose members are set one by one, keeps it).
- ``for i in range(...)``: numba builds ``range(...)``'s state (start, stop, step) and each step's pair (the value,
  whether there was one) in stack slots made empty, member by member, loads them whole, and reads each member back
  through a slot of its own. Here both are struct values built member by member (``insertvalue``), and a member of
  a value so built is read without an instruction (``pair_first``, ``pair_second`` and the step's reading of the
  iterator); a pair made otherwise gives its members as numba's does. The step itself (the count left, the value
  and the next one) is numba's. ``iter(range)`` stays numba's: built from values, its stack slots came to LLVM in
  another order, and its optimised code placed some phis otherwise.

tests/test_numba_lowering.py compiles README line 1's kernels both ways: the optimised code is the same.
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.core import base, cgutils, imputils, types
from numba.cpython import rangeobj
from numba.np import arrayobj

_TYPES: Any = types  # (numba's stubs do not declare every type class read here)
_NUMBA_PROXY_INIT = cgutils._StructProxy.__init__
_NUMBA_MAKE_REFS = cgutils._StructProxy._make_refs
_REGISTERED: list[bool] = []  # the range's and the elements' lowering registered (once: registrations add up)


def _known_not_negative(value: Any) -> bool:
    """Whether LLVM value ``value`` is a constant integer at least 0."""
    return isinstance(value, ir.Constant) and isinstance(value.constant, int) and value.constant >= 0


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


def _fixed_indices(
    context: Any, builder: Any, index_types: Any, indices: Any, dimension: Any, boundscheck: Any
) -> list[Any]:
    """numba's ``fix_integer_index`` of each index (a signed one as ``intp``, counted from the end when negative; an
    unsigned one as ``uintp``), then its bounds check when asked, without the fix of a constant at least 0."""
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
    return fixed


def _element_pointer(context: Any, builder: Any, aryty: Any, array: Any, index_types: Any, indices: Any) -> Any:
    """The pointer to the element of array value ``array`` the indices name (numba's ``basic_indexing`` and
    ``get_item_pointer`` of it, read from the value instead of a stack slot holding it; module docstring)."""
    model = context.data_model_manager[aryty]
    shape = model.get_field_position("shape")
    read: dict[int, Any] = {}

    def dimension(axis: int) -> Any:
        if axis not in read:
            read[axis] = builder.extract_value(array, [shape, axis])
        return read[axis]

    fixed = _fixed_indices(context, builder, index_types, indices, dimension, context.enable_boundscheck)
    data = builder.extract_value(array, model.get_field_position("data"))
    return builder.gep(data, [_element_offset(builder, aryty.layout, fixed, dimension)])


def _indices(builder: Any, index_type: Any, index: Any) -> tuple[Any, Any]:
    """The index types and values of an index (a tuple of them, or one)."""
    if isinstance(index_type, _TYPES.BaseTuple):
        return index_type.types, cgutils.unpack_tuple(builder, index, count=len(index_type))
    return (index_type,), (index,)


def _element_types(aryty: Any, index_type: Any) -> bool:
    """Whether an array of type ``aryty`` indexed by ``index_type`` names one element of a C or F ``types.Array``
    (an integer per dimension): an element read from the array's value."""
    index_types = index_type.types if isinstance(index_type, _TYPES.BaseTuple) else (index_type,)
    return (
        type(aryty) is types.Array
        and 1 <= aryty.ndim == len(index_types)
        and aryty.layout in "CF"
        and all(isinstance(one, types.Integer) for one in index_types)
    )


def _getitem(numba_s: Any) -> Any:
    """``a[i, ...]``: an element read from the array's value; any other indexing numba's ``numba_s``."""

    def getitem(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        aryty, index_type = sig.args
        if not _element_types(aryty, index_type):
            return numba_s(context, builder, sig, args)
        pointer = _element_pointer(context, builder, aryty, args[0], *_indices(builder, index_type, args[1]))
        item = arrayobj.load_item(context, builder, aryty, pointer)
        return imputils.impl_ret_borrowed(context, builder, sig.return_type, item)

    return getitem


def _setitem(numba_s: Any) -> Any:
    """``a[i, ...] = v``: an element written through the array's value; any other numba's ``numba_s``."""

    def setitem(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        aryty, index_type, value_type = sig.args
        if not _element_types(aryty, index_type):
            return numba_s(context, builder, sig, args)
        pointer = _element_pointer(context, builder, aryty, args[0], *_indices(builder, index_type, args[1]))
        item = context.cast(builder, args[2], value_type, aryty.dtype)
        arrayobj.store_item(context, builder, aryty, item, pointer)

    return setitem


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


def _put(value: Any) -> dict[int, Any]:
    """The members the chain of ``insertvalue`` that built LLVM struct ``value`` put there, by position."""
    put: dict[int, Any] = {}
    while isinstance(value, ir.InsertValue) and len(value.indices) == 1:
        put.setdefault(value.indices[0], value.value)
        value = value.aggregate
    return put


def _members(builder: Any, value: Any, count: int) -> list[Any]:
    """The first ``count`` members of LLVM struct ``value``: those its chain of ``insertvalue`` put there (no
    instruction), the others taken out of it."""
    put = _put(value)
    return [put[i] if i in put else builder.extract_value(value, i) for i in range(count)]


def _range_state(int_type: types.Integer, state_type: types.Type) -> Any:
    """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``: numba's state (start, stop, step) as a
    struct value."""

    def construct(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        zero, one = context.get_constant(int_type, 0), context.get_constant(int_type, 1)
        start, stop, step = (
            (zero, args[0], one) if len(args) == 1 else (args[0], args[1], one) if len(args) == 2 else args
        )
        state = cgutils.make_anonymous_struct(builder, [start, stop, step])
        return imputils.impl_ret_untracked(context, builder, state_type, state)

    return construct


def _range_next(context: Any, builder: Any, sig: Any, args: Any) -> Any:
    """``next(range iterator)``: numba's pair (the value, or 0 past the end; whether there was one), as a struct
    value; the iterator's slots are stepped as numba's ``iternext`` steps them."""
    next_slot, _, step, count_slot = _members(builder, args[0], 4)
    count = builder.load(count_slot)
    zero = ir.Constant(count.type, 0)
    valid = builder.icmp_signed(">", count, zero)
    before = builder.block
    with builder.if_then(valid):
        value = builder.load(next_slot)
        builder.store(builder.sub(count, ir.Constant(count.type, 1), flags=["nsw"]), count_slot)
        builder.store(builder.add(value, step), next_slot)
        stepped = builder.block
    first = builder.phi(count.type)
    first.add_incoming(zero, before)
    first.add_incoming(value, stepped)
    pair = cgutils.make_anonymous_struct(builder, [first, valid])
    return imputils.impl_ret_borrowed(context, builder, sig.return_type, pair)


def _pair_member(name: str, numba_s: Any) -> Any:
    """numba's ``BaseContext.pair_first`` / ``pair_second``: the member of a pair value; read without an instruction
    from a pair built member by member (a range's step), by numba's ``numba_s`` from any other (whose slot LLVM
    orders the code by: taken out of the value, some instructions came out in another order)."""

    def member(self: Any, builder: Any, val: Any, ty: Any) -> Any:
        put = _put(val).get(self.data_model_manager[ty].get_field_position(name))
        return numba_s(self, builder, val, ty) if put is None else put

    return member


_RANGES = rangeobj.range_impl_map  # the integer a range counts in -> its state type, its iterator type
_NUMBA_PAIR_FIRST, _NUMBA_PAIR_SECOND = base.BaseContext.pair_first, base.BaseContext.pair_second


def _numba_s(func: Any, *argtypes: Any) -> Any:
    """numba's lowering of ``func`` registered for exactly ``argtypes`` (``arrayobj`` registered it on import)."""
    return next(impl for impl, key, types_ in imputils.builtin_registry.functions if key is func and types_ == argtypes)


_ELEMENT_SIGNATURES = (  # numba's element indexing signatures, and picaemu's lowering of each
    (operator.getitem, (_TYPES.Buffer, types.Integer), _getitem),
    (operator.getitem, (_TYPES.Buffer, _TYPES.BaseTuple), _getitem),
    (operator.setitem, (_TYPES.Buffer, types.Any, types.Any), _setitem),
)


def _register_elements() -> None:
    """Register the element's lowering after numba's, each falling back on numba's for any other indexing."""
    for func, argtypes, lowering in _ELEMENT_SIGNATURES:
        imputils.lower_builtin(func, *argtypes)(lowering(_numba_s(func, *argtypes)))


def _register_ranges() -> None:
    """Register the range's lowering after numba's (a later registration of the same signature is the one numba's
    lookup picks)."""
    for int_type, (state_type, iter_type) in _RANGES.items():
        construct = _range_state(int_type, state_type)
        for arity in (1, 2, 3):
            imputils.lower_builtin(range, *(int_type,) * arity)(construct)
        imputils.lower_builtin("iternext", iter_type)(_range_next)


def install() -> None:
    """Replace numba's lowering helpers for the whole process (idempotent)."""
    base.BaseContext.pair_first = _pair_member("first", _NUMBA_PAIR_FIRST)
    base.BaseContext.pair_second = _pair_member("second", _NUMBA_PAIR_SECOND)
    if not _REGISTERED:
        _register_ranges()
        _register_elements()
        _REGISTERED.append(True)
    cgutils._StructProxy.__init__ = _proxy_init
    cgutils._StructProxy._make_refs = _make_refs


install()
