"""Semantics upstream's OpenCL SPIR-V patterns lack, spelled out before conversion:
saturating float -> integer conversions, `math.trunc` (no pattern; it is
`x < 0 ? ceil(x) : floor(x)`), and signed remainders of the most negative integer.

Saturation:
The memref stage's `arith.fptosi`/`fptoui` saturate (out-of-range values clamp to the
integer range, NaN gives 0): the OpenCL C emitter prints `convert_<T>_sat`. SPIR-V's
OpConvertFToS/FToU are undefined out of range, and upstream's serializer does not
write the SaturatedConversion decoration, so each conversion becomes

    x != x ? 0 : x >= 2^(bits) ? MAX : x < MIN ? MIN : fptosi(x)

(Triton kernels meet this with `other=float("inf")` loads of integer tensors).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from ..ir_helpers import integer_zero, ops_named, wrapping_abs

FLOAT_TO_INT = ("arith.fptosi", "arith.fptoui")


def saturate_float_to_int(func) -> None:
    """Rewrites every scalar fptosi/fptoui of `func` in place."""
    for op in ops_named(func, FLOAT_TO_INT):
        if isinstance(op.result.type, ir.IntegerType) and ir.IntegerType(op.result.type).width > 1:
            _saturate(op, signed=op.name == "arith.fptosi")


def _saturate(op, signed: bool) -> None:
    source = op.operands[0]
    float_type, int_type = source.type, op.result.type
    bits = ir.IntegerType(int_type).width
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    with ir.InsertionPoint.after(op), op.location:
        # high + 1 is a power of two: exact in every float type that can reach it.
        too_big = arith.cmpf(arith.CmpFPredicate.OGE, source,
                             arith.constant(float_type, float(high + 1)))
        too_small = arith.cmpf(arith.CmpFPredicate.OLT, source, arith.constant(float_type, float(low)))
        is_nan = arith.cmpf(arith.CmpFPredicate.UNO, source, source)
        clamped_high = arith.select(too_big, arith.constant(int_type, _signless(high, bits)), op.result)
        value = arith.select(too_small, arith.constant(int_type, _signless(low, bits)), clamped_high)
        value = arith.select(is_nan, arith.constant(int_type, 0), value)
    op.result.replace_all_uses_except(value, clamped_high.owner.operation)


def _signless(value: int, bits: int) -> int:
    """`value` as the signed integer of the same bits (IntegerAttr of a signless type)."""
    return value - 2 ** bits if value >= 2 ** (bits - 1) else value


def expand_trunc(func) -> None:
    """math.trunc(x) -> select(x < 0, ceil(x), floor(x)), in place."""
    for op in ops_named(func, ("math.trunc",)):
        x = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            zero = arith.constant(x.type, 0.0) if not isinstance(x.type, ir.VectorType) else \
                arith.constant(x.type, ir.DenseElementsAttr.get_splat(
                    x.type, ir.FloatAttr.get(ir.VectorType(x.type).element_type, 0.0)))
            negative = arith.cmpf(arith.CmpFPredicate.OLT, x, zero)
            value = arith.select(negative, math.ceil(x), math.floor(x))
        op.result.replace_all_uses_with(value)
        op.erase()


def expand_signed_remainders(func) -> None:
    """arith.remsi(a, b) -> (a < 0 ? -r : r), r = remui(|a|, |b|), |x| = max(x, 0 - x),
    in place. Upstream's OpenCL pattern takes the sign from `a == s_abs(a)`, which holds
    for the most negative integer (its absolute value wraps to itself), so that
    remainder came out positive: INT_MIN % 3 gave 2, not -2. Read as unsigned, the
    wrapped |INT_MIN| is its true magnitude, 2^(bits-1)."""
    for op in ops_named(func, ("arith.remsi",)):
        a, b = op.operands
        with ir.InsertionPoint(op), op.location:
            zero = integer_zero(a.type)
            negative = arith.cmpi(arith.CmpIPredicate.slt, a, zero)
            magnitude = arith.remui(wrapping_abs(a), wrapping_abs(b))
            value = arith.select(negative, arith.subi(zero, magnitude), magnitude)
        op.result.replace_all_uses_with(value)
        op.erase()

