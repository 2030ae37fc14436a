"""Triton language: tl.dot (shapes down to 16, fp32/fp16/bf16 with fp32 accumulation,
int8 -> int32, input precisions, masked non-power-of-two edges, batched 3-D dots) and
shape ops (trans, permute, reshape/view, join, split, cat, broadcast_to, expand_dims,
gather, histogram), checked against torch."""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  PRECISION: tl.constexpr, ACC_INT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    if ACC_INT:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kmask = rk < K - k * BK
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & kmask[None, :], other=0)
        b = tl.load(b_ptrs, mask=kmask[:, None] & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, c,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _matmul(a, b, out_dtype, block=(16, 16, 16), precision="ieee"):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=out_dtype)
    BM, BN, BK = block
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, PRECISION=precision,
                        ACC_INT=not out_dtype.is_floating_point)
    return c


DOT_CASES = [
    # (M, N, K), block, in dtype, out dtype, precision
    ((16, 16, 16), (16, 16, 16), torch.float32, torch.float32, "ieee"),
    ((33, 47, 29), (16, 32, 16), torch.float16, torch.float32, "ieee"),
    ((64, 32, 48), (32, 32, 16), torch.bfloat16, torch.float32, "ieee"),
    ((40, 24, 70), (16, 16, 32), torch.int8, torch.int32, "ieee"),
    ((50, 30, 20), (32, 16, 16), torch.float32, torch.float32, "tf32"),
    ((16, 64, 32), (16, 64, 32), torch.float16, torch.float16, "ieee"),
]
SLOW_DOT_CASES = [((m, n, k), (bm, bn, bk), dt, torch.float32, p)
                  for (m, n, k) in ((17, 19, 23), (128, 64, 96))
                  for (bm, bn, bk) in ((16, 16, 16), (32, 64, 32), (64, 32, 64))
                  for dt in (torch.float32, torch.float16) for p in ("ieee", "tf32x3")]


def _check_dot(shape, block, in_dtype, out_dtype, precision):
    M, N, K = shape
    gen = torch.Generator().manual_seed(0)
    if in_dtype.is_floating_point:
        a = torch.randn(M, K, generator=gen).to(in_dtype)
        b = torch.randn(K, N, generator=gen).to(in_dtype)
    else:
        a = torch.randint(-128, 128, (M, K), generator=gen).to(in_dtype)
        b = torch.randint(-128, 128, (K, N), generator=gen).to(in_dtype)
    c = _matmul(a, b, out_dtype, block, precision)
    if in_dtype.is_floating_point:
        ref = (a.double() @ b.double()).to(out_dtype)
        tol = 1e-2 if out_dtype == torch.float16 else 1e-4
        torch.testing.assert_close(c.double(), ref.double(), rtol=tol, atol=tol)
    else:
        assert torch.equal(c, a.int() @ b.int())


@pytest.mark.parametrize("shape,block,in_dtype,out_dtype,precision", DOT_CASES)
def test_dot(shape, block, in_dtype, out_dtype, precision):
    _check_dot(shape, block, in_dtype, out_dtype, precision)


@pytest.mark.slow
@pytest.mark.parametrize("shape,block,in_dtype,out_dtype,precision", SLOW_DOT_CASES)
def test_dot_more(shape, block, in_dtype, out_dtype, precision):
    _check_dot(shape, block, in_dtype, out_dtype, precision)


def test_dot_transposed_operand_strides():
    a = torch.randn(48, 32).t()  # (32, 48), column major
    b = torch.randn(40, 48).t()  # (48, 40)
    c = _matmul(a, b, torch.float32, (16, 16, 16))
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@triton.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr,
                       N: tl.constexpr, K: tl.constexpr):
    bi = tl.arange(0, B)[:, None, None]
    mi = tl.arange(0, M)[None, :, None]
    ni = tl.arange(0, N)[None, None, :]
    ki_a = tl.arange(0, K)[None, None, :]
    ki_b = tl.arange(0, K)[None, :, None]
    a = tl.load(a_ptr + bi * M * K + mi * K + ki_a)
    b = tl.load(b_ptr + bi * K * N + ki_b * N + ni)
    tl.store(c_ptr + bi * M * N + mi * N + ni, tl.dot(a, b))


def test_batched_3d_dot():
    a = torch.randn(2, 16, 32)
    b = torch.randn(2, 32, 16)
    c = torch.empty(2, 16, 16)
    batched_dot_kernel[(1,)](a, b, c, B=2, M=16, N=16, K=32)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@triton.jit
