"""Helpers for libdevice functions without an OpenCL C builtin of the same meaning
(triton_spirv/ttir_to_linalg/opencl_calls.py names them): arithmetic with a directed
rounding mode, and a few short exact bit and math functions.

OpenCL C 1.2 has no rounding-mode control for arithmetic, so a directed rounding is
computed exactly:
- float: in double, where the product, quotient and square root of floats either are
  exact or lie farther than a double ulp from every float, so `convert_float_rtX`
  rounds them as the exact value; sums (and fma) are moved one double ulp toward the
  exact value when their double rounding landed on a float (`exact_for_float`).
- double: the round-to-nearest result and the sign of its error, from an error-free
  transformation (two-sum, fma residuals), then one `nextafter` step in the mode's
  direction (`round_rX_double`). Overflow to infinity counts as an error towards the
  finite side. Results whose error underflows (subnormal products and quotients) may
  miss the step.
Each helper is named `<family>_<C type>` (`div_rz_float`), as the emitter asks for it.
"""

from __future__ import annotations

MODES = {"rd": "rtn", "ru": "rtp", "rz": "rtz"}

_FIXED: dict[str, str] = {
    "exact_for_float": """\
static inline double exact_for_float(double s, double error) {
  /* s = a + b rounded to double, error = the exact sum - s. A float rounding of s
     rounds the exact sum too, except where s is itself a float: step off it. */
  if (error != 0.0 && (double)(float)s == s)
    s = nextafter(s, error > 0.0 ? (double)INFINITY : -(double)INFINITY);
  return s;
}""",
    "two_sum_error": """\
static inline double two_sum_error(double a, double b, double s) {
  /* The exact a + b minus s = a + b rounded (Knuth's two-sum; exact for finite s). */
  double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}""",
    "round_rd_double": """\
static inline double round_rd_double(double s, double error) {
  return error < 0.0 ? nextafter(s, -(double)INFINITY) : s;
}""",
    "round_ru_double": """\
static inline double round_ru_double(double s, double error) {
  return error > 0.0 ? nextafter(s, (double)INFINITY) : s;
}""",
    "round_rz_double": """\
static inline double round_rz_double(double s, double error) {
  return (error < 0.0 && s > 0.0) || (error > 0.0 && s < 0.0) ? nextafter(s, 0.0) : s;
}""",
    "sum_error_double": """\
static inline double sum_error_double(double a, double b, double s) {
  /* An infinite sum of finite operands overflowed: the exact sum lies on the finite
     side. */
  if (isinf(s) && isfinite(a) && isfinite(b))
    return -s;
  return two_sum_error(a, b, s);
}""",
    "fma_error_double": """\
static inline double fma_error_double(double a, double b, double c, double r) {
  /* The sign of a * b + c - r for r = fma(a, b, c): Boldo and Muller's ErrFma writes
     that error exactly as r2 + r3 with |r3| <= ulp(r2) / 2; this is r2. */
  if (isinf(r) && isfinite(a) && isfinite(b) && isfinite(c))
    return -r;
  double u1 = a * b;
  double u2 = fma(a, b, -u1);
  double alpha1 = c + u2;
  double alpha2 = two_sum_error(c, u2, alpha1);
  double beta1 = u1 + alpha1;
  double beta2 = two_sum_error(u1, alpha1, beta1);
  return ((beta1 - r) + beta2) + alpha2;
}""",
}
_DEPENDS: dict[str, list[str]] = {"fma_error_double": ["two_sum_error"]}

_FLOAT_TEMPLATES = {
    "add": ("float a, float b", "exact_for_float((double)a + (double)b, "
            "two_sum_error(a, b, (double)a + (double)b))", ["exact_for_float", "two_sum_error"]),
    "sub": ("float a, float b", "exact_for_float((double)a - (double)b, "
            "two_sum_error(a, -(double)b, (double)a - (double)b))",
            ["exact_for_float", "two_sum_error"]),
    "mul": ("float a, float b", "(double)a * (double)b", []),
    "div": ("float a, float b", "(double)a / (double)b", []),
    "rcp": ("float a", "1.0 / (double)a", []),
    "sqrt": ("float a", "sqrt((double)a)", []),
    "fma": ("float a, float b, float c", "exact_for_float((double)a * b + c, "
            "two_sum_error((double)a * b, c, (double)a * b + c))",
            ["exact_for_float", "two_sum_error"]),
}

