"""numba's compiler passes, the same answers at less Python cost: two of its helpers that README line 1's first
render called by the hundred thousand (bench/RESULTS.md, "cp31: README line 1's compile (sixteenth session)").

- ``TargetConfig.values``: numba's typing looks an overload's implementation up by a key that holds the compile's
  flags (``Flags``: ~50 options) at every call it types (``templates._OverloadMethodTemplate._get_impl``); the
  dictionary compares and hashes the flags through ``values()``, which read every option through its property
  each time (140 k calls, ~2 s). Here: the class's defaults (built once per class) updated with the options set,
  the same dictionary in the same order.
- ``ir.Inst._rec_list_vars`` (the variables an IR instruction reads or writes, which numba's use-def, liveness and
  SSA analyses ask of every statement after most passes: 2 M calls): the same walk of an instruction's members
  (variables, nested instructions, lists, tuples and dictionaries of them, in order), calling itself only for
  containers instead of once for every member.
- ``analysis.compute_use_defs`` (the variables each block uses and defines, asked after most passes: ~1,000 times in
  README line 1): numba walks an assignment's right side twice, once for the names it defines and once, with the
  target, for the names it uses; here once.
- numba's timer of LLVM (``metadata["timers"]["llvm_lock"]``): numba has llvmlite call two Python functions around
  every LLVM call, each broadcasting an event to numba's timers (45,000 LLVM calls in README line 1: ~0.4 s). picaemu
  reads no such timer; the callbacks are taken off llvmlite's lock, and the timer reads 0.
- ``BaseFunction.get_call_type`` (the signature of a call to a typed function: an operator, a builtin, a numpy
  function, an ``@overload``): numba tries the function's templates in order at every call site it types, and
  README line 1 typed the same calls over and over (9,100 of 10,200 calls had been typed before: ~2.4 s). Here a
  call's signature is kept by the function, the typing context, its target and the argument types, and found again
  for the same call. numba's types are interned (equal types are one object), so identities are the key; the
  entry holds the objects, so an identity is never reused while it is kept. A call that fails to type is not kept
  (it raises again, with numba's message). numba's templates answer from these alone: the ``@overload`` ones keep
  their compiled implementations by the same arguments, and the implementation key numba records for the
  signature (``_impl_keys``) was recorded by the first call.
- ``InlineWorker.inline_function`` (a call to an ``inline="always"`` kernel, spliced into its caller): numba builds
  the callee's IR afresh for the site, then ``inline_ir`` deep-copies its blocks twice, once because the splice
  mutates them and once to return an unmutated copy, which numba's one caller of ``inline_function`` (the
  ``InlineInlinables`` pass) throws away. A fresh IR that nothing else holds needs neither copy (~1.4 s of README
  line 1, 27 sites): here ``inline_ir`` runs with its module's ``copy.deepcopy`` answering the block itself.
  ``inline_ir`` called directly (numba's overload inlining, which reuses a callee IR) copies as before.
- The typing and target contexts' ``refresh`` (install the registrations their registries gained since the last
  one): numba refreshes the target context whenever a lookup of an implementation misses (``get_function``; 2,200
  times in README line 1), and each refresh imports some thirty modules again and asks each of about twenty
  registries for its new entries (~0.5 s). Registries only grow, and a refresh installs every one it names once,
  so here a refresh is skipped while the registries it installed have gained nothing since it last ran.
- ``analysis.compute_live_map`` (the variables alive at each block's entry, asked with the dead-variable maps after
  most passes: ~900 times in README line 1): numba iterates sets of names to a fixed point, first the definitions
  reaching each block, then the uses pushed back to them; the sets of a large kernel hold thousands of names, and
  each pass copies them whole (~0.5 s). Here the same two fixed points over a block's names as the bits of an int.
- ``errors.new_error_context`` (numba's typing and lowering wrap each statement in it: 114,000 times in README
  line 1, a generator-based context manager each, ~0.4 s): the same context as a small class, which records the
  location and adds the message to a numba error passing through, as numba's does.
- ``Lower.delvar`` (numba deletes a variable after its last use; one assigned more than once lives in a stack
  slot): numba loads the slot's value, to release it, and zeroes the slot, against a second release. A value of a
  type without a reference count (an integer, a float, an array of a kernel compiled without numba's runtime) has
  nothing to release: the load feeds nothing and nothing reads the zero before the next store, but both were LLVM IR
  to build, print, parse and optimise away (4 % of README line 1's IR). Here such a value (every value of a function
  compiled without the runtime; a number or a boolean in one with it) is deleted without them; any other value goes
  through numba's own code. The optimised code is the same for ``run_segment`` and ``_compute`` (a test compares
  them, the values' names numbered afresh), ``fragment_side``, ``_scan`` and the draw loop's ``_draw``; in the
  command loop, ``vertex_side`` and ``_front_end`` LLVM orders some blocks and phis otherwise and keeps a few
  instructions more or fewer. (numba's ``storevar`` also loads the old value before each store, for the same
  release; dropping that load as well grew LLVM's optimised ``run_segment`` by 40 %, for 1 % less IR, so it stays.)
- ``base._has_loc`` (whether a lowering implementation takes a ``loc`` argument, asked each time the target
  context hands one out: 4,000 times in README line 1, an ``inspect.signature`` each, ~0.1 s): the answer kept by
  the implementation, which stays the same function.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

from llvmlite.binding import ffi
from numba.core import (
    analysis,
    base,
    errors,
    inline_closurecall,
    ir,
    ir_utils,
    lowering,
    target_extension,
    targetconfig,
    typeinfer,
    types,
)
from numba.core.types import functions
from numba.core.typing import context as typing_context

_DEFAULTS: dict[type, dict[str, Any]] = {}  # a TargetConfig class -> {option name: its default}, in option order
_NUMBA_VALUES = targetconfig.TargetConfig.values  # numba's own (tests compare the two)
_NUMBA_REC_LIST_VARS = ir.Inst._rec_list_vars
_NUMBA_COMPUTE_USE_DEFS = analysis.compute_use_defs
_NUMBA_GET_CALL_TYPE = functions.BaseFunction.get_call_type
_REGISTRY_LISTS: dict[Any, list[list]] = {}  # a typing or target registry -> its lists of registrations
_ERRORS: Any = errors  # (numba's stubs do not declare the members read and replaced here)
_NUMBA_NEW_ERROR_CONTEXT = _ERRORS.new_error_context
_NUMBA_COMPUTE_LIVE_MAP = analysis.compute_live_map
_NUMBA_TARGET_REFRESH = base.BaseContext.refresh
_NUMBA_TYPING_REFRESH = typing_context.BaseContext.refresh
_NUMBA_DELVAR = lowering.Lower.delvar
_NUMBA_HAS_LOC = base._has_loc
_HAS_LOC: dict[Any, bool] = {}  # a lowering implementation -> whether it takes ``loc``
# (function, context, target, argument ids, (keyword, id) pairs) -> (the signature, the objects the ids name)
_CALL_TYPES: dict[tuple, tuple[Any, tuple[Any, ...]]] = {}


def _values(self: targetconfig.TargetConfig) -> dict[str, Any]:
    """Every option of ``self`` by name: its value if set, else its default (numba's ``values``)."""
    cls = type(self)
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = _DEFAULTS[cls] = {name: option.default for name, option in cls.options.items()}
    set_values = self._values
    if not set_values.keys() <= defaults.keys():  # copied from a config of other options: numba's walk drops them
        return _NUMBA_VALUES(self)
    return {**defaults, **set_values}


def _rec_list_vars(self: ir.Inst, value: Any) -> list[ir.Var]:
    """The variables in ``value`` (a member of instruction ``self``), in numba's order (``Inst._rec_list_vars``)."""
    if isinstance(value, dict):
        members: Any = value.values()
    elif isinstance(value, (list, tuple)):
        members = value
    elif isinstance(value, ir.Var):
        return [value]
    elif isinstance(value, ir.Inst):
        return value.list_vars()
    else:
        return []
    found: list[ir.Var] = []
    for member in members:
        if isinstance(member, ir.Var):
            found.append(member)
        elif isinstance(member, ir.Inst):
            found.extend(member.list_vars())
        elif isinstance(member, (list, tuple, dict)):
            found.extend(_rec_list_vars(self, member))
    return found


def _compute_use_defs(blocks: dict[int, ir.Block]) -> Any:
    """For each block, the names its statements use before defining them and the names they define (numba's
    ``compute_use_defs``: an assignment whose target its right side reads defines nothing)."""
    usemap: dict[int, set[str]] = {}
    defmap: dict[int, set[str]] = {}
    extensions = analysis.ir_extension_usedefs
    for label, block in blocks.items():
        used: set[str] = set()
        defined: set[str] = set()
        usemap[label], defmap[label] = used, defined
        for stmt in block.body:
            extension = extensions.get(type(stmt))
            if extension is not None:
                extension(stmt, used, defined)
                continue
            if not isinstance(stmt, ir.Assign):
                used.update(var.name for var in stmt.list_vars() if var.name not in defined)
                continue
            value, target = stmt.value, stmt.target.name
            if isinstance(value, ir.Inst):
                read = [var.name for var in value.list_vars()]
            elif isinstance(value, ir.Var):
                read = [value.name]
            elif isinstance(value, (ir.Arg, ir.Const, ir.Global, ir.FreeVar)):
                read = []
            else:
                raise AssertionError("unreachable", type(value))
            if target not in read:
                defined.add(target)  # (so its target, the last of its variables, is never a use)
            used.update(name for name in read if name not in defined)
    return analysis._use_defs_result(usemap=usemap, defmap=defmap)


def _get_call_type(self: functions.BaseFunction, context: Any, args: tuple, kws: dict[str, Any]) -> Any:
    """The signature of ``self`` called with ``args`` and ``kws`` (numba's ``get_call_type``), typed once."""
    target = target_extension.get_local_target(context)
    named = tuple(kws.items())
    key = (id(self), id(context), id(target), *map(id, args), *((name, id(v)) for name, v in named))
    found = _CALL_TYPES.get(key)
    if found is not None:
        return found[0]
    signature = _NUMBA_GET_CALL_TYPE(self, context, args, kws)
    if signature is not None:
        _CALL_TYPES[key] = (signature, (self, context, target, named, tuple(args)))
    return signature


class _Uncopied:
    """``inline_closurecall``'s ``copy`` module while ``_inline_function`` splices a fresh IR (module docstring)."""

    @staticmethod
    def deepcopy(value: Any) -> Any:
        return value


_NUMBA_INLINE_FUNCTION = inline_closurecall.InlineWorker.inline_function


def _inline_function(self: Any, caller_ir: Any, block: Any, i: int, function: Any, arg_typs: Any = None) -> Any:
    """numba's ``inline_function`` without copying the callee's fresh IR (module docstring); the first of its
    results, numba's unmutated copy of the callee IR, is the spliced one here."""
    callee_ir = self.run_untyped_passes(function)
    inline_closurecall.copy = _Uncopied
    try:
        return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs)
    finally:
        inline_closurecall.copy = copy


