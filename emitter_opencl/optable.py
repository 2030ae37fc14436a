"""Elementwise ops as C format strings.

Placeholders: `{a} {b} {c}` are the operands (always atoms: variable names or
parenthesized literals, so no precedence issues); `{ua} {ub}` the operands read as
unsigned (`(uint)a`, or `as_uint4(a)` for vectors); `{T}` the C type of the result.
A format that starts with a call (`max(...)`) gets exactly typed literal operands,
since OpenCL builtins are overloaded and `max(long, int)` would be ambiguous.
"""

from __future__ import annotations

import re

# Ops whose result is computed the same way for integer and float operands.
ELEMENTWISE = {
    "arith.addi": "{a} + {b}",
    "arith.subi": "{a} - {b}",
    "arith.muli": "{a} * {b}",
    # C `/` and `%` truncate toward zero, like divsi/remsi.
    "arith.divsi": "{a} / {b}",
    "arith.remsi": "{a} % {b}",
    "arith.divui": "{ua} / {ub}",
    "arith.remui": "{ua} % {ub}",
    "arith.floordivsi": "{a} / {b} - ({a} % {b} != 0 && ({a} < 0) != ({b} < 0))",
    "arith.ceildivsi": "{a} / {b} + ({a} % {b} != 0 && ({a} < 0) == ({b} < 0))",
    "arith.ceildivui": "{ua} / {ub} + ({ua} % {ub} != 0)",
    "arith.andi": "{a} & {b}",
    "arith.ori": "{a} | {b}",
    "arith.xori": "{a} ^ {b}",
    "arith.shli": "{a} << {b}",
    "arith.shrsi": "{a} >> {b}",
    "arith.shrui": "{ua} >> {b}",
    "arith.maxsi": "max({a}, {b})",
    "arith.minsi": "min({a}, {b})",
    "arith.maxui": "max({ua}, {ub})",
    "arith.minui": "min({ua}, {ub})",
    "arith.addf": "{a} + {b}",
    "arith.subf": "{a} - {b}",
    "arith.mulf": "{a} * {b}",
    "arith.divf": "{a} / {b}",
    "arith.remf": "fmod({a}, {b})",
    "arith.negf": "-{a}",
    # fmax/fmin return the non-NaN operand (IEEE maxNum), like maxnumf/minnumf;
    # maximumf/minimumf propagate NaN and order -0 < +0: helper functions.
    "arith.maxnumf": "fmax({a}, {b})",
    "arith.minnumf": "fmin({a}, {b})",
    "arith.maximumf": "maximum_{T}({a}, {b})",
    "arith.minimumf": "minimum_{T}({a}, {b})",
    "math.absf": "fabs({a})",
    "math.absi": "abs({a})",
    "math.acos": "acos({a})",
    "math.acosh": "acosh({a})",
    "math.asin": "asin({a})",
    "math.asinh": "asinh({a})",
    "math.atan": "atan({a})",
    "math.atan2": "atan2({a}, {b})",
    "math.atanh": "atanh({a})",
    "math.cbrt": "cbrt({a})",
    "math.ceil": "ceil({a})",
    "math.copysign": "copysign({a}, {b})",
    "math.cos": "cos({a})",
    "math.cosh": "cosh({a})",
    "math.ctlz": "clz({a})",
    "math.ctpop": "popcount({a})",
    # count trailing zeros (OpenCL 1.2 has no ctz): the bits below the lowest set
    # bit, all W bits for zero.
    "math.cttz": "popcount(~{ua} & ({ua} - 1))",
    "math.erf": "erf_{T}({a})",           # helpers.py: a vector polynomial form for float
    "math.erfc": "erfc({a})",
    "math.exp": "exp({a})",
    "math.exp2": "exp2({a})",
    "math.expm1": "expm1({a})",
    "math.floor": "floor({a})",
    "math.fma": "fma({a}, {b}, {c})",
    "math.fpowi": "pown({a}, (int){b})",
    "math.isfinite": "isfinite({a})",
    "math.isinf": "isinf({a})",
    "math.isnan": "isnan({a})",
    "math.log": "log({a})",
    "math.log10": "log10({a})",
    "math.log1p": "log1p({a})",
    "math.log2": "log2({a})",
    "math.powf": "pow({a}, {b})",
    "math.round": "round({a})",          # half away from zero, like math.round
    "math.roundeven": "rint({a})",       # default rounding mode is to nearest even
    "math.rsqrt": "rsqrt({a})",
    "math.sin": "sin({a})",
    "math.sinh": "sinh({a})",
    "math.sqrt": "sqrt({a})",
    "math.tan": "tan({a})",
    "math.tanh": "tanh_{T}({a})",         # helpers.py: a fast rational form for float
    "math.trunc": "trunc({a})",
    "vector.fma": "fma({a}, {b}, {c})",
}

