"""arith casts as C expressions.

Scalars use C casts (OpenCL defines integer narrowing as two's-complement wrap);
vectors use convert_T / as_T, since C casts between vector types are not allowed.
f16 / bf16 / fp8 values live in float variables, so casts to them round explicitly and
bitcasts go through their 16- or 8-bit patterns. Each function returns None when the result
is the same C value as the operand (the emitter then aliases it).
"""

from __future__ import annotations

from . import ctypes_table as ct
from . import fp8
from .errors import error_at

CAST_OPS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.sitofp", "arith.uitofp",
            "arith.fptosi", "arith.fptoui", "arith.extf", "arith.truncf",
            "arith.index_cast", "arith.index_castui", "arith.bitcast"}
# Integer casts of constants fold to constants (so index_cast of 0 prints as 0).
FOLDABLE_INT_CASTS = {"arith.extsi", "arith.extui", "arith.trunci",
                      "arith.index_cast", "arith.index_castui"}


def fold_int_cast(name: str, value: int, src: str, dst: str) -> int:
    """The value of an integer cast of the constant `value`."""
    src_bits, dst_bits = ct.BIT_WIDTH[src], ct.BIT_WIDTH[dst]
    if name in ("arith.extui", "arith.index_castui"):
        value &= (1 << src_bits) - 1
    value &= (1 << dst_bits) - 1  # wrap to the destination width, then sign it
    if dst_bits > 1 and value >= 1 << (dst_bits - 1):
        value -= 1 << dst_bits
    return value


def _round_to(emitter, dst: str, src_ctype: str, text: str) -> str:
    """A float/double value rounded to an f16 or bf16 value (held in float)."""
    family = "half" if dst == "f16" else "bf16"
    return f"{emitter.helpers.need(f'round_to_{family}_{src_ctype}')}({text})"


def cast_expr(emitter, op, name: str, a: str, src: str, dst: str,
              width: int) -> str | None:
    """C for a scalar cast; None when the result is the same C value."""
    if dst in fp8.KINDS and name == "arith.truncf":
        return _truncf_to_fp8(emitter, op, a, src, dst)
    if (src in fp8.KINDS or dst in fp8.KINDS) and name not in ("arith.extf",
                                                                 "arith.bitcast"):
        # Triton casts fp8 to and from other floats only
        raise error_at(op, f"{name} from {src} to {dst} is not supported")
    return _SCALAR_CASTS[name](emitter, a, src, dst)


def _truncf_to_fp8(emitter, op, a: str, src: str, dst: str) -> str:
    """The nearest fp8 value (ties to even, or toward zero with roundingmode
    toward_zero), saturated; from double through float rounded to odd, so that the
    second rounding is exact (as round_to_bf16_double does)."""
    from mlir import ir
    mode = ir.IntegerAttr(op.attributes["roundingmode"]).value \
        if "roundingmode" in op.attributes else _TO_NEAREST_EVEN
    if mode not in (_TO_NEAREST_EVEN, _TOWARD_ZERO):
        raise error_at(op, f"arith.truncf to {dst} supports rounding to nearest even and "
                           f"toward zero only")
    if src == "f64":
        a = f"{emitter.helpers.need('double_to_float_round_to_odd')}({a})"
    return f"{emitter.helpers.need(fp8.round_to(dst, mode == _TOWARD_ZERO))}({a})"


_TO_NEAREST_EVEN, _TOWARD_ZERO = 0, 3  # arith::RoundingMode


def _signed_int_cast(emitter, a: str, src: str, dst: str) -> str | None:
    """extsi, index_cast: sign-extend or truncate."""
    T = ct.VALUE_CTYPE[dst]
    if src == "i1":
        return f"-({T}){a}"  # i1 true is -1 when read as signed
    return None if ct.VALUE_CTYPE[src] == T else f"({T}){a}"


def _unsigned_int_cast(emitter, a: str, src: str, dst: str) -> str:
    """extui, index_castui: zero-extend (through the unsigned type) or truncate."""
    T = ct.VALUE_CTYPE[dst]
    return f"({T}){a}" if src == "i1" else f"({T})({ct.UNSIGNED_CTYPE[src]}){a}"


def _trunci(emitter, a: str, src: str, dst: str) -> str:
    return f"{a} & 1" if dst == "i1" else f"({ct.VALUE_CTYPE[dst]}){a}"


