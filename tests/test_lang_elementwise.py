"""Triton language, elementwise: binary and unary ops across dtypes (with broadcast
scalars), comparisons, casts, bitcasts, math, NaN semantics, umulhi, libdevice.
Modelled on the families of triton/python/test/unit/language/test_core.py; every result
is checked against numpy / torch. One kernel computes many ops per dtype (compiling is
the expensive part)."""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton.language.extra import libdevice

N = 64

INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _bits(dtype):
    return torch.iinfo(dtype).bits


def _wrap(v: int, dtype) -> int:
    info = torch.iinfo(dtype)
    bits = info.bits
    v &= (1 << bits) - 1
    if info.min < 0 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


@triton.jit
def int_ops_kernel(x_ptr, y_ptr, s_ptr, out_ptr, scalar, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    s = tl.load(s_ptr + offs)
    results = (x + y, x - y, x * y, x // y, x % y, x & y, x | y, x ^ y,
               tl.minimum(x, y), tl.maximum(x, y), x << s, x >> s, x + scalar, scalar * y,
               -x, ~x, (x < y).to(x.dtype), (x == y).to(x.dtype), (x >= scalar).to(x.dtype),
               tl.where(x > y, x, y))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i])


def _int_reference(x, y, s, scalar, dtype):
    signed = torch.iinfo(dtype).min < 0
    bits = _bits(dtype)
    rows = []

    def trunc_div(a, b):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q

    ops = [
        lambda a, b, c: a + b, lambda a, b, c: a - b, lambda a, b, c: a * b,
        lambda a, b, c: trunc_div(a, b), lambda a, b, c: a - b * trunc_div(a, b),
        lambda a, b, c: a & b, lambda a, b, c: a | b, lambda a, b, c: a ^ b,
        lambda a, b, c: min(a, b), lambda a, b, c: max(a, b),
        lambda a, b, c: a << c,
        lambda a, b, c: (a >> c) if signed else ((a & ((1 << bits) - 1)) >> c),
        lambda a, b, c: a + scalar, lambda a, b, c: scalar * b,
        lambda a, b, c: -a, lambda a, b, c: ~a, lambda a, b, c: int(a < b),
        lambda a, b, c: int(a == b), lambda a, b, c: int(a >= scalar),
        lambda a, b, c: a if a > b else b,
    ]
    for op in ops:
        rows.append([_wrap(op(int(a), int(b), int(c)), dtype)
                     for a, b, c in zip(x.tolist(), y.tolist(), s.tolist())])
    return torch.tensor(rows, dtype=dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_ops(dtype):
    info = torch.iinfo(dtype)
    gen = torch.Generator().manual_seed(0)
    lo, hi = max(info.min, -2**40), min(info.max, 2**40)
    x = torch.randint(lo, hi, (N,), generator=gen, dtype=torch.int64)
    y = torch.randint(lo, hi, (N,), generator=gen, dtype=torch.int64)
    y[y == 0] = 3
    if info.min < 0:
        y[y == -1] = 5
    x[:4] = torch.tensor([info.max, info.min, 0, 7])
    y[:4] = torch.tensor([1, 2, info.max, 7])
    s = torch.randint(0, _bits(dtype), (N,), generator=gen)
    x, y, s = x.to(dtype), y.to(dtype), s.to(dtype)
    scalar = 3
    out = torch.empty((20, N), dtype=dtype)
    int_ops_kernel[(1,)](x, y, s, out, scalar, N=N)
    expected = _int_reference(x, y, s, scalar, dtype)
    for i in range(expected.shape[0]):
        assert torch.equal(out[i], expected[i]), (i, out[i], expected[i])


@triton.jit
def float_ops_kernel(x_ptr, y_ptr, z_ptr, out_ptr, scalar, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    x0 = x
    y0 = y
    if x.dtype.primitive_bitwidth < 32:  # math functions take fp32/fp64
        x = x.to(tl.float32)
        y = y.to(tl.float32)
        z = z.to(tl.float32)
    if x.dtype == tl.float64:  # sqrt_rn / div_rn take fp32; f64 sqrt and / are exact
        sqrt_rn = tl.sqrt(tl.abs(x))
        div_rn = x / y
    else:
        sqrt_rn = tl.sqrt_rn(tl.abs(x))
        div_rn = tl.div_rn(x, y)
    results = (x0 + y0, x0 - y0, x0 * y0, x0 / y0, x0 % y0, x0 + scalar, scalar / y0, -x0,
               tl.fma(x, y, z), tl.abs(x), tl.floor(x), tl.ceil(x),
               tl.exp(x), tl.exp2(x), tl.log(tl.abs(x) + 1), tl.log2(tl.abs(x) + 1),
               tl.sqrt(tl.abs(x)), tl.rsqrt(tl.abs(x) + 1), tl.sin(x), tl.cos(x),
               tl.erf(x), sqrt_rn, div_rn, tl.clamp(x, -0.5, 0.75),
               libdevice.asin(tl.clamp(x, -1.0, 1.0)), libdevice.atan2(x, y),
               libdevice.tanh(x), libdevice.pow(tl.abs(x), y), libdevice.trunc(x),
               libdevice.rint(x * 4), (x < y).to(x.dtype), (x == x).to(x.dtype),
               tl.where(x > 0, x, z))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i].to(x0.dtype))


