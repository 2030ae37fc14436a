"""Elementwise `tt.*` ops (and Triton's integer division) as scalar arith/math code.

Every op here is a scalar function (`SCALAR_BUILDERS[name](conv, op, *scalars)`) that
builds upstream arith/math ops; `map_scalars` applies it to scalars directly, or inside a
`linalg.generic` when an operand is a tensor, exactly like the arith/math handler.

- `tt.mulhiui`: the high half of the unsigned product (i64 product for <= 32 bits,
  32-bit limbs for i64; `math`/`arith` have no umulhi).
- `tt.precise_sqrt` / `tt.precise_divf`: correctly rounded. OpenCL's `sqrt` and `/` on
  float may be off by up to 3 / 2.5 ulp, so f32 goes through f64, where the result
  rounded back to f32 is correctly rounded (53 >= 2 * 24 + 2); f64 ops are exact in
  OpenCL already. (A device without cl_khr_fp64 rejects such kernels at build time.)
- `tt.clampf`: `propagateNan = all` -> maximumf/minimumf, `none` -> maxnumf/minnumf.
- `tt.fp_to_fp`: extf, or truncf rounding to nearest even, or round-toward-zero: the
  nearest-even result stepped one ulp toward zero when it rounded away from zero. To fp8
  formats: truncf with an explicit `roundingmode`, which also keeps canonicalization
  from folding truncf(sitofp) into an int -> fp8 cast (the emitter rounds and saturates, see
  emitter_opencl/fp8.py).
- `tt.bitcast`: arith.bitcast (same width).
- `tt.extern_elementwise`: libdevice symbols (`__nv_asinf`, ...) mapped to math/arith ops
  (`EXTERN_FUNCTIONS`); others are rejected naming the symbol.
- `arith.divsi/remsi/divui/remui` with a divisor that is not a known constant: the
  divisor is guarded (0 -> 1, and -1 handled as negation for signed ops) so that a
  division by zero in a masked-off lane (loads default to 0) cannot trap the device
  (x86 CPUs raise SIGFPE); Triton leaves those results undefined.
"""
from __future__ import annotations

from typing import Callable, Dict

from mlir import ir
from mlir.dialects import arith, math

from opencl_abi import FP8E4B15_FROM_FLOAT, FP8E4B15_PREFIX, FP8E4B15_TO_FLOAT

from . import builders as b
from . import opencl_calls
from .pointer_types import pointee_of
from .values import Pointer, PointerTensor, Value

# arith.cmpf / cmpi predicates
_OGT = 2
_EQ, _NE, _SLT = 0, 1, 2


def map_scalars(conv, op, operands, result_types, fn) -> list:
    """`fn(*scalars) -> [results]` over scalars, or elementwise over tensors (scalar
    operands broadcast)."""
    shape = next((b.shape_of(t) for t in result_types if b.is_tensor(t)), None)
    if shape is None:
        shape = next((b.shape_of(o.type) for o in operands if b.is_tensor(o.type)), None)
    if shape is None:
        return list(fn(*operands))
    tensor_inputs = [o for o in operands if b.is_tensor(o.type)]

    def body(*args):
        it = iter(args)
        scalars = [next(it) if b.is_tensor(o.type) else o for o in operands]
        return list(fn(*scalars))

    out_types = [t if b.is_tensor(t) else ir.RankedTensorType.get(shape, t)
                 for t in result_types]
    return b.generic(tensor_inputs, b.parallel_maps(len(shape), len(tensor_inputs)),
                     out_types, body)


def convert(conv, op):
    """Handler for every op in SCALAR_BUILDERS."""
    builder = SCALAR_BUILDERS[op.name]
    if op.name == "tt.bitcast" and isinstance(conv.get(op.operands[0]), (Pointer, PointerTensor)):
        return pointer_bitcast(conv, op)
    operands = [conv.get_value(op, v).value for v in op.operands]
    result_types = [r.type for r in op.results]
    results = map_scalars(conv, op, operands, result_types,
                          lambda *s: builder(conv, op, *s))
    for old, new in zip(op.results, results):
        conv.set(old, Value(new))


# ---------------------------------------------------------------------------------------
# Scalar builders


def _int_type(width: int) -> ir.Type:
    return ir.IntegerType.get_signless(width)


def _float_width(t) -> int:
    return ir.FloatType(t).width


