"""Small OpenCL C functions the generated kernels call, printed once each before the
kernel when used. Names encode the C type they work on (OpenCL C 1.2 has no
overloading of user functions)."""

from __future__ import annotations

import re

from . import fp8
from .libdevice import LIBDEVICE_DEPENDS, LIBDEVICE_HELPERS

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

# memref.prefetch (prefetch.py): clang's builtin where the compiler targets the CPU
# itself (the default CPU runtime); nothing where it compiles to SPIR first (Intel's runtime, Oclgrind).
_FIXED["prefetch_line"] = """\
static inline void prefetch_line(const __global void* p) {
#if defined(__clang__) && !defined(__SPIR__)
  __builtin_prefetch(p);
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

# math.tanh: OpenCL's tanh is slow on CPU devices (the default CPU runtime: 2-4x this helper in
# benchmarks/tanh.py, and 0.99999994 even at infinity), so float gets its own, within 1 ulp of the correctly rounded
# value (the same script checks it) and exactly +-1 wherever that value is +-1, so
# that 1 - tanh(x)^2 is 0 in the tails as the derivative of tanh-based activations
# needs. Branch-free, to vectorize: both halves are computed and one is picked.
_TANH_FLOAT = """\
static inline {T} tanh_{T}({T} x) {{
  {T} a = fabs(x);
  /* |x| < 0.9: a + a^3 P(a^2), P a least-squares fit in relative error. */
  {T} a2 = a * a;
  {T} p = fma(a2, ({T})(1.295281108e-03f), ({T})(-6.838821340e-03f));
  p = fma(a2, p, ({T})(2.088465728e-02f));
  p = fma(a2, p, ({T})(-5.371329188e-02f));
  p = fma(a2, p, ({T})(1.333020627e-01f));
  p = fma(a2, p, ({T})(-3.333320320e-01f));
  {T} small = fma(a * a2, p, a);
  /* Otherwise 1 - 2 / (e^(2|x|) + 1), |x| clamped to 9.5: the exact value rounds to
     1 from 9.011 on. e^y = 2^k e^r with k = round(y / ln 2) (adding and subtracting
     1.5 * 2^23 rounds to an integer), r = y - k ln 2 in [-ln2/2, ln2/2] (ln 2 split
     in two so that k * ln2_hi is exact) and e^r a degree-7 Taylor polynomial. */
  {T} y = 2.0f * clamp(a, ({T})(0.0f), ({T})(9.5f));
  {T} k = (y * ({T})(1.44269504089f) + ({T})(12582912.0f)) - ({T})(12582912.0f);
  {T} r = fma(k, ({T})(-0.693145751953125f), y);
  r = fma(k, ({T})(-1.42860682030941723e-06f), r);
  {T} e = fma(r, ({T})(1.98412698e-04f), ({T})(1.38888889e-03f));
  e = fma(r, e, ({T})(8.33333333e-03f));
  e = fma(r, e, ({T})(4.16666667e-02f));
  e = fma(r, e, ({T})(1.66666667e-01f));
  e = fma(r, e, ({T})(0.5f));
  e = fma(r, e, ({T})(1.0f));
  e = fma(r, e, ({T})(1.0f));
  e = as_{T}(as_{I}(e) + (convert_{I}(k) << 23));   /* times 2^k */
  {T} large = ({T})(1.0f) - ({T})(2.0f) / (e + ({T})(1.0f));
  {T} t = a >= ({T})(0.9f) ? large : small;   /* NaN takes `small`, which keeps it */
  return as_{T}(as_{I}(t) | (as_{I}(x) & ({I})(0x80000000)));   /* the sign of x */
}}"""
_TANH_DOUBLE = """\
static inline {T} tanh_{T}({T} x) {{
  return tanh(x);
}}"""

# math.erf: the CPU runtimes' erf on vectors runs lane by lane (the default CPU runtime: 26 of the
# 28 ms of Inductor's layer norm + gelu on 4096x1024 floats), so float gets its own,
# within 1 ulp of the correctly rounded value given an exact exp (2 ulp with OpenCL's
# exp; tests/test_erf_helper.py measures it): x + x P(x^2) below |x| = 0.927734375,
# above it 1 - e^Q(|x|) with the sign of x (P, Q minimax fits). Branch-free, to vectorize.
_ERF_FLOAT = """\
static inline {T} erf_{T}({T} x) {{
  {T} t = fabs(x);
  {T} s = x * x;
  {T} p = fma(s, ({T})(-5.96761703e-4f), ({T})(4.99119423e-3f));
  p = fma(s, p, ({T})(-2.67681349e-2f));
  p = fma(s, p, ({T})(1.12819925e-1f));
  p = fma(s, p, ({T})(-3.76125336e-1f));
  p = fma(s, p, ({T})(1.28379166e-1f));
  {T} small = fma(p, x, x);
  {T} q = fma(t, ({T})(-1.72853470e-5f), ({T})(3.83197126e-4f));
  {T} u = fma(t, ({T})(-3.88396438e-3f), ({T})(2.42546219e-2f));
  q = fma(q, s, u);
  q = fma(q, t, ({T})(-1.06777877e-1f));
  q = fma(q, t, ({T})(-6.34846687e-1f));
  q = fma(q, t, ({T})(-1.28717512e-1f));
  q = fma(q, t, -t);
  {T} large = copysign(({T})(1.0f) - exp(q), x);
  return t > ({T})(0.927734375f) ? large : small;   /* NaN takes `small`, which keeps it */
}}"""
_ERF_DOUBLE = """\
static inline {T} erf_{T}({T} x) {{
  return erf(x);
}}"""

# vector.store {nontemporal}: a streaming store, written without reading the line
# first and not kept in cache (memref_stage/streaming_stores.py). x86's non-temporal
# moves need the vector's own alignment; other addresses get an ordinary store, and so
# do compilers without clang's builtin.
_NONTEMPORAL_STORE = """\
static inline void store_nontemporal_{T}{N}({T}{N} v, __global {T}* p) {{
#if defined(__clang__)
  if (((ulong)p & (sizeof({T}{N}) - 1)) == 0) {{
    __builtin_nontemporal_store(v, (__global {T}{N}*)p);
    return;
  }}
#endif
  vstore{N}(v, 0, p);
}}"""
_NONTEMPORAL_TYPES = ("float", "double", "char", "short", "int", "long")
_NONTEMPORAL_WIDTHS = ("2", "4", "8", "16")   # not 3: a float3 is 16 bytes in memory

_UNSIGNED_OF = {"float": "uint", "double": "ulong"}

# Names a source variable must not take: every helper, vector widths included.
HELPER_NAMES = tuple(_FIXED) + tuple(LIBDEVICE_HELPERS) + tuple(
    f"{kind}_{t}{width}" for kind in ("maximum", "minimum", "tanh", "erf") for t in ("float", "double")
    for width in ("", "2", "3", "4", "8", "16")) + tuple(
    f"store_nontemporal_{t}{width}" for t in _NONTEMPORAL_TYPES for width in _NONTEMPORAL_WIDTHS)


def helper_source(name: str) -> str:
    """C text of helper `name` (see `dependencies` for what it calls)."""
    if name in _FIXED:
        return _FIXED[name]
    if name in LIBDEVICE_HELPERS:
        return LIBDEVICE_HELPERS[name]
    tanh = re.fullmatch(r"tanh_(float|double)(\d*)", name)
    if tanh:
        template = _TANH_FLOAT if tanh.group(1) == "float" else _TANH_DOUBLE
        return template.format(T=tanh.group(1) + tanh.group(2), I="int" + tanh.group(2))
    erf = re.fullmatch(r"erf_(float|double)(\d*)", name)
    if erf:
        template = _ERF_FLOAT if erf.group(1) == "float" else _ERF_DOUBLE
        return template.format(T=erf.group(1) + erf.group(2))
    store = re.fullmatch(r"store_nontemporal_([a-z]+)(\d+)", name)
    if store and store.group(1) in _NONTEMPORAL_TYPES and store.group(2) in _NONTEMPORAL_WIDTHS:
        return _NONTEMPORAL_STORE.format(T=store.group(1), N=store.group(2))
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
    return _DEPENDS.get(name) or LIBDEVICE_DEPENDS.get(name, [])


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
