"""picaemu.numba_passes: numba's helpers replaced by quicker ones give numba's own answers (its originals, kept by
the module, are the reference)."""

from __future__ import annotations

import copy
import operator
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from llvmlite.binding import ffi
from numba import types
from numba.core import analysis, base, errors, imputils, inline_closurecall, ir, lowering, targetconfig
from numba.core.compiler import Flags, run_frontend
from numba.core.registry import cpu_target
from numba.core.ssa import reconstruct_ssa
from numba.core.typed_passes import type_inference_stage
from numba.core.types import functions

from picaemu import numba_link, numba_passes
from picaemu.color import tev_kernels
from picaemu.command import kernel as command_kernel
from picaemu.fused import loop
from picaemu.shader import kernel as shader_kernel
from tests.llvm_text import COMPUTE, SEGMENT, SEGMENT_ARGTYPES, compiled_text


def test_installed_on_numba_link_s_import() -> None:
    assert numba_link.LINKS is not None  # (imported: it installs the helpers)
    assert targetconfig.TargetConfig.values is numba_passes._values
    assert ir.Inst._rec_list_vars is numba_passes._rec_list_vars
    assert functions.BaseFunction.get_call_type is numba_passes._get_call_type
    assert base._has_loc is numba_passes._has_loc
    assert not [cb for cb in ffi.lib._lock._cblist if cb[0].__module__ == "numba.core.base"]  # LLVM calls untimed


def test_flags_values_are_numba_s() -> None:
    default = Flags()
    changed = Flags()
    changed.nrt = True
    changed.error_model = "numpy"
    changed.no_cpython_wrapper = True
    copied = Flags(changed)
    for flags in (default, changed, copied):
        assert flags.values() == numba_passes._NUMBA_VALUES(flags)
        assert list(flags.values()) == list(numba_passes._NUMBA_VALUES(flags))  # the same order
    assert changed == copied and hash(changed) == hash(copied) and changed != default


def test_a_config_holding_options_of_another_class_keeps_numba_s_answer() -> None:
    class Other(targetconfig.TargetConfig):
        extra = targetconfig.Option(type=int, default=0, doc="an option Flags lacks")

    other = Other()
    other.extra = 3
    flags = Flags()
    flags._values.update(other._values)  # (as ``Flags(copy_from=other)`` would, without its isinstance check)
    assert flags.values() == numba_passes._NUMBA_VALUES(flags) and "extra" not in flags.values()


def _names(statements: list[ir.Stmt]) -> list[list[str]]:
    return [[v.name for v in stmt.list_vars()] for stmt in statements]


def test_list_vars_are_numba_s_on_real_kernels(monkeypatch: object) -> None:
    statements = [
        stmt
        for kernel in (shader_kernel.run_segment, loop.run, command_kernel.run)
        for block in run_frontend(kernel.py_func).blocks.values()
        for stmt in block.body
    ]
    ours = _names(statements)
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", numba_passes._NUMBA_REC_LIST_VARS)  # type: ignore[attr-defined]
    assert ours == _names(statements) and len(statements) > 1000


def test_use_defs_are_numba_s_on_real_kernels() -> None:
    """Each block's used and defined names, on the IR of three real kernels as numba's front end leaves it, and on
    a block that assigns a variable from itself (``x = x + 1`` reads the ``x`` it does not define)."""
    irs = [run_frontend(kernel.py_func) for kernel in (shader_kernel.run_segment, loop.run, command_kernel.run)]
    blocks = [function_ir.blocks for function_ir in irs]
    blocks.append({0: ir.Block(ir.Scope(None, ir.unknown_loc), ir.unknown_loc)})
    scope = blocks[-1][0].scope
    x, one = ir.Var(scope, "x", ir.unknown_loc), ir.Var(scope, "one", ir.unknown_loc)
    blocks[-1][0].body = [ir.Assign(ir.Expr.binop(operator.add, x, one, ir.unknown_loc), x, ir.unknown_loc)]
    for each in blocks:
        assert analysis.compute_use_defs(each) == numba_passes._NUMBA_COMPUTE_USE_DEFS(each)
    assert analysis.compute_use_defs(blocks[-1]).usemap[0] == {"x", "one"}
    assert analysis.compute_use_defs(blocks[-1]).defmap[0] == set()
    assert analysis.compute_use_defs is numba_passes._compute_use_defs


