"""MLIR element types -> OpenCL C types, and MLIR constants -> C literals.

Every scalar MLIR type is reduced to a *kind* string (its MLIR spelling: "i32",
"index", "f16", ...). The tables below map kinds to the C type used in each role:
a value held in a C variable, an element of a `__global` buffer, an element of a
`__local` array, a by-value kernel argument. The roles differ for f16/bf16 (compute
in float, store as half / ushort bits), i1 (bool in registers, uchar in memory) and
index (always 64-bit `long`, so index arithmetic stays correct past 2^31 elements).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from . import fp8

INT_KINDS = ("i1", "i8", "i16", "i32", "i64", "index")
# fp8 formats (fp8.py): float values in registers, uchar bits in memory.
FP8_KINDS = fp8.KINDS
FLOAT_KINDS = ("f16", "bf16", "f32", "f64") + FP8_KINDS
SCALAR_KINDS = INT_KINDS + FLOAT_KINDS

# C type of an SSA value of that kind (a private variable).
VALUE_CTYPE = {
    "i1": "bool", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
    "index": "long", "f16": "float", "bf16": "float", "f32": "float", "f64": "double",
    **{kind: "float" for kind in FP8_KINDS},
}
# Same-width unsigned type, used where an op reads its operands as unsigned.
UNSIGNED_CTYPE = {
    "i1": "uchar", "i8": "uchar", "i16": "ushort", "i32": "uint", "i64": "ulong",
    "index": "ulong",
}
# Same-width signed type (i1 is widened: it only appears as a bool).
SIGNED_CTYPE = {"i1": "char", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
                "index": "long"}
# Element type of a `__global` buffer (see docs/memref-stage.md).
GLOBAL_ELEM_CTYPE = {
    "i1": "uchar", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
    "f16": "half", "bf16": "ushort", "f32": "float", "f64": "double",
    **{kind: "uchar" for kind in FP8_KINDS},
}
# Element type of a `__local` array: f16/bf16 tiles hold float (compute precision).
LOCAL_ELEM_CTYPE = dict(GLOBAL_ELEM_CTYPE, f16="float", bf16="float", index="long",
                        **{kind: "float" for kind in FP8_KINDS})
# By-value kernel arguments.
ARG_CTYPE = dict(GLOBAL_ELEM_CTYPE, f16="float", bf16="float", index="long",
                 **{kind: "float" for kind in FP8_KINDS})

CTYPE_BYTES = {"bool": 1, "char": 1, "uchar": 1, "short": 2, "ushort": 2, "half": 2,
               "int": 4, "uint": 4, "float": 4, "long": 8, "ulong": 8, "double": 8}

BIT_WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64,
             "f16": 16, "bf16": 16, "f32": 32, "f64": 64, **{kind: 8 for kind in FP8_KINDS}}

VECTOR_WIDTHS = (2, 3, 4, 8, 16)


def is_int(kind: str) -> bool:
    return kind in INT_KINDS


def is_float(kind: str) -> bool:
    return kind in FLOAT_KINDS


def is_narrow_float(kind: str) -> bool:
    """f16, bf16 and fp8: float in registers, rounded explicitly, stored in fewer bits."""
    return kind in ("f16", "bf16") + FP8_KINDS


def scalar_kind(t: ir.Type) -> str | None:
    """The kind of a scalar type, or None when `t` is not a supported scalar."""
    spelled = str(t)
    return spelled if spelled in SCALAR_KINDS else None


def vector_shape(t: ir.Type) -> tuple[str, int] | None:
    """(element kind, width) of a supported 1-D vector type, else None."""
    if not isinstance(t, ir.VectorType):
        return None
    vt = ir.VectorType(t)
    kind = scalar_kind(vt.element_type)
    if vt.rank != 1 or kind is None or vt.shape[0] not in VECTOR_WIDTHS:
        return None
    return kind, vt.shape[0]


def value_ctype(kind: str, width: int = 1) -> str:
    """C type of a private value; vectors of i1 default to int lanes (0 / -1)."""
    if width == 1:
        return VALUE_CTYPE[kind]
    base = "int" if kind == "i1" else VALUE_CTYPE[kind]
    return f"{base}{width}"


# ---------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------

INT_MIN_LITERAL = {32: "(-2147483647 - 1)", 64: "(-9223372036854775807L - 1)"}


def int_literal(value: int, kind: str, typed: bool = False) -> str:
    """An integer literal. `typed` spells the exact C type (needed as a builtin
    argument, where `max(long, int)` would be ambiguous)."""
    if kind == "i1":
        return "true" if value else "false"
    bits = BIT_WIDTH[kind]
    if bits == 32 and value == -(2**31) or bits == 64 and value == -(2**63):
        return INT_MIN_LITERAL[bits]
    text = str(value)
    if bits == 64 and (typed or not -(2**31) <= value < 2**31):
        text += "L"
    elif bits < 32 and typed:
        text = f"({VALUE_CTYPE[kind]}){text}"
    return f"({text})" if value < 0 else text


def float_literal(value: float, kind: str) -> str:
    """An exactly round-tripping literal: float kinds (f16/bf16/f32) get an `f`
    suffix, f64 none. Non-finite values use INFINITY / NAN."""
    double = kind == "f64"
    if math.isnan(value):
        return "(double)NAN" if double else "NAN"
    if math.isinf(value):
        text = "(double)INFINITY" if double else "INFINITY"
        return text if value > 0 else f"(-{text})"
    text = _shortest(np.float64(value) if double else np.float32(value))
    if not double:
        text += "f"
    return f"({text})" if text.startswith("-") else text


def _shortest(value: np.floating) -> str:
    """The shortest decimal that rounds back to exactly `value` in its own
    precision (numpy's Dragon4 `unique` mode), positional for ordinary magnitudes."""
    magnitude = abs(float(value))
    if magnitude == 0 or 1e-4 <= magnitude < 1e16:
        text = np.format_float_positional(value, unique=True, trim="0")
    else:
        text = np.format_float_scientific(value, unique=True, trim="0")
    return text.replace(".e", ".0e")