def dot_trans_kernel(q_ptr, k_ptr, o_ptr, M: tl.constexpr, D: tl.constexpr):
    r = tl.arange(0, M)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + r[:, None] * D + d[None, :])
    k = tl.load(k_ptr + r[:, None] * D + d[None, :])
    s = tl.dot(q, tl.trans(k))
    p = tl.exp2(s - tl.max(s, 1)[:, None])
    tl.store(o_ptr + r[:, None] * M + r[None, :], p / tl.sum(p, 1)[:, None])


def test_dot_with_trans_fp16_softmax():
    q = torch.randn(16, 32).half()
    k = torch.randn(16, 32).half()
    o = torch.empty(16, 16)
    dot_trans_kernel[(1,)](q, k, o, M=16, D=32)
    s = q.float() @ k.float().t()
    p = torch.exp2(s - s.amax(1, keepdim=True))
    torch.testing.assert_close(o, p / p.sum(1, keepdim=True), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Shape ops


@triton.jit
def shapes_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])         # (M, N)
    y = tl.load(y_ptr + rm[:, None] * N + rn[None, :])
    o = out_ptr
    tl.store(o + rn[:, None] * M + rm[None, :], tl.trans(x))    # (N, M)
    o += M * N
    r = tl.reshape(x, (N, M))
    tl.store(o + rn[:, None] * M + rm[None, :], r)
    o += M * N
    v = tl.reshape(x, (M * N,))
    tl.store(o + tl.arange(0, M * N), v)
    o += M * N
    j = tl.join(x, y)                                          # (M, N, 2)
    tl.store(o + rm[:, None, None] * 2 * N + rn[None, :, None] * 2
             + tl.arange(0, 2)[None, None, :], j)
    o += 2 * M * N
    a, b = tl.split(j)
    tl.store(o + rm[:, None] * N + rn[None, :], a - b)
    o += M * N
    c = tl.cat(tl.reshape(x, (M * N,)), tl.reshape(y, (M * N,)))
    tl.store(o + tl.arange(0, 2 * M * N), c)                   # (2MN,)
    o += 2 * M * N
    col = tl.sum(x, 1)
    bc = tl.broadcast_to(col[:, None], (M, N))
    tl.store(o + rm[:, None] * N + rn[None, :], bc)
    o += M * N
    e = tl.expand_dims(tl.expand_dims(col, 0), 2)               # (1, M, 1)
    tl.store(o + rm[None, :, None] + tl.zeros((1, 1, 1), tl.int32), e)
    o += M
    p = tl.permute(tl.reshape(x, (2, M // 2, N)), (2, 0, 1))    # (N, 2, M//2)
    tl.store(o + tl.arange(0, N)[:, None, None] * M + tl.arange(0, 2)[None, :, None] * (M // 2)
             + tl.arange(0, M // 2)[None, None, :], p)


def test_shape_ops():
    M, N = 8, 16
    x = torch.randn(M, N)
    y = torch.randn(M, N)
    out = torch.zeros(M * N * 10 + M)
    shapes_kernel[(1,)](x, y, out, M=M, N=N)
    parts = []
    o = 0

    def take(n, shape):
        nonlocal o
        parts.append(out[o:o + n].view(shape))
        o += n
    take(M * N, (N, M))
    take(M * N, (N, M))
    take(M * N, (M * N,))
    take(2 * M * N, (M, N, 2))
    take(M * N, (M, N))
    take(2 * M * N, (2 * M, N))
    take(M * N, (M, N))
    take(M, (M,))
    take(M * N, (N, 2, M // 2))
    expected = [x.t(), x.reshape(N, M), x.reshape(-1), torch.stack([x, y], -1), x - y,
                None, x.sum(1, keepdim=True).expand(M, N), x.sum(1),
                x.reshape(2, M // 2, N).permute(2, 0, 1)]
    for i, (got, want) in enumerate(zip(parts, expected)):
        if want is None:  # cat may reorder elements: compare as multisets
            assert sorted(got.reshape(-1).tolist()) == sorted(torch.cat([x, y]).reshape(-1).tolist())
            continue
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, msg=f"part {i}")


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
                  AXIS: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, AXIS))


@pytest.mark.parametrize("axis", [0, 1])
def test_gather(axis):
    M, N = 8, 16
    x = torch.randn(M, N)
    idx = torch.randint(0, x.shape[axis], (M, N), dtype=torch.int32)
    out = torch.empty(M, N)
    gather_kernel[(1,)](x, idx, out, M=M, N=N, AXIS=axis)
    assert torch.equal(out, torch.gather(x, axis, idx.long()))


@triton.jit
def histogram_kernel(x_ptr, out_ptr, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


def test_histogram():
    x = torch.randint(0, 16, (100,), dtype=torch.int32)
    out = torch.empty(16, dtype=torch.int32)
    histogram_kernel[(1,)](x, out, 100, N=128, BINS=16)
    assert torch.equal(out, torch.bincount(x, minlength=16).int())
