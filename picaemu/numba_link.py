"""Compiled kernels that call each other by address: each compiled and cached once, on its own, when first needed.

Numba links the whole code of a compiled callee into every compiled caller, then optimises and emits it again
there: a kernel at depth d of a call chain is compiled d times, and a caller pays for every feature any of its
callees might use. The route's chain (draw loop -> draw -> fragment side -> texture units, lighting, procedural
texture, fog) made a first run cost minutes of CPU. A ``Linked`` kernel is called instead through the address of
its native entry point (``call``), which the caller receives at run time in an int64 ``addresses`` array: the
callee is compiled once, in its own library, when a plan first needs it (``Linked.address``); a feature no draw
uses is never compiled; and a caller's cached code stays valid across processes, since it holds no address.

The call is numba's own calling convention (the one a linked call uses), so arrays, tuples and exceptions cross
it as they would a linked call. Its safety rests on the caller and the callee agreeing on the argument types: a
kernel's entry is a pair (address, fingerprint of the argument and return types it was compiled for), and the call
compares the fingerprint with the one of the types the caller passes before it jumps (``LinkTypeError``, a picaemu
bug). An entry of 0 (a kernel the plan said it would not need) raises ``LinkError`` in the caller instead.

A kernel may also take type references its callers do not pass (``register(..., types_only=n)``): a caller then
compiles without knowing those types (the compiled loop calls ``_draw`` without its plans' types), and the entry
stands for one choice of them.

What else keeps a first run's compile short: ``kernel`` (``numba.njit(cache=True)`` without numba's C entry
wrapper, which picaemu never calls), ``compiled_only`` (a kernel only other kernels call: no Python entry
either), allocations lowered in place (``empty``, ``zeros``, ``indices``: numba compiles each signature of
``np.empty`` as a function of its own; inside the compiled loop they take pieces of its draw arena,
``picaemu.numba_arena``), ``Stored`` values written by Python (no compiled writer per type), and
Python's garbage collector kept off the heap that was there before a compile (``_FrozenHeap``).
"""

from __future__ import annotations

import gc
import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numba import types
from numba.core import cgutils, event
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.extending import intrinsic
from numba.np.arrayobj import _parse_empty_args, populate_array

# numba_lazy: machine code only where jumped to; numba_refcounts: reference counts' IR; numba_lowering: indexing's
# and struct slots' IR; numba_passes: numba passes at less Python cost (all install on import)
from picaemu import numba_arena, numba_lazy, numba_lowering, numba_passes, numba_refcounts  # noqa: F401
from picaemu.array_address import data_address
from picaemu.errors import PicaError


class LinkError(PicaError):
    """A compiled caller reached a linked kernel whose address it was not given (a plan bug)."""


class LinkTypeError(PicaError):
    """A linked kernel was asked for with argument types other than its compiled callers pass (a picaemu bug)."""


class CompiledOnlyError(PicaError):
    """Python called a kernel that only compiled code may call (``compiled_only``; a picaemu bug)."""


class _CompiledOnly(CPUDispatcher):
    """A dispatcher whose kernels have no Python entry: a call from Python raises instead of jumping to none."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        raise CompiledOnlyError(f"{name} is compiled without a Python entry: only compiled code may call it")


def kernel(**options: Any) -> Any:
    """``numba.njit(cache=True, **options)`` without numba's C entry wrapper, made for first-class function values,
    which picaemu does not use (a tenth of the code a first run compiled)."""
    return numba.njit(cache=True, no_cfunc_wrapper=True, **options)


def compiled_only(**options: Any) -> Any:
    """``numba.njit(cache=True, **options)`` for a kernel that only other kernels call: compiled without numba's
    two entry wrappers, the one Python calls (unboxing each argument: a few thousand LLVM instructions for a kernel
    taking plan tuples) and the C one (for first-class function values, which picaemu does not use). Together they
    were a third of the code a first run compiles; a call from Python raises ``CompiledOnlyError``."""

    def decorate(func: Any) -> Any:
        if numba.config.DISABLE_JIT:
            return func
        targetoptions = {"nopython": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True, **options}
        dispatcher = _CompiledOnly(py_func=func, locals={}, targetoptions=targetoptions)
        dispatcher.enable_caching()
        return dispatcher

    return decorate


def fingerprint(argtypes: tuple[types.Type, ...], returns: types.Type) -> int:
    """63 bits that name a call's argument and return types (the same in every process)."""
    text = repr((tuple(str(t) for t in argtypes), str(returns))).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