def test_live_maps_are_numba_s_on_real_kernels() -> None:
    """The names alive at each block's entry, on the IR of four real kernels (loops, branches, thousands of names) as
    numba's front end leaves it, and after its SSA pass renamed every definition."""
    kernels = (shader_kernel.run_segment, loop.run, command_kernel.run, tev_kernels._stage)
    irs = [run_frontend(kernel.py_func) for kernel in kernels]
    irs.append(reconstruct_ssa(run_frontend(loop.run.py_func)))
    for function_ir in irs:
        blocks = function_ir.blocks
        cfg = analysis.compute_cfg_from_blocks(blocks)
        usedefs = numba_passes._NUMBA_COMPUTE_USE_DEFS(blocks)
        ours = numba_passes._compute_live_map(cfg, blocks, usedefs.usemap, usedefs.defmap)
        assert ours == numba_passes._NUMBA_COMPUTE_LIVE_MAP(cfg, blocks, usedefs.usemap, usedefs.defmap)
        assert list(ours) == list(blocks) and any(ours.values())
    assert analysis.compute_live_map is numba_passes._compute_live_map


def test_list_vars_walk_nested_containers_in_order(monkeypatch: object) -> None:
    scope = ir.Scope(None, ir.unknown_loc)
    a, b, c, d, out = (ir.Var(scope, name, ir.unknown_loc) for name in ("a", "b", "c", "d", "out"))
    call = ir.Expr.call(a, [b, (c,)], [("k", d)], ir.unknown_loc)
    stmt = ir.Assign(call, out, ir.unknown_loc)
    assert _names([stmt]) == [["a", "b", "c", "d", "out"]]  # the call (function, arguments), then the target
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", numba_passes._NUMBA_REC_LIST_VARS)  # type: ignore[attr-defined]
    assert _names([stmt]) == [["a", "b", "c", "d", "out"]]


def _typed(kernel: object, argtypes: tuple[types.Type, ...]) -> tuple[list[str], list[str]]:
    """The type of every variable and the signature of every call numba infers for ``kernel`` (its Python
    function, typed afresh) given ``argtypes``, in the IR's order."""
    function_ir = run_frontend(kernel.py_func)  # type: ignore[attr-defined]
    cpu_target.typing_context.refresh()  # (what a dispatcher does before it types: the registries loaded)
    cpu_target.target_context.refresh()
    result = type_inference_stage(cpu_target.typing_context, cpu_target.target_context, function_ir, argtypes, None)
    calls = sorted(f"{expr}: {sig}" for expr, sig in result.calltypes.items())
    return sorted(f"{name}: {ty}" for name, ty in result.typemap.items()), calls


_U8 = types.Array(types.uint8, 2, "C")
_REAL_KERNELS = [
    (shader_kernel.run_segment, SEGMENT_ARGTYPES),
    (
        tev_kernels._stage,
        (
            *(_U8,) * 6,
            types.UniTuple(types.int64, 9),
            types.UniTuple(types.bool_, 3),
            types.int64,
            types.int64,
            types.UniTuple(types.int64, 3),
            types.UniTuple(types.bool_, 3),
            types.int64,
            types.int64,
            types.bool_,
            _U8,
        ),
    ),
]


@pytest.mark.parametrize(("kernel", "argtypes"), _REAL_KERNELS, ids=["run_segment", "tev_stage"])
def test_call_types_are_numba_s_on_real_kernels(
    monkeypatch: pytest.MonkeyPatch, kernel: object, argtypes: tuple
) -> None:
    """Typed with the kept signatures (twice: the second time every call is found again) and with numba's own
    ``get_call_type``, a real kernel gets the same type for every variable and the same signature for every call."""
    ours, again = _typed(kernel, argtypes), _typed(kernel, argtypes)
    monkeypatch.setattr(functions.BaseFunction, "get_call_type", numba_passes._NUMBA_GET_CALL_TYPE)
    assert ours == again == _typed(kernel, argtypes) and len(ours[1]) > 50


