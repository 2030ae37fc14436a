"""Elemental emission: the MLIR scalar code that computes one element of an HLO
instruction at a given output index.

`Elemental.value(instr, indices)` returns the instruction's element(s) at `indices`
(index-typed MLIR values, one per output dimension), emitting its operands recursively
until it reaches the edge of the subgraph: parameters become `tensor.extract`, other
subgraphs' roots become `func.call`s, injected hero values are used as given.

Elementwise opcodes are built from the table `ELEMENTWISE` (opcode -> builder of one
scalar from the operands' scalars); pure index transforms go through their indexing
maps (indexing.py); reduce, reduce-window, dot, gather, dynamic-slice,
dynamic-update-slice, map and iota have builders of their own in `SPECIAL`.

Values of 16-bit float types are held as f32 (compute precision) and rounded only
when stored and by explicit converts.
"""
from __future__ import annotations

import math as pymath
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, tensor

from .errors import HloUnsupportedError, where
from .indexing import (INDEX_TRANSFORMS, Const, Dim, Expr, IndexingMap, Sym,
                       operand_map)
from .shapes import ELEMENT_TYPES, ElementType, round_to_bf16

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def storage_type(et: ElementType) -> ir.Type:
    return ir.Type.parse(et.storage_mlir)


def compute_type(et: ElementType) -> ir.Type:
    return ir.Type.parse(et.compute_mlir)


def tensor_type(shape) -> ir.RankedTensorType:
    dyn = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([d if isinstance(d, int) else dyn for d in shape.dims],
                                   storage_type(shape.element))


class DimKey(str):
    """The key of a dynamic dimension's index value in a `tensors` dict (next to the
    parameter tensors, so that it travels wherever they do)."""

    def __hash__(self):
        return hash(("dim", str(self)))

    def __eq__(self, other):
        return isinstance(other, DimKey) and str.__eq__(self, other)


def dim_value(tensors, d) -> ir.Value:
    """A dimension (int or symbol) as an index value."""
    if isinstance(d, int):
        return const_index(d)
    try:
        return tensors[DimKey(d)]
    except (KeyError, TypeError):
        raise HloUnsupportedError(f"dynamic dimension '{d}' has no value here") from None


def index_type() -> ir.Type:
    return ir.IndexType.get()


def const_index(value: int) -> ir.Value:
    return arith.constant(index_type(), value)


def scalar_constant(et: ElementType, value) -> ir.Value:
    """A compute-type constant of HLO element type `et`."""
    t = compute_type(et)
    if et.is_float:
        v = float(value)
        if et.name == "bf16":
            v = round_to_bf16(v)
        elif et.name == "f16":
            v = float(np.float16(v))
        return arith.constant(t, ir.FloatAttr.get(t, v))
    if et.is_pred:
        return arith.constant(t, ir.IntegerAttr.get(t, int(bool(value))))
    bits = et.bits
    v = int(value) & ((1 << bits) - 1)
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return arith.constant(t, ir.IntegerAttr.get(t, v))


def parse_scalar_literal(text: str, et: ElementType):
    text = text.strip()
    if et.is_pred:
        return text.lower() in ("true", "1")
    if et.is_float:
        lowered = text.lower()
        if lowered in ("inf", "+inf"):
            return pymath.inf
        if lowered == "-inf":
            return -pymath.inf
        if lowered in ("nan", "-nan", "+nan"):
            return pymath.nan
        return float(text)
    return int(text, 0) if text.startswith(("0x", "-0x")) else int(float(text)) \
        if "e" in text.lower() else int(text)