def mulhiui(conv, op, x, y):
    width = b.int_width(x.type)
    if width <= 32:
        i64 = _int_type(64)
        prod = arith.muli(arith.extui(i64, x), arith.extui(i64, y))
        return [arith.trunci(x.type, arith.shrui(prod, arith.constant(i64, width)))]
    if width != 64:
        raise conv.error(op, f"tt.mulhiui of i{width} is not supported")
    c32 = arith.constant(x.type, 32)
    mask = arith.constant(x.type, 0xFFFFFFFF)
    x_lo, x_hi = arith.andi(x, mask), arith.shrui(x, c32)
    y_lo, y_hi = arith.andi(y, mask), arith.shrui(y, c32)
    lo_lo = arith.muli(x_lo, y_lo)
    t = arith.addi(arith.muli(x_hi, y_lo), arith.shrui(lo_lo, c32))
    w1 = arith.addi(arith.andi(t, mask), arith.muli(x_lo, y_hi))
    hi = arith.addi(arith.muli(x_hi, y_hi), arith.shrui(t, c32))
    return [arith.addi(hi, arith.shrui(w1, c32))]


def _via_f64(x_type, fn, *args):
    """fn on f64 operands, rounded back once (exact for f32/f16/bf16 inputs)."""
    if _float_width(x_type) == 64:
        return fn(*args)
    f64 = ir.F64Type.get()
    wide = [arith.extf(f64, a) for a in args]
    return arith.truncf(x_type, fn(*wide))


def precise_sqrt(conv, op, x):
    return [_via_f64(x.type, math.sqrt, x)]


def precise_divf(conv, op, x, y):
    return [_via_f64(x.type, arith.divf, x, y)]


def approx_divf(conv, op, x, y):
    return [arith.divf(x, y)]


def clampf(conv, op, x, lo, hi):
    propagate = ir.IntegerAttr(op.attributes["propagateNan"]).value != 0
    if propagate:
        return [arith.minimumf(arith.maximumf(x, lo), hi)]
    return [arith.minnumf(arith.maxnumf(x, lo), hi)]


def bitcast(conv, op, x):
    dst = b.element_type(op.results[0].type)
    if pointee_of(dst) is not None:
        raise conv.error(op, "tt.bitcast between pointer types is not supported")
    if dst == x.type:
        return [x]
    return [arith.bitcast(dst, x)]


def pointer_bitcast(conv, op):
    """`!tt.ptr<i1>` -> `!tt.ptr<i8>` (Triton's bool loads/stores; bool buffers are byte
    buffers already) and casts to the buffer's own element type keep the buffer."""
    src = conv.get(op.operands[0])
    pointee = pointee_of(b.element_type(op.results[0].type))
    elem = ir.MemRefType(src.buffer.type).element_type
    if pointee != elem:
        # Triton's float atomic_max/min go through integer pointers: allowed when the
        # pointers reach nothing but atomics (atomics.py works on the bit patterns).
        same_width = b.is_integer(pointee) and isinstance(elem, ir.FloatType) and \
            b.int_width(pointee) == ir.FloatType(elem).width
        derived = _pointers_reaching_atomics(op.results[0])
        if not same_width or derived is None:
            raise conv.error(op, f"reinterpreting a {elem} buffer as {pointee} elements is "
                                 f"not supported")
        for pointer in derived:
            conv.reinterpreted[pointer] = pointee
    conv.set(op.results[0], src)


# Ops that derive pointers from the pointer in operand 0 without touching memory.
# Canonicalization moves a pointer bitcast above them (bitcast(splat p) -> splat(bitcast
# p)), so a reinterpreted pointer can reach its atomics through them.
_POINTER_DERIVING = ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape",
                     "tt.trans", "tt.addptr", "ttg.convert_layout")
_ATOMICS = ("tt.atomic_rmw", "tt.atomic_cas")


def _pointers_reaching_atomics(root: ir.Value):
    """`root` and every pointer derived from it, or None when one of them is used by
    anything but an atomic (as its pointer) or a pointer-deriving op."""
    found, pending = [], [root]
    while pending:
        pointer = pending.pop()
        found.append(pointer)
        for use in pointer.uses:
            name = use.owner.name
            if use.operand_number != 0 or name not in _ATOMICS + _POINTER_DERIVING:
                return None
            if name in _POINTER_DERIVING:
                pending.extend(use.owner.results)
    return found


def _float_kind(t) -> str:
    return str(t)


