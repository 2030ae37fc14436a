"""f32 `math.tanh` -> the OpenCL C emitter's own tanh, in arith/math ops.

The emitter prints f32 tanh as a helper (emitter_opencl/helpers.py, `_TANH_FLOAT`):
within 1 ulp of the correctly rounded value and exactly +-1 wherever that value is
+-1, so that 1 - tanh(x)^2 is 0 in the tails. The SPIR-V conversion would otherwise
call the driver's OpenCL.std tanh, which is not exact there (Intel's gives 0.99999994
at 9.5), and the same kernel would differ between the two program formats. This
rewrite builds the same formula, step for step, before the conversion. f64 keeps the
driver's tanh, as the emitter's double helper does.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

# a + a^3 P(a^2) for |x| < 0.9: P's coefficients, highest degree first.
SMALL_POLY = (1.295281108e-03, -6.838821340e-03, 2.088465728e-02, -5.371329188e-02,
              1.333020627e-01, -3.333320320e-01)
# e^r for r in [-ln2/2, ln2/2]: degree-7 Taylor coefficients, highest degree first.
EXP_POLY = (1.98412698e-04, 1.38888889e-03, 8.33333333e-03, 4.16666667e-02,
            1.66666667e-01, 0.5, 1.0, 1.0)
SMALL_LIMIT = 0.9      # |x| from here on: 1 - 2 / (e^(2|x|) + 1)
CLAMP = 9.5            # the exact tanh rounds to 1 from 9.011 on
LOG2_E = 1.44269504089
ROUND_SHIFTER = 12582912.0        # 1.5 * 2^23: adding and subtracting it rounds to an integer
LN2_HI = 0.693145751953125        # k * LN2_HI is exact for the k that occur
LN2_LO = 1.42860682030941723e-06
SIGN_BIT = -0x80000000


def expand_f32_tanh(func) -> None:
    """Replaces every f32 (scalar or vector) `math.tanh` in `func`."""
    ops: list = []
    func.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name == "math.tanh" and _element_type(op.results[0].type) == ir.F32Type.get():
            with ir.InsertionPoint(op), op.location:
                result = _Builder(op.results[0].type).tanh(op.operands[0])
            op.results[0].replace_all_uses_with(result)
            op.erase()


def _element_type(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def _like(shape_of: ir.Type, element: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(shape_of).shape, element) if isinstance(shape_of, ir.VectorType) else element


class _Builder:
    """Builds at the current insertion point on values of `float_type` (f32 or a vector
    of f32) and the i32 type of the same shape."""

    def __init__(self, float_type: ir.Type):
        self.float_type = float_type
        self.int_type = _like(float_type, ir.IntegerType.get_signless(32))

    def constant(self, value: float) -> ir.Value:
        return self._splat(self.float_type, ir.FloatAttr.get(ir.F32Type.get(), value))

    def int_constant(self, value: int) -> ir.Value:
        return self._splat(self.int_type, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value))

    @staticmethod
    def _splat(t: ir.Type, element: ir.Attribute) -> ir.Value:
        if isinstance(t, ir.VectorType):
            return arith.constant(t, ir.DenseElementsAttr.get_splat(t, element))
        return arith.constant(t, element)

    def horner(self, x: ir.Value, coefficients) -> ir.Value:
        p = self.constant(coefficients[0])
        for c in coefficients[1:]:
            p = math.fma(x, p, self.constant(c))
        return p

    def as_int(self, v: ir.Value) -> ir.Value:
        return arith.bitcast(self.int_type, v)

    def tanh(self, x: ir.Value) -> ir.Value:
        a = math.absf(x)
        a2 = arith.mulf(a, a)
        small = math.fma(arith.mulf(a, a2), self.horner(a2, SMALL_POLY), a)
        t = arith.select(arith.cmpf(arith.CmpFPredicate.OGE, a, self.constant(SMALL_LIMIT)),
                         self.large(a), small)   # NaN takes `small`, which keeps it
        sign = arith.andi(self.as_int(x), self.int_constant(SIGN_BIT))
        return arith.bitcast(self.float_type, arith.ori(self.as_int(t), sign))

    def large(self, a: ir.Value) -> ir.Value:
        """1 - 2 / (e^y + 1), y = 2 min(|x|, 9.5); e^y = 2^k e^r, k = round(y / ln 2)."""
        clamped = arith.minnumf(arith.maxnumf(a, self.constant(0.0)), self.constant(CLAMP))
        y = arith.mulf(self.constant(2.0), clamped)
        shifter = self.constant(ROUND_SHIFTER)
        k = arith.subf(arith.addf(arith.mulf(y, self.constant(LOG2_E)), shifter), shifter)
        r = math.fma(k, self.constant(-LN2_HI), y)
        r = math.fma(k, self.constant(-LN2_LO), r)
        e_r = self.horner(r, EXP_POLY)
        exponent = arith.shli(arith.fptosi(self.int_type, k), self.int_constant(23))
        e = arith.bitcast(self.float_type, arith.addi(self.as_int(e_r), exponent))   # times 2^k
        one = self.constant(1.0)
        return arith.subf(one, arith.divf(self.constant(2.0), arith.addf(e, one)))