def literal_array(instr) -> np.ndarray:
    """The value of a constant instruction as a numpy array (bf16 as float32)."""
    text = instr.literal or ""
    if "..." in text:
        raise HloUnsupportedError(f"{where(instr)}: the constant's value was elided in "
                                  f"the text ({{...}}); print the module with large "
                                  f"constants")
    import re
    tokens = re.findall(r"[-+]?(?:inf|nan|true|false|0x[0-9a-fA-F]+|"
                        r"\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)",
                        text.replace("{", " ").replace("}", " "), flags=re.IGNORECASE)
    et = instr.shape.element
    values = [parse_scalar_literal(t, et) for t in tokens]
    size = instr.shape.size
    if len(values) != size:
        raise HloUnsupportedError(f"{where(instr)}: constant has {len(values)} values, "
                                  f"its shape {instr.shape} needs {size}")
    dtype = np.float32 if et.name == "bf16" else np.dtype(et.numpy)
    return np.array(values, dtype=dtype).reshape(instr.shape.dims)


# ---------------------------------------------------------------------------
# Elementwise builders: (emitter, instr, operand scalars) -> scalar
# ---------------------------------------------------------------------------

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


def _select(em, instr, a):
    return arith.select(*a)


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


def _unary(op):
    return lambda em, instr, a: op(a[0])


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


def _is_finite(em, instr, a):
    return math.isfinite(a[0])


def _round_afz(em, instr, a):
    return math.round(a[0])


def _copy(em, instr, a):
    return a[0]


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


ELEMENTWISE: dict[str, Callable] = {
    "add": _float_or_int(arith.addf, arith.addi),
    "subtract": _float_or_int(arith.subf, arith.subi),
    "multiply": _float_or_int(arith.mulf, arith.muli),
    "divide": _divide,
    "remainder": _remainder,
    "maximum": _maximum,
    "minimum": _minimum,
    "power": _power,
    "atan2": lambda em, i, a: math.atan2(*a),
    "and": lambda em, i, a: arith.andi(*a),
    "or": lambda em, i, a: arith.ori(*a),
    "xor": lambda em, i, a: arith.xori(*a),
    "not": _not,
    "negate": _negate,
    "abs": _abs,
    "sign": _sign,
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
    "floor": _unary(math.floor),
    "ceil": _unary(math.ceil),
    "round-nearest-afz": _round_afz,
    "round-nearest-even": _unary(math.roundeven),
    "is-finite": _is_finite,
    "popcnt": _unary(math.ctpop),
    "count-leading-zeros": _unary(math.ctlz),
    "shift-left": _shift("left"),
    "shift-right-logical": _shift("logical"),
    "shift-right-arithmetic": _shift("arithmetic"),
    "compare": _compare,
    "select": _select,
    "clamp": _clamp,
    "convert": _convert,
    "bitcast-convert": _bitcast_convert,
    "copy": _copy,
    "reduce-precision": _reduce_precision,
}


def is_elementwise(instr) -> bool:
    return instr.opcode in ELEMENTWISE or instr.opcode == "map"


# ---------------------------------------------------------------------------
# Emitting index expressions
# ---------------------------------------------------------------------------

def apply_expr(e: Expr, dims: list[ir.Value], syms: list[ir.Value] = ()) -> ir.Value:
    """`e` evaluated on index values with arith ops. (Not affine.apply: the upstream
    inliner refuses to inline affine ops into scf regions, and subgraph functions are
    called from inside loops and ifs.)"""
    from .indexing import Add, FloorDiv, Mod, Mul
    if isinstance(e, Dim):
        return dims[e.index]
    if isinstance(e, Sym):
        return syms[e.index]
    if isinstance(e, Const):
        return const_index(e.value)
    if isinstance(e, Add):
        value = apply_expr(e.terms[0], dims, syms)
        for t in e.terms[1:]:
            value = arith.addi(value, apply_expr(t, dims, syms))
        return value
    if isinstance(e, Mul):
        return arith.muli(apply_expr(e.expr, dims, syms), const_index(e.factor))
    if isinstance(e, FloorDiv):
        return arith.floordivsi(apply_expr(e.expr, dims, syms), const_index(e.divisor))
    if isinstance(e, Mod):
        x = apply_expr(e.expr, dims, syms)
        c = const_index(e.divisor)
        r = arith.remsi(x, c)
        negative = arith.cmpi(arith.CmpIPredicate.slt, r, const_index(0))
        return arith.select(negative, arith.addi(r, c), r)
    raise TypeError(e)


