"""The elementwise table: HLO opcode -> builder of one result scalar from its operands'
scalars, `builder(emitter, instr, operand scalars) -> scalar`, in compute types.

Most opcodes are one MLIR op; the rest spell out XLA's semantics where C's differ
(integer division by zero, over-wide shifts, NaN-aware min/max, saturating converts).
The elemental emitter (elemental.py) looks opcodes up here and knows nothing about
how each one is computed.
"""
from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.dialects import arith, math, scf

from .errors import HloUnsupportedError, where
from .mlir_types import compute_type, const_index, scalar_constant, storage_type
from .shapes import ELEMENT_TYPES, ElementType


def _et(instr, k=None) -> ElementType:
    shape = instr.shape if k is None else instr.operands[k].shape
    return shape.element


def _float_or_int(fop, sop, uop=None):
    def build(em, instr, a):
        et = _et(instr, 0)
        if et.is_float:
            return fop(*a)
        return (uop if et.is_unsigned and uop is not None else sop)(*a)
    return build


def _divide(em, instr, a):
    x, y = a
    et = _et(instr)
    if et.is_float:
        return arith.divf(x, y)
    # XLA: x / 0 = -1 (all ones) and INT_MIN / -1 = INT_MIN; C would trap.
    zero, one = scalar_constant(et, 0), scalar_constant(et, 1)
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, y, zero)
    if et.is_unsigned:
        q = arith.divui(x, arith.select(is_zero, one, y))
        return arith.select(is_zero, scalar_constant(et, -1), q)
    overflow = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, x, _int_min(et)),
                          arith.cmpi(arith.CmpIPredicate.eq, y, scalar_constant(et, -1)))
    safe = arith.select(arith.ori(is_zero, overflow), one, y)
    q = arith.divsi(x, safe)
    q = arith.select(overflow, x, q)
    return arith.select(is_zero, scalar_constant(et, -1), q)


def _remainder(em, instr, a):
    x, y = a
    et = _et(instr)
    if et.is_float:
        return arith.remf(x, y)
    # XLA: x % 0 = x and INT_MIN % -1 = 0.
    zero, one = scalar_constant(et, 0), scalar_constant(et, 1)
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, y, zero)
    if et.is_unsigned:
        r = arith.remui(x, arith.select(is_zero, one, y))
        return arith.select(is_zero, x, r)
    minus_one = arith.cmpi(arith.CmpIPredicate.eq, y, scalar_constant(et, -1))
    safe = arith.select(arith.ori(is_zero, minus_one), one, y)
    r = arith.remsi(x, safe)
    r = arith.select(minus_one, zero, r)
    return arith.select(is_zero, x, r)


def _int_min(et: ElementType) -> ir.Value:
    return scalar_constant(et, -(1 << (et.bits - 1)))


def _negate(em, instr, a):
    if _et(instr).is_float:
        return arith.negf(a[0])
    return arith.subi(scalar_constant(_et(instr), 0), a[0])


def _abs(em, instr, a):
    et = _et(instr, 0)
    if et.is_float:
        return math.absf(a[0])
    if et.is_unsigned:
        return a[0]
    return math.absi(a[0])


def _sign(em, instr, a):
    et = _et(instr)
    x = a[0]
    if et.is_float:
        # sign(+-0) = +-0 and sign(NaN) = NaN: keep x unless it is a nonzero number.
        one = scalar_constant(et, 1.0)
        signed_one = math.copysign(one, x)
        keep = arith.cmpf(arith.CmpFPredicate.UEQ, x, scalar_constant(et, 0.0))
        return arith.select(keep, x, signed_one)
    zero = scalar_constant(et, 0)
    positive = arith.select(arith.cmpi(arith.CmpIPredicate.ne, x, zero),
                            scalar_constant(et, 1), zero)
    if et.is_unsigned:
        return positive
    return arith.select(arith.cmpi(arith.CmpIPredicate.slt, x, zero),
                        scalar_constant(et, -1), positive)


def _not(em, instr, a):
    et = _et(instr)
    return arith.xori(a[0], scalar_constant(et, 1 if et.is_pred else -1))


def _logistic(em, instr, a):
    et = _et(instr)
    one = scalar_constant(et, 1.0)
    return arith.divf(one, arith.addf(one, math.exp(arith.negf(a[0]))))


def _shift(kind):
    def build(em, instr, a):
        x, y = a
        et = _et(instr)
        width = scalar_constant(et, et.bits)
        # XLA: shifts by >= the bit width give 0 (or the sign for arithmetic right
        # shifts); C leaves them undefined, so clamp the amount and select.
        too_far = arith.cmpi(arith.CmpIPredicate.uge, y, width)
        safe = arith.select(too_far, scalar_constant(et, 0), y)
        if kind == "left":
            return arith.select(too_far, scalar_constant(et, 0), arith.shli(x, safe))
        if kind == "logical":
            return arith.select(too_far, scalar_constant(et, 0), arith.shrui(x, safe))
        sign_fill = arith.shrsi(x, scalar_constant(et, et.bits - 1))
        return arith.select(too_far, sign_fill, arith.shrsi(x, safe))
    return build


