"""One member of a value ``numba_link.Stored`` keeps, loaded alone: ``load_item(like, address, index)``.

``numba_link.load`` brings a whole stored tuple into registers: numba then copies each of its arrays field by field
(seven fields, the shape and the strides) wherever the tuple goes, and reference-counts every array at each exit
of the function holding it. The compiled loop's ``_draw`` loaded both plans of a draw whole (~90 arrays) to touch
a few of them: 22.7 k lines of LLVM IR, 16 k of them ``extractvalue`` (bench/RESULTS.md, "ir30: ..., fifteenth
session"). Here the member's address is computed (a ``getelementptr`` into the stored native form) and only that
member is loaded; like ``load``'s, its arrays own nothing (the ``Stored`` object keeps their memory alive).
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic


@intrinsic(prefer_literal=True)
def load_item(typingctx: Any, like: Any, address: Any, index: Any) -> Any:
    """Member ``index`` (a constant) of the tuple ``numba_link.Stored`` keeps at ``address`` (int64), of type
    ``like`` (a ``types.TypeRef`` of the stored tuple's type)."""
    if not isinstance(like, types.TypeRef) or not isinstance(like.instance_type, types.BaseTuple):
        raise TypingError("load_item: the first argument must be the type of a stored tuple (types.TypeRef)")
    if not isinstance(index, types.IntegerLiteral):
        raise TypingError("load_item: the member's index must be a constant")
    kept, at = like.instance_type, index.literal_value
    if not 0 <= at < len(kept.types):
        raise TypingError(f"load_item: {kept} has no member {at}")
    member = kept.types[at]

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        stored = context.data_model_manager[kept].get_data_type().as_pointer()
        zero, which = context.get_constant(types.int32, 0), context.get_constant(types.int32, at)
        where = builder.gep(builder.inttoptr(llargs[1], stored), [zero, which])
        return context.data_model_manager[member].from_data(builder, builder.load(where))

    return member(like, address, index), codegen
