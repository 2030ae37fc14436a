"""fp8 <-> f32 as integer and float arithmetic (arith/math ops at the insertion point).

The same algorithms, step for step, as the OpenCL C emitter's helpers
(emitter_opencl/fp8.py), so that both program formats give the same bits: decode a
byte exactly, round a float to the nearest value of the format (ties to even, or toward
zero) with saturation, encode a float as a byte. `ldexp` becomes a multiplication by a
power of two built from its exponent bits (every scale used here is a normal f32).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from emitter_opencl.fp8 import Fp8Format

NAN_BITS = 0x7fc00000      # the quiet NaN the OpenCL C helpers decode to


def _f32() -> ir.Type:
    return ir.F32Type.get()


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def _float(value: float) -> ir.Value:
    return arith.constant(_f32(), value)


def _bits(x: ir.Value) -> ir.Value:
    return arith.bitcast(ir.IntegerType.get_signless(32), x)


def _exponent_field(x: ir.Value) -> ir.Value:
    """The biased exponent of an f32, as i32."""
    return arith.andi(arith.shrui(_bits(x), _i32(23)), _i32(0xff))


def power_of_two(k: ir.Value) -> ir.Value:
    """2^k for an i32 k in [-126, 127]: the f32 with biased exponent k + 127."""
    return arith.bitcast(_f32(), arith.shli(arith.addi(k, _i32(127)), _i32(23)))


def decode(fmt: Fp8Format, bits: ir.Value) -> ir.Value:
    """The f32 value of an fp8 bit pattern (zero-extended to i32)."""
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    exponent = arith.andi(arith.shrui(bits, _i32(m)), _i32((1 << e) - 1))
    mantissa = arith.andi(bits, _i32((1 << m) - 1))
    subnormal = arith.mulf(arith.uitofp(_f32(), mantissa), _float(2.0 ** (fmt.min_exponent - m)))
    normal = arith.mulf(arith.uitofp(_f32(), arith.ori(mantissa, _i32(1 << m))),
                        power_of_two(arith.subi(exponent, _i32(fmt.bias + m))))
    is_subnormal = arith.cmpi(arith.CmpIPredicate.eq, exponent, _i32(0))
    value = arith.select(is_subnormal, subnormal, normal)
    nan = arith.bitcast(_f32(), _i32(NAN_BITS))
    if fmt.specials == "ieee":
        special = arith.select(arith.cmpi(arith.CmpIPredicate.ne, mantissa, _i32(0)), nan,
                               _float(float("inf")))
        value = arith.select(arith.cmpi(arith.CmpIPredicate.eq, exponent, _i32((1 << e) - 1)),
                             special, value)
    elif fmt.specials == "fn":
        value = arith.select(arith.cmpi(arith.CmpIPredicate.eq, arith.andi(bits, _i32(0x7f)),
                                        _i32(0x7f)), nan, value)
    negative = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(bits, _i32(0x80)), _i32(0))
    value = arith.select(negative, arith.negf(value), value)
    if fmt.specials == "fnuz":        # 0x80 is NaN, with no sign
        value = arith.select(arith.cmpi(arith.CmpIPredicate.eq, bits, _i32(0x80)), nan, value)
    return value


def round_to(fmt: Fp8Format, x: ir.Value, toward_zero: bool) -> ir.Value:
    """The f32 value of the format nearest to f32 `x`, saturated; NaN stays NaN."""
    m = fmt.mantissa_bits
    # the exponent of |x| (at least the smallest normal one): values near x are
    # multiples of 2^(e - m)
    e = arith.maxsi(arith.subi(_exponent_field(x), _i32(127)), _i32(fmt.min_exponent))
    scaled = arith.mulf(x, power_of_two(arith.subi(_i32(m), e)))
    whole = math.trunc(scaled) if toward_zero else math.roundeven(scaled)
    r = arith.mulf(whole, power_of_two(arith.subi(e, _i32(m))))
    too_big = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(r), _float(fmt.largest))
    r = arith.select(too_big, math.copysign(_float(fmt.largest), x), r)
    if fmt.specials == "fnuz":        # one zero: +0
        r = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, r, _float(0.0)), _float(0.0), r)
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, x), x, r)


def encode(fmt: Fp8Format, x: ir.Value) -> ir.Value:
    """The fp8 bit pattern (i8) of f32 `x`, rounded to nearest even first."""
    m = fmt.mantissa_bits
    r = round_to(fmt, x, toward_zero=False)
    sign = arith.andi(arith.shrui(_bits(r), _i32(24)), _i32(0x80))
    a = math.absf(r)
    min_normal = _float(2.0 ** fmt.min_exponent)
    # subnormal or zero: a count of the smallest steps (clamped: the other branch's a
    # would not fit)
    steps = arith.fptoui(ir.IntegerType.get_signless(32),
                         arith.mulf(arith.minimumf(a, min_normal), _float(2.0 ** (m - fmt.min_exponent))))
    exponent = arith.addi(arith.subi(_exponent_field(a), _i32(127)), _i32(fmt.bias))
    mantissa = arith.andi(arith.shrui(_bits(a), _i32(23 - m)), _i32((1 << m) - 1))
    normal = arith.ori(arith.shli(exponent, _i32(m)), mantissa)
    is_subnormal = arith.cmpf(arith.CmpFPredicate.OLT, a, min_normal)
    bits = arith.ori(sign, arith.select(is_subnormal, steps, normal))
    nan = _i32(0x80) if fmt.specials == "fnuz" else arith.ori(sign, _i32(0x7f))
    bits = arith.select(arith.cmpf(arith.CmpFPredicate.UNO, r, r), nan, bits)
    if fmt.specials == "ieee":        # an infinity of e5m2 is a value of it
        negative = arith.cmpf(arith.CmpFPredicate.OLT, x, _float(0.0))
        infinity = arith.select(negative, _i32(0xfc), _i32(0x7c))
        is_inf = arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(x), _float(float("inf")))
        bits = arith.select(is_inf, infinity, bits)
    return arith.trunci(ir.IntegerType.get_signless(8), bits)


def double_to_float_round_to_odd(x: ir.Value) -> ir.Value:
    """f64 -> f32 rounded to odd, so that rounding that f32 to fp8 rounds once."""
    r = arith.truncf(_f32(), x)
    inexact = arith.cmpf(arith.CmpFPredicate.ONE, arith.extf(ir.F64Type.get(), r), x)
    bits = _bits(r)
    even = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(bits, _i32(1)), _i32(0))
    above = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(arith.extf(ir.F64Type.get(), r)), math.absf(x))
    toward_x = arith.select(above, arith.subi(bits, _i32(1)), arith.addi(bits, _i32(1)))
    return arith.select(arith.andi(inexact, even), arith.bitcast(_f32(), toward_x), r)
