"""Tensor atomics and column reductions in the shapes the GPU shape rewrites
(memref_stage/work_group_atomics.py: a tensor atomic's elements spread over the
work-items; work_group_columns.py: a column sum of a tile narrower than the
work-group summed in row strips). Correct in every shape; `.ci/run` runs this file in
the GPU shape too (TRITON_SPIRV_TARGET=gpu). References: torch.
"""
import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + x, 1, mask=mask)


@triton.jit
def scatter_max_old_kernel(out_ptr, val_ptr, idx_ptr, old_ptr, n, BLOCK: tl.constexpr):
    """The atomics' old values kept per element: each work-item stores its own."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    val = tl.load(val_ptr + offs, mask=mask, other=0)
    old = tl.atomic_max(out_ptr + idx, val, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, rows, cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    c = tl.program_id(0) * COLS + tl.arange(0, COLS)
    r = tl.arange(0, ROWS)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :],
                mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)
    tl.store(out_ptr + c, tl.sum(x, axis=0), mask=c < cols)


@triton.jit
def column_max_kernel(x_ptr, out_ptr, rows, cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    c = tl.program_id(0) * COLS + tl.arange(0, COLS)
    r = tl.arange(0, ROWS)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :],
                mask=(r[:, None] < rows) & (c[None, :] < cols), other=-float("inf"))
    tl.store(out_ptr + c, tl.max(x, axis=0), mask=c < cols)


@pytest.mark.parametrize("n", [1 << 14, 3000])     # whole blocks; a partial last block
def test_histogram(n):
    bins = 256
    x = torch.randint(0, bins, (n,), dtype=torch.int32, generator=torch.Generator().manual_seed(n))
    out = torch.zeros(bins, dtype=torch.int32)
    histogram_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, num_warps=4)
    assert torch.equal(out, torch.bincount(x, minlength=bins).int())


def test_atomic_old_values_per_element():
    # distinct addresses per element: each old value is the initial one
    n = 1000
    gen = torch.Generator().manual_seed(5)
    idx = torch.randperm(n, generator=gen).int()
    val = torch.randint(-50, 50, (n,), dtype=torch.int32, generator=gen)
    out = torch.randint(-50, 50, (n,), dtype=torch.int32, generator=gen)
    before = out.clone()
    old = torch.full((n,), 12345, dtype=torch.int32)
    scatter_max_old_kernel[(triton.cdiv(n, 256),)](out, val, idx, old, n, BLOCK=256, num_warps=4)
    assert torch.equal(old, before[idx.long()])
    assert torch.equal(out[idx.long()], torch.maximum(before[idx.long()], val))


@pytest.mark.parametrize("rows, block_rows, block_cols, cols", [
    (128, 128, 16, 64), (64, 64, 32, 128), (100, 128, 16, 40), (3, 128, 16, 32), (16, 16, 8, 24)])
def test_column_sum(rows, block_rows, block_cols, cols):
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(rows * cols))
    out = torch.full((cols,), 7.0)
    column_sum_kernel[(triton.cdiv(cols, block_cols),)](x, out, rows, cols, ROWS=block_rows,
                                                        COLS=block_cols, num_warps=4)
    torch.testing.assert_close(out, x.sum(0), rtol=1e-4, atol=1e-4)


def test_column_max():
    rows, cols = 100, 48
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(3))
    out = torch.empty(cols)
    column_max_kernel[(triton.cdiv(cols, 16),)](x, out, rows, cols, ROWS=128, COLS=16, num_warps=4)
    torch.testing.assert_close(out, x.max(0).values)