def apply_map(m: IndexingMap, dims: list[ir.Value], syms=()) -> tuple[list[ir.Value], ir.Value | None]:
    """(operand indices, i1 'constraints hold' or None when there are none)."""
    indices = [apply_expr(r, dims, syms) for r in m.results]
    condition = None
    for e, lo, hi in m.constraints:
        v = apply_expr(e, dims, syms)
        if lo == hi:
            ok = arith.cmpi(arith.CmpIPredicate.eq, v, const_index(lo))
        else:
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, v, const_index(lo)),
                            arith.cmpi(arith.CmpIPredicate.sle, v, const_index(hi)))
        condition = ok if condition is None else arith.andi(condition, ok)
    return indices, condition


def to_index(value: ir.Value, et: ElementType) -> ir.Value:
    if et.is_unsigned:
        return arith.index_castui(index_type(), value)
    return arith.index_cast(index_type(), value)


def clamp_index(value: ir.Value, lo: int, hi: int) -> ir.Value:
    return arith.minsi(arith.maxsi(value, const_index(lo)), const_index(max(lo, hi)))


def if_else(condition: ir.Value, result_types: list[ir.Type], then_fn, else_fn) -> list[ir.Value]:
    """scf.if with results; the branches return lists of values."""
    op = scf.IfOp(condition, result_types, has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.yield_(list(then_fn()))
    with ir.InsertionPoint(op.else_block):
        scf.yield_(list(else_fn()))
    return list(op.results)


# ---------------------------------------------------------------------------
# The emitter
# ---------------------------------------------------------------------------


class Elemental:
    """Emits elements of the instructions of one subgraph (or one epilogue)."""

    def __init__(self, fusion, tensors: dict, current=None, injected: dict | None = None,
                 inline_all: bool = False):
        self.fusion = fusion          # FusionBuilder: partition, functions, locations
        self.tensors = tensors        # parameter instruction -> tensor value
        self.current = current        # the Subgraph being emitted
        self.injected = injected or {}
        self.inline_all = inline_all
        self.scopes: list[dict] = [{}]

    # -- caching per region ----------------------------------------------------

    def _lookup(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def in_region(self, fn):
        """Runs `fn` with a fresh cache scope: values made inside a region must not
        be reused outside it."""
        self.scopes.append({})
        try:
            return fn()
        finally:
            self.scopes.pop()

    # -- entry point -------------------------------------------------------------

    def value(self, instr, indices) -> list[ir.Value]:
        """The element(s) of `instr` at `indices`: one value per tuple leaf."""
        key = (instr, tuple(indices))
        found = self._lookup(key)
        if found is not None:
            return found
        with self.fusion.location(instr):
            result = self._emit(instr, list(indices))
        self.scopes[-1][key] = result
        return result

    def scalar(self, instr, indices) -> ir.Value:
        return self.value(instr, indices)[0]

    def dim(self, d) -> ir.Value:
        """A dimension (int or symbol) as an index value."""
        return dim_value(self.tensors, d)

    def _emit(self, instr, indices) -> list[ir.Value]:
        if instr in self.injected:
            return list(self.injected[instr])
        if instr.opcode == "parameter":
            return [self._extract_parameter(instr, indices)]
        owner = self.fusion.partition.of(instr)
        emit_here = (self.inline_all or owner is None or owner is self.current)
        if not emit_here and owner.root is instr:
            return self.fusion.call(owner, self.tensors, indices)
        if not emit_here:
            raise HloUnsupportedError(f"{where(instr)}: not reachable from subgraph "
                                      f"{self.current.name if self.current else '?'}")
        return self._emit_here(instr, indices)

    def _extract_parameter(self, instr, indices) -> ir.Value:
        if instr not in self.tensors:
            raise HloUnsupportedError(f"{where(instr)}: parameter has no tensor")
        value = tensor.extract(self.tensors[instr], indices)
        et = instr.shape.element
        if et.name in ("f16", "bf16"):
            value = arith.extf(compute_type(et), value)
        return value

    def _emit_here(self, instr, indices) -> list[ir.Value]:
        op = instr.opcode
        if op == "constant":
            return [self._constant(instr, indices)]
        if op in ELEMENTWISE:
            args = [self.scalar(o, self._operand_indices(instr, k, indices))
                    for k, o in enumerate(instr.operands)]
            return [ELEMENTWISE[op](self, instr, args)]
        special = SPECIAL.get(op)
        if special is not None:
            return special(self, instr, indices)
        if op in INDEX_TRANSFORMS:
            return self._index_transform(instr, indices)
        raise HloUnsupportedError(f"{where(instr)}: opcode {op} has no elemental emitter")

    def _operand_indices(self, instr, k, indices):
        if instr.operands[k].shape.rank == 0:
            return []
        return indices

    def _constant(self, instr, indices) -> ir.Value:
        if instr.shape.rank == 0:
            value = literal_array(instr).reshape(()).item()
            return scalar_constant(instr.shape.element, value)
        # Array constants travel as extra kernel buffers (like XLA's constant buffers).
        buffer = self.fusion.constant_tensor(instr, self.tensors)
        value = tensor.extract(buffer, indices)
        et = instr.shape.element
        if et.name in ("f16", "bf16"):
            value = arith.extf(compute_type(et), value)
        return value

    def _index_transform(self, instr, indices) -> list[ir.Value]:
        op = instr.opcode
        if op == "pad":
            return [self._pad(instr, indices)]
        if op == "concatenate":
            return [self._concatenate(instr, indices, 0)]
        m = operand_map(instr, 0)
        operand_indices, _ = apply_map(m, indices)
        return self.value(instr.operands[0], operand_indices)

    def _pad(self, instr, indices) -> ir.Value:
        m = operand_map(instr, 0)
        operand_indices, inside = apply_map(m, indices)
        t = compute_type(instr.shape.element)
        if inside is None:
            return self.scalar(instr.operands[0], operand_indices)
        return if_else(inside, [t],
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[0], operand_indices)]),
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[1], [])]))[0]

    def _concatenate(self, instr, indices, k) -> ir.Value:
        m = operand_map(instr, k)
        operand_indices, inside = apply_map(m, indices)
        if k == len(instr.operands) - 1:
            return self.scalar(instr.operands[k], operand_indices)
        t = compute_type(instr.shape.element)
        return if_else(inside, [t],
                       lambda: self.in_region(lambda: [self.scalar(instr.operands[k], operand_indices)]),
                       lambda: self.in_region(lambda: [self._concatenate(instr, indices, k + 1)]))[0]

    # -- called computations (reducers, map) ----------------------------------

    def apply_computation(self, computation, args: list[ir.Value]) -> list[ir.Value]:
        """Emits a scalar computation (a reducer) on `args`; returns its root leaves."""
        values: dict = {}
        for instr in computation.post_order():
            with self.fusion.location(instr):
                values[instr] = self._scalar_instruction(instr, values, args)
        return values[computation.root]

    def _scalar_instruction(self, instr, values, args) -> list[ir.Value]:
        op = instr.opcode
        if op == "parameter":
            return [args[instr.parameter_number]]
        if op == "constant":
            return [scalar_constant(instr.shape.element, literal_array(instr).reshape(-1)[0].item())]
        if op == "tuple":
            return [v for o in instr.operands for v in values[o]]
        if op == "get-tuple-element":
            return [values[instr.operands[0]][instr.int_attr("index")]]
        if op in ELEMENTWISE:
            return [ELEMENTWISE[op](self, instr, [values[o][0] for o in instr.operands])]
        if op == "bitcast" and instr.shape.element != instr.operands[0].shape.element:
            # A scalar bitcast between types of one width (comparators of float
            # sorts) reinterprets the bits.
            return [_bitcast_convert(self, instr, [values[instr.operands[0]][0]])]
        if op in ("broadcast", "reshape", "bitcast") and instr.shape.size == 1:
            return values[instr.operands[0]]
        raise HloUnsupportedError(f"{where(instr)}: {op} is not supported in a scalar "
                                  f"(reducer) computation")


