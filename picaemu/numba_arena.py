"""The draw arena: the compiled loop's per-draw allocations taken from one buffer instead of malloc.

A compiled draw allocates ~63 arrays (the front end's vertex and triangle tables, the rasterizer's fragment
columns, the texture units' coordinates ...; ``NUMBA_NRT_STATS`` over cubes_300), each an NRT meminfo from malloc,
freed when the draw ends: most are over glibc's per-thread cache sizes, ~40-60 ns a pair, about half of the
~6 us a draw of cubes_3000 costs over its merged twin (bench/RESULTS.md, "Start-up, install and a draw's
references, fourteenth session").

``numba_link.empty`` / ``zeros`` / ``indices`` call ``allocate``, which asks ``take`` first: while a thread has an
arena open (``opened``, around the compiled loop's call), an allocation that fits is the next 64-byte aligned piece
of its buffer, an array owning nothing (a null meminfo: no reference counting, no free); otherwise (no arena,
another thread, no room) it is numba's own allocation. The loop starts each draw's pieces over (``restart``):
everything a draw allocates is dead when it ends (its results are copied into the loop's rows and held vertices),
and nothing the loop allocates reaches Python (it returns a status).

The arena is a process-wide int64 record (``ARENA_FIELDS``) the kernels reach by the symbol ``picaemu_arena``, which
this module gives the JIT's linker, as numba gives it the NRT's: cached machine code names the symbol, never an
address. The owner is a thread (``pthread_self``, the value of ``threading.get_ident``), so a kernel another thread
runs meanwhile (a GUI's) allocates as usual.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from llvmlite import binding as ll
from llvmlite import ir

ARENA_FIELDS = ("base", "size", "used", "owner")  # int64 each: buffer address, bytes, bytes taken, owning thread
A_BASE, A_SIZE, A_USED, A_OWNER = range(len(ARENA_FIELDS))
ALIGN = 64  # bytes: a piece starts on a cache line (numba's own allocations are 32-aligned at most)
ARENA_BYTES = 8 << 20  # a draw's allocations beyond this come from malloc

_SYMBOL, _THREAD = "picaemu_arena", "picaemu_arena_thread"  # given to the JIT's linker
_TAKE, _RESTART = "picaemu_arena_take", "picaemu_arena_restart"  # defined in each library that uses them
_ALLOCATE = "picaemu_allocate"  # (the same)

_ARENA = np.zeros(len(ARENA_FIELDS), np.int64)  # lives as long as the process: the symbol points at it
ll.add_symbol(_SYMBOL, _ARENA.ctypes.data)
ll.add_symbol(_THREAD, ctypes.cast(ctypes.CDLL(None).pthread_self, ctypes.c_void_p).value)


class ArenaInUseError(RuntimeError):
    """An arena opened inside another one of the same thread (the compiled loop does not nest)."""


@contextmanager
def opened(buffer: np.ndarray) -> Iterator[None]:
    """The calling thread's allocations in compiled code take pieces of ``buffer`` (uint8, C-contiguous) until the
    block ends (an error's end too). One thread at a time: another thread's arena is waited for, not shared."""
    if _ARENA[A_OWNER] == threading.get_ident():
        raise ArenaInUseError("the draw arena is already open in this thread")
    start = -buffer.ctypes.data % ALIGN  # the first aligned byte
    with _LOCK:
        _ARENA[A_BASE], _ARENA[A_SIZE], _ARENA[A_USED] = buffer.ctypes.data + start, buffer.nbytes - start, 0
        _ARENA[A_OWNER] = threading.get_ident()
        try:
            yield
        finally:
            _ARENA[A_OWNER] = 0


_LOCK = threading.Lock()


def used() -> int:
    """Bytes taken since the last ``restart`` (for tests)."""
    return int(_ARENA[A_USED])


def take(builder: ir.IRBuilder, nbytes: ir.Value) -> ir.Value:
    """IR: an ``ALIGN``-aligned i8* to ``nbytes`` of the calling thread's open arena, or null (no arena of this
    thread, no room, or a negative size: the caller allocates as numba does)."""
    return builder.call(_function(builder.module, _TAKE, _define_take), [nbytes])


def allocate(context: Any, builder: ir.IRBuilder, nbytes: ir.Value, align: ir.Value) -> ir.Value:
    """IR: ``{i8* meminfo, i8* data}`` of ``nbytes`` (i64) aligned to ``align`` (i32): a piece of the calling
    thread's open arena (``take``; a null meminfo: it owns nothing), else numba's allocation (numba target context
    ``context``'s ``NRT_MemInfo_alloc_aligned``, as ``np.empty``'s; both null when it fails). One function per
    module (``picaemu_allocate``) instead of the allocation's code at each site (``numba_link.empty`` / ``zeros`` /
    ``indices``; ``_front_end`` has 16), which numba built and LLVM parsed and optimised at each (README line 1's
    unoptimised IR: 4 % fewer lines)."""
    return builder.call(_function(builder.module, _ALLOCATE, lambda fn: _define_allocate(context, fn)), [nbytes, align])


def restart(builder: ir.IRBuilder) -> None:
    """IR: the calling thread's open arena gives its pieces out again from its start (a draw begins)."""
    builder.call(_function(builder.module, _RESTART, _define_restart), [])


