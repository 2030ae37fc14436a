"""fp8 values, which the SPIR-V stage does not convert yet.

fp8 buffers hold bytes (docs/memref-stage.md); the OpenCL C emitter decodes and encodes
them with helper functions (emitter_opencl/fp8.py). SPIR-V 1.0 has no 8-bit float type,
and upstream's conversions would turn `arith.extf`/`arith.truncf` of fp8 into an
`spirv.FConvert` of an i8, which its verifier rejects with no source line. So a kernel
with an fp8 value is an error naming the op before any of that; `auto` mode then builds
it from OpenCL C.
"""
from __future__ import annotations

from mlir import ir

from .flatten import error_at

CONVERSIONS = ("arith.extf", "arith.truncf", "arith.bitcast")


def is_fp8(t: ir.Type) -> bool:
    """An 8-bit float type, or a shaped type (memref, vector, tensor) of them."""
    if isinstance(t, ir.ShapedType):
        t = t.element_type
    return isinstance(t, ir.FloatType) and t.width == 8


def check_no_fp8(module: ir.Module) -> None:
    """Raises SpirvStageError at the first fp8 conversion, or else at the first other op
    with an fp8 operand or result (a load or store of an fp8 buffer)."""
    touching: list = []

    def collect(op):
        # Raising inside the walk would reach the caller as a RuntimeError.
        if any(is_fp8(v.type) for v in list(op.operands) + list(op.results)):
            touching.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    conversions = [op for op in touching if op.operation.name in CONVERSIONS]
    first = (conversions or touching or [None])[0]
    if first is not None:
        raise error_at(first, f"{_what(first)}, and fp8 has no SPIR-V conversion "
                              "(the OpenCL C emitter's helpers convert it)")


def _what(op) -> str:
    if op.operation.name in CONVERSIONS:
        return f"converts {op.operands[0].type} to {op.results[0].type}"
    fp8 = next(v.type for v in list(op.operands) + list(op.results) if is_fp8(v.type))
    return f"uses a value of type {fp8}"