_CMPF = {"EQ": arith.CmpFPredicate.OEQ, "NE": arith.CmpFPredicate.UNE,
         "LT": arith.CmpFPredicate.OLT, "LE": arith.CmpFPredicate.OLE,
         "GT": arith.CmpFPredicate.OGT, "GE": arith.CmpFPredicate.OGE}
_CMPI_S = {"EQ": arith.CmpIPredicate.eq, "NE": arith.CmpIPredicate.ne,
           "LT": arith.CmpIPredicate.slt, "LE": arith.CmpIPredicate.sle,
           "GT": arith.CmpIPredicate.sgt, "GE": arith.CmpIPredicate.sge}
_CMPI_U = {"EQ": arith.CmpIPredicate.eq, "NE": arith.CmpIPredicate.ne,
           "LT": arith.CmpIPredicate.ult, "LE": arith.CmpIPredicate.ule,
           "GT": arith.CmpIPredicate.ugt, "GE": arith.CmpIPredicate.uge}


def _compare(em, instr, a):
    direction = instr.attr("direction")
    et = _et(instr, 0)
    if et.is_float and instr.attrs.get("type") == "TOTALORDER":
        return arith.cmpi(_CMPI_S[direction], *(total_order_key(x) for x in a))
    if et.is_float:
        return arith.cmpf(_CMPF[direction], *a)
    table = _CMPI_U if et.is_unsigned else _CMPI_S
    return arith.cmpi(table[direction], *a)


def total_order_key(x: ir.Value) -> ir.Value:
    """A float as a signed integer of its width whose order is IEEE total order
    (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN): the bits, with the magnitude
    bits flipped for negative numbers."""
    width = ir.FloatType(x.type).width
    int_type = ir.IntegerType.get_signless(width)
    bits = arith.bitcast(int_type, x)
    magnitude = arith.constant(int_type, (1 << (width - 1)) - 1)
    sign = arith.shrsi(bits, arith.constant(int_type, width - 1))   # 0 or all ones
    return arith.xori(bits, arith.andi(sign, magnitude))



def _clamp(em, instr, a):
    lo, x, hi = a
    et = _et(instr)
    if et.is_float:
        return arith.minimumf(arith.maximumf(x, lo), hi)
    if et.is_unsigned:
        return arith.minui(arith.maxui(x, lo), hi)
    return arith.minsi(arith.maxsi(x, lo), hi)


def convert_value(x: ir.Value, src: ElementType, dst: ElementType) -> ir.Value:
    """XLA's convert between element types, on compute-type values."""
    src_t, dst_t = compute_type(src), compute_type(dst)
    if dst.is_pred:
        if src.is_float:
            return arith.cmpf(arith.CmpFPredicate.UNE, x, scalar_constant(src, 0.0))
        return arith.cmpi(arith.CmpIPredicate.ne, x, scalar_constant(src, 0))
    if src.is_float and dst.is_float:
        if dst.name in ("f16", "bf16"):  # round through the 16-bit type
            narrow = arith.truncf(storage_type(dst), x) if src.bits > 16 or \
                src.name != dst.name else None
            if narrow is None:
                return x
            return arith.extf(dst_t, narrow)
        if src.bits == dst.bits or src_t == dst_t:
            return x
        return arith.extf(dst_t, x) if dst.bits > ir.FloatType(src_t).width \
            else arith.truncf(dst_t, x)
    if src.is_float:   # float -> int: saturating, NaN -> 0
        return arith.fptoui(dst_t, x) if dst.is_unsigned else arith.fptosi(dst_t, x)
    if dst.is_float:
        value = arith.uitofp(dst_t, x) if src.is_unsigned else arith.sitofp(dst_t, x)
        if dst.name in ("f16", "bf16"):
            value = convert_value(value, ELEMENT_TYPES["f32"], dst)
        return value
    src_bits = 1 if src.is_pred else src.bits
    if src_bits == dst.bits:
        return x
    if src_bits > dst.bits:
        return arith.trunci(dst_t, x)
    return arith.extui(dst_t, x) if src.is_unsigned else arith.extsi(dst_t, x)


def _convert(em, instr, a):
    return convert_value(a[0], _et(instr, 0), _et(instr))


def _bitcast_convert(em, instr, a):
    src, dst = _et(instr, 0), _et(instr)
    if src.bits != dst.bits or instr.shape.dims != instr.operands[0].shape.dims:
        raise HloUnsupportedError(f"{where(instr)}: bitcast-convert between types of "
                                  f"different widths is not supported")
    x = a[0]
    if src.name in ("f16", "bf16"):
        x = arith.truncf(storage_type(src), x)
    value = arith.bitcast(storage_type(dst), x)
    if dst.name in ("f16", "bf16"):
        value = arith.extf(compute_type(dst), value)
    return value


