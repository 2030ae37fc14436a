"""The memref stage's streaming stores (`vector.store {nontemporal = true}`,
memref_stage/streaming_stores.py) as SPIR-V's `Nontemporal` memory operand.

Upstream's vector.store -> spirv.Store pattern keeps the alignment but drops the flag
(its memref.store pattern keeps it). Each vector.store becomes exactly one spirv.Store
of a vector, and scf -> cf keeps the order of the ops it moves into blocks, so the
flags are read off the vector stores before the conversion, in walk order, and put on
the vector spirv.Stores after it, in the same order. Where the two lists do not match
store for store (count and vector type) every store stays plain: the flag is a hint.
The stores keep the element alignment flatten.py gives them (`Aligned 4` for f32):
the consumer's code generator picks non-temporal moves that need no more (x86:
MOVNTI / MOVNTSD pieces of the vector).
"""
from __future__ import annotations

from mlir import ir


def store_flags(module: ir.Module) -> list[tuple[str, bool]]:
    """(vector type, nontemporal) of every vector.store of `module`, in walk order."""
    flags = []

    def visit(op):
        if op.name == "vector.store":
            nontemporal = "nontemporal" in op.attributes and ir.BoolAttr(op.attributes["nontemporal"]).value
            flags.append((str(op.operands[0].type), nontemporal))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return flags


def mark_nontemporal(spirv_module, flags: list[tuple[str, bool]]) -> int:
    """Adds `Nontemporal` to the vector spirv.Stores whose vector.store had the flag;
    returns how many."""
    if not any(nontemporal for _, nontemporal in flags):
        return 0
    stores = []

    def visit(op):
        if op.name == "spirv.Store" and isinstance(op.operands[1].type, ir.VectorType):
            stores.append(op)
        return ir.WalkResult.ADVANCE

    spirv_module.operation.walk(visit)
    if [str(store.operands[1].type) for store in stores] != [vtype for vtype, _ in flags]:
        return 0
    marked = 0
    for store, (_, nontemporal) in zip(stores, flags):
        if nontemporal:
            access = "Aligned|Nontemporal" if "alignment" in store.attributes else "Nontemporal"
            store.attributes["memory_access"] = ir.Attribute.parse(f"#spirv.memory_access<{access}>")
            marked += 1
    return marked