@dataclass
class Linked:
    """A kernel compiled on its own and called by address; ``returns``: its return type (numba's), fixed so that
    a caller compiles without compiling it."""

    kernel: Any  # a numba dispatcher
    returns: types.Type
    types_only: int = 0  # its last parameters: type references (``types.TypeRef``) its callers do not pass
    _entries: dict[tuple[types.Type, ...], tuple[int, int]] = field(default_factory=dict)
    _by_kind: dict[object, tuple[int, int]] = field(default_factory=dict)  # the same by ``arguments_kind``

    @property
    def name(self) -> str:
        return f"{self.kernel.py_func.__module__}.{self.kernel.py_func.__qualname__}"

    def entry(self, *sample: Any) -> tuple[int, int]:
        """(address, fingerprint) of the kernel compiled for arguments of the types of ``sample`` (values of the
        types its callers pass), compiled or loaded from the kernel cache on first use; found again by the
        arguments' ``arguments_kind`` (numba's ``typeof`` of a plan's arguments costs ~0.5 ms)."""
        kind = arguments_kind(sample)
        found = self._by_kind.get(kind) if kind is not None else None
        if found is not None:
            return found
        argtypes = tuple(numba.typeof(v) for v in sample)
        found = self._entries.get(argtypes)
        if found is None:
            found = self._entries[argtypes] = self._compiled(argtypes)
        if kind is not None:
            self._by_kind[kind] = found
        return found

    def _compiled(self, argtypes: tuple[types.Type, ...]) -> tuple[int, int]:
        passed = len(argtypes) - self.types_only
        if not all(isinstance(t, types.TypeRef) for t in argtypes[passed:]):
            raise LinkTypeError(f"{self.name}: its last {self.types_only} arguments must be numba types")
        self.kernel.compile(argtypes)
        result = self.kernel.overloads[argtypes]
        if result.signature.return_type != self.returns:
            raise LinkTypeError(f"{self.name} returns {result.signature.return_type}, declared {self.returns}")
        address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
        return address, fingerprint(argtypes[:passed], self.returns)


_SCALARS = frozenset((bool, float, complex, str, type(None)))  # classes numba types by class alone
_ARRAY_FLAGS = 0x503  # of numpy's ``flags.num``: C_CONTIGUOUS 0x1, F_CONTIGUOUS 0x2, ALIGNED 0x100, WRITEABLE 0x400


def arguments_kind(value: Any) -> object:
    """What numba's type of ``value`` depends on (arrays: dtype, dimensions, layout, writeable, aligned; tuples:
    their class and items; scalars: their class; a numba type: itself), without numba's ``typeof``; None for a value
    of another kind (numba's type may depend on more than its class: ``Linked.entry`` then asks ``typeof``). The
    classes a plan is made of are tested first, by identity (a fragment plan's ~130 values: ~50 us, twice that with
    ``isinstance`` first)."""
    cls = type(value)
    if cls is np.ndarray:
        dtype = value.dtype
        return None if dtype.fields is not None else (dtype, value.ndim, value.flags.num & _ARRAY_FLAGS)
    if cls is tuple or isinstance(value, tuple):  # a named tuple's class is part of its numba type
        items = tuple(map(arguments_kind, value))
        return None if None in items else (cls, items)
    if cls is int:  # numba types an int past int64's range as uint64
        return int, -(1 << 63) <= value < 1 << 63
    if cls in _SCALARS:
        return cls
    if isinstance(value, types.Type):
        return value
    if isinstance(value, np.generic) and not isinstance(value, np.void):
        return cls
    return None  # an array subclass, a structured scalar, any other object


COMPILE_GC_YOUNG = 10000  # allocations between collections of the youngest generation while numba compiles