def _int_to_float(unsigned: bool):
    def cast(emitter, a: str, src: str, dst: str) -> str:
        if src == "i1":
            one = ct.float_literal(1.0 if unsigned else -1.0, dst)
            return f"{a} ? {one} : {ct.float_literal(0.0, dst)}"
        if unsigned:
            a = f"({ct.UNSIGNED_CTYPE[src]}){a}"
        if dst in ("f16", "bf16"):
            # int -> float is exact up to 2^24 and f16 overflows at 65520, so only
            # bf16 of integers beyond 2^24 can round twice.
            return _round_to(emitter, dst, "float", f"(float){a}")
        return f"({ct.VALUE_CTYPE[dst]}){a}"
    return cast


def _float_to_int(unsigned: bool):
    # Out-of-range conversions are poison in MLIR and undefined in C; saturating
    # converts give what GPUs give (clamp to the range, NaN -> 0).
    def cast(emitter, a: str, src: str, dst: str) -> str:
        if dst == "i1":
            return f"{a} != 0"
        if unsigned:
            return f"({ct.VALUE_CTYPE[dst]})convert_{ct.UNSIGNED_CTYPE[dst]}_sat({a})"
        return f"convert_{ct.SIGNED_CTYPE[dst]}_sat({a})"
    return cast


def _extf(emitter, a: str, src: str, dst: str) -> str | None:
    T = ct.VALUE_CTYPE[dst]
    return None if ct.VALUE_CTYPE[src] == T else f"({T}){a}"


def _truncf(emitter, a: str, src: str, dst: str) -> str:
    if dst in ("f16", "bf16"):
        return _round_to(emitter, dst, ct.VALUE_CTYPE[src], a)
    return f"({ct.VALUE_CTYPE[dst]}){a}"


def _bitcast(emitter, a: str, src: str, dst: str) -> str | None:
    if src == dst:
        return None
    # f16/bf16 values are floats in registers: go through their 16-bit patterns.
    if src == "f16":
        a, src = f"{emitter.helpers.need('float_to_half_bits')}({a})", "i16"
    elif src == "bf16":
        a, src = f"{emitter.helpers.need('float_to_bf16_bits')}({a})", "i16"
    if dst == "f16":
        return f"{emitter.helpers.need('half_bits_to_float')}((ushort){a})"
    elif src in fp8.KINDS:
        a, src = f"{emitter.helpers.need(fp8.encode(src))}({a})", "i8"
    if dst == "bf16":
        return f"{emitter.helpers.need('bf16_bits_to_float')}((ushort){a})"
    if dst in fp8.KINDS:
        return f"{emitter.helpers.need(fp8.decode(dst))}((uchar){a})"
    T = ct.VALUE_CTYPE[dst]
    if ct.is_int(src) and ct.is_int(dst):
        return f"({T}){a}"
    return f"as_{T}({a})"


_SCALAR_CASTS = {
    "arith.extsi": _signed_int_cast,
    "arith.index_cast": _signed_int_cast,
    "arith.extui": _unsigned_int_cast,
    "arith.index_castui": _unsigned_int_cast,
    "arith.trunci": _trunci,
    "arith.sitofp": _int_to_float(unsigned=False),
    "arith.uitofp": _int_to_float(unsigned=True),
    "arith.fptosi": _float_to_int(unsigned=False),
    "arith.fptoui": _float_to_int(unsigned=True),
    "arith.extf": _extf,
    "arith.truncf": _truncf,
    "arith.bitcast": _bitcast,
}
assert set(_SCALAR_CASTS) == CAST_OPS


def vector_cast_expr(emitter, op, name: str, a: str, src: str, dst: str,
                     width: int) -> str | None:
    """Vector casts with convert_T / as_T. f16/bf16 lanes only widen (extf): the
    rounding helpers are scalar."""
    T = ct.value_ctype(dst, width)
    if (ct.is_narrow_float(src) or ct.is_narrow_float(dst)) and name != "arith.extf":
        raise error_at(op, f"vector casts to or from {src if ct.is_narrow_float(src) else dst}"
                           f" other than extf are not supported")
    if name == "arith.bitcast":
        return None if src == dst else f"as_{T}({a})"
    if name == "arith.extf" and ct.value_ctype(src, width) == T:
        return None
    if src == "i1":  # mask lanes are 0 / -1: negate first for zero-extension
        signed = name in ("arith.extsi", "arith.index_cast", "arith.sitofp")
        return f"convert_{T}({a})" if signed else f"convert_{T}(-{a})"
    if dst == "i1":
        raise error_at(op, "vector casts to i1 are not supported")
    if name in ("arith.extui", "arith.index_castui", "arith.uitofp"):
        a = emitter.unsigned(a, src, width)
    if name == "arith.fptosi":
        return f"convert_{ct.SIGNED_CTYPE[dst]}{width}_sat({a})"
    if name == "arith.fptoui":
        return f"as_{T}(convert_{ct.UNSIGNED_CTYPE[dst]}{width}_sat({a}))"
    return f"convert_{T}({a})"