def _float_reference(x, y, z, scalar):
    x, y, z = (t.double() for t in (x, y, z))
    return [x + y, x - y, x * y, x / y, torch.fmod(x, y), x + scalar, scalar / y, -x,
            x * y + z, x.abs(), x.floor(), x.ceil(), x.exp(), torch.exp2(x),
            torch.log(x.abs() + 1), torch.log2(x.abs() + 1), x.abs().sqrt(),
            torch.rsqrt(x.abs() + 1), x.sin(), x.cos(), torch.erf(x), x.abs().sqrt(),
            x / y, x.clamp(-0.5, 0.75), torch.asin(x.clamp(-1, 1)), torch.atan2(x, y),
            torch.tanh(x), torch.pow(x.abs(), y), torch.trunc(x), torch.round(x * 4),
            (x < y).double(), (x == x).double(), torch.where(x > 0, x, z)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_ops(dtype):
    gen = torch.Generator().manual_seed(1)
    x = (torch.randn(N, generator=gen) * 2).to(dtype)
    y = (torch.rand(N, generator=gen) * 2 + 0.5).to(dtype) * torch.where(
        torch.arange(N) % 3 == 0, -1, 1).to(dtype)
    z = torch.randn(N, generator=gen).to(dtype)
    scalar = 1.5
    expected = _float_reference(x, y, z, scalar)
    out = torch.empty((len(expected), N), dtype=dtype)
    float_ops_kernel[(1,)](x, y, z, out, scalar, N=N)
    tol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 2e-6,
           torch.float64: 1e-12}[dtype]
    for i, e in enumerate(expected):
        torch.testing.assert_close(out[i].double(), e.to(dtype).double(), rtol=tol,
                                   atol=tol * 4, msg=f"result {i}")


@triton.jit
def nan_minmax_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.maximum(x, y))
    tl.store(out_ptr + N + offs, tl.minimum(x, y))
    tl.store(out_ptr + 2 * N + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 3 * N + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 4 * N + offs, tl.clamp(x, -1.0, y, propagate_nan=tl.PropagateNan.ALL))


def test_min_max_nan_semantics():
    nan = float("nan")
    x = torch.tensor([1.0, nan, 2.0, nan, -0.0, 3.0, -5.0, 0.5])
    y = torch.tensor([nan, 1.0, 3.0, nan, 0.0, -3.0, 4.0, 2.0])
    out = torch.empty((5, 8))
    nan_minmax_kernel[(1,)](x, y, out, N=8)
    # propagate_nan=NONE: NaN in either operand may give either; Triton's GPUs (and
    # we) return the other operand when one is NaN.
    num = ~(x.isnan() | y.isnan())
    torch.testing.assert_close(out[0][num], torch.maximum(x, y)[num])
    torch.testing.assert_close(out[1][num], torch.minimum(x, y)[num])
    torch.testing.assert_close(out[2], torch.maximum(x, y), equal_nan=True)
    torch.testing.assert_close(out[3], torch.minimum(x, y), equal_nan=True)
    torch.testing.assert_close(out[4], torch.minimum(torch.maximum(x, torch.tensor(-1.0)), y),
                               equal_nan=True)


