"""libdevice names Triton exposes beyond the common math: arithmetic with directed
rounding (exact, checked against rational arithmetic), conversions with a rounding
mode, powi and the other math functions with an OpenCL equivalent (against numpy /
Python's math in fp64), and the integer bit functions (against Python integers)."""
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

N = 64
MODES = ("rd", "ru", "rz")


# ---------------------------------------------------------------------------------------
# Exact references: rationals rounded to float32 / float64 in a given direction


def _round_down(q: Fraction, dtype):
    """The largest value of `dtype` not above q (-inf below the finite range)."""
    info = np.finfo(dtype)
    if q > Fraction(float(info.max)):
        return dtype(info.max)
    if q < -Fraction(float(info.max)):
        return dtype(-np.inf)
    c = dtype(float(q)) if dtype is np.float64 else dtype(np.float64(float(q)))
    while np.isfinite(c) and Fraction(float(c)) > q:
        c = np.nextafter(c, dtype(-np.inf))
    while True:
        n = np.nextafter(c, dtype(np.inf))
        if not np.isfinite(n) or Fraction(float(n)) > q:
            return c
        c = n


def round_directed(q: Fraction, mode: str, dtype):
    if mode == "rd":
        return _round_down(q, dtype)
    up = -_round_down(-q, dtype)
    if mode == "ru":
        return dtype(up)
    return _round_down(q, dtype) if q >= 0 else dtype(up)


def _sqrt_directed(x, mode, dtype):
    """sqrt(x) rounded in `mode`: the float whose square brackets x."""
    q = Fraction(float(x))
    lo = dtype(np.sqrt(np.float64(x)))
    while Fraction(float(lo)) ** 2 > q:
        lo = np.nextafter(lo, dtype(-np.inf))
    while Fraction(float(np.nextafter(lo, dtype(np.inf)))) ** 2 <= q:
        lo = np.nextafter(lo, dtype(np.inf))
    exact = Fraction(float(lo)) ** 2 == q
    if mode in ("rd", "rz") or exact:
        return lo
    return np.nextafter(lo, dtype(np.inf))


def _operands(dtype, n, seed):
    """Finite operands of mixed signs and magnitudes, with pairs where one term is far
    below the other's last bit (the sums whose rounding a double cannot see), exact
    cases and ones that overflow."""
    rng = np.random.default_rng(seed)
    span = 30 if dtype is np.float32 else 300
    def draw():
        return (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-span, span, n)
                * rng.choice([-1, 1], n)).astype(dtype)
    a, b, c = draw(), draw(), draw()
    tiny = dtype(np.finfo(dtype).tiny)
    big = dtype(np.finfo(dtype).max) / dtype(2)
    specials = [(1, 2.0 ** -70, 1), (1, -2.0 ** -70, -1), (-1, 2.0 ** -70, 1), (3, 1, 1),
                (big, big * 1.5, 2), (-big, big * 1.5, 2), (2.0 ** -10, 3, -1e-9), (7, 7, -49),
                (float(tiny), 0.5, 1e-30), (1e-30, 3.0, 1e-40)]
    for i, (x, y, z) in enumerate(specials):
        a[i], b[i], c[i] = x, y, z
    k = len(specials)
    c[k:k + 4] = -(a[k:k + 4] * b[k:k + 4])   # fma = the product's rounding error
    return a, b, c


@triton.jit
def directed_rounding_kernel(a_ptr, b_ptr, c_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b, c = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(c_ptr + offs)
    results = (libdevice.add_rd(a, b), libdevice.add_ru(a, b), libdevice.add_rz(a, b),
               libdevice.sub_rd(a, b), libdevice.sub_ru(a, b), libdevice.sub_rz(a, b),
               libdevice.mul_rd(a, b), libdevice.mul_ru(a, b), libdevice.mul_rz(a, b),
               libdevice.div_rd(a, b), libdevice.div_ru(a, b), libdevice.div_rz(a, b),
               libdevice.rcp_rd(b), libdevice.rcp_ru(b), libdevice.rcp_rz(b),
               libdevice.sqrt_rd(tl.abs(a)), libdevice.sqrt_ru(tl.abs(a)), libdevice.sqrt_rz(tl.abs(a)),
               libdevice.fma_rd(a, b, c), libdevice.fma_ru(a, b, c), libdevice.fma_rz(a, b, c))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i])