# double: (parameters, the round-to-nearest result s, the sign of (exact - s): NaN
# where s is exact though the residual is not a number, e.g. 1 / 0 or inf * 2;
# products and quotients that overflowed get an infinite residual of the right sign).
_DOUBLE_TEMPLATES = {
    "add": ("double a, double b", "a + b", "sum_error_double(a, b, s)",
            ["two_sum_error", "sum_error_double"]),
    "sub": ("double a, double b", "a - b", "sum_error_double(a, -b, s)",
            ["two_sum_error", "sum_error_double"]),
    "mul": ("double a, double b", "a * b", "fma(a, b, -s)", []),
    "div": ("double a, double b", "a / b", "b < 0.0 ? -fma(-s, b, a) : fma(-s, b, a)", []),
    "rcp": ("double a", "1.0 / a", "a < 0.0 ? -fma(-s, a, 1.0) : fma(-s, a, 1.0)", []),
    "sqrt": ("double a", "sqrt(a)", "fma(-s, s, a)", []),
    "fma": ("double a, double b, double c", "fma(a, b, c)", "fma_error_double(a, b, c, s)",
            ["fma_error_double"]),
}

for _op, (_params, _exact, _deps) in _FLOAT_TEMPLATES.items():
    for _mode, _rtx in MODES.items():
        _name = f"{_op}_{_mode}_float"
        _FIXED[_name] = (f"static inline float {_name}({_params}) {{\n"
                         f"  return convert_float_{_rtx}({_exact});\n}}")
        _DEPENDS[_name] = _deps
for _op, (_params, _nearest, _error, _deps) in _DOUBLE_TEMPLATES.items():
    for _mode in MODES:
        _name = f"{_op}_{_mode}_double"
        _FIXED[_name] = (f"static inline double {_name}({_params}) {{\n"
                         f"  double s = {_nearest};\n"
                         f"  return round_{_mode}_double(s, {_error});\n}}")
        _DEPENDS[_name] = _deps + [f"round_{_mode}_double"]

