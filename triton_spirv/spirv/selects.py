"""`arith.select` of vectors on a scalar condition -> on a splat of it.

The memref stage picks whole vectors with one scalar `i1` (elementwise_vectors.py: a
`tl.where` on a row's flag inside a loop along the row), which OpenCL C prints as
`c ? a : b`; the SPIR-V dialect conversion legalizes only selects whose condition has
the shape of the result. Splatting the condition first gives it one.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import vector


def splat_select_conditions(func) -> None:
    """Gives every select of vectors on a scalar condition in `func` a vector one."""
    ops: list = []
    func.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name != "arith.select" or not isinstance(op.results[0].type, ir.VectorType):
            continue
        condition = op.operands[0]
        if isinstance(condition.type, ir.VectorType):
            continue
        shape = ir.VectorType(op.results[0].type).shape
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = vector.BroadcastOp(
                ir.VectorType.get(shape, condition.type), condition).result