def _registrations(context: Any) -> int:
    """How many registrations the registries installed in a typing or target ``context`` hold (a registry's lists
    are made with it and only ever appended to)."""
    count = 0
    for registry in context._registries:
        lists = _REGISTRY_LISTS.get(registry)
        if lists is None:
            lists = _REGISTRY_LISTS[registry] = [v for v in vars(registry).values() if isinstance(v, list)]
        for registered in lists:
            count += len(registered)
    return count


def _refreshed(context: Any, numba_refresh: Any) -> bool:
    """Run ``numba_refresh`` on a typing or target ``context`` unless the registries it installed gained nothing
    since its last run (module docstring); whether it ran."""
    if getattr(context, "_picaemu_refreshed", None) == _registrations(context):
        return False
    numba_refresh(context)
    context._picaemu_refreshed = _registrations(context)
    return True


def _refresh_typing(self: Any) -> None:
    """numba's typing ``refresh``, when something is new (``_refreshed``)."""
    _refreshed(self, _NUMBA_TYPING_REFRESH)


def _refresh_target(self: Any) -> None:
    """numba's target ``refresh``, when something is new (``_refreshed``); else its typing context's alone."""
    if not _refreshed(self, _NUMBA_TARGET_REFRESH):
        self.typing_context.refresh()