def test_a_call_that_fails_to_type_is_not_kept_and_fails_again() -> None:
    """numba's error, each time: a failed call leaves nothing behind."""
    context = cpu_target.typing_context
    add = context.resolve_value_type(operator.add)
    before = len(numba_passes._CALL_TYPES)
    for _ in range(2):
        with pytest.raises(errors.TypingError):
            add.get_call_type(context, (types.unicode_type, types.int64), {})
    assert len(numba_passes._CALL_TYPES) == before
    assert add.get_call_type(context, (types.int64, types.int64), {}).return_type == types.int64


def _compiled_run_segment() -> tuple[list[str], int]:
    """``run_segment`` (which inlines ``_source``) compiled afresh: the sorted
    types of its variables and its count of IR statements."""
    fresh = numba.njit(error_model="numpy", _nrt=False)(shader_kernel.run_segment.py_func)
    fresh.compile(_REAL_KERNELS[0][1])
    result = fresh.overloads[_REAL_KERNELS[0][1]]
    statements = sum(len(block.body) for block in result.type_annotation.blocks.values())
    return sorted(str(ty) for ty in result.type_annotation.typemap.values()), statements


def test_inlined_kernels_splice_the_same_code_as_numba_s_inliner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spliced without numba's two copies of the callee, an ``inline="always"`` callee leaves the same variables
    and statements in its caller as numba's own ``inline_function`` does, and ``inline_ir``'s module keeps its
    ``copy``."""
    ours = _compiled_run_segment()
    assert inline_closurecall.copy is copy
    monkeypatch.setattr(inline_closurecall.InlineWorker, "inline_function", numba_passes._NUMBA_INLINE_FUNCTION)
    assert ours == _compiled_run_segment() and ours[1] > 500


def _with_loc(context, builder, sig, args, loc=None):  # pragma: no cover - a shape only
    return None


def _without_loc(context, builder, sig, args):  # pragma: no cover - a shape only
    return None


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]

    def __call__(self, context: object, builder: object, sig: object, args: object, loc: object = None) -> None:
        return None


def test_has_loc_is_numba_s_and_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether an implementation takes ``loc``: numba's answer, found once per implementation (an implementation
    that cannot be a key is asked each time)."""
    implementations = (_with_loc, _without_loc, _Unhashable())
    assert [numba_passes._has_loc(fn) for fn in implementations] == [True, False, True]
    assert [numba_passes._NUMBA_HAS_LOC(fn) for fn in implementations] == [True, False, True]
    asked: list[object] = []
    monkeypatch.setattr(numba_passes, "_NUMBA_HAS_LOC", lambda fn: asked.append(fn) or False)
    assert [numba_passes._has_loc(fn) for fn in implementations] == [True, False, False]
    assert asked == [implementations[2]]


def test_a_refresh_runs_only_when_a_registry_gained_something(monkeypatch: pytest.MonkeyPatch) -> None:
    target = cpu_target.target_context
    target.refresh()
    runs: list[object] = []
    numba_refresh = numba_passes._NUMBA_TARGET_REFRESH
    monkeypatch.setattr(numba_passes, "_NUMBA_TARGET_REFRESH", lambda self: runs.append(numba_refresh(self)))
    target.refresh()
    assert runs == []  # nothing new: skipped

    def _probe(x):  # pragma: no cover - a key for the registration below, never called
        raise NotImplementedError

    @imputils.builtin_registry.lower(_probe, types.int64)
    def _lower_probe(context, builder, sig, args):  # pragma: no cover - never lowered
        return args[0]

    target.refresh()
    assert len(runs) == 1  # the registry gained one: numba's refresh ran and installed it
    assert target._defns[_probe].find((types.int64,)) is _lower_probe
    target.refresh()
    assert len(runs) == 1