@triton.jit
def umulhi_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_umulhi(dtype):
    bits = _bits(dtype)
    rng = np.random.default_rng(0)
    xs = [int(v) for v in rng.integers(0, 2**bits, N, dtype=np.uint64 if bits == 64 else np.int64)]
    ys = [int(v) for v in rng.integers(0, 2**bits, N, dtype=np.uint64 if bits == 64 else np.int64)]
    xs[:3] = [2**bits - 1, 0, 2**(bits - 1)]
    ys[:3] = [2**bits - 1, 5, 2**(bits - 1)]
    x = torch.tensor([_wrap(v, dtype) for v in xs], dtype=dtype)
    y = torch.tensor([_wrap(v, dtype) for v in ys], dtype=dtype)
    out = torch.empty(N, dtype=dtype)
    umulhi_kernel[(1,)](x, y, out, N=N)
    expected = torch.tensor([_wrap((a * b) >> bits, dtype) for a, b in zip(xs, ys)],
                            dtype=dtype)
    assert torch.equal(out, expected)


# ---------------------------------------------------------------------------------------
# Casts


@triton.jit
def cast_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


CAST_PAIRS = [
    (torch.int32, torch.float32), (torch.float32, torch.int32), (torch.int8, torch.int64),
    (torch.int64, torch.int8), (torch.uint8, torch.int32), (torch.int32, torch.uint8),
    (torch.float32, torch.float16), (torch.float16, torch.float32),
    (torch.float32, torch.bfloat16), (torch.bfloat16, torch.float32),
    (torch.float64, torch.float32), (torch.float32, torch.float64),
    (torch.float16, torch.bfloat16), (torch.bool, torch.float32), (torch.float32, torch.bool),
    (torch.int16, torch.float64), (torch.float64, torch.int64), (torch.uint8, torch.float16),
]
SLOW_CAST_PAIRS = [(a, b) for a in INT_DTYPES + FLOAT_DTYPES for b in INT_DTYPES + FLOAT_DTYPES
                   if a != b and (a, b) not in CAST_PAIRS]


def _cast_input(src, dst):
    gen = torch.Generator().manual_seed(2)
    if src == torch.bool:
        return torch.rand(N, generator=gen) > 0.5
    values = torch.randn(N, generator=gen, dtype=torch.float64) * 50
    if not dst.is_floating_point and dst != torch.bool:
        info = torch.iinfo(dst)
        values = values.clamp(max(info.min, -100), min(info.max, 100))
    if not src.is_floating_point:
        info = torch.iinfo(src)
        values = values.round().clamp(info.min, info.max)
    return values.to(src)


def _check_cast(src, dst):
    x = _cast_input(src, dst)
    out = torch.empty(N, dtype=dst)
    cast_kernel[(1,)](x, out, N=N)
    expected = x.to(dst) if not (src.is_floating_point and dst == torch.bool) else x != 0
    if dst.is_floating_point and src.is_floating_point:
        # double rounding through float is what torch does for f64 -> f16/bf16; we round once
        torch.testing.assert_close(out.double(), x.double().to(dst).double(), rtol=0, atol=0)
    else:
        assert torch.equal(out, expected), (out, expected)


@pytest.mark.parametrize("src,dst", CAST_PAIRS)
def test_casts(src, dst):
    _check_cast(src, dst)


@pytest.mark.slow
@pytest.mark.parametrize("src,dst", SLOW_CAST_PAIRS)
def test_casts_all_pairs(src, dst):
    _check_cast(src, dst)


@triton.jit
def bitcast_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty, bitcast=True))


