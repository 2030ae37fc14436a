"""Quirk abs_of_int_min_poison (PoCL 3.1): integer absolute values in wrapping
arithmetic.

OpenCL C's `abs` of the most negative integer is defined (the unsigned 2^(bits-1),
INT_MIN again as a signed value), but PoCL's optimizer takes it as undefined, as
LLVM's `llvm.abs` with `int_min_is_poison` does: `int v = abs(x); v > 0` computes
v == INT_MIN and yet folds the comparison to true for it, so a mask `tl.abs(x) > 0`
let a store through where x had wrapped to INT_MIN (fuzzer seed 44808: a cumprod).
PoCL built with -cl-opt-disable, Intel's runtime and Oclgrind compute it right, and so
does PoCL on `max(x, 0 - x)`, whose subtraction the emitter prints in unsigned
(wrapping) arithmetic (ir_helpers.wrapping_abs). Reproducer: tests/test_pocl_int_min_abs.py.
"""
from __future__ import annotations

from mlir import ir
from ..ir_helpers import ops_named, wrapping_abs


def wrap_integer_abs(module: ir.Module) -> None:
    """Every `math.absi` of `module` becomes `max(x, 0 - x)`, in place."""
    for op in ops_named(module.operation, ("math.absi",)):
        with ir.InsertionPoint(op), op.location:
            value = wrapping_abs(op.operands[0])
        op.result.replace_all_uses_with(value)
        op.erase()
