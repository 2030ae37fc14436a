"""Triton language: reductions (per axis, keep_dims, NaN-aware max, argmax/argmin
tie-breaking, user combine functions) and scans (cumsum, cumprod, reverse,
associative_scan with one and two operands), checked against torch."""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def _pick_left(a, ai, b, bi):
    # (value, index) pairs: the larger value; ties keep the left one
    keep = (a > b) | ((a == b) & (ai < bi))
    return tl.where(keep, a, b), tl.where(keep, ai, bi)


@triton.jit
def reduce_kernel(x_ptr, out_ptr, idx_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr,
                  AXIS: tl.constexpr, OP: tl.constexpr, KEEP: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    fill = -float("inf") if OP == "argmax" or OP == "max" else float("inf")
    if OP == "sum" or OP == "xor":
        fill = 0
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=fill)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        r = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        r = tl.min(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "xor":
        r = tl.xor_sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        r, i = tl.max(x, axis=AXIS, return_indices=True, keep_dims=KEEP)
    else:
        r, i = tl.min(x, axis=AXIS, return_indices=True, keep_dims=KEEP)
    if AXIS == 0:
        offs = rn
        omask = rn < N
    else:
        offs = rm
        omask = rm < M
    if KEEP:
        r = tl.reshape(r, (offs.shape[0],))
    tl.store(out_ptr + offs, r, mask=omask)
    if OP == "argmax" or OP == "argmin":
        if KEEP:
            i = tl.reshape(i, (offs.shape[0],))
        tl.store(idx_ptr + offs, i, mask=omask)


REDUCE_CASES = [
    ("sum", torch.float32, 0, False), ("sum", torch.float32, 1, True),
    ("max", torch.float32, 1, False), ("min", torch.int32, 0, True),
    ("argmax", torch.float32, 1, False), ("argmin", torch.float32, 0, False),
    ("argmax", torch.int32, 0, True), ("xor", torch.int32, 1, False),
]
SLOW_REDUCE_CASES = [(op, dt, ax, keep) for op in ("sum", "max", "min", "argmax", "argmin")
                     for dt in (torch.float16, torch.float64, torch.int8, torch.int64)
                     for ax in (0, 1) for keep in (False, True)]


def _check_reduce(op, dtype, axis, keep, shape=(13, 37)):
    M, N = shape
    gen = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        x = torch.randn(M, N, generator=gen).to(dtype)
    else:
        x = torch.randint(-20, 20, (M, N), generator=gen).to(dtype)  # many ties
    n_out = N if axis == 0 else M
    out = torch.empty(n_out, dtype=dtype)
    idx = torch.empty(n_out, dtype=torch.int32)
    reduce_kernel[(1,)](x, out, idx, M, N, BM=16, BN=64, AXIS=axis, OP=op, KEEP=keep)
    if op == "sum":
        expected = x.double().sum(axis).to(dtype)
        torch.testing.assert_close(out.double(), expected.double(), rtol=1e-2 if dtype in
                                   (torch.float16, torch.bfloat16) else 1e-5, atol=1e-2)
        return
    if op == "xor":
        expected = x[0] if axis == 0 else x[:, 0]
        for k in range(1, x.shape[axis]):
            expected = expected ^ (x[k] if axis == 0 else x[:, k])
        assert torch.equal(out, expected)
        return
    ref = {"max": torch.amax, "min": torch.amin}.get(op)
    if ref is not None:
        assert torch.equal(out, ref(x, axis))
        return
    values = x.double()
    best = values.amax(axis) if op == "argmax" else values.amin(axis)
    # Triton breaks ties towards the smallest index
    hits = values == (best.unsqueeze(axis))
    ar = torch.arange(x.shape[axis]).unsqueeze(1 - axis)
    first = torch.where(hits, ar, x.shape[axis]).amin(axis)
    assert torch.equal(idx.long(), first)
    assert torch.equal(out.double(), best)


@pytest.mark.parametrize("op,dtype,axis,keep", REDUCE_CASES)
def test_reduce(op, dtype, axis, keep):
    _check_reduce(op, dtype, axis, keep)


@pytest.mark.slow
@pytest.mark.parametrize("op,dtype,axis,keep", SLOW_REDUCE_CASES)
def test_reduce_more_dtypes(op, dtype, axis, keep):
    _check_reduce(op, dtype, axis, keep)


@triton.jit
def _nan_max(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _nan_min(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def nan_max_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr, tl.reduce(x, 0, _nan_max))
    tl.store(out_ptr + 1, tl.reduce(x, 0, _nan_min))
    tl.store(out_ptr + 2, tl.sum(x, 0))


def test_reduce_nan_propagation():
    x = torch.arange(16, dtype=torch.float32)
    x[5] = float("nan")
    out = torch.zeros(3)
    nan_max_kernel[(1,)](x, out, N=16)
    assert out.isnan().all()


@triton.jit
def custom_reduce_kernel(x_ptr, out_ptr, out_idx_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    v, i = tl.reduce((x, offs), 0, _pick_left)
    tl.store(out_ptr, v)
    tl.store(out_idx_ptr, i)


def test_reduce_user_combine_two_operands():
    x = torch.tensor([1.0, 5.0, 2.0, 5.0, -1.0, 5.0, 0.0, 3.0])
    out = torch.zeros(1)
    idx = torch.zeros(1, dtype=torch.int32)
    custom_reduce_kernel[(1,)](x, out, idx, N=8)
    assert out.item() == 5.0 and idx.item() == 1


@triton.jit
def reduce_3d_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)
    s = tl.sum(x, axis=1)  # (A, C)
    tl.store(out_ptr + tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :], s)


def test_reduce_middle_axis_3d():
    x = torch.randn(4, 8, 16)
    out = torch.empty(4, 16)
    reduce_3d_kernel[(1,)](x, out, A=4, B=8, C=16)
    torch.testing.assert_close(out, x.sum(1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Scans


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    # composition of x -> a*x + b maps (a linear recurrence), not commutative
    return a1 * a2, b1 * a2 + b2


@triton.jit
def scan_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
                OP: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        r = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    elif OP == "cumprod":
        r = tl.cumprod(x, axis=AXIS, reverse=REVERSE)
    else:
        r = tl.associative_scan(x, AXIS, _max_combine, reverse=REVERSE)
    tl.store(out_ptr + offs, r)


SCAN_CASES = [("cumsum", torch.float32, 1, False), ("cumsum", torch.int32, 0, True),
              ("cumprod", torch.float32, 1, True), ("max", torch.float32, 0, False)]
SLOW_SCAN_CASES = [(op, dt, ax, rev) for op in ("cumsum", "cumprod", "max")
                   for dt in (torch.float32, torch.int64) for ax in (0, 1)
                   for rev in (False, True) if (op, dt, ax, rev) not in SCAN_CASES]


def _check_scan(op, dtype, axis, reverse):
    M, N = 8, 16
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(M, N, generator=gen) + 0.5).to(dtype) if dtype.is_floating_point \
        else torch.randint(-9, 9, (M, N), generator=gen).to(dtype)
    out = torch.empty_like(x)
    scan_kernel[(1,)](x, out, M=M, N=N, AXIS=axis, OP=op, REVERSE=reverse)
    src = x.flip(axis) if reverse else x
    if op == "cumsum":
        ref = src.cumsum(axis)
    elif op == "cumprod":
        ref = src.cumprod(axis)
    else:
        ref = src.cummax(axis).values
    ref = (ref.flip(axis) if reverse else ref).to(dtype)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,dtype,axis,reverse", SCAN_CASES)
def test_scan(op, dtype, axis, reverse):
    _check_scan(op, dtype, axis, reverse)


@pytest.mark.slow
@pytest.mark.parametrize("op,dtype,axis,reverse", SLOW_SCAN_CASES)
def test_scan_more(op, dtype, axis, reverse):
    _check_scan(op, dtype, axis, reverse)


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    _, h = tl.associative_scan((a, b), 0, _affine_combine)
    tl.store(out_ptr + offs, h)


def test_associative_scan_two_operands_non_commutative():
    N = 32
    a = torch.rand(N) * 0.5 + 0.5
    b = torch.randn(N)
    out = torch.empty(N)
    linear_recurrence_kernel[(1,)](a, b, out, N=N)
    h, expected = 0.0, []
    for i in range(N):
        h = h * a[i].item() + b[i].item()
        expected.append(h)
    torch.testing.assert_close(out, torch.tensor(expected), rtol=1e-5, atol=1e-5)
