"""fp8 formats: bytes in memory, float values in registers, converted by helpers.

An fp8 value (MLIR `f8E5M2`, `f8E4M3FN`, ...) lives in a float variable holding a value
the format can represent, exactly as f16/bf16 values do; global fp8 buffers are `uchar`
bit patterns. Three helpers per format do all the work:

- `fp8<f>_bits_to_float(uchar)`: decode (exact);
- `round_to_fp8<f>_float(float)` (and `_rtz_`): the nearest representable value, ties to
  even (or toward zero), found by scaling x so that the format's spacing at |x| becomes
  1.0 and rounding to an integer with `rint`/`trunc` (scaling by a power of two is
  exact). Out-of-range values, infinities included, saturate to the largest finite
  value with the sign of x (Triton's conversions on NVIDIA GPUs, `cvt.rn.satfinite`);
  NaN stays NaN. fnuz formats have no -0: a zero result is +0;
- `float_to_fp8<f>_bits(float)`: encode (rounding first, so that any float gives the
  bits of a value of the format; infinities of e5m2 stay infinite: stores and bitcasts
  only ever see values of the format).

`f8E4M3B11FNUZ` has MLIR's meaning (exponent bias 11, NaN 0x80, no -0, largest 30); the
Triton frontend carries Triton's fp8e4b15 in it (ttir_to_linalg/elementwise.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fp8Format:
    name: str  # helper-name stem, e.g. "fp8e4m3fn"
    exponent_bits: int
    mantissa_bits: int
    bias: int
    largest: float  # largest finite value conversions produce (saturation bound)
    specials: str  # how NaN / infinity are encoded: "ieee", "fn", "fnuz"

    @property
    def min_exponent(self) -> int:
        """The exponent of the smallest normal value (and of subnormal spacing)."""
        return 1 - self.bias


FORMATS = {
    "f8E5M2": Fp8Format("fp8e5m2", 5, 2, 15, 57344.0, "ieee"),
    "f8E4M3FN": Fp8Format("fp8e4m3fn", 4, 3, 7, 448.0, "fn"),
    "f8E4M3FNUZ": Fp8Format("fp8e4m3fnuz", 4, 3, 8, 240.0, "fnuz"),
    "f8E5M2FNUZ": Fp8Format("fp8e5m2fnuz", 5, 2, 16, 57344.0, "fnuz"),
    "f8E4M3B11FNUZ": Fp8Format("fp8e4m3b11fnuz", 4, 3, 11, 30.0, "fnuz"),
}
KINDS = tuple(FORMATS)

# Decoding the all-ones exponent / the special patterns, per kind of specials. NaN is
# the canonical quiet NaN, not the driver's NAN (Intel's is 0x7fffffff), so that every
# device and the SPIR-V stage (triton_spirv/spirv/fp8_bits.py) decode the same bits.
_QUIET_NAN = "as_float(0x7fc00000u)"
_DECODE_SPECIALS = {
    "ieee": "  if (exponent == {emax}u)\n    value = mantissa ? " + _QUIET_NAN + " : INFINITY;\n",
    "fn": "  if ((bits & 0x7fu) == 0x7fu)\n    value = " + _QUIET_NAN + ";\n",
    "fnuz": "  if (bits == 0x80u)\n    return " + _QUIET_NAN + ";\n",
}
# The byte a NaN encodes to (the sign bit is added for ieee / fn formats).
_NAN_BITS = {"ieee": "0x7fu", "fn": "0x7fu", "fnuz": "0x80u"}

_DECODE = """\
static inline float {f}_bits_to_float(uchar bits) {{
  uint exponent = (bits >> {m}) & {emask}u;
  uint mantissa = bits & {mmask}u;
  float value = exponent == 0
      ? ldexp((float)mantissa, {sub_exp})
      : ldexp((float)(mantissa | {hidden}u), (int)exponent - {bias_m});
{specials}  return (bits & 0x80u) ? -value : value;
}}"""

_ROUND = """\
static inline float round_to_{f}{suffix}_float(float x) {{
  if (isnan(x))
    return x;
  /* the exponent of |x| (at least the smallest normal one): values near x are
     multiples of 2^(e - {m}) */
  int e = max((int)((as_uint(x) >> 23) & 0xffu) - 127, {emin});
  float r = ldexp({rounder}(ldexp(x, {m} - e)), e - {m});
  if (fabs(r) > {largest})
    r = copysign({largest}, x);
  return {result};
}}"""

_ENCODE = """\
static inline uchar float_to_{f}_bits(float x) {{
{inf}  float r = round_to_{f}_float(x);
  uint sign = (as_uint(r) >> 24) & 0x80u;
  float a = fabs(r);
{nan}  if (a < {min_normal})  /* subnormal or zero: a count of the smallest steps */
    return (uchar)(sign | (uint)ldexp(a, {neg_sub_exp}));
  uint exponent = ((as_uint(a) >> 23) & 0xffu) - 127 + {bias};
  uint mantissa = (as_uint(a) >> {shift}) & {mmask}u;
  return (uchar)(sign | (exponent << {m}) | mantissa);
}}"""


def _float_text(value: float) -> str:
    text = repr(float(value))
    return f"{text}f"


def decode_source(fmt: Fp8Format) -> str:
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    specials = _DECODE_SPECIALS[fmt.specials].format(emax=(1 << e) - 1)
    return _DECODE.format(f=fmt.name, m=m, emask=(1 << e) - 1, mmask=(1 << m) - 1,
                          sub_exp=fmt.min_exponent - m, hidden=1 << m,
                          bias_m=fmt.bias + m, specials=specials)


def round_source(fmt: Fp8Format, rtz: bool) -> str:
    # fnuz formats have one zero: +0
    result = "r == 0.0f ? 0.0f : r" if fmt.specials == "fnuz" else "r"
    return _ROUND.format(f=fmt.name, suffix="_rtz" if rtz else "",
                         m=fmt.mantissa_bits, emin=fmt.min_exponent,
                         rounder="trunc" if rtz else "rint",
                         largest=_float_text(fmt.largest), result=result)


def encode_source(fmt: Fp8Format) -> str:
    sign = "" if fmt.specials == "fnuz" else "sign | "
    nan = f"  if (isnan(r))\n    return (uchar)({sign}{_NAN_BITS[fmt.specials]});\n"
    # an infinity of a format that has one is a value of it (a store keeps it)
    inf = "  if (isinf(x))\n    return (uchar)(x < 0 ? 0xfcu : 0x7cu);\n" \
        if fmt.specials == "ieee" else ""
    return _ENCODE.format(f=fmt.name, nan=nan, inf=inf,
                          min_normal=_float_text(2.0 ** fmt.min_exponent),
                          neg_sub_exp=fmt.mantissa_bits - fmt.min_exponent,
                          bias=fmt.bias, shift=23 - fmt.mantissa_bits,
                          mmask=(1 << fmt.mantissa_bits) - 1, m=fmt.mantissa_bits)


def helper_sources() -> dict[str, str]:
    """Every fp8 helper by name."""
    sources = {}
    for fmt in FORMATS.values():
        sources[f"{fmt.name}_bits_to_float"] = decode_source(fmt)
        sources[f"round_to_{fmt.name}_float"] = round_source(fmt, rtz=False)
        sources[f"round_to_{fmt.name}_rtz_float"] = round_source(fmt, rtz=True)
        sources[f"float_to_{fmt.name}_bits"] = encode_source(fmt)
    return sources


def helper_dependencies() -> dict[str, list[str]]:
    return {f"float_to_{fmt.name}_bits": [f"round_to_{fmt.name}_float"]
            for fmt in FORMATS.values()}


def decode(kind: str) -> str:
    return f"{FORMATS[kind].name}_bits_to_float"


def encode(kind: str) -> str:
    return f"float_to_{FORMATS[kind].name}_bits"


def round_to(kind: str, toward_zero: bool) -> str:
    return f"round_to_{FORMATS[kind].name}{'_rtz' if toward_zero else ''}_float"