class _FrozenHeap(event.Listener):
    """While numba compiles (its outermost "numba:compile" event), the objects alive before the compile are kept out
    of Python's garbage collector (``gc.freeze``): numba's typing and lowering allocate objects by the million, and
    every full collection they set off walked the whole heap (numpy, numba, the kernels compiled so far) again: 5 s
    of README line 1's 45 s of CPU, 1.4 s frozen (bench/RESULTS.md, "First runs, twelfth session"). The end of the
    compile (an error's too) unfreezes them. Compiles hold numba's compiler lock: one thread at a time. A heap some
    other code froze (``gc.get_freeze_count()``) is left as it is: unfreezing would undo that code's freeze. The
    youngest generation's threshold is ``COMPILE_GC_YOUNG`` during the compile (fewer collections of the objects
    the compile allocates, and of the older generations they promote to: 1.45 -> ~0.8 s of README line 1's
    collections, the same peak memory; bench/RESULTS.md, "First runs, thirteenth session")."""

    def __init__(self) -> None:
        self._depth = 0
        self._froze = False
        self._threshold = gc.get_threshold()

    def on_start(self, ev: event.Event) -> None:
        self._depth += 1
        if self._depth == 1:
            self._threshold = gc.get_threshold()
            gc.set_threshold(max(self._threshold[0], COMPILE_GC_YOUNG), *self._threshold[1:])
            if gc.get_freeze_count() == 0:
                gc.freeze()
                self._froze = True

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth == 0:
            gc.set_threshold(*self._threshold)
            if self._froze:
                gc.unfreeze()
                self._froze = False


event.register("numba:compile", _FrozenHeap())

LINKS: dict[int, Linked] = {}
_ANY_TYPE = types.TypeRef(types.none)  # every type reference has the same native form (an unused pointer)


def register(link_id: int, kernel: Any, returns: types.Type, types_only: int = 0) -> Linked:
    """Make ``kernel`` the linked kernel number ``link_id`` (a module constant the callers name). Its last
    ``types_only`` parameters may be type references (``types.TypeRef``: no value, a type its code depends on, such
    as the type of a plan it ``load``s) that its callers do not pass: a caller then compiles without knowing them,
    each entry (``Linked.entry``, given them in its sample) stands for one choice of them, and whoever fills a
    caller's entries answers for the match (the fingerprint covers the passed arguments only)."""
    if link_id in LINKS:
        raise ValueError(f"link id {link_id} is taken by {LINKS[link_id].name}")
    LINKS[link_id] = Linked(kernel, returns, types_only)
    return LINKS[link_id]