_I64 = ir.IntType(64)
_BYTES = ir.IntType(8).as_pointer()
_PAIR = ir.LiteralStructType([_BYTES, _BYTES])
_SIGNATURES = {
    _TAKE: ir.FunctionType(_BYTES, [_I64]),
    _RESTART: ir.FunctionType(ir.VoidType(), []),
    _ALLOCATE: ir.FunctionType(_PAIR, [_I64, ir.IntType(32)]),
}


def _function(module: ir.Module, name: str, define: Any) -> ir.Function:
    """``name`` in ``module``, defined there once (linkonce_odr: every library that links it keeps one copy)."""
    found = module.globals.get(name)
    if found is None:
        found = ir.Function(module, _SIGNATURES[name], name)
        found.linkage = "linkonce_odr"
        define(found)
    return found


def _owned_fields(
    fn: ir.Function, entry: ir.Block, mine: ir.Block, other: ir.Block
) -> tuple[ir.IRBuilder, list[ir.Value]]:
    """A builder that ends ``fn``'s ``entry`` branching to ``mine`` when the calling thread owns the arena, to
    ``other`` when not; and the arena's fields."""
    module = fn.module
    record = module.globals.get(_SYMBOL)
    if record is None:
        record = ir.GlobalVariable(module, ir.ArrayType(_I64, len(ARENA_FIELDS)), _SYMBOL)  # external: the symbol
    thread = module.globals.get(_THREAD) or ir.Function(module, ir.FunctionType(_I64, []), _THREAD)
    builder = ir.IRBuilder(entry)
    fields = [builder.gep(record, [ir.Constant(_I64, 0), ir.Constant(_I64, i)]) for i in range(len(ARENA_FIELDS))]
    owner = builder.load(fields[A_OWNER])
    check = fn.append_basic_block("check")
    builder.cbranch(builder.icmp_unsigned("==", owner, ir.Constant(_I64, 0)), other, check)
    builder.position_at_end(check)
    builder.cbranch(builder.icmp_unsigned("==", builder.call(thread, []), owner), mine, other)
    return builder, fields


def _define_take(fn: ir.Function) -> None:
    entry, mine, fits, none = (fn.append_basic_block(name) for name in ("entry", "mine", "fits", "none"))
    builder, fields = _owned_fields(fn, entry, mine, none)
    (nbytes,) = fn.args
    builder.position_at_end(mine)
    taken = builder.load(fields[A_USED])
    piece = builder.and_(builder.add(nbytes, ir.Constant(_I64, ALIGN - 1)), ir.Constant(_I64, -ALIGN))
    after = builder.add(taken, piece)
    room = builder.icmp_signed("<=", after, builder.load(fields[A_SIZE]))
    sized = builder.icmp_signed(">=", nbytes, ir.Constant(_I64, 0))
    builder.cbranch(builder.and_(room, sized), fits, none)
    builder.position_at_end(fits)
    builder.store(after, fields[A_USED])
    builder.ret(builder.inttoptr(builder.add(builder.load(fields[A_BASE]), taken), _BYTES))
    builder.position_at_end(none)
    builder.ret(ir.Constant(_BYTES, None))


def _define_allocate(context: Any, fn: ir.Function) -> None:
    nbytes, align = fn.args
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    piece = take(builder, nbytes)
    null = ir.Constant(_BYTES, None)
    with builder.if_then(builder.icmp_unsigned("==", piece, null)):
        meminfo = context.nrt.meminfo_alloc_aligned_unchecked(builder, nbytes, align)
        with builder.if_then(builder.icmp_unsigned("==", meminfo, null), likely=False):  # the caller raises
            builder.ret(ir.Constant(_PAIR, [None, None]))
        data = context.nrt.meminfo_data(builder, meminfo)
        builder.ret(builder.insert_value(builder.insert_value(ir.Constant(_PAIR, None), meminfo, 0), data, 1))
    builder.ret(builder.insert_value(ir.Constant(_PAIR, [None, None]), piece, 1))


def _define_restart(fn: ir.Function) -> None:
    entry, mine, done = (fn.append_basic_block(name) for name in ("entry", "mine", "done"))
    builder, fields = _owned_fields(fn, entry, mine, done)
    builder.position_at_end(mine)
    builder.store(ir.Constant(_I64, 0), fields[A_USED])
    builder.branch(done)
    builder.position_at_end(done)
    builder.ret_void()