# ---------------------------------------------------------------------------
# Builders of instructions that are not elementwise or pure index transforms
# ---------------------------------------------------------------------------


def loop_nest(extents: list, inits: list[ir.Value], body) -> list[ir.Value]:
    """Nested scf.for over `extents` (ints or index values) carrying `inits`;
    body(ivs, carried) -> new."""
    if not extents:
        return list(body([], inits))

    def level(k, ivs, carried):
        upper = const_index(extents[k]) if isinstance(extents[k], int) else extents[k]
        loop = scf.ForOp(const_index(0), upper, const_index(1), carried)
        with ir.InsertionPoint(loop.body):
            new_ivs = ivs + [loop.induction_variable]
            inner = list(loop.inner_iter_args)
            if k + 1 == len(extents):
                out = body(new_ivs, inner)
            else:
                out = level(k + 1, new_ivs, inner)
            scf.yield_(list(out))
        return list(loop.results)
    return level(0, [], list(inits))


def reduce_operands(instr):
    n = len(instr.operands) // 2
    return instr.operands[:n], instr.operands[n:]


def _reduce(em: Elemental, instr, indices) -> list[ir.Value]:
    inputs, inits = reduce_operands(instr)
    dims = set(instr.dimensions())
    in_shape = inputs[0].shape
    reduced = [d for d in range(in_shape.rank) if d in dims]
    init_values = [em.scalar(i, []) for i in inits]
    reducer = instr.called_computation()

    def body(ivs, accs):
        full, it_kept, it_red = [], iter(indices), iter(ivs)
        for d in range(in_shape.rank):
            full.append(next(it_red) if d in dims else next(it_kept))

        def step():
            vals = [em.scalar(x, full) for x in inputs]
            return em.apply_computation(reducer, list(accs) + vals)
        return em.in_region(step)
    return loop_nest([_extent(em, in_shape.dims[d]) for d in reduced], init_values, body)