def _compute_live_map(cfg: Any, blocks: Any, var_use_map: Any, var_def_map: Any) -> dict[int, set[str]]:
    """numba's ``compute_live_map`` (module docstring): for each block of ``blocks``, the names alive at its entry
    (the least fixed points of the same two data flows, which any order of the same updates reaches)."""
    bits: dict[str, int] = {}

    def as_bits(names: Any) -> int:
        value = 0
        for name in names:
            value |= 1 << bits.setdefault(name, len(bits))
        return value

    uses = {label: as_bits(names) for label, names in var_use_map.items()}
    defs = {label: as_bits(names) for label, names in var_def_map.items()}
    order = cfg.topo_order()
    reach: dict[int, int] = defaultdict(int)  # the names defined or used on some path to a block's entry
    changed = True
    while changed:
        changed = False
        for label in order:
            here = reach[label] | defs[label] | uses[label]
            changed |= here != reach[label]
            reach[label] = here
            for successor, _ in cfg.successors(label):
                merged = reach[successor] | here
                changed |= merged != reach[successor]
                reach[successor] = merged
    live = {label: uses[label] for label in blocks}
    changed = True
    while changed:
        changed = False
        for label in reversed(order):
            for predecessor, _ in cfg.predecessors(label):
                merged = live[predecessor] | (live[label] & reach[predecessor] & ~defs[predecessor])
                changed |= merged != live[predecessor]
                live[predecessor] = merged
    names = list(bits)
    return {label: _names(value, names) for label, value in live.items()}