@intrinsic(prefer_literal=True)
def call(typingctx: Any, link_id: Any, entry: Any, args: Any) -> Any:
    """``call(LINK_ID, entry, (arg, ...))``: the linked kernel ``LINK_ID`` (a constant) at ``entry`` ((2,) int64:
    ``Linked.entry``) with these arguments; returns what it returns."""
    if not isinstance(link_id, types.IntegerLiteral) or link_id.literal_value not in LINKS:
        raise TypingError("numba_link.call: the first argument must be a registered link id constant")
    if not isinstance(entry, types.Array) or entry.dtype != types.int64 or entry.layout != "C":
        raise TypingError("numba_link.call: the entry must be a C-contiguous (2,) int64 array (Linked.entry)")
    if not isinstance(args, types.BaseTuple):
        raise TypingError("numba_link.call(LINK_ID, entry, args): args must be a tuple")
    linked = LINKS[link_id.literal_value]
    passed = tuple(args.types)
    argtypes = tuple(types.unliteral(t) for t in passed)  # a constant argument is passed as its type's value
    restype = linked.returns
    expected = fingerprint(argtypes, restype)
    erased = (_ANY_TYPE,) * linked.types_only  # a type reference's value is a null pointer, whatever its type

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        _, pair, packed = llargs
        data = context.make_array(entry)(context, builder, pair).data
        where = builder.load(data)
        printed = builder.load(builder.gep(data, [context.get_constant(types.intp, 1)]))
        with cgutils.if_unlikely(builder, cgutils.is_null(builder, where)):
            context.call_conv.return_user_exc(builder, LinkError, (f"{linked.name} was not linked",))
        other = builder.icmp_unsigned("!=", printed, context.get_constant(types.int64, expected))
        with cgutils.if_unlikely(builder, other):
            names = ", ".join(map(str, argtypes))
            message = f"{linked.name} was compiled for other argument types than this caller passes ({names})"
            context.call_conv.return_user_exc(builder, LinkTypeError, (message,))
        fnty = context.call_conv.get_function_type(restype, argtypes + erased)
        fn = builder.inttoptr(where, fnty.as_pointer())
        values = [
            context.cast(builder, value, was, to)
            for value, was, to in zip(cgutils.unpack_tuple(builder, packed, len(passed)), passed, argtypes, strict=True)
        ]
        values += [cgutils.get_null_value(context.get_value_type(t)) for t in erased]
        status, result = context.call_conv.call_function(builder, fn, restype, argtypes + erased, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return restype(link_id, entry, args), codegen


# numpy allocations lowered in place: numba compiles ``np.empty`` / ``np.zeros`` (an overload) once per signature
# (shape type x dtype) as a function of its own, ~40 ms each, then links it into every caller; a first run met ~60
# such signatures. ``empty`` and ``zeros`` emit the allocation inside the caller instead.


def _allocation(shape: Any, dtype: Any) -> types.Array:
    nb_dtype, ndim = parse_dtype(dtype), parse_shape(shape)
    if nb_dtype is None or ndim is None:
        raise TypingError(f"numba_link: an allocation takes an int or a tuple of ints and a dtype, not {shape} {dtype}")
    return types.Array(nb_dtype, ndim, "C")


def _allocate(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
    """The array of ``signature``'s return type and the shape ``llargs[0]``: a piece of the thread's draw arena
    (``picaemu.numba_arena``: owning nothing) when one is open and has room, else numba's allocation."""
    arrtype, shapes = _parse_empty_args(context, builder, signature, llargs)
    return _in_arena_or_heap(context, builder, arrtype, shapes)


def _in_arena_or_heap(context: Any, builder: Any, arrtype: types.Array, shapes: list) -> Any:
    """A C-order array of ``arrtype`` and the shape ``shapes``, its memory from ``numba_arena.allocate`` (numba's
    errors, as ``np.empty``: ValueError when its size overflows, MemoryError when malloc fails)."""
    datatype = context.get_data_type(arrtype.dtype)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(datatype))
    items, overflow = context.get_constant(types.intp, 1), cgutils.false_bit
    for size in shapes:  # numba's order: the item count, then the bytes (a zero extent never overflows)
        product = builder.smul_with_overflow(items, size)
        items, overflow = builder.extract_value(product, 0), builder.or_(overflow, builder.extract_value(product, 1))
    product = builder.smul_with_overflow(items, itemsize)
    nbytes, overflow = builder.extract_value(product, 0), builder.or_(overflow, builder.extract_value(product, 1))
    with builder.if_then(overflow, likely=False):
        context.call_conv.return_user_exc(builder, ValueError, (_TOO_BIG,))
    align = context.get_constant(types.uint32, context.get_preferred_array_alignment(arrtype.dtype))
    taken = numba_arena.allocate(context, builder, nbytes, align)
    cgutils.guard_memory_error(context, builder, builder.extract_value(taken, 1), msg=_NO_MEMORY)
    array = context.make_array(arrtype)(context, builder)
    strides = [itemsize] if shapes else []  # C order
    for size in reversed(shapes[1:]):
        strides.append(builder.mul(strides[-1], size))
    populate_array(
        array,
        data=builder.bitcast(builder.extract_value(taken, 1), datatype.as_pointer()),
        shape=cgutils.pack_array(builder, shapes),
        strides=cgutils.pack_array(builder, strides[::-1]),
        itemsize=itemsize,
        meminfo=builder.extract_value(taken, 0),
    )
    return array


_TOO_BIG = "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."  # numba's
_NO_MEMORY = "Allocation failed (probably too large)."  # numba's MemoryError


@intrinsic
def empty(typingctx: Any, shape: Any, dtype: Any) -> Any:
    """``np.empty(shape, dtype)`` (C order)."""

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        return _allocate(context, builder, signature, llargs)._getvalue()

    return _allocation(shape, dtype)(shape, dtype), codegen


@intrinsic
def zeros(typingctx: Any, shape: Any, dtype: Any) -> Any:
    """``np.zeros(shape, dtype)`` (C order)."""

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        array = _allocate(context, builder, signature, llargs)
        cgutils.memset(builder, array.data, builder.mul(array.itemsize, array.nitems), 0)
        return array._getvalue()

    return _allocation(shape, dtype)(shape, dtype), codegen


@intrinsic
def indices(typingctx: Any, count: Any) -> Any:
    """``np.arange(count)`` (int64)."""
    if not isinstance(count, types.Integer):
        raise TypingError(f"numba_link.indices takes an integer count, not {count}")
    arrtype = types.Array(types.int64, 1, "C")

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        n = context.cast(builder, llargs[0], signature.args[0], types.intp)
        array = _in_arena_or_heap(context, builder, arrtype, [n])
        with cgutils.for_range(builder, n) as loop:
            builder.store(loop.index, builder.gep(array.data, [loop.index]))
        return array._getvalue()

    return arrtype(count), codegen


@intrinsic
def arena_restart(typingctx: Any) -> Any:
    """The calling thread's open draw arena gives its pieces out again from its start (``picaemu.numba_arena``: a
    draw begins; what the previous one allocated there is dead)."""

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        numba_arena.restart(builder)
        return context.get_dummy_value()

    return types.none(), codegen


# Values kept in native form: a compiled loop that switches between several plans by a run-time index would index
# a tuple of tuples of arrays, which numba lowers as a switch copying every member in every case (compile time grows
# with slots x members: 8 slots of a fragment plan cost ~50 s of CPU). ``Stored`` keeps one plan's argument tuple
# at an address instead; compiled code loads the one it needs (``load``), one load whatever the number of slots.
# Python writes the native form itself, after numba's data model of the value's type (``_Layout``): a compiled
# writer took a compile per plan type (~1.2 s of a first run, for unboxing ~70 arrays). The stored arrays own
# nothing (no NRT meminfo, as ``numba.carray``'s): ``Stored`` keeps their numpy arrays alive, and a load takes no
# references (a draw's load of a plan of ~70 arrays would otherwise take and drop 70 of them).

_ARRAY_FIELDS = ("meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides")


# struct codes (standard sizes) of the scalars a stored value may hold, by numpy dtype
_CODES = {np.dtype(c): c for c in "bBhHiIqQfd"}  # numpy's type codes of these are struct's


_ABI: dict[str, tuple[int, int]] = {}  # an LLVM type's text -> its ABI (size, alignment) on this target


class _Layout:
    """The native form of a value of numba type ``ty`` (arrays, numbers, booleans, tuples of them) as numba's data
    model and the target's ABI sizes and alignments lay it out: ``size`` bytes, written by ``struct``
    (``pack``) from the value's leaves in the order of a depth-first walk (``_leaf_values``): an array's
    meminfo and parent (0: it owns nothing), item count, item size, data address, shape and strides; a number."""

    def __init__(self, ty: types.Type) -> None:
        from numba.core.registry import cpu_target
        from numba.np.numpy_support import as_dtype

        self.type = ty
        self._context = cpu_target.target_context
        self._as_dtype = as_dtype
        self._format = ["="]  # native byte order, standard sizes, padding explicit
        data_type = self._context.data_model_manager[ty].get_data_type()
        self.size, _ = self._abi(data_type)
        end = self._place(ty, data_type, 0, 0)
        self._pad(end, self.size)
        self._struct = struct.Struct("".join(self._format))
        if self._struct.size != self.size:
            raise LinkTypeError(f"numba_link.Stored: the layout of {ty} came out at {self._struct.size} bytes")

    def _abi(self, data_type: Any) -> tuple[int, int]:
        """(size, alignment) of an LLVM type; remembered by its text (llvmlite parses a module for each answer)."""
        text = str(data_type)
        if text not in _ABI:
            _ABI[text] = self._context.get_abi_sizeof(data_type), data_type.get_abi_alignment(self._context.target_data)
        return _ABI[text]

    def _pad(self, written: int, at: int) -> None:
        if at > written:
            self._format.append(f"{at - written}x")

    def _place(self, ty: types.Type, data_type: Any, at: int, written: int) -> int:
        """Lay out ``ty`` at offset ``at`` (bytes up to ``written`` already described); returns where it ends."""
        size, _ = self._abi(data_type)
        if isinstance(ty, types.BaseTuple):
            offset = at
            for i, member in enumerate(ty.types):
                element = data_type.elements[i] if hasattr(data_type, "elements") else data_type.element
                element_size, align = self._abi(element)
                offset = -(-offset // align) * align
                written = self._place(member, element, offset, written)
                offset += element_size
            return written
        self._pad(written, at)
        if isinstance(ty, types.Array):
            fields = tuple(self._context.data_model_manager[ty]._fields)
            if fields != _ARRAY_FIELDS or size != 8 * (5 + 2 * ty.ndim):
                raise LinkTypeError(f"numba_link.Stored: numba's arrays are laid out as {fields}, not as expected")
            self._format.append("q" * (5 + 2 * ty.ndim))
        elif isinstance(ty, types.Boolean) and size == 1:
            self._format.append("?")
        elif isinstance(ty, types.Number) and _CODES.get(self._as_dtype(ty)) and self._as_dtype(ty).itemsize == size:
            self._format.append(_CODES[self._as_dtype(ty)])
        else:
            raise LinkTypeError(f"numba_link.Stored keeps arrays, numbers and tuples of them, not {ty} ({size} bytes)")
        return at + size

    def pack(self, value: tuple, buffer: np.ndarray) -> None:
        """``value`` (of this layout's type) into ``buffer`` (``size`` bytes)."""
        leaves: list = []
        _leaf_values(value, leaves)
        self._struct.pack_into(buffer.data, 0, *leaves)


def _leaf_values(value: tuple, out: list) -> None:
    """The values ``_Layout`` writes for ``value``, depth first, appended to ``out``."""
    for item in value:
        if type(item) is np.ndarray:
            out += (0, 0, item.size, item.itemsize, data_address(item), *item.shape, *item.strides)
        elif isinstance(item, tuple):  # named tuples too
            _leaf_values(item, out)
        else:
            out.append(item)


_LAYOUTS: dict[object, _Layout] = {}  # by ``arguments_kind`` of the values laid out


def _layout(value: tuple, kind: object) -> _Layout:
    found = _LAYOUTS.get(kind) if kind is not None else None
    if found is None:
        found = _Layout(numba.typeof(value))
        if kind is not None:
            _LAYOUTS[kind] = found
    return found


@intrinsic
def load(typingctx: Any, like: Any, address: Any) -> Any:
    """The value kept at ``address`` by ``Stored``, of ``like``'s type (``like``: a value of that type or a
    ``types.TypeRef`` of it); it holds no references (its arrays own nothing)."""
    kept = like.instance_type if isinstance(like, types.TypeRef) else like

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        model = context.data_model_manager[kept]
        return model.from_data(builder, builder.load(builder.inttoptr(llargs[1], model.get_data_type().as_pointer())))

    return kept(like, address), codegen


class Stored:
    """``value`` (a tuple of arrays and numbers, as numba types it) kept in native form for compiled code to
    ``load`` from ``address``; its arrays stay alive as long as this object. ``kind``: ``arguments_kind(value)`` when
    the caller has it (~80 us for a plan pair)."""

    def __init__(self, value: tuple, kind: object = None) -> None:
        self._value = value  # the arrays' memory: the stored form holds no references
        layout = _layout(value, arguments_kind(value) if kind is None else kind)
        self.type = layout.type  # the numba type of ``value`` (what ``load`` needs: ``types.TypeRef(stored.type)``)
        self._buffer = np.zeros(-(-layout.size // 8) * 8, np.uint8)  # 8-aligned: numpy aligns its buffers
        layout.pack(value, self._buffer)
        self.address = int(self._buffer.ctypes.data)
