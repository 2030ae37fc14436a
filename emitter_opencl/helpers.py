"""Small OpenCL C functions the generated kernels call, printed once each before the
kernel when used. Names encode the C type they work on (OpenCL C 1.2 has no
overloading of user functions)."""

from __future__ import annotations

import re

from . import fp8

_FIXED = {
    # f16 values live in float registers (devices need not support cl_khr_fp16);
    # these go through a private 16-bit slot to get IEEE round-to-nearest-even.
    "float_to_half_bits": """\
static inline ushort float_to_half_bits(float x) {
  ushort bits;
  vstore_half_rte(x, 0, (__private half*)&bits);
  return bits;
}""",
    "half_bits_to_float": """\
static inline float half_bits_to_float(ushort bits) {
  return vload_half(0, (const __private half*)&bits);
}""",
    "round_to_half_float": """\
static inline float round_to_half_float(float x) {
  return half_bits_to_float(float_to_half_bits(x));
}""",
    "round_to_half_double": """\
static inline float round_to_half_double(double x) {
  ushort bits;
  vstore_half_rte(x, 0, (__private half*)&bits);  /* one rounding, from double */
  return vload_half(0, (const __private half*)&bits);
}""",
    # bf16 is the upper half of a float: round to nearest even on the low 16 bits,
    # and keep NaNs NaN (set a quiet bit so truncation cannot make them infinite).
    "float_to_bf16_bits": """\
static inline ushort float_to_bf16_bits(float x) {
  uint u = as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (ushort)((u >> 16) | 0x0040u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}""",
    "bf16_bits_to_float": """\
static inline float bf16_bits_to_float(ushort bits) {
  return as_float((uint)bits << 16);
}""",
    "round_to_bf16_float": """\
static inline float round_to_bf16_float(float x) {
  return bf16_bits_to_float(float_to_bf16_bits(x));
}""",
    # double -> bf16 in two steps would round twice; rounding to float to odd first
    # makes the second rounding exact.
    "round_to_bf16_double": """\
static inline float round_to_bf16_double(double x) {
  return round_to_bf16_float(double_to_float_round_to_odd(x));
}""",
}

# double -> float rounded to odd: the lost bits kept as a sticky lowest bit, so that a
# second rounding to a narrower format (at least two bits fewer) is exact.
_FIXED["double_to_float_round_to_odd"] = """\
static inline float double_to_float_round_to_odd(double x) {
  float f = convert_float_rtz(x);
  if ((double)f != x && !isnan(x))
    f = as_float(as_uint(f) | 1u);
  return f;
}"""

# 8/16-bit atomics work on the aligned 32-bit word around the element (atomics.py): the
# element's bit offset in that word, from its address and the device's byte order.
_FIXED["word_lane_shift"] = """\
static inline uint word_lane_shift(uintptr_t address, uint bytes) {
#ifdef __ENDIAN_LITTLE__
  return (uint)(address & 3u) * 8u;
#else
  return (4u - bytes - (uint)(address & 3u)) * 8u;
#endif
}"""

# Extension pragmas that 64-bit atomics need (atomics.py), printed with the helpers.
_FIXED["pragma_int64_atomics"] = (
    "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
    "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable")

_DEPENDS = {
    "round_to_half_float": ["float_to_half_bits", "half_bits_to_float"],
    "round_to_bf16_float": ["float_to_bf16_bits", "bf16_bits_to_float"],
    "round_to_bf16_double": ["round_to_bf16_float", "double_to_float_round_to_odd"],
}

# fp8 conversions (fp8.py): decode, round (nearest even / toward zero), encode per format.
_FIXED.update(fp8.helper_sources())
_DEPENDS.update(fp8.helper_dependencies())

# arith.maximumf / minimumf: NaN if either operand is NaN; for equal operands the
# bitwise and (or) of the two picks +0 over -0 for the maximum (-0 for the minimum).
_MINMAX_SCALAR = """\
static inline {T} {name}_{T}({T} a, {T} b) {{
  if (isnan(a) || isnan(b))
    return a + b;
  return a == b ? as_{T}(as_{U}(a) {bitop} as_{U}(b)) : {fn}(a, b);
}}"""
_MINMAX_VECTOR = """\
static inline {T} {name}_{T}({T} a, {T} b) {{
  {T} r = select({fn}(a, b), as_{T}(as_{U}(a) {bitop} as_{U}(b)), a == b);
  return select(r, a + b, isnan(a) | isnan(b));
}}"""

# math.tanh: OpenCL's tanh is exact but slow on CPU devices (PoCL: about 20x a
# polynomial); for float this rational approximation (the one Eigen and XLA:CPU use,
# absolute error below 1e-6) keeps elementwise kernels memory-bound. Doubles keep tanh.
_TANH_FLOAT = """\
static inline {T} tanh_{T}({T} x) {{
  x = clamp(x, ({T})(-7.90531110763549805f), ({T})(7.90531110763549805f));
  {T} x2 = x * x;
  {T} p = fma(x2, ({T})(-2.76076847742355e-16f), ({T})(2.00018790482477e-13f));
  p = fma(x2, p, ({T})(-8.60467152213735e-11f));
  p = fma(x2, p, ({T})(5.12229709037114e-08f));
  p = fma(x2, p, ({T})(1.48572235717979e-05f));
  p = fma(x2, p, ({T})(6.37261928875436e-04f));
  p = fma(x2, p, ({T})(4.89352455891786e-03f));
  {T} q = fma(x2, ({T})(1.19825839466702e-06f), ({T})(1.18534705686654e-04f));
  q = fma(x2, q, ({T})(2.26843463243900e-03f));
  q = fma(x2, q, ({T})(4.89352518554385e-03f));
  return x * p / q;
}}"""
_TANH_DOUBLE = """\
static inline {T} tanh_{T}({T} x) {{
  return tanh(x);
}}"""

_UNSIGNED_OF = {"float": "uint", "double": "ulong"}

# Names a source variable must not take (vector min/max variants are unlikely).
HELPER_NAMES = tuple(_FIXED) + tuple(f"{kind}_{t}" for kind in ("maximum", "minimum", "tanh")
                                     for t in ("float", "double"))


def helper_source(name: str) -> str:
    """C text of helper `name` (see `dependencies` for what it calls)."""
    if name in _FIXED:
        return _FIXED[name]
    tanh = re.fullmatch(r"tanh_(float|double)(\d*)", name)
    if tanh:
        template = _TANH_FLOAT if tanh.group(1) == "float" else _TANH_DOUBLE
        return template.format(T=tanh.group(1) + tanh.group(2))
    match = re.fullmatch(r"(maximum|minimum)_(float|double)(\d*)", name)
    if not match:
        raise KeyError(name)
    kind, base, width = match.groups()
    template = _MINMAX_VECTOR if width else _MINMAX_SCALAR
    return template.format(
        T=base + width, U=_UNSIGNED_OF[base] + width, name=kind,
        bitop="&" if kind == "maximum" else "|",
        fn="fmax" if kind == "maximum" else "fmin")


def dependencies(name: str) -> list[str]:
    return _DEPENDS.get(name, [])


class HelperSet:
    """The helpers one kernel needs, in an order where callees come first."""

    def __init__(self) -> None:
        self._names: list[str] = []

    def need(self, name: str) -> str:
        if name not in self._names:
            for dep in dependencies(name):
                self.need(dep)
            helper_source(name)  # fail early on an unknown name
            self._names.append(name)
        return name

    def source(self) -> str:
        return "\n\n".join(helper_source(n) for n in self._names)

    def __bool__(self) -> bool:
        return bool(self._names)
