"""Calls the SPIR-V stage cannot express.

The memref stage calls private declarations for libdevice functions that are one
OpenCL C builtin or one helper of the emitter (`func.call` with `opencl.call`,
triton_spirv/ttir_to_linalg/opencl_calls.py). Those that are one OpenCL.std
instruction on operands of one type (cospi, lgamma, hypot, ...) are opencl_std.py's
before this check; the others (ldexp and ilogb mix types, the rounding-mode
conversions and the helpers are no single instruction) have a declaration without a
body to convert, so such a kernel is an error naming the function and the user's
line; `auto` mode then builds it from OpenCL C.
"""
from __future__ import annotations

from mlir import ir

from .flatten import error_at


def check_no_external_calls(module: ir.Module) -> None:
    """Raises SpirvStageError at the first `func.call` of a function without a body."""
    defined = {_symbol(op) for op in module.body.operations
               if op.operation.name == "func.func" and len(op.regions[0].blocks)}
    calls: list = []
    for op in module.body.operations:
        if op.operation.name == "func.func":
            op.operation.walk(lambda inner: _collect_call(inner, calls), ir.WalkOrder.PRE_ORDER)
    for call in calls:
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if callee not in defined:
            raise error_at(call, f"calls {_what(call, callee)}, which the SPIR-V stage has no lowering for")


def _collect_call(op, calls: list) -> ir.WalkResult:
    # Raising inside the walk would reach the caller as a RuntimeError.
    if op.name == "func.call":
        calls.append(op)
    return ir.WalkResult.ADVANCE


def _what(op, callee: str) -> str:
    if "opencl.call" in op.attributes:
        return f"the OpenCL C function '{ir.StringAttr(op.attributes['opencl.call']).value}'"
    return f"the external function '{callee}'"


def _symbol(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value