def _power(em, instr, a):
    et = _et(instr)
    if et.is_float:
        return math.powf(*a)
    return _integer_power(et, *a)


def _integer_power(et: ElementType, base: ir.Value, exponent: ir.Value) -> ir.Value:
    """Exponentiation by squaring over the exponent's bits (XLA: x^negative = 0
    except 1^n = 1 and (-1)^n = +-1)."""
    one, zero = scalar_constant(et, 1), scalar_constant(et, 0)
    loop = scf.ForOp(const_index(0), const_index(et.bits), const_index(1), [one, base, exponent])
    with ir.InsertionPoint(loop.body):
        acc, b, e = loop.inner_iter_args
        bit = arith.andi(e, one)
        acc2 = arith.select(arith.cmpi(arith.CmpIPredicate.ne, bit, zero), arith.muli(acc, b), acc)
        scf.yield_([acc2, arith.muli(b, b), arith.shrui(e, one)])
    result = loop.results[0]
    if et.is_unsigned:
        return result
    negative = arith.cmpi(arith.CmpIPredicate.slt, exponent, zero)
    base_is_one = arith.cmpi(arith.CmpIPredicate.eq, base, one)
    base_is_minus_one = arith.cmpi(arith.CmpIPredicate.eq, base, scalar_constant(et, -1))
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(exponent, one), zero)
    minus_one_pow = arith.select(odd, scalar_constant(et, -1), one)
    neg_value = arith.select(base_is_one, one,
                             arith.select(base_is_minus_one, minus_one_pow, zero))
    return arith.select(negative, neg_value, result)


def _maximum(em, instr, a):
    et = _et(instr)
    if et.is_float:
        return arith.maximumf(*a)
    return (arith.maxui if et.is_unsigned else arith.maxsi)(*a)


def _minimum(em, instr, a):
    et = _et(instr)
    if et.is_float:
        return arith.minimumf(*a)
    return (arith.minui if et.is_unsigned else arith.minsi)(*a)





def _reduce_precision(em, instr, a):
    exponent, mantissa = instr.int_attr("exponent_bits"), instr.int_attr("mantissa_bits")
    target = {(8, 7): "bf16", (5, 10): "f16"}.get((exponent, mantissa))
    if target is None:
        if (exponent, mantissa) in ((8, 23), (11, 52)):
            return a[0]
        raise HloUnsupportedError(f"{where(instr)}: reduce-precision to e{exponent}m"
                                  f"{mantissa} is not supported")
    narrow = arith.truncf(ir.Type.parse(target), a[0])
    return arith.extf(a[0].type, narrow)


def _unary(op):
    return lambda em, instr, a: op(a[0])


def _same(op):
    return lambda em, instr, a: op(*a)


ELEMENTWISE: dict[str, Callable] = {
    # arithmetic
    "add": _float_or_int(arith.addf, arith.addi),
    "subtract": _float_or_int(arith.subf, arith.subi),
    "multiply": _float_or_int(arith.mulf, arith.muli),
    "divide": _divide,
    "remainder": _remainder,
    "maximum": _maximum,
    "minimum": _minimum,
    "power": _power,
    "atan2": _same(math.atan2),
    "negate": _negate,
    "abs": _abs,
    "sign": _sign,
    "clamp": _clamp,
    # bits and logic
    "and": _same(arith.andi),
    "or": _same(arith.ori),
    "xor": _same(arith.xori),
    "not": _not,
    "popcnt": _unary(math.ctpop),
    "count-leading-zeros": _unary(math.ctlz),
    "shift-left": _shift("left"),
    "shift-right-logical": _shift("logical"),
    "shift-right-arithmetic": _shift("arithmetic"),
    # transcendental
    "exponential": _unary(math.exp),
    "exponential-minus-one": _unary(math.expm1),
    "log": _unary(math.log),
    "log-plus-one": _unary(math.log1p),
    "sqrt": _unary(math.sqrt),
    "rsqrt": _unary(math.rsqrt),
    "cbrt": _unary(math.cbrt),
    "tanh": _unary(math.tanh),
    "tan": _unary(math.tan),
    "sine": _unary(math.sin),
    "cosine": _unary(math.cos),
    "erf": _unary(math.erf),
    "logistic": _logistic,
    # rounding and classification
    "floor": _unary(math.floor),
    "ceil": _unary(math.ceil),
    "round-nearest-afz": _unary(math.round),
    "round-nearest-even": _unary(math.roundeven),
    "is-finite": _unary(math.isfinite),
    # comparison and selection
    "compare": _compare,
    "select": _same(arith.select),
    # types
    "convert": _convert,
    "bitcast-convert": _bitcast_convert,
    "copy": _unary(lambda x: x),
    "reduce-precision": _reduce_precision,
}


def is_elementwise(instr) -> bool:
    return instr.opcode in ELEMENTWISE or instr.opcode == "map"