@pytest.mark.parametrize("src,dst", [(torch.float32, torch.int32), (torch.int32, torch.float32),
                                     (torch.float16, torch.int16), (torch.int16, torch.bfloat16),
                                     (torch.float64, torch.int64), (torch.int8, torch.uint8)])
def test_bitcast(src, dst):
    gen = torch.Generator().manual_seed(3)
    # (no NaN bit patterns: f16/bf16 values live in float registers, which may quiet them)
    x = (torch.randn(N, generator=gen) * 100).to(src) if src.is_floating_point else \
        torch.randint(0, 100, (N,), generator=gen).to(src)
    out = torch.empty(N, dtype=dst)
    bitcast_kernel[(1,)](x, out, N=N)
    assert torch.equal(out.view(torch.uint8), x.view(torch.uint8))


@triton.jit
def fp_downcast_kernel(x_ptr, half_ptr, bf16_ptr, N: tl.constexpr, ROUNDING: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(half_ptr + offs, x.to(tl.float16, fp_downcast_rounding=ROUNDING))
    tl.store(bf16_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding=ROUNDING))


def _rtz(x: np.ndarray, dtype) -> np.ndarray:
    """Round toward zero by truncating the mantissa of the nearest-even result."""
    with np.errstate(over="ignore"):
        r = x.astype(dtype) if dtype is np.float16 else None
    if dtype is np.float16:
        back = r.astype(np.float32)
        bits = r.view(np.uint16).copy()
        away = np.abs(back) > np.abs(x)
        bits[away] -= 1
        return bits.view(np.float16)
    raise AssertionError


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp_downcast_rounding(rounding):
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(N, generator=gen) * 1000
    x[:4] = torch.tensor([1e6, -1e6, float("nan"), 1.0 + 2**-12])
    half = torch.empty(N, dtype=torch.float16)
    bf16 = torch.empty(N, dtype=torch.bfloat16)
    fp_downcast_kernel[(1,)](x, half, bf16, N=N, ROUNDING=rounding)
    if rounding == "rtne":
        torch.testing.assert_close(half, x.half(), rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(bf16, x.bfloat16(), rtol=0, atol=0, equal_nan=True)
    else:
        expected_half = torch.from_numpy(_rtz(x.numpy(), np.float16))
        torch.testing.assert_close(half, expected_half, rtol=0, atol=0, equal_nan=True)
        bits = x.view(torch.int32) & ~0xFFFF
        expected_bf16 = bits.view(torch.float32).bfloat16()
        num = ~x.isnan()
        assert torch.equal(bf16[num], expected_bf16[num])
        assert half[2].isnan() and bf16[2].isnan()
        assert half[0].item() == 65504.0 and half[1].item() == -65504.0


@triton.jit
def precise_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.sqrt_rn(x))
    tl.store(out_ptr + N + offs, tl.div_rn(x, y))


def test_precise_sqrt_div_are_correctly_rounded():
    gen = torch.Generator().manual_seed(5)
    x = torch.rand(1024, generator=gen) * 100
    y = torch.rand(1024, generator=gen) + 0.1
    out = torch.empty(2, 1024)
    precise_kernel[(1,)](x, y, out, N=1024)
    assert torch.equal(out[0], x.double().sqrt().float())
    assert torch.equal(out[1], (x.double() / y.double()).float())


def test_integer_division_by_zero_in_masked_lanes_does_not_trap():
    @triton.jit
    def div_kernel(x_ptr, y_ptr, out_ptr, n, N: tl.constexpr):
        offs = tl.arange(0, N)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)  # masked-off lanes read 0
        tl.store(out_ptr + offs, x // y + x % y, mask=mask)

    x = torch.tensor([7, -7, 9, 5], dtype=torch.int32)
    y = torch.tensor([2, 2, -4, 1], dtype=torch.int32)
    out = torch.zeros(8, dtype=torch.int32)
    div_kernel[(1,)](x, y, out, 4, N=8)
    assert out[:4].tolist() == [3 + 1, -3 - 1, -2 + 1, 5]