def _directed_reference(op, mode, a, b, c, dtype):
    fa, fb, fc = Fraction(float(a)), Fraction(float(b)), Fraction(float(c))
    if op == "sqrt":
        return _sqrt_directed(abs(a), mode, dtype)
    exact = {"add": lambda: fa + fb, "sub": lambda: fa - fb, "mul": lambda: fa * fb,
             "div": lambda: fa / fb, "rcp": lambda: 1 / fb, "fma": lambda: fa * fb + fc}[op]()
    return round_directed(exact, mode, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_directed_rounding_is_exact(dtype):
    ops = ("add", "sub", "mul", "div", "rcp", "sqrt", "fma")   # as the kernel computes them
    a, b, c = _operands(dtype, N, seed=7)
    out = torch.empty(len(ops) * 3 * N, dtype=torch.from_numpy(a).dtype)
    directed_rounding_kernel[(1,)](torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c), out, N=N)
    got = out.numpy().reshape(len(ops), 3, N)
    wrong = []
    for i, op in enumerate(ops):
        for j, mode in enumerate(MODES):
            for k in range(N):
                want = _directed_reference(op, mode, a[k], b[k], c[k], dtype)
                if not got[i, j, k] == want:
                    wrong.append(f"{op}_{mode}({a[k]!r}, {b[k]!r}, {c[k]!r}) = {got[i, j, k]!r}, want {want!r}")
    assert not wrong, f"{len(wrong)} wrong, e.g.\n" + "\n".join(wrong[:10])


# ---------------------------------------------------------------------------------------
# Conversions with a rounding mode


@triton.jit
def conversions_kernel(f_ptr, d_ptr, i_ptr, l_ptr, out_f_ptr, out_d_ptr, out_i_ptr, out_l_ptr,
                       N: tl.constexpr):
    offs = tl.arange(0, N)
    f, d = tl.load(f_ptr + offs), tl.load(d_ptr + offs)
    i, ll = tl.load(i_ptr + offs), tl.load(l_ptr + offs)
    u, ull = i.to(tl.uint32, bitcast=True), ll.to(tl.uint64, bitcast=True)
    floats = (libdevice.double2float_rd(d), libdevice.double2float_ru(d), libdevice.double2float_rz(d),
              libdevice.int2float_rd(i), libdevice.int2float_ru(i), libdevice.int2float_rz(i),
              libdevice.uint2float_rd(u), libdevice.uint2float_ru(u), libdevice.ll2float_rd(ll),
              libdevice.ll2float_ru(ll), libdevice.ull2float_rz(ull), libdevice.ull2float_ru(ull))
    for k in tl.static_range(len(floats)):
        tl.store(out_f_ptr + k * N + offs, floats[k])
    doubles = (libdevice.ll2double_rd(ll), libdevice.ll2double_ru(ll), libdevice.ull2double_rz(ull),
               libdevice.int2double_rn(i), libdevice.uint2double_rn(u))
    for k in tl.static_range(len(doubles)):
        tl.store(out_d_ptr + k * N + offs, doubles[k])
    ints = (libdevice.float2int_rd(f), libdevice.float2int_ru(f), libdevice.float2int_rz(f),
            libdevice.float2int_rn(f), libdevice.double2int_rd(d), libdevice.double2int_ru(d),
            libdevice.float2uint_ru(tl.abs(f)).to(tl.int32, bitcast=True))
    for k in tl.static_range(len(ints)):
        tl.store(out_i_ptr + k * N + offs, ints[k])
    longs = (libdevice.float2ll_rd(f), libdevice.double2ll_ru(d), libdevice.double2ll_rn(d),
             libdevice.llrint(d), libdevice.llround(f))
    for k in tl.static_range(len(longs)):
        tl.store(out_l_ptr + k * N + offs, longs[k])


def _round_to_int(q: Fraction, mode: str) -> int:
    if mode == "rd":
        return math.floor(q)
    if mode == "ru":
        return math.ceil(q)
    if mode == "rz":
        return math.trunc(q)
    if mode == "rn":
        return round(q)                  # Fraction rounds half to even
    return int(math.copysign(math.floor(abs(q) + Fraction(1, 2)), q))   # half away