# fp8 types: Triton's fp8e5, fp8e4nv, fp8e4b8, fp8e5b16 as MLIR spells them, and
# f8E4M3B11FNUZ, which carries fp8e4b15 (see fp8e4b15_extern).
FP8_KINDS = ("f8E5M2", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ")
# tt.fp_to_fp rounding (rtz=0, rtne=1) -> arith.truncf roundingmode. Always explicit:
# canonicalization folds a truncf without one of an int->float cast into one int->fp8
# cast, which rounds once where Triton rounds twice (i16 -> f16 -> fp8) and which
# neither emitter has.
_TRUNCF_ROUNDING = {1: arith.RoundingMode.to_nearest_even, 0: arith.RoundingMode.toward_zero}


def fp_to_fp(conv, op, x):
    dst = b.element_type(op.results[0].type)
    src = x.type
    for t in (src, dst):
        if _float_kind(t) not in ("f16", "bf16", "f32", "f64") + FP8_KINDS:
            raise conv.error(op, f"{t} values are not supported on OpenCL")
    if src == dst:
        return [x]
    rounding = ir.IntegerAttr(op.attributes["rounding"]).value \
        if "rounding" in op.attributes else 1
    if _float_kind(dst) in FP8_KINDS:
        return [_truncf_to_fp8(conv, op, x, dst, rounding)]
    if _float_width(dst) == _float_width(src):
        # f16 <-> bf16: through f32 (exact), then round.
        x = arith.extf(ir.F32Type.get(), x)
    elif _float_width(dst) > _float_width(src):
        return [arith.extf(dst, x)]
    rounded = arith.truncf(dst, x)
    if rounding == 1:  # rtne
        return [rounded]
    return [round_toward_zero(rounded, x)]


def _truncf_to_fp8(conv, op, x, dst, rounding: int):
    """An fp8 value from a wider float (or another fp8 format, through f32): truncf with
    the rounding mode; the emitter's rounding saturates out-of-range values."""
    if rounding not in _TRUNCF_ROUNDING:
        raise conv.error(op, f"rounding mode {rounding} of a conversion to {dst} is not "
                             f"supported (rtne and rtz are)")
    if _float_kind(x.type) in FP8_KINDS:
        x = arith.extf(ir.F32Type.get(), x)
    return arith.truncf(dst, x, roundingmode=_TRUNCF_ROUNDING[rounding])


def round_toward_zero(rounded, x):
    """`rounded` (x rounded to nearest even) stepped one ulp toward zero when it is
    larger in magnitude than x. Finite values overflowing to inf step back to the
    largest finite value; NaN compares false and stays."""
    back = arith.extf(x.type, rounded)
    away = arith.cmpf(_OGT, math.absf(back), math.absf(x))
    ibits = _int_type(_float_width(rounded.type))
    bits = arith.bitcast(ibits, rounded)
    stepped = arith.bitcast(rounded.type, arith.subi(bits, arith.constant(ibits, 1)))
    return arith.select(away, stepped, rounded)


# ---------------------------------------------------------------------------------------
# Integer division


def _guarded_division(name):
    signed = name in ("arith.divsi", "arith.remsi")

    def build(conv, op, x, y):
        t = x.type
        if b.constant_int_of(y) not in (None, 0, -1):
            return [ir.Operation.create(name, results=[t], operands=[x, y]).result]
        zero, one = arith.constant(t, 0), arith.constant(t, 1)
        is_zero = arith.cmpi(_EQ, y, zero)
        if signed:
            minus_one = arith.constant(t, -1)
            is_minus_one = arith.cmpi(_EQ, y, minus_one)
            safe = arith.select(arith.ori(is_zero, is_minus_one), one, y)
        else:
            safe = arith.select(is_zero, one, y)
        result = ir.Operation.create(name, results=[t], operands=[x, safe]).result
        if signed:
            # x / -1 == -x (wrapping), x % -1 == 0
            special = arith.subi(zero, x) if name == "arith.divsi" else zero
            result = arith.select(is_minus_one, special, result)
        return [result]

    return build


# ---------------------------------------------------------------------------------------
# libdevice


def _saturate(x):
    zero = arith.constant(x.type, 0.0)
    one = arith.constant(x.type, 1.0)
    return arith.minnumf(arith.maxnumf(x, zero), one)


def _signbit(x):
    ibits = _int_type(_float_width(x.type))
    bits = arith.bitcast(ibits, x)
    return arith.extui(ir.IntegerType.get_signless(32),
                       arith.cmpi(2, bits, arith.constant(ibits, 0)))  # slt


def _fdim(x, y):
    diff = arith.subf(x, y)
    zero = arith.constant(x.type, 0.0)
    return arith.select(arith.cmpf(_OGT, x, y), diff,
                        arith.select(arith.cmpf(14, x, y), arith.addf(x, y), zero))


def _exp10(x):
    return math.powf(arith.constant(x.type, 10.0), x)


def _to_i32(v):
    return arith.extui(ir.IntegerType.get_signless(32), v)


# Base names (without `__nv_`, `fast_` and the trailing `f` of float variants).
EXTERN_FUNCTIONS: Dict[str, Callable] = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh,
    "atan": math.atan, "atan2": math.atan2, "atanh": math.atanh, "cbrt": math.cbrt,
    "ceil": math.ceil, "copysign": math.copysign, "cos": math.cos, "cosh": math.cosh,
    "erf": math.erf, "erfc": math.erfc, "exp": math.exp, "exp2": math.exp2,
    "exp10": _exp10, "expm1": math.expm1, "fabs": math.absf, "floor": math.floor,
    "fma": math.fma, "fmod": arith.remf, "log": math.log, "log10": math.log10,
    "log1p": math.log1p, "log2": math.log2, "pow": math.powf, "rint": math.roundeven,
    "nearbyint": math.roundeven, "round": math.round, "rsqrt": math.rsqrt,
    "frsqrt_rn": math.rsqrt, "sin": math.sin, "sinh": math.sinh, "sqrt": math.sqrt,
    "tan": math.tan, "tanh": math.tanh, "trunc": math.trunc, "saturate": _saturate,
    "fdim": _fdim, "fmax": arith.maxnumf, "fmin": arith.minnumf,
    "isnan": lambda x: _to_i32(math.isnan(x)), "isinf": lambda x: _to_i32(math.isinf(x)),
    "isnand": lambda x: _to_i32(math.isnan(x)), "isinfd": lambda x: _to_i32(math.isinf(x)),
    "finite": lambda x: _to_i32(math.isfinite(x)),
    "isfinited": lambda x: _to_i32(math.isfinite(x)),
    "signbit": _signbit, "signbitd": _signbit,
    "fdividef": arith.divf, "div_rn": None, "fdiv_rn": None, "ddiv_rn": None,
    "sqrt_rn": None, "fsqrt_rn": None, "dsqrt_rn": None,
    "frcp_rn": None, "drcp_rn": None,
    "fadd_rn": arith.addf, "dadd_rn": arith.addf, "fsub_rn": arith.subf,
    "dsub_rn": arith.subf, "fmul_rn": arith.mulf, "dmul_rn": arith.mulf,
    "fmaf_rn": math.fma, "fma_rn": math.fma,
    "powi": math.fpowi,
    "abs": math.absi, "llabs": math.absi, "clz": math.ctlz, "clzll": math.ctlz,
    "popc": math.ctpop, "popcll": math.ctpop,
    "umulhi": None, "umul64hi": None,
    "float_as_int": None, "int_as_float": None, "float_as_uint": None,
    "uint_as_float": None, "double_as_longlong": None, "longlong_as_double": None,
}


