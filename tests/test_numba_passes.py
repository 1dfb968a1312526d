"""picaemu.numba_passes: numba's helpers replaced by quicker ones give numba's own answers (its originals, kept by
the module, are the reference)."""

from __future__ import annotations

from numba.core import ir, targetconfig
from numba.core.compiler import Flags, run_frontend

from picaemu import numba_link, numba_passes
from picaemu.command import kernel as command_kernel
from picaemu.fused import loop
from picaemu.shader import kernel as shader_kernel


def test_installed_on_numba_link_s_import() -> None:
    assert numba_link.LINKS is not None  # (imported: it installs the helpers)
    assert targetconfig.TargetConfig.values is numba_passes._values
    assert ir.Inst._rec_list_vars is numba_passes._rec_list_vars


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


def test_list_vars_walk_nested_containers_in_order(monkeypatch: object) -> None:
    scope = ir.Scope(None, ir.unknown_loc)
    a, b, c, d, out = (ir.Var(scope, name, ir.unknown_loc) for name in ("a", "b", "c", "d", "out"))
    call = ir.Expr.call(a, [b, (c,)], [("k", d)], ir.unknown_loc)
    stmt = ir.Assign(call, out, ir.unknown_loc)
    assert _names([stmt]) == [["a", "b", "c", "d", "out"]]  # the call (function, arguments), then the target
    monkeypatch.setattr(ir.Inst, "_rec_list_vars", numba_passes._NUMBA_REC_LIST_VARS)  # type: ignore[attr-defined]
    assert _names([stmt]) == [["a", "b", "c", "d", "out"]]
