"""Elementwise chains in the GPU shape (memref_stage/private_row_fusion.py and
uniform_full_rows.py): a work-item's loops over its private rows fused into one, and
that loop's version for full tiles. Full and partial tiles, `other` values, 2-D masks,
results also reduced after the loop (a private array read after it), in both shapes on
the active device, against torch."""
import pytest
import torch
import triton
import triton.language as tl

SHAPES = ["cpu", "gpu"]


@triton.jit
def scaled_sum(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=2.0)
    tl.store(out_ptr + offs, x * 0.5 + tl.exp(y), mask=mask)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n, block, num_warps", [(4096, 1024, 4), (4000, 1024, 4), (1000, 256, 2),
                                                 (77, 64, 1), (3000, 512, 8)])
def test_elementwise_chain(n, block, num_warps, shape):
    generator = torch.Generator().manual_seed(n)
    x, y = torch.randn(n, generator=generator), torch.randn(n, generator=generator)
    out = torch.full((n,), 7.0)
    scaled_sum[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=num_warps,
                                         opencl_target=shape)
    torch.testing.assert_close(out, x * 0.5 + torch.exp(y), atol=1e-5, rtol=1e-5)


@triton.jit
def rows_then_sums(x_ptr, out_ptr, sums_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    y = x * 3.0 - 1.0
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y, mask=mask)
    tl.store(sums_ptr + rows, tl.sum(tl.where(mask, y, 0.0), axis=1), mask=rows < M)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("M, N, BM, BN, num_warps", [(64, 128, 8, 128, 4), (50, 100, 8, 128, 4),
                                                     (16, 32, 16, 32, 1), (33, 64, 4, 64, 2)])
def test_masked_rows_then_sums(M, N, BM, BN, num_warps, shape):
    x = torch.randn(M, N, generator=torch.Generator().manual_seed(M * N))
    out, sums = torch.full((M, N), 7.0), torch.full((M,), 7.0)
    rows_then_sums[(triton.cdiv(M, BM),)](x, out, sums, M, N, BM=BM, BN=BN, num_warps=num_warps,
                                          opencl_target=shape)
    torch.testing.assert_close(out, x * 3.0 - 1.0)
    torch.testing.assert_close(sums, (x * 3.0 - 1.0).sum(1), atol=1e-4, rtol=1e-5)


@triton.jit
def in_place_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [1024, 1500])
def test_in_place(n, shape):
    x, y = torch.arange(n, dtype=torch.float32), torch.ones(n)
    expected = x + y
    in_place_add[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512, num_warps=4, opencl_target=shape)
    assert torch.equal(x, expected)