@pytest.mark.parametrize("context", [numba_passes._NUMBA_NEW_ERROR_CONTEXT, numba_passes._ErrorContext])
def test_an_error_context_adds_its_message_as_numba_s_does(context: object) -> None:
    loc = ir.Loc("user_kernel.py", 7)
    errors.loc_info.clear()
    with pytest.raises(errors.TypingError) as raised, context("typing of {what} at {loc}", what="x", loc=loc):
        raise errors.TypingError("no such thing")
    assert "typing of x at user_kernel.py (7)" in str(raised.value)
    assert errors.loc_info == {"what": "x", "loc": loc}
    with pytest.raises(KeyError) as other, context("lowering {inst}", inst="y"):
        raise KeyError("k")  # another error passes unchanged
    assert other.value.args == ("k",)
    with context("nothing raised"):
        pass


def test_numba_s_typing_and_lowering_use_the_error_context() -> None:
    from numba.core import lowering, typeinfer

    assert lowering.new_error_context is typeinfer.new_error_context is errors.new_error_context
    assert errors.new_error_context is numba_passes._ErrorContext


def _reassigning(a, n):  # pragma: no cover - compiled
    """Integers, floats and an array view each assigned more than once (stack slots), deleted in a loop."""
    total = 0
    x = 0.0
    v = a[:1]
    for i in range(n):
        total = total + i
        if i % 2:
            v = a[i:]
            x = x + v[0]
        else:
            x = x * 0.5
    return total, x, v.shape[0]


def _optimised(kernel: object, signature: tuple, **options: object) -> tuple[object, str, str]:
    """``compiled_text`` of ``kernel``, with its result on ``_REASSIGNING_ARGS`` (for ``_reassigning``) first."""
    fresh, made, optimised = compiled_text(kernel, signature, **options)
    return (fresh(*_REASSIGNING_ARGS) if kernel is _reassigning else None), made, optimised


_REASSIGNING_ARGS = (np.arange(10.0), 7)


def test_deletions_without_a_count_build_less_ir_for_the_same_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value without a reference count is deleted without a load and a zeroing: less IR, the same result and the
    same optimised code, on a small function (whose array view keeps numba's way), ``run_segment`` and
    ``_compute``."""
    reassigning = (_reassigning, (types.Array(types.float64, 1, "C"), types.int64), {})
    kernels = (reassigning, SEGMENT, COMPUTE)
    ours = [_optimised(kernel, signature, **options) for kernel, signature, options in kernels]
    monkeypatch.setattr(lowering.Lower, "delvar", numba_passes._NUMBA_DELVAR)
    numba_s = [_optimised(kernel, signature, **options) for kernel, signature, options in kernels]
    assert ours[0][0] == numba_s[0][0] == (21, ((0.5 + 3.0) / 2 + 5.0) / 2, 5)  # x: 0, 1, 0.5, 3.5, 1.75, 6.75, 3.375
    for mine, theirs in zip(ours, numba_s, strict=True):
        assert mine[1].count(" load ") < theirs[1].count(" load ") and mine[1].count(" store ") < theirs[1].count(
            " store "
        )
        assert mine[2] == theirs[2]


_LINKED_LIST = """
import numba
from numba import int64, njit, optional
from numba.core.runtime import rtsys
from numba.core.types import deferred_type
from numba.experimental import jitclass
import picaemu.numba_link  # installs picaemu's helpers, as every kernel module does

node_type = deferred_type()

@jitclass([("data", int64), ("next", optional(node_type))])
class Node:
    def __init__(self, data, next):
        self.data = data
        self.next = next

node_type.define(Node.class_type.instance_type)

@njit
def build(n):
    head = Node(0, None)
    for i in range(1, n):
        head = Node(i, head)
    total = 0
    cur = head
    while cur is not None:
        total += cur.data
        cur = cur.next
    return total

build(100)
before = rtsys.get_allocation_stats()
assert build(100) == 4950
after = rtsys.get_allocation_stats()
print(after.alloc - before.alloc, after.free - before.free)
"""


def test_a_deferred_type_is_released_as_numba_releases_it(tmp_path: Path) -> None:
    """A recursive jitclass's ``next`` (an optional deferred type, whose data model says it holds no counted
    reference while numba's ``decref`` finds one) keeps numba's deletion: each node built is freed."""
    env = dict(os.environ, NUMBA_NRT_STATS="1", NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _LINKED_LIST], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["100", "100"]