def _extern_builder(symbol: str):
    """The scalar builder for a libdevice symbol, or None."""
    name = symbol[len("__nv_"):] if symbol.startswith("__nv_") else symbol
    if name.startswith("fast_"):
        name = name[len("fast_"):]
    candidates = [name]
    if name.endswith("f"):
        candidates.append(name[:-1])
    for candidate in candidates:
        if candidate in EXTERN_FUNCTIONS:
            return candidate, EXTERN_FUNCTIONS[candidate]
    return None, None


def _special_extern(name, conv, op, args):
    result_type = b.element_type(op.results[0].type)
    if name in ("div_rn", "fdiv_rn", "ddiv_rn"):
        return precise_divf(conv, op, *args)[0]
    if name in ("sqrt_rn", "fsqrt_rn", "dsqrt_rn"):
        return precise_sqrt(conv, op, *args)[0]
    if name in ("frcp_rn", "drcp_rn"):
        one = arith.constant(args[0].type, 1.0)
        return precise_divf(conv, op, one, args[0])[0]
    if name in ("umulhi", "umul64hi"):
        return mulhiui(conv, op, *args)[0]
    if name in ("float_as_int", "int_as_float", "float_as_uint", "uint_as_float",
                "double_as_longlong", "longlong_as_double"):
        return arith.bitcast(result_type, args[0])
    raise conv.error(op, f"libdevice function {name} is not supported")


# fp8e4b15 (Triton's: fp8e4nv's layout with exponent bias 15, no NaN or infinity) has the
# bit patterns of f8E4M3B11FNUZ (bias 11) holding 16 times the value, except 0x80: -0
# here, NaN there (which has no -0). Conversions scale by 16 (exactly) around that type,
# so MLIR folds constants by its own semantics and gets the same bits.
_FP8E4B15_SCALE = 16.0
# Triton's conversion to fp8e4b15 (NVIDIA GPUs) saturates |x| at 1.75, NaN included.
_FP8E4B15_LARGEST_STORED = 1.75
_FP8E4B15_NEGATIVE_ZERO = -128  # 0x80 as i8


