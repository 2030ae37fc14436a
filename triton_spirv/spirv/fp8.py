"""fp8 in the SPIR-V stage: bytes in memory, f32 values in between, bit arithmetic.

SPIR-V 1.0 has no 8-bit float type, and upstream's conversions would turn
`arith.extf`/`arith.truncf` of fp8 into an `spirv.FConvert` of an i8, which its verifier
rejects with no source line. As in the OpenCL C emitter (emitter_opencl/fp8.py), fp8
buffers become i8 buffers and an fp8 value becomes the f32 holding it: loads and
i8 -> fp8 bitcasts decode, `arith.truncf` (and fp8 -> fp8 conversions) round to the
format with their rounding mode, stores and fp8 -> i8 bitcasts encode, `arith.extf`
from fp8 is exact (fp8_bits.py spells the helpers out in arith/math ops). What is left
(vectors of fp8, fp8 atomics) is an error naming the op; `auto` mode then builds the
kernel from OpenCL C.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from emitter_opencl.fp8 import FORMATS

from . import fp8_bits
from .flatten import error_at
from .half_types import retype_arguments

CONVERSIONS = ("arith.extf", "arith.truncf", "arith.bitcast")
TO_NEAREST_EVEN, TOWARD_ZERO = 0, 3         # arith::RoundingMode


def is_fp8(t: ir.Type) -> bool:
    """An 8-bit float type, or a shaped type (memref, vector, tensor) of them."""
    if isinstance(t, ir.ShapedType):
        t = t.element_type
    return isinstance(t, ir.FloatType) and t.width == 8


def check_no_fp8(module: ir.Module) -> None:
    """After fp8_values_as_f32, raises SpirvStageError at the first fp8 conversion left
    (of vectors), or else at the first other op with an fp8 operand or result."""
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
        raise error_at(first, f"{_what(first)}, and fp8 has no SPIR-V conversion here "
                              "(scalar fp8 values and buffers only)")


def _what(op) -> str:
    if op.operation.name in CONVERSIONS:
        return f"converts {op.operands[0].type} to {op.results[0].type}"
    fp8 = next(v.type for v in list(op.operands) + list(op.results) if is_fp8(v.type))
    return f"uses a value of type {fp8}"


def fp8_values_as_f32(func) -> None:
    """Rewrites `func` (flattened: buffers are arguments and allocs) in place: fp8
    buffers hold i8 bit patterns, fp8 values are f32 values of the format (as in the
    OpenCL C emitter), and the conversions become bit arithmetic (fp8_bits.py)."""
    retype_arguments(func, _as_bytes)
    # Each op's fp8 types (their format) as they were: rewriting a producer gives its
    # consumers f32 operands.
    recorded: list = []

    def collect(op):
        recorded.append((op.opview, [str(v.type) for v in op.operands],
                         [str(v.type) for v in op.results]))
        return ir.WalkResult.ADVANCE

    func.walk(collect, ir.WalkOrder.PRE_ORDER)
    for op, operand_types, result_types in recorded[1:]:
        _rewrite(op, operand_types, result_types)


def _as_bytes(t: ir.Type) -> ir.Type | None:
    """The i8 buffer type for an fp8 buffer type, else None."""
    if not (isinstance(t, ir.MemRefType) and is_fp8(t)):
        return None
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), layout=t.layout,
                             memory_space=t.memory_space, loc=ir.Location.unknown())


def _rewrite(op, operand_types: list, result_types: list) -> None:
    name = op.operation.name
    fp8_in = [FORMATS.get(t) for t in operand_types]
    fp8_out = [FORMATS.get(t) for t in result_types]
    for region in op.regions:       # loop-carried fp8 values
        for block in region.blocks:
            for arg in block.arguments:
                if str(arg.type) in FORMATS:
                    arg.set_type(ir.F32Type.get())
    with op.location:
        if name in ("memref.alloc", "memref.alloca") and _as_bytes(op.result.type):
            op.result.set_type(_as_bytes(op.result.type))
        elif name == "memref.load" and fp8_out[0]:
            op.result.set_type(ir.IntegerType.get_signless(8))
            with ir.InsertionPoint.after(op):
                bits = arith.extui(ir.IntegerType.get_signless(32), op.result)
                value = fp8_bits.decode(fp8_out[0], bits)
            op.result.replace_all_uses_except(value, bits.owner.operation)
        elif name == "memref.store" and fp8_in[0]:
            with ir.InsertionPoint(op):
                op.operands[0] = fp8_bits.encode(fp8_in[0], op.operands[0])
        elif name in CONVERSIONS and (fp8_in[0] or fp8_out[0]):
            with ir.InsertionPoint(op):
                value = _conversion(op, operand_types[0], result_types[0])
            op.result.replace_all_uses_with(value)
            op.operation.erase()
        elif name == "arith.constant" and fp8_out[0]:
            with ir.InsertionPoint(op):
                value = arith.constant(ir.F32Type.get(), ir.FloatAttr(op.attributes["value"]).value)
            op.result.replace_all_uses_with(value)
            op.operation.erase()
        elif name.startswith("memref.") and "atomic" in name and (any(fp8_in) or any(fp8_out)):
            raise error_at(op, "atomics on fp8 elements are not supported")
        else:
            for result, fmt in zip(op.results, fp8_out):
                if fmt:
                    result.set_type(ir.F32Type.get())


def _conversion(op, src: str, dst: str) -> ir.Value:
    """The f32 value (or the i8 bits, or the wider float) a conversion of fp8 gives."""
    x = op.operands[0]
    if op.operation.name == "arith.bitcast":
        if dst in FORMATS:
            return fp8_bits.decode(FORMATS[dst], arith.extui(ir.IntegerType.get_signless(32), x))
        return fp8_bits.encode(FORMATS[src], x)
    if dst in FORMATS:
        return fp8_bits.round_to(FORMATS[dst], _as_f32(x, src), _toward_zero(op))
    if dst == "f32":
        return x
    widen = arith.extf if dst == "f64" else arith.truncf      # f16, bf16: exact
    return widen(ir.Type.parse(dst), x)


def _as_f32(x: ir.Value, src: str) -> ir.Value:
    if src == "f64":
        return fp8_bits.double_to_float_round_to_odd(x)
    if src in ("f16", "bf16"):
        return arith.extf(ir.F32Type.get(), x)
    return x                        # f32, or an fp8 value already held in f32


def _toward_zero(op) -> bool:
    if "roundingmode" not in op.attributes:
        return False
    mode = ir.IntegerAttr(op.attributes["roundingmode"]).value
    if mode not in (TO_NEAREST_EVEN, TOWARD_ZERO):
        raise error_at(op, "truncf to fp8 supports rounding to nearest even and toward zero only")
    return mode == TOWARD_ZERO