def _reduce_window(em: Elemental, instr, indices) -> list[ir.Value]:
    inputs, inits = reduce_operands(instr)
    window = instr.window()
    in_dims = inputs[0].shape.dims
    init_values = [em.scalar(i, []) for i in inits]
    reducer = instr.called_computation()
    types = [v.type for v in init_values]

    def body(ivs, accs):
        def step():
            positions, inside = window_input_positions(indices, ivs, window, in_dims)

            def apply():
                return em.in_region(lambda: em.apply_computation(
                    reducer, list(accs) + [em.scalar(x, positions) for x in inputs]))
            if inside is None:
                return apply()
            return if_else(inside, types, apply, lambda: list(accs))
        return em.in_region(step)
    return loop_nest(list(window["size"]), init_values, body)


def window_input_positions(out_positions, taps, window: dict, sizes):
    """Where window tap `taps` of output position `out_positions` reads the input
    (reduce-window, convolution; `window` as `HloInstruction.window()` gives it):
    p = s * stride + w * rhs_dilate - pad_low in the lhs-dilated input, an input
    element when 0 <= p <= (size - 1) * lhs_dilate and p % lhs_dilate == 0, at
    p / lhs_dilate; elsewhere padding. Returns (input index per dimension, i1
    'inside the input', or None where every tap is inside)."""
    positions, inside = [], None
    for d, (s, w) in enumerate(zip(out_positions, taps)):
        low, high = window["pad"][d]
        dilate = window["lhs_dilate"][d]
        p = apply_expr(Dim(0) * window["stride"][d] + Dim(1) * window["rhs_dilate"][d] - low,
                       [s, w])
        conditions = []
        if low > 0:
            conditions.append(arith.cmpi(arith.CmpIPredicate.sge, p, const_index(0)))
        if high > 0 or dilate > 1:
            conditions.append(arith.cmpi(arith.CmpIPredicate.slt, p,
                                         const_index((sizes[d] - 1) * dilate + 1)))
        if dilate > 1:
            conditions.append(arith.cmpi(arith.CmpIPredicate.eq,
                                         apply_expr(Dim(0) % dilate, [p]), const_index(0)))
            p = apply_expr(Dim(0) // dilate, [p])
        for c in conditions:
            inside = c if inside is None else arith.andi(inside, c)
        positions.append(p)
    return positions, inside


def _dot(em: Elemental, instr, indices) -> list[ir.Value]:
    lhs, rhs = instr.operands
    lb, rb = instr.int_list("lhs_batch_dims", ()), instr.int_list("rhs_batch_dims", ())
    lc, rc = instr.int_list("lhs_contracting_dims", ()), instr.int_list("rhs_contracting_dims", ())
    lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
    out_et = instr.shape.element
    batch_idx = indices[:len(lb)]
    lfree_idx = indices[len(lb):len(lb) + len(lfree)]
    rfree_idx = indices[len(lb) + len(lfree):]
    zero = scalar_constant(out_et, 0)

    def body(ivs, accs):
        def step():
            li = [None] * lhs.shape.rank
            ri = [None] * rhs.shape.rank
            for d, v in zip(lb, batch_idx):
                li[d] = v
            for d, v in zip(rb, batch_idx):
                ri[d] = v
            for d, v in zip(lfree, lfree_idx):
                li[d] = v
            for d, v in zip(rfree, rfree_idx):
                ri[d] = v
            for d, e, v in zip(lc, rc, ivs):
                li[d] = v
                ri[e] = v
            a = convert_value(em.scalar(lhs, li), lhs.shape.element, out_et)
            b = convert_value(em.scalar(rhs, ri), rhs.shape.element, out_et)
            if out_et.is_pred:
                return [arith.ori(accs[0], arith.andi(a, b))]
            if out_et.is_float:
                return [arith.addf(accs[0], arith.mulf(a, b))]
            return [arith.addi(accs[0], arith.muli(a, b))]
        return em.in_region(step)
    return loop_nest([_extent(em, lhs.shape.dims[d]) for d in lc], [zero], body)


def _extent(em: Elemental, d):
    return d if isinstance(d, int) else em.dim(d)


def _iota(em: Elemental, instr, indices) -> list[ir.Value]:
    dim = instr.int_attr("iota_dimension")
    et = instr.shape.element
    i = indices[dim]
    if et.is_float:
        as_int = arith.index_cast(ir.IntegerType.get_signless(64), i)
        return [convert_value(arith.sitofp(ir.F64Type.get(), as_int),
                              ELEMENT_TYPES["f64"], et)]
    return [arith.index_cast(compute_type(et), i)]


def _clamped_starts(em: Elemental, start_operands, operand_dims, sizes) -> list[ir.Value]:
    starts = []
    for op, d, s in zip(start_operands, operand_dims, sizes):
        v = to_index(em.scalar(op, []), op.shape.element)
        starts.append(clamp_index(v, 0, d - s))
    return starts


def _dynamic_slice(em: Elemental, instr, indices) -> list[ir.Value]:
    operand = instr.operands[0]
    starts = _clamped_starts(em, instr.operands[1:], operand.shape.dims, instr.shape.dims)
    m = operand_map(instr, 0)
    operand_indices, _ = apply_map(m, indices, starts)
    return em.value(operand, operand_indices)


def _dynamic_update_slice(em: Elemental, instr, indices) -> list[ir.Value]:
    operand, update = instr.operands[0], instr.operands[1]
    starts = _clamped_starts(em, instr.operands[2:], operand.shape.dims, update.shape.dims)
    inside = None
    local = []
    for i, s, size in zip(indices, starts, update.shape.dims):
        rel = arith.subi(i, s)
        c = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, rel, const_index(0)),
                       arith.cmpi(arith.CmpIPredicate.slt, rel, const_index(size)))
        inside = c if inside is None else arith.andi(inside, c)
        local.append(rel)
    t = compute_type(instr.shape.element)
    if inside is None:
        return em.value(update, [])
    return if_else(inside, [t], lambda: em.in_region(lambda: [em.scalar(update, local)]),
                   lambda: em.in_region(lambda: [em.scalar(operand, indices)]))