def fp8e4b15_extern(conv, op, symbol: str, x):
    """The backend's fp8e4b15 casts (compiler.py), on the i8 bits Triton keeps."""
    if symbol == FP8E4B15_TO_FLOAT:
        return _fp8e4b15_to_float(x, b.element_type(op.results[0].type))
    rounding = {v: k for k, v in FP8E4B15_FROM_FLOAT.items()}[symbol]
    return _fp8e4b15_from_float(conv, op, x, 0 if rounding == "rtz" else 1)


def _fp8e4b15_to_float(bits, result_type):
    f32 = ir.F32Type.get()
    scaled = arith.extf(f32, arith.bitcast(ir.Type.parse("f8E4M3B11FNUZ"), bits))
    value = arith.mulf(scaled, arith.constant(f32, 1.0 / _FP8E4B15_SCALE))
    negative_zero = arith.cmpi(_EQ, bits, arith.constant(bits.type, _FP8E4B15_NEGATIVE_ZERO))
    value = arith.select(negative_zero, arith.constant(f32, -0.0), value)
    if result_type == f32:
        return value
    # every fp8e4b15 value is exact in f16, bf16 and f64
    cast = arith.extf if _float_width(result_type) > 32 else arith.truncf
    return cast(result_type, value)


def _fp8e4b15_from_float(conv, op, x, rounding: int):
    if _float_kind(x.type) in FP8_KINDS:
        x = arith.extf(ir.F32Type.get(), x)
    # |x| clamped (NaN -> 1.75, as Triton's conversion does), sign kept, then scaled
    clamped = math.copysign(
        arith.minnumf(math.absf(x), arith.constant(x.type, _FP8E4B15_LARGEST_STORED)), x)
    scaled = arith.mulf(clamped, arith.constant(x.type, _FP8E4B15_SCALE))
    fp8 = _truncf_to_fp8(conv, op, scaled, ir.Type.parse("f8E4M3B11FNUZ"), rounding)
    bits = arith.bitcast(_int_type(8), fp8)
    # a zero result keeps the sign of x (the other type has no -0)
    int_type = _int_type(_float_width(x.type))
    negative = arith.cmpi(_SLT, arith.bitcast(int_type, x), arith.constant(int_type, 0))
    zero = arith.cmpi(_EQ, bits, arith.constant(bits.type, 0))
    return arith.select(arith.andi(negative, zero),
                        arith.constant(bits.type, _FP8E4B15_NEGATIVE_ZERO), bits)


def extern_elementwise(conv, op, *args):
    symbol = ir.StringAttr(op.attributes["symbol"]).value
    if symbol.startswith(FP8E4B15_PREFIX):
        return [fp8e4b15_extern(conv, op, symbol, *args)]
    name, fn = _extern_builder(symbol)
    if name is None:
        return [_opencl_call(conv, op, symbol, args)]
    if fn is None:
        return [_special_extern(name, conv, op, args)]
    result = fn(*args)
    result_type = b.element_type(op.results[0].type)
    if result.type != result_type:
        raise conv.error(op, f"extern function '{symbol}' returns {result_type}, "
                             f"expected {result.type}")
    return [result]


def _opencl_call(conv, op, symbol, args):
    """A libdevice function that is an OpenCL builtin or one of the emitter's helpers."""
    base = symbol.removeprefix("__nv_")
    for candidate in (base, base.removesuffix("f")):
        found = opencl_calls.opencl_function(candidate)
        if found is not None:
            result_type = b.element_type(op.results[0].type)
            return opencl_calls.call(conv, *found, args, result_type)
    raise conv.error(op, f"extern function '{symbol}' has no OpenCL equivalent here")


SCALAR_BUILDERS: Dict[str, Callable] = {
    "tt.mulhiui": mulhiui,
    "tt.precise_sqrt": precise_sqrt,
    "tt.precise_divf": precise_divf,
    "tt.approx_divf": approx_divf,
    "tt.clampf": clampf,
    "tt.bitcast": bitcast,
    "tt.fp_to_fp": fp_to_fp,
    "tt.extern_elementwise": extern_elementwise,
    **{name: _guarded_division(name) for name in
       ("arith.divsi", "arith.remsi", "arith.divui", "arith.remui")},
}