def test_conversions_with_rounding_modes():
    rng = np.random.default_rng(3)
    f = (rng.uniform(-1, 1, N) * 2.0 ** rng.integers(-3, 30, N)).astype(np.float32)
    f[:6] = [2.5, -2.5, 3.5, -0.5, 1e10, -1e10]      # ties and out-of-range (saturate)
    d = rng.uniform(-1, 1, N) * 2.0 ** rng.integers(-3, 40, N)
    d[:4] = [2.5, -3.5, 1 + 2.0 ** -30, -(1 + 2.0 ** -30)]
    i = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    ll = rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64)
    out_f, out_d = torch.empty(12 * N), torch.empty(5 * N, dtype=torch.float64)
    out_i, out_l = torch.empty(7 * N, dtype=torch.int32), torch.empty(5 * N, dtype=torch.int64)
    conversions_kernel[(1,)](*(torch.from_numpy(v) for v in (f, d, i, ll)), out_f, out_d, out_i, out_l, N=N)
    u, ull = i.view(np.uint32), ll.view(np.uint64)
    F, D = np.float32, np.float64
    want_f = [[round_directed(Fraction(int(v) if not isinstance(v, float) else float(v)), m, F) for v in src]
              for src, m in ((d, "rd"), (d, "ru"), (d, "rz"), (i, "rd"), (i, "ru"), (i, "rz"), (u, "rd"),
                             (u, "ru"), (ll, "rd"), (ll, "ru"), (ull, "rz"), (ull, "ru"))]
    np.testing.assert_array_equal(out_f.numpy().reshape(12, N), np.array(want_f, dtype=F))
    want_d = [[round_directed(Fraction(int(v)), m, D) for v in src]
              for src, m in ((ll, "rd"), (ll, "ru"), (ull, "rz"), (i, "rd"), (u, "rd"))]
    np.testing.assert_array_equal(out_d.numpy().reshape(5, N), np.array(want_d, dtype=D))

    def saturated(values, mode, lo, hi):
        return [min(hi, max(lo, _round_to_int(Fraction(float(v)), mode))) for v in values]
    i32, u32 = (-2**31, 2**31 - 1), (0, 2**32 - 1)
    want_i = [saturated(f, "rd", *i32), saturated(f, "ru", *i32), saturated(f, "rz", *i32),
              saturated(f, "rn", *i32), saturated(d, "rd", *i32), saturated(d, "ru", *i32),
              saturated(np.abs(f), "ru", *u32)]
    np.testing.assert_array_equal(out_i.numpy().reshape(7, N).view(np.uint32),
                                  np.array(want_i, dtype=np.int64).astype(np.uint32))
    i64 = (-2**63, 2**63 - 1)
    want_l = [saturated(f, "rd", *i64), saturated(d, "ru", *i64), saturated(d, "rn", *i64),
              saturated(d, "rn", *i64), saturated(f, "half away", *i64)]
    np.testing.assert_array_equal(out_l.numpy().reshape(5, N), np.array(want_l, dtype=np.int64))


# ---------------------------------------------------------------------------------------
# powi and the math functions with an OpenCL equivalent


@triton.jit
def math_kernel(x_ptr, y_ptr, z_ptr, n_ptr, out_ptr, iout_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, y, z = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)
    n = tl.load(n_ptr + offs)
    results = (libdevice.pow(x, n), libdevice.cospi(x), libdevice.sinpi(x), libdevice.hypot(x, y),
               libdevice.ldexp(x, n), libdevice.scalbn(x, n), libdevice.logb(x),
               libdevice.nextafter(x, y), libdevice.remainder(x, y), libdevice.lgamma(x),
               libdevice.tgamma(z), libdevice.rcbrt(x), libdevice.normcdf(x), libdevice.rhypot(x, y),
               libdevice.norm3d(x, y, z), libdevice.rnorm3d(x, y, z), libdevice.norm4d(x, y, z, x),
               libdevice.rnorm4d(x, y, z, x))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i])
    tl.store(iout_ptr + offs, libdevice.ilogb(x))