def gather_operand_index(em: Elemental, instr, indices) -> list[ir.Value]:
    """The operand index an output element of a gather reads (general form, with
    batching dimensions: operand dimension `operand_batching_dims[k]` is indexed by
    the output's batch index along start-indices dimension
    `start_indices_batching_dims[k]`, as `vmap` of a gather prints)."""
    operand, starts_op = instr.operands
    offset_dims = instr.int_list("offset_dims", ())
    collapsed = instr.int_list("collapsed_slice_dims", ())
    start_map = instr.int_list("start_index_map", ())
    operand_batching = instr.int_list("operand_batching_dims", ())
    indices_batching = instr.int_list("start_indices_batching_dims", ())
    if len(operand_batching) != len(indices_batching):
        raise HloUnsupportedError(f"{where(instr)}: operand_batching_dims and "
                                  f"start_indices_batching_dims differ in length")
    slice_sizes = instr.int_list("slice_sizes")
    ivd = instr.int_attr("index_vector_dim", starts_op.shape.rank)
    batch_idx = [v for d, v in enumerate(indices) if d not in offset_dims]
    offset_idx = [v for d, v in enumerate(indices) if d in offset_dims]
    rank = operand.shape.rank
    start = [const_index(0)] * rank
    for k, od in enumerate(start_map):
        idx = list(batch_idx)
        if ivd < starts_op.shape.rank:
            idx.insert(ivd, const_index(k))
        v = to_index(em.scalar(starts_op, idx), starts_op.shape.element)
        start[od] = clamp_index(v, 0, operand.shape.dims[od] - slice_sizes[od])
    for od, sd in zip(operand_batching, indices_batching):
        # batch_idx walks the start-indices dimensions without index_vector_dim.
        start[od] = batch_idx[sd if sd < ivd else sd - 1]
    window = [d for d in range(rank) if d not in collapsed and d not in operand_batching]
    full = list(start)
    for d, off in zip(window, offset_idx):
        full[d] = arith.addi(start[d], off)
    return full


def _gather(em: Elemental, instr, indices) -> list[ir.Value]:
    return em.value(instr.operands[0], gather_operand_index(em, instr, indices))


def _map(em: Elemental, instr, indices) -> list[ir.Value]:
    args = [em.scalar(o, indices) for o in instr.operands]
    return em.apply_computation(instr.called_computation(), args)


def _get_tuple_element(em: Elemental, instr, indices) -> list[ir.Value]:
    values = em.value(instr.operands[0], indices)
    return [values[instr.int_attr("index")]]


SPECIAL: dict[str, Callable] = {
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "dot": _dot,
    "iota": _iota,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "gather": _gather,
    "map": _map,
    "get-tuple-element": _get_tuple_element,
}


def _register_convolution() -> None:
    from .convolution import emit_convolution   # it builds on the helpers above
    SPECIAL["convolution"] = emit_convolution


_register_convolution()
