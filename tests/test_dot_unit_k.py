"""`tl.dot` of masked loads where one mask bound is 1: K = 1 (one column of A, one row
of B in a 16-wide block), M = 1 or N = 1, against torch.

Triton specializes an integer argument equal to 1 into a constant, so with the sizes
as run-time arguments the mask `k < K` becomes the constant `k < 1`: a unit extent,
which the memref stage must neither take for the whole tile (full_tile_copies.py) nor
drop with the dimension. The constexpr form makes every bound a constant. Each input
sits at the start of a larger buffer whose tail is NaN, so a read past the mask shows
in the result.

The operands are read through run-time strides (a column stride of 2, which Triton does
not specialize): a copy of one element per row then picked between the contiguous and
the strided async copy at run time, which PoCL 3.1 failed to link (undefined
`_local_id_z`) instead of running."""
import pytest
import torch

import triton
import triton.language as tl

BM = BN = BK = 16


@triton.jit
def _masked_dot(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak,
                mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn,
                mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    acc = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def runtime_sizes_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    _masked_dot(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BM, BN, BK)


@triton.jit
def constexpr_sizes_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                           K: tl.constexpr, sam, sak, sbk, sbn,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    _masked_dot(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BM, BN, BK)


KERNELS = {"runtime": runtime_sizes_kernel, "constexpr": constexpr_sizes_kernel}


def _poisoned(shape, dtype, generator, layout: str) -> torch.Tensor:
    """Random values of `shape` at the start of a buffer whose tail is NaN (a read past
    the tensor's end makes the result NaN): rows packed ("contiguous"), or every other
    element of each row ("strided": a column stride of 2)."""
    rows, cols = shape
    step = 2 if layout == "strided" else 1
    count = rows * cols * step
    storage = torch.full((2 * count,), float("nan"), dtype=dtype)
    storage[:count] = torch.randn(count, generator=generator).to(dtype)
    return storage[:count].view(rows, cols * step)[:, ::step]


def _run(form: str, M: int, N: int, K: int, dtype, layout: str) -> tuple:
    generator = torch.Generator().manual_seed(M * 10007 + N * 101 + K * 7)
    a = _poisoned((M, K), dtype, generator, layout)
    b = _poisoned((K, N), dtype, generator, layout)
    c = torch.full((M, N), float("nan"), dtype=torch.float32)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    KERNELS[form][grid](a, b, c, M, N, K, *a.stride(), *b.stride(), BM=BM, BN=BN, BK=BK)
    return c, a.float() @ b.float()


# (M, N, K): K = 1 alone and with M or N partial, then M = 1 or N = 1 (and both) with
# K = 1 or a partial K; K = 2 and 5 as neighbours of the unit extent.
SIZES = [(16, 16, 1), (7, 16, 1), (16, 23, 1), (33, 9, 1), (1, 23, 1), (1, 1, 1),
         (1, 16, 5), (16, 1, 5), (1, 1, 2), (20, 1, 1), (16, 16, 2)]
FORMS = list(KERNELS)
LAYOUTS = ["contiguous", "strided"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_unit_extent_dot_fp32(M, N, K, form, layout):
    result, expected = _run(form, M, N, K, torch.float32, layout)
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("M,N,K", [(16, 16, 1), (1, 23, 1), (1, 1, 1), (16, 1, 5)])
def test_unit_extent_dot_fp16(M, N, K, form, layout):
    result, expected = _run(form, M, N, K, torch.float16, layout)
    torch.testing.assert_close(result, expected, rtol=1e-3, atol=1e-3)