def _rnorm(*v):
    return 1 / math.sqrt(sum(t * t for t in v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_math_functions_match_fp64(dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(-6, 6, N)
    y = rng.uniform(-6, 6, N)
    z = rng.uniform(0.2, 8, N)
    n = rng.integers(-4, 6, N).astype(np.int32)
    x[:3] = [0.5, -1.25, 3.0]
    xs, ys, zs = (torch.from_numpy(v).to(dtype) for v in (x, y, z))
    x, y, z = (v.double().numpy() for v in (xs, ys, zs))   # what the kernel sees
    out = torch.empty(18 * N, dtype=dtype)
    iout = torch.empty(N, dtype=torch.int32)
    math_kernel[(1,)](xs, ys, zs, torch.from_numpy(n), out, iout, N=N)
    refs = [x ** n.astype(np.float64), np.cos(np.pi * x), np.sin(np.pi * x), np.hypot(x, y),
            np.ldexp(x, n), np.ldexp(x, n), np.floor(np.log2(np.abs(x))),
            np.nextafter(xs.numpy(), ys.numpy()).astype(np.float64),
            [math.remainder(a, b) for a, b in zip(x, y)], [math.lgamma(a) for a in x],
            [math.gamma(a) for a in z], np.cbrt(x) ** -1.0,
            [0.5 * math.erfc(-a / math.sqrt(2)) for a in x], 1 / np.hypot(x, y),
            np.sqrt(x * x + y * y + z * z), [_rnorm(a, b, c) for a, b, c in zip(x, y, z)],
            np.sqrt(2 * x * x + y * y + z * z), [_rnorm(a, b, c, a) for a, b, c in zip(x, y, z)]]
    got = out.double().numpy().reshape(18, N)
    rtol = 4e-6 if dtype == torch.float32 else 1e-13
    for k, ref in enumerate(refs):
        np.testing.assert_allclose(got[k], np.asarray(ref, dtype=np.float64), rtol=rtol,
                                   atol=rtol, err_msg=f"function #{k}")
    np.testing.assert_array_equal(iout.numpy(), np.frexp(x)[1] - 1)


# ---------------------------------------------------------------------------------------
# Integer and bit functions


@triton.jit
def integer_kernel(a_ptr, b_ptr, s_ptr, la_ptr, lb_ptr, d_ptr, out_ptr, lout_ptr, dout_ptr,
                   N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b, s = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(s_ptr + offs)
    la, lb, d = tl.load(la_ptr + offs), tl.load(lb_ptr + offs), tl.load(d_ptr + offs)
    ua, ub = a.to(tl.uint32, bitcast=True), b.to(tl.uint32, bitcast=True)
    ints = (libdevice.hadd(a, b), libdevice.rhadd(a, b),
            libdevice.hadd(ua, ub).to(tl.int32, bitcast=True),
            libdevice.rhadd(ua, ub).to(tl.int32, bitcast=True), libdevice.mulhi(a, b),
            libdevice.brev(a), libdevice.ffs(a), libdevice.ffs(la),
            libdevice.sad(a, b, ub).to(tl.int32, bitcast=True),
            libdevice.sad(ua, ub, ua).to(tl.int32, bitcast=True), libdevice.byte_perm(a, b, s),
            libdevice.double2hiint(d), libdevice.double2loint(d), libdevice.mul24(a, b),
            libdevice.mul24(ua, ub).to(tl.int32, bitcast=True))
    for i in tl.static_range(len(ints)):
        tl.store(out_ptr + i * N + offs, ints[i])
    tl.store(lout_ptr + offs, libdevice.mulhi(la, lb))
    tl.store(lout_ptr + N + offs, libdevice.brev(la))
    tl.store(dout_ptr + offs, libdevice.hiloint2double(a, b))


def _wrap32(v):
    return (int(v) + 2**31) % 2**32 - 2**31


def _brev(v, bits):
    v %= 2**bits
    return int(format(v, f"0{bits}b")[::-1], 2)


def _ffs(v, bits):
    v %= 2**bits
    return (v & -v).bit_length()


def _low24(v, signed):
    v %= 2**24
    return v - 2**24 if signed and v >= 2**23 else v


def _byte_perm(x, y, s):
    data = (y % 2**32) << 32 | (x % 2**32)
    return sum(((data >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def test_integer_and_bit_functions():
    rng = np.random.default_rng(11)
    a = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    a[:3] = [0, -1, 2**31 - 1]
    s = rng.integers(0, 2**16, N).astype(np.int32)
    la = rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64)
    lb = rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64)
    la[0] = 0
    d = rng.standard_normal(N) * 1e10
    out = torch.empty(15 * N, dtype=torch.int32)
    lout, dout = torch.empty(2 * N, dtype=torch.int64), torch.empty(N, dtype=torch.float64)
    integer_kernel[(1,)](*(torch.from_numpy(v) for v in (a, b, s, la, lb, d)), out, lout, dout, N=N)
    A, B, S, LA, LB = ([int(v) for v in arr] for arr in (a, b, s, la, lb))
    UA, UB = ([v % 2**32 for v in arr] for arr in (A, B))
    want = [[(x + y) >> 1 for x, y in zip(A, B)], [(x + y + 1) >> 1 for x, y in zip(A, B)],
            [(x + y) >> 1 for x, y in zip(UA, UB)], [(x + y + 1) >> 1 for x, y in zip(UA, UB)],
            [(x * y) >> 32 for x, y in zip(A, B)], [_brev(x, 32) for x in A],
            [_ffs(x, 32) for x in A], [_ffs(x, 64) for x in LA],
            [abs(x - y) + uy for x, y, uy in zip(A, B, UB)],
            [abs(x - y) + x for x, y in zip(UA, UB)],
            [_byte_perm(x, y, z) for x, y, z in zip(A, B, S)],
            list(d.view(np.int32)[1::2]), list(d.view(np.int32)[0::2]),
            [_low24(x, True) * _low24(y, True) for x, y in zip(A, B)],
            [_low24(x, False) * _low24(y, False) for x, y in zip(A, B)]]
    np.testing.assert_array_equal(out.numpy().reshape(15, N),
                                  np.array([[_wrap32(v) for v in row] for row in want], dtype=np.int64))
    np.testing.assert_array_equal(lout.numpy()[:N], [(x * y) >> 64 for x, y in zip(LA, LB)])
    np.testing.assert_array_equal(lout.numpy()[N:].view(np.uint64),
                                  np.array([_brev(x, 64) for x in LA], dtype=np.uint64))
    np.testing.assert_array_equal(dout.numpy(), np.stack([b, a], 1).reshape(-1).view(np.float64))


# ---------------------------------------------------------------------------------------
# IR in, C out: the calls the converter makes and what the emitter prints for them

CALLS = """
module {
  func.func private @opencl_div_rz_f32_f32_f32(f32, f32) -> f32
  func.func private @opencl_cospi_f32_f32(f32) -> f32
  func.func @k(%x: memref<?xf32>, %y: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %a = memref.load %x[%c0] : memref<?xf32>
    %b = memref.load %y[%c0] : memref<?xf32>
    %q = func.call @opencl_div_rz_f32_f32_f32(%a, %b) {opencl.call = "div_rz", opencl.helper} : (f32, f32) -> f32
    %c = func.call @opencl_cospi_f32_f32(%q) {opencl.call = "cospi"} : (f32) -> f32
    memref.store %c, %x[%c0] : memref<?xf32>
    return
  }
}"""


def test_emitter_prints_builtin_and_helper_calls():
    from mlir import ir
    from emitter_opencl import emit_opencl
    source = emit_opencl(ir.Module.parse(CALLS, ir.Context())).source
    assert "static inline float div_rz_float(float a, float b) {" in source
    assert "= div_rz_float(" in source and "= cospi(" in source
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in source   # the helper computes in double


def test_emitter_rejects_a_call_it_was_not_told_about():
    from mlir import ir
    from emitter_opencl import emit_opencl
    from emitter_opencl.errors import OpenCLEmitError
    text = CALLS.replace(' {opencl.call = "cospi"}', "")
    with pytest.raises(OpenCLEmitError, match="calls of functions are outside the memref-stage contract"):
        emit_opencl(ir.Module.parse(text, ir.Context()))


@triton.jit
def erfinv_kernel(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, libdevice.erfinv(tl.load(x_ptr + offs)))


def test_libdevice_name_without_an_equivalent_names_the_function_and_line():
    with pytest.raises(Exception, match=r"(?s)__nv_erfinvf.*erfinv_kernel.*test_conformance_libdevice.py"):
        erfinv_kernel[(1,)](torch.zeros(N), N=N)


# No exact OpenCL equivalent and no short exact implementation (README lists them).
UNSUPPORTED = {"cyl_bessel_i0", "cyl_bessel_i1", "erfcinv", "erfcx", "erfinv", "j0", "j1", "jn",
               "normcdfinv", "rcp64h", "y0", "y1", "yn"}


def test_every_other_libdevice_name_has_a_translation():
    import inspect
    import re
    from triton_spirv.ttir_to_linalg import opencl_calls
    from triton_spirv.ttir_to_linalg.elementwise import _extern_builder
    symbols = set(re.findall(r'"(__nv_\w+)"', inspect.getsource(libdevice)))
    missing = set()
    for symbol in symbols:
        base = symbol.removeprefix("__nv_")
        if _extern_builder(symbol)[0] is None and not any(
                opencl_calls.opencl_function(c) for c in (base, base.removesuffix("f"))):
            missing.add(base.removesuffix("f") if base.removesuffix("f") in UNSUPPORTED else base)
    assert len(symbols) >= 300 and missing == UNSUPPORTED
