"""`tl.dot` of masked loads whose K is partly masked (K not a multiple of BLOCK_K, or
smaller than it), with each of the other mask dimensions (rows of A, columns of B)
partial in turn and together, against torch.

The operand copies into their tiles are versioned on filling the whole tile
(memref_stage/full_tile_copies.py); a version condition that leaves out a dimension of
the mask copies the whole block and reads past the mask. Each input sits at the start
of a larger buffer whose tail is NaN, so such a read shows in the result instead of
hiding in whatever memory follows; bounds-checked mode must pass on the same kernels.

Three forms of the same kernel: the sizes as run-time arguments, as constexprs (a K
that fits in one block is then a constant mask bound), and one program holding the whole
problem (every mask bound a constant)."""
import pytest
import torch

import triton
import triton.language as tl

BM = BN = 16


@triton.jit
def _masked_dot(a_ptr, b_ptr, c_ptr, rm, rn, M, N, K, BK: tl.constexpr):
    acc = tl.zeros((rm.shape[0], rn.shape[0]), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + tl.arange(0, BK)
        km = k < K
        a = tl.load(a_ptr + rm[:, None] * K + k[None, :],
                    mask=(rm[:, None] < M) & km[None, :], other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + rn[None, :],
                    mask=km[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def runtime_sizes_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    _masked_dot(a_ptr, b_ptr, c_ptr, rm, rn, M, N, K, BK)


@triton.jit
def constexpr_sizes_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                           K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    _masked_dot(a_ptr, b_ptr, c_ptr, rm, rn, M, N, K, BK)


@triton.jit
def one_block_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                     K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    _masked_dot(a_ptr, b_ptr, c_ptr, rm, rn, M, N, K, BK)


KERNELS = {"runtime": runtime_sizes_kernel, "constexpr": constexpr_sizes_kernel,
           "one_block": one_block_kernel}


def _sizes(form: str, partial: str) -> tuple:
    """(M, N): whole blocks, or cut where `partial` names the dimension ("M", "N")."""
    if form == "one_block":
        return (BM - 3 if "M" in partial else BM), (BN - 7 if "N" in partial else BN)
    return (2 * BM - 5 if "M" in partial else 2 * BM), (2 * BN - 11 if "N" in partial else 2 * BN)


def _poisoned(shape, dtype, generator) -> torch.Tensor:
    """Random values of `shape` at the start of a buffer twice their size whose tail is
    NaN: a read past the tensor's end makes the result NaN."""
    count = shape[0] * shape[1]
    storage = torch.full((2 * count,), float("nan"), dtype=dtype)
    storage[:count] = torch.randn(count, generator=generator).to(dtype)
    return storage[:count].view(shape)


def _run(form: str, M: int, N: int, K: int, BK: int, dtype, **launch) -> tuple:
    generator = torch.Generator().manual_seed(M * 10007 + N * 101 + K * 7 + BK)
    a = _poisoned((M, K), dtype, generator)
    b = _poisoned((K, N), dtype, generator)
    c = torch.full((M, N), float("nan"), dtype=torch.float32)
    grid = (1, 1) if form == "one_block" else (triton.cdiv(M, BM), triton.cdiv(N, BN))
    KERNELS[form][grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, **launch)
    return c, a.float() @ b.float()


# (K, BLOCK_K): K a fraction of one block, a block and a fraction, whole blocks, more
# than a block in a wider block.
RATIOS = [(16, 32), (20, 32), (33, 32), (48, 32), (64, 32), (16, 64), (48, 64)]
# Which of the other dimensions is cut as well: none (K alone), rows of A, columns of
# B, both. With K = 64, BLOCK_K = 32, K is whole and M or N is the partial one.
PARTIAL = ["K", "M", "N", "MN"]
FORMS = list(KERNELS)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("partial", PARTIAL)
@pytest.mark.parametrize("K,BK", RATIOS)
def test_masked_k_dot_fp32(form, partial, K, BK):
    M, N = _sizes(form, partial)
    result, expected = _run(form, M, N, K, BK, torch.float32)
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("partial", ["K", "MN"])
@pytest.mark.parametrize("K,BK", [(16, 32), (33, 32), (48, 64)])
def test_masked_k_dot_fp16(form, partial, K, BK):
    M, N = _sizes(form, partial)
    result, expected = _run(form, M, N, K, BK, torch.float16)
    torch.testing.assert_close(result, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("K,BK", [(16, 32), (20, 32), (48, 64)])
def test_masked_k_dot_passes_bounds_checks(form, K, BK):
    """Bounds-checked mode (OpenCL C: checked kernels are not made SPIR-V) checks each
    access against the tensor's own extent, which the NaN tail lies beyond: a copy read
    past the mask raises OutOfBoundsError here."""
    M, N = _sizes(form, "MN")
    result, expected = _run(form, M, N, K, BK, torch.float32, bounds_check=True,
                            program="source")
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-4)
