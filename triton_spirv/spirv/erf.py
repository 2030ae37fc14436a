"""f32 `math.erf` -> the OpenCL C emitter's own erf, in arith/math ops.

The emitter prints f32 erf as a helper (emitter_opencl/helpers.py, `_ERF_FLOAT`): the
CPU runtimes' erf on vectors runs lane by lane, and the helper is within 2 ulp and
exactly +-1 wherever the correctly rounded value is. The SPIR-V conversion would
otherwise call the driver's OpenCL.std erf (Intel's: 4 ulp, and not +-1 in the tails),
and the same kernel would differ between the two program formats. This rewrite builds
the same formula, step for step, before the conversion. f64 keeps the driver's erf, as
the emitter's double helper does.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from .tanh import _Builder, _element_type

# x + x P(x^2) for |x| <= SMALL_LIMIT: P's coefficients, highest degree first.
SMALL_POLY = (-5.96761703e-4, 4.99119423e-3, -2.67681349e-2, 1.12819925e-1,
              -3.76125336e-1, 1.28379166e-1)
SMALL_LIMIT = 0.927734375
# Above it 1 - e^Q(|x|), Q(t) = t (((((Q0 t + Q1) t^2 + (Q2 t + Q3)) t + Q4) t + Q5) t + Q6) - t.
Q_HIGH = (-1.72853470e-5, 3.83197126e-4)
Q_MIDDLE = (-3.88396438e-3, 2.42546219e-2)
Q_LOW = (-1.06777877e-1, -6.34846687e-1, -1.28717512e-1)


def expand_f32_erf(func) -> None:
    """Replaces every f32 (scalar or vector) `math.erf` in `func`."""
    ops: list = []
    func.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name == "math.erf" and _element_type(op.results[0].type) == ir.F32Type.get():
            with ir.InsertionPoint(op), op.location:
                result = _erf(_Builder(op.results[0].type), op.operands[0])
            op.results[0].replace_all_uses_with(result)
            op.erase()


def _erf(b: _Builder, x: ir.Value) -> ir.Value:
    t = math.absf(x)
    s = arith.mulf(x, x)
    small = math.fma(b.horner(s, SMALL_POLY), x, x)
    q = math.fma(t, b.constant(Q_HIGH[0]), b.constant(Q_HIGH[1]))
    q = math.fma(q, s, math.fma(t, b.constant(Q_MIDDLE[0]), b.constant(Q_MIDDLE[1])))
    for c in Q_LOW:
        q = math.fma(q, t, b.constant(c))
    q = math.fma(q, t, arith.negf(t))
    large = math.copysign(arith.subf(b.constant(1.0), math.exp(q)), x)
    # NaN takes `small`, which keeps it
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, t, b.constant(SMALL_LIMIT)),
                        large, small)