_FIXED.update({
    "llrint_float": "static inline long llrint_float(float x) {\n  return convert_long_sat(rint(x));\n}",
    "llrint_double": "static inline long llrint_double(double x) {\n  return convert_long_sat(rint(x));\n}",
    "llround_float": "static inline long llround_float(float x) {\n  return convert_long_sat(round(x));\n}",
    "llround_double": "static inline long llround_double(double x) {\n  return convert_long_sat(round(x));\n}",
    "brev_int": """\
static inline int brev_int(int x) {
  uint v = as_uint(x);
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  v = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
  return as_int((v >> 16) | (v << 16));
}""",
    "brev_long": """\
static inline long brev_long(long x) {
  ulong v = as_ulong(x);
  return as_long(((ulong)as_uint(brev_int((int)v)) << 32) | as_uint(brev_int((int)(v >> 32))));
}""",
    # ffs: 1 + the index of the lowest set bit, 0 for 0.
    "ffs_int": "static inline int ffs_int(int x) {\n  return x == 0 ? 0 : (int)popcount(~x & (x - 1)) + 1;\n}",
    "ffs_long": "static inline int ffs_long(long x) {\n  return x == 0 ? 0 : (int)popcount(~x & (x - 1)) + 1;\n}",
    "sad_int": "static inline uint sad_int(int x, int y, uint z) {\n  return abs_diff(x, y) + z;\n}",
    "usad_int": "static inline uint usad_int(uint x, uint y, uint z) {\n  return abs_diff(x, y) + z;\n}",
    # The low 24 bits of each operand (sign-extended for mul24), the low 32 bits of
    # their product (PTX mul24.lo); OpenCL's mul24 is undefined outside 24 bits.
    "mul24_int": """\
static inline int mul24_int(int x, int y) {
  uint a = as_uint(x << 8) >> 8 | (x & 0x800000 ? 0xff000000u : 0u);
  uint b = as_uint(y << 8) >> 8 | (y & 0x800000 ? 0xff000000u : 0u);
  return as_int(a * b);
}""",
    "umul24_int": """\
static inline int umul24_int(uint x, uint y) {
  return as_int((x & 0xffffffu) * (y & 0xffffffu));
}""",
    # hadd / rhadd of unsigned operands (which the kernel holds as int).
    "uhadd_int": "static inline int uhadd_int(uint x, uint y) {\n  return as_int(hadd(x, y));\n}",
    "urhadd_int": "static inline int urhadd_int(uint x, uint y) {\n  return as_int(rhadd(x, y));\n}",
    "byte_perm_int": """\
static inline int byte_perm_int(int x, int y, int s) {
  /* Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x. */
  ulong v = ((ulong)as_uint(y) << 32) | as_uint(x);
  uint r = 0;
  for (int i = 0; i < 4; ++i)
    r |= (uint)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return as_int(r);
}""",
    "double2hiint_double": "static inline int double2hiint_double(double x) {\n  return as_int2(x).y;\n}",
    "double2loint_double": "static inline int double2loint_double(double x) {\n  return as_int2(x).x;\n}",
    "hiloint2double_int": "static inline double hiloint2double_int(int hi, int lo) {\n  return as_double((int2)(lo, hi));\n}",
})
for _t, _half, _sqrt_half in (("float", "0.5f", "0.70710678118654752f"), ("double", "0.5", "0.70710678118654752")):
    _FIXED.update({
        f"normcdf_{_t}": (f"static inline {_t} normcdf_{_t}({_t} x) {{\n"
                          f"  return {_half} * erfc(-x * {_sqrt_half});\n}}"),
        f"rhypot_{_t}": f"static inline {_t} rhypot_{_t}({_t} x, {_t} y) {{\n  return 1 / hypot(x, y);\n}}",
        f"norm3d_{_t}": (f"static inline {_t} norm3d_{_t}({_t} x, {_t} y, {_t} z) {{\n"
                         f"  return length(({_t}3)(x, y, z));\n}}"),
        f"norm4d_{_t}": (f"static inline {_t} norm4d_{_t}({_t} x, {_t} y, {_t} z, {_t} w) {{\n"
                         f"  return length(({_t}4)(x, y, z, w));\n}}"),
        f"rnorm3d_{_t}": (f"static inline {_t} rnorm3d_{_t}({_t} x, {_t} y, {_t} z) {{\n"
                          f"  return 1 / length(({_t}3)(x, y, z));\n}}"),
        f"rnorm4d_{_t}": (f"static inline {_t} rnorm4d_{_t}({_t} x, {_t} y, {_t} z, {_t} w) {{\n"
                          f"  return 1 / length(({_t}4)(x, y, z, w));\n}}"),
    })
_DEPENDS["brev_long"] = ["brev_int"]
for _t in ("float", "double"):
    _FIXED[f"rcbrt_{_t}"] = f"static inline {_t} rcbrt_{_t}({_t} x) {{\n  return rootn(x, -3);\n}}"

# Conversions from unsigned integers, which the kernel holds in signed C types.
for _src, (_ctype, _utype) in {"uint": ("int", "uint"), "ull": ("long", "ulong")}.items():
    for _dst in ("float", "double"):
        for _mode, _rtx in dict(MODES, rn="rte").items():
            _name = f"{_src}2{_dst}_{_mode}_{_ctype}"
            _FIXED[_name] = (f"static inline {_dst} {_name}({_utype} x) {{\n"
                             f"  return convert_{_dst}_{_rtx}(x);\n}}")

LIBDEVICE_HELPERS = _FIXED
LIBDEVICE_DEPENDS = _DEPENDS
