"""What numba makes of a kernel, as text two compiles can compare, and the argument types of the shader kernels
such tests compile (tests of picaemu.numba_passes and picaemu.numba_lowering)."""

from __future__ import annotations

import re
from typing import Any

import numba
import pytest
from llvmlite import binding as llvm
from numba import types

from picaemu.shader import kernel as shader_kernel

_F32 = types.Array(types.float32, 3, "C")
_LANES = types.Array(types.float32, 2, "C")  # (4, M): an operand, a destination
# shader.kernel.run_segment's argument types as the command loop passes them
SEGMENT_ARGTYPES = (
    types.Array(types.int32, 2, "C"),
    _F32,
    _F32,
    types.Array(types.float32, 2, "C"),
    types.Array(types.int32, 2, "C"),
    types.Array(types.int32, 1, "C"),
    types.Array(types.bool_, 2, "C"),
    types.Array(types.int64, 1, "C"),
    types.bool_,
    _F32,
    types.Array(types.float32, 2, "C"),
    _F32,
)
SEGMENT = (shader_kernel.run_segment, SEGMENT_ARGTYPES, {"error_model": "numpy", "_nrt": False})
COMPUTE = (
    shader_kernel._compute,
    (types.int32, types.Array(types.int32, 1, "C"), _LANES, _LANES, _LANES, _LANES),
    {"error_model": "numpy"},
)


def compiled_text(kernel: Any, signature: tuple, **options: Any) -> tuple[Any, str, str]:
    """``kernel``'s Python function compiled afresh for ``signature``: the dispatcher, the IR numba's lowering
    produced, and the optimised IR with its values and blocks named afresh in order of definition, without comments
    and functions' unique ids (which differ between two compiles), nor the lengths of texts that hold them."""
    made: list[str] = []
    library_class = numba.core.codegen.JITCPUCodegen._library_class
    add_ir_module = library_class.add_ir_module

    def keep(self: object, module: object) -> None:
        made.append(str(module))
        add_ir_module(self, module)

    fresh = numba.njit(**options)(kernel.py_func if hasattr(kernel, "py_func") else kernel)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(library_class, "add_ir_module", keep)
        fresh.compile(signature)
    module = llvm.parse_assembly(fresh.inspect_llvm(signature))
    for function in module.functions:  # every value and block renamed in the order it is defined
        count = 0
        for argument in function.arguments:
            argument.name, count = f"v{count}", count + 1
        for number, block in enumerate(function.blocks):
            block.name = f"b{number}"
            for instruction in block.instructions:
                if str(instruction.type) != "void":
                    instruction.name, count = f"v{count}", count + 1
    optimised = re.sub(r"B\d+v\d+B\w+|\s*;.*", "", str(module))
    # a text holding a function's unique id (numba's "missing Environment: <its environment's name>") has the length
    # of that id's digits: one more once numba has compiled ten times as many functions
    return fresh, "\n".join(made), re.sub(r"\[\d+ x i8\](?= c\"missing Environment: )", "[n x i8]", optimised)
