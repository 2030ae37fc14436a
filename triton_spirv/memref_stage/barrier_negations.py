"""Quirk fneg_across_barrier (Intel's CPU OpenCL runtime): float negations as fma in
kernels that hold barriers.

Intel's CPU compiler keeps the result of an LLVM `fneg` that a work-item holds in
private memory across a barrier once for the whole work-group rather than once per
work-item: after the barrier every work-item reads the value of one (the last vector of
work-items its vectorizer ran). PoCL, Oclgrind and Intel's own build with
-cl-opt-disable compute the same OpenCL C right; without the barrier, or with the
result in `__local` memory, Intel's default build does too. LLVM makes an `fneg` of
every exact form of a negation (`-x`, `x * -1.0f`, `-0.0f - x`, the sign bit flipped
through an integer xor), but not of `fma(x, -1, -0)`, which is exact as well:
x * -1 is exact and adding -0 keeps every result, the zeros' signs included
(-x = +0 + -0 = +0; -x = -0 + -0 = -0). Reproducer: tests/test_intel_quirks.py.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from ..ir_helpers import constant_attr
from .work_group_barriers import has_barrier

_NEGATIONS = ("arith.negf", "arith.mulf", "arith.subf")


def negate_by_fma(module: ir.Module) -> None:
    """Every float negation of a function that holds a `gpu.barrier` becomes
    `math.fma(x, -1, -0)`; functions without barriers keep theirs."""
    for func in module.body.operations:
        if has_barrier(func):
            for op in _ops(func, _NEGATIONS):
                negated = _negated_operand(op)
                if negated is not None:
                    _replace_by_fma(op, negated)


def _ops(op, names: tuple[str, ...]):
    """The ops named `names` nested in `op`, in order (a list: callers replace them)."""
    found = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name in names:
                    found.append(inner)
                found.extend(_ops(inner, names))
    return found


def _negated_operand(op) -> ir.Value | None:
    """x where `op` computes -x exactly: negf x, x * -1.0 (either side), -0.0 - x."""
    name = op.operation.name
    operands = list(op.operands)
    if name == "arith.negf":
        return operands[0]
    if name == "arith.mulf":
        for value, other in (operands, operands[::-1]):
            if _constant(other) == -1.0:
                return value
    if name == "arith.subf":
        minuend = _constant(operands[0])
        if minuend is not None and repr(minuend) == "-0.0":
            return operands[1]
    return None


def _constant(value: ir.Value) -> float | None:
    """The float a value is a constant (or a splat) of, else None."""
    attr = constant_attr(value)
    return attr.value if isinstance(attr, ir.FloatAttr) else None


def _replace_by_fma(op, x: ir.Value) -> None:
    with op.location, ir.InsertionPoint(op):
        fma = math.fma(x, _splat(x.type, -1.0), _splat(x.type, -0.0))
    op.result.replace_all_uses_with(fma)
    op.operation.erase()


def _splat(type_: ir.Type, number: float) -> ir.Value:
    if isinstance(type_, ir.ShapedType):
        element = ir.FloatAttr.get(type_.element_type, number)
        return arith.constant(type_, ir.DenseElementsAttr.get_splat(type_, element))
    return arith.constant(type_, ir.FloatAttr.get(type_, number))