def _names(value: int, names: list[str]) -> set[str]:
    """The names whose bits ``value`` sets."""
    found = set()
    while value:
        low = value & -value
        found.add(names[low.bit_length() - 1])
        value ^= low
    return found


class _ErrorContext:
    """numba's ``new_error_context(fmt_, *args, **kwargs)`` (module docstring): a numba error raised inside gets the
    message ``fmt_`` formatted with the arguments added to its context; a location outside numba is recorded."""

    __slots__ = ("args", "fmt", "kwargs")

    def __init__(self, fmt_: str, *args: Any, **kwargs: Any) -> None:
        loc = kwargs.get("loc")
        if loc is not None and not loc.filename.startswith(_ERRORS._numba_path):
            _ERRORS.loc_info.update(kwargs)
        self.fmt, self.args, self.kwargs = fmt_, args, kwargs

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if kind is not None and issubclass(kind, errors.NumbaError):
            error.add_context(_ERRORS._format_msg(self.fmt, self.args, self.kwargs))


def _uncounted(lower: Any, fetype: Any) -> bool:
    """Whether a value of ``fetype`` surely holds no reference numba's runtime counts, in ``lower``'s function: a
    function compiled without the runtime, or a number or a boolean. (An allowlist: asking the type's data model
    ``contains_nrt_meminfo`` answers False for a deferred type, a recursive jitclass's ``next``, whose release
    numba's ``decref`` does find.)"""
    return not lower.context.enable_nrt or isinstance(fetype, (types.Number, types.Boolean))


def _delvar(self: Any, name: str) -> None:
    """numba's ``delvar`` without the load and the zeroing of the slot where there is nothing to release (module
    docstring)."""
    fetype = self.typeof(name)
    if not _uncounted(self, fetype):
        _NUMBA_DELVAR(self, name)
        return
    if name not in self._blk_local_varmap and not self._disable_sroa_like_opt:
        self._singly_assigned_vars.discard(name)
    self._alloca_var(name, fetype)


def _has_loc(fn: Any) -> bool:
    """numba's ``_has_loc``: whether ``fn`` takes a ``loc`` argument, kept by ``fn`` (module docstring)."""
    try:
        return _HAS_LOC[fn]
    except KeyError:
        found = _HAS_LOC[fn] = _NUMBA_HAS_LOC(fn)
        return found
    except TypeError:  # (an implementation that cannot be a key)
        return _NUMBA_HAS_LOC(fn)


def _untimed_llvm() -> None:
    """Take numba's LLVM timer callbacks off llvmlite's lock (module docstring)."""
    for callbacks in list(ffi.lib._lock._cblist):
        if callbacks[0].__module__ == "numba.core.base":
            ffi.unregister_lock_callback(*callbacks)


def install() -> None:
    """Replace numba's helpers for the whole process (idempotent)."""
    targetconfig.TargetConfig.values = _values
    ir.Inst._rec_list_vars = _rec_list_vars
    analysis.compute_use_defs = _compute_use_defs
    analysis.compute_live_map = ir_utils.compute_live_map = _compute_live_map  # (ir_utils imported it by name)
    _untimed_llvm()
    functions.BaseFunction.get_call_type = _get_call_type  # type: ignore[method-assign,assignment]
    inline_closurecall.InlineWorker.inline_function = _inline_function
    modules: tuple[Any, ...] = (errors, lowering, typeinfer)  # (the last two imported numba's by name)
    for module in modules:
        module.new_error_context = _ErrorContext
    base.BaseContext.refresh = _refresh_target
    typing_context.BaseContext.refresh = _refresh_typing
    lowering.Lower.delvar = _delvar
    base._has_loc = _has_loc


install()
