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
"""

from __future__ import annotations

from typing import Any

from numba.core import ir, targetconfig

_DEFAULTS: dict[type, dict[str, Any]] = {}  # a TargetConfig class -> {option name: its default}, in option order
_NUMBA_VALUES = targetconfig.TargetConfig.values  # numba's own (tests compare the two)
_NUMBA_REC_LIST_VARS = ir.Inst._rec_list_vars


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


def install() -> None:
    """Replace numba's helpers for the whole process (idempotent)."""
    targetconfig.TargetConfig.values = _values
    ir.Inst._rec_list_vars = _rec_list_vars


install()
