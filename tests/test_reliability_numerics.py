"""Numerics: long reductions and dots against fp64 references, and NaN / Inf as in torch.

Stated tolerances (fp32 accumulation):
  * sum over n elements: |got - exact| <= 1e-6 * n**0.5 * sum(|x|)  (plus 1e-6 absolute)
  * dot over K: |got - exact| <= 1e-6 * K**0.5 * (|A| @ |B|)          (plus 1e-6 absolute)
  * max / argmax: exact.
The bounds are a few times the error of fp32 accumulation of random data (which grows
like sqrt(n) * eps) and far below the worst case n * eps.
"""

import math

import pytest
import torch

import triton
import triton.language as tl

from reliability_kernels import matmul_kernel, row_sum_max_kernel, softmax_kernel


@triton.jit
def long_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@pytest.mark.parametrize("n", [2**16 + 17, 2**17 + 5])
def test_long_sum_within_tolerance_of_fp64(n):
    g = torch.Generator().manual_seed(n)
    rows = 3
    x = torch.randn(rows, n, generator=g) * 10 + 1
    out = torch.empty(rows)
    long_sum_kernel[(rows,)](x, out, n, BLOCK=1024)
    exact = x.double().sum(1)
    bound = 1e-6 * math.sqrt(n) * x.double().abs().sum(1) + 1e-6
    assert ((out.double() - exact).abs() <= bound).all(), (out, exact, bound)


def test_row_max_and_argmax_exact_over_wide_rows():
    rows, cols = 4, 4000
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(1))
    s, m, am = torch.empty(rows), torch.empty(rows), torch.empty(rows, dtype=torch.int32)
    row_sum_max_kernel[(rows,)](x, s, m, am, cols, x.stride(0), BLOCK=4096)
    assert torch.equal(m, x.max(1).values)
    assert am.tolist() == x.argmax(1).tolist()
    bound = 1e-6 * math.sqrt(cols) * x.double().abs().sum(1) + 1e-6
    assert ((s.double() - x.double().sum(1)).abs() <= bound).all()


@pytest.mark.parametrize("K", [1024, 2053])
def test_long_dot_within_tolerance_of_fp64(K):
    g = torch.Generator().manual_seed(K)
    M, N = 32, 32
    a = torch.randn(M, K, generator=g)
    b = torch.randn(K, N, generator=g)
    c = torch.empty(M, N)
    matmul_kernel[(1, 1)](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=32, BN=32, BK=32)
    exact = a.double() @ b.double()
    bound = 1e-6 * math.sqrt(K) * (a.double().abs() @ b.double().abs()) + 1e-6
    assert ((c.double() - exact).abs() <= bound).all()


# ---------------------------------------------------------------------------------------
# NaN and Inf


@triton.jit
def elementwise_special_kernel(x_ptr, y_ptr, max_ptr, min_ptr, add_ptr, exp_ptr, mul_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(max_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(min_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(add_ptr + offs, x + y, mask=mask)
    tl.store(exp_ptr + offs, tl.exp(x), mask=mask)
    tl.store(mul_ptr + offs, x * y, mask=mask)


SPECIALS = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 100.0, -200.0, 88.8, 3e38, -3e38]


def test_elementwise_nan_and_inf_as_in_torch():
    pairs = [(a, b) for a in SPECIALS for b in SPECIALS]
    x = torch.tensor([a for a, _ in pairs], dtype=torch.float32)
    y = torch.tensor([b for _, b in pairs], dtype=torch.float32)
    n = x.numel()
    outs = [torch.empty(n) for _ in range(5)]
    elementwise_special_kernel[(1,)](x, y, *outs, n, BLOCK=256)
    expected = [torch.maximum(x, y), torch.minimum(x, y), x + y, torch.exp(x), x * y]
    for name, got, want in zip(["maximum", "minimum", "add", "exp", "mul"], outs, expected):
        torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-6, atol=0, msg=name)
        # signs of infinities and zeros too
        finite = torch.isfinite(want)
        assert torch.equal(torch.isinf(got), torch.isinf(want)), name
        assert torch.equal(torch.signbit(got[~finite & ~torch.isnan(want)]),
                           torch.signbit(want[~finite & ~torch.isnan(want)])), name


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def row_reductions_kernel(x_ptr, sum_ptr, max_ptr, nanmax_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    xm = tl.where(cols < n_cols, x, -float("inf"))
    tl.store(max_ptr + row, tl.max(xm, axis=0))
    tl.store(nanmax_ptr + row, tl.reduce(xm, 0, _max_nan))


def test_reductions_with_nan_and_inf():
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([
        [1.0, 2.0, 3.0, 4.0, 5.0],
        [1.0, inf, 3.0, 4.0, 5.0],      # sum inf, max inf
        [1.0, inf, -inf, 4.0, 5.0],     # sum nan, max inf
        [1.0, nan, 3.0, 4.0, 5.0],      # sum nan; torch.max nan
        [-inf, -inf, -inf, -inf, -inf],  # sum -inf, max -inf
        [3e38, 3e38, 0.0, 0.0, 0.0],     # sum overflows to inf
    ])
    n_rows, n_cols = rows.shape
    s, m, nm = torch.empty(n_rows), torch.empty(n_rows), torch.empty(n_rows)
    row_reductions_kernel[(n_rows,)](rows, s, m, nm, n_cols, BLOCK=8)
    torch.testing.assert_close(s, rows.sum(1), equal_nan=True)
    # A reduction with a NaN-propagating combine is torch.max.
    torch.testing.assert_close(nm, rows.max(1).values, equal_nan=True)
    # tl.max is Triton's NaN-ignoring maximum (maxnum, as on GPUs): equal to torch
    # wherever the row has no NaN.
    no_nan = ~torch.isnan(rows).any(1)
    torch.testing.assert_close(m[no_nan], rows.max(1).values[no_nan])


def test_softmax_of_infinite_logits():
    inf = float("inf")
    x = torch.tensor([[0.0, 1.0, -inf, 2.0], [-inf, 0.0, -inf, 0.0], [1000.0, 0.0, -1000.0, 1000.0]])
    out = torch.empty_like(x)
    softmax_kernel[(3,)](x, out, 4, x.stride(0), BLOCK=4)
    torch.testing.assert_close(out, torch.softmax(x, 1), equal_nan=True)