# Vector comparisons and logic yield -1 (all bits) for true, scalars yield 1: the
# rounding corrections flip sign for vector operands.
VECTOR_ELEMENTWISE = {
    "arith.floordivsi": "{a} / {b} + (({a} % {b} != 0) & (({a} < 0) != ({b} < 0)))",
    "arith.ceildivsi": "{a} / {b} - (({a} % {b} != 0) & (({a} < 0) == ({b} < 0)))",
    "arith.ceildivui": "{ua} / {ub} - ({ua} % {ub} != 0)",
}

# i1 is a C bool: wrap-around arithmetic on one bit is xor / and; OpenCL's min and
# max have no bool overload, and signed i1 orders true (-1) below false (0).
I1_ELEMENTWISE = {
    "arith.addi": "{a} ^ {b}",
    "arith.subi": "{a} ^ {b}",
    "arith.muli": "{a} & {b}",
    "arith.maxsi": "{a} & {b}",
    "arith.minsi": "{a} | {b}",
    "arith.maxui": "{a} | {b}",
    "arith.minui": "{a} & {b}",
}

# Triton integers wrap on overflow; signed overflow is undefined in OpenCL C and LLVM
# exploits it (wrong Philox numbers in tl.rand). So +, -, * and << of signed integer
# kinds (not index: addresses never overflow) compute on the unsigned type of the same
# width and convert back (two's complement in OpenCL). Vectors reinterpret with as_T.
WRAPPING_KINDS = {"i8", "i16", "i32", "i64"}
WRAPPING = {
    "arith.addi": "({T})({ua} + {ub})",
    "arith.subi": "({T})({ua} - {ub})",
    "arith.muli": "({T})({ua} * {ub})",
    "arith.shli": "({T})({ua} << {b})",
}
VECTOR_WRAPPING = {
    "arith.addi": "as_{T}({ua} + {ub})",
    "arith.subi": "as_{T}({ua} - {ub})",
    "arith.muli": "as_{T}({ua} * {ub})",
    "arith.shli": "as_{T}({ua} << {b})",
}

# Ops whose C result is unsigned (or an `as_`-style reinterpretation is needed for
# vectors, where implicit conversions between vector types do not exist).
UNSIGNED_RESULT = {"arith.divui", "arith.remui", "arith.ceildivui", "arith.shrui",
                   "arith.maxui", "arith.minui", "math.absi", "math.cttz"}

# Helpers the formats above call (see helpers.py), by op.
HELPER_OF = {"arith.maximumf": "maximum", "arith.minimumf": "minimum", "math.tanh": "tanh",
             "math.erf": "erf"}

# arith.cmpi predicates, by enum value.
CMPI = {
    0: "{a} == {b}", 1: "{a} != {b}",
    2: "{a} < {b}", 3: "{a} <= {b}", 4: "{a} > {b}", 5: "{a} >= {b}",
    6: "{ua} < {ub}", 7: "{ua} <= {ub}", 8: "{ua} > {ub}", 9: "{ua} >= {ub}",
}
CMPI_SIGNED = {2, 3, 4, 5}

# arith.cmpf predicates, by enum value. C relational operators are false when an
# operand is NaN (ordered), `!=` is true (unordered); the rest negate one of those.
CMPF = {
    0: "false",
    1: "{a} == {b}", 2: "{a} > {b}", 3: "{a} >= {b}", 4: "{a} < {b}", 5: "{a} <= {b}",
    6: "islessgreater({a}, {b})",
    7: "isordered({a}, {b})",
    8: "!islessgreater({a}, {b})",
    9: "!({a} <= {b})", 10: "!({a} < {b})", 11: "!({a} >= {b})", 12: "!({a} > {b})",
    13: "{a} != {b}",
    14: "isunordered({a}, {b})",
    15: "true",
}


def is_call(fmt: str) -> bool:
    """Whether a format is a builtin call, whose literal operands must be typed."""
    return re.match(r"[\w{}]+\(", fmt) is not None
