"""The linalg ops the converter builds, without `mlir.dialects.linalg`.

That module runs the OpDSL definition of every named op when imported (PyYAML, the
complex and math dialects' modules: most of what MLIR's Python packages cost a cold
compile, docs/startup.md). The converter needs only the generated op classes and three
of its builders, written here as upstream writes them: the generated class, then the
op's body from its C++ definition (`fill_builtin_region`). Modules import this one as
`linalg`: `linalg.fill(value, outs=[init])` and the others take upstream's arguments and
give upstream's results, and tests/test_startup.py compares their IR with upstream's.
"""
from __future__ import annotations

from typing import Sequence

from mlir import ir
from mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region
from mlir.dialects._linalg_ops_gen import ContractOp, FillOp, GenericOp, IndexOp, TransposeOp, YieldOp

__all__ = ["GenericOp", "IndexOp", "YieldOp", "contract", "fill", "transpose"]


def _result_types(init: ir.Value) -> list:
    """On tensors a structured op returns its new init; on memrefs it returns nothing."""
    return [init.type] if isinstance(init.type, ir.RankedTensorType) else []


def fill(value: ir.Value, *, outs: Sequence[ir.Value]):
    """`linalg.fill ins(value) outs(init)`, like the OpDSL's `linalg.fill`."""
    (init,) = outs
    op = FillOp(_result_types(init), [value], [init])
    fill_builtin_region(op.operation)
    # As the OpDSL gives it: the result on tensors, the (empty) results on memrefs.
    return op.result if op.results else op.results


def contract(*ins: ir.Value, outs: Sequence[ir.Value], indexing_maps: Sequence[ir.AffineMap]):
    """`linalg.contract` of `ins` into `outs[0]`, like upstream's `linalg.contract`: the
    result on tensors, the op on memrefs."""
    (init,) = outs
    op = ContractOp(result_tensors=_result_types(init), inputs=list(ins), outputs=[init],
                    indexing_maps=indexing_maps)
    fill_builtin_region(op.operation)
    return op.result if op.results else op


def transpose(input: ir.Value, *, outs: Sequence[ir.Value], permutation: Sequence[int]):  # noqa: A002
    """`linalg.transpose`; the op, as upstream's `linalg.transpose` returns it."""
    (init,) = outs
    op = TransposeOp(result=_result_types(init), input=input, init=init, permutation=permutation)
    fill_builtin_region(op.operation)
    return op
