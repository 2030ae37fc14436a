"""Block accesses whose tile starts before its buffer (`x + offs - 1` at offs = 0, as
in a `unique` kernel comparing each element with the one before), the mask keeping the
accesses inside: memref views cannot start at a negative offset, so the view starts at
the first element the mask allows (ttir_to_linalg/memory.py). Checked against torch,
plain and bounds-checked (`bounds_check=True`: a read before the buffer would be
reported), in the CPU and GPU shapes."""

import os

import pytest
import torch

import triton
import triton.language as tl


@triton.jit
def unique_flags_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    cur = tl.load(x_ptr + offs, mask=offs < n, other=0)
    prev = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs < n), other=-1)
    tl.store(out_ptr + offs, (cur != prev).to(tl.int32), mask=offs < n)


@triton.jit
def shift_store_kernel(x_ptr, out_ptr, n, start, BLOCK: tl.constexpr, DYNAMIC_START: tl.constexpr):
    # out[i - 1] = x[i] for the i the mask allows: a store view starting before `out`
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    low = start if DYNAMIC_START else 1
    tl.store(out_ptr + offs - 1, x * 3, mask=(offs >= low) & (offs < n))


@triton.jit
def previous_row_kernel(x_ptr, out_ptr, M, N: tl.constexpr, BM: tl.constexpr):
    # out[r, :] = x[r, :] - x[r - 1, :] for r >= 1: the 2-D tile starts N elements before x
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, N)[None, :]
    cur = tl.load(x_ptr + rows * N + cols, mask=rows < M, other=0.0)
    prev = tl.load(x_ptr + (rows - 1) * N + cols, mask=(rows >= 1) & (rows < M), other=0.0)
    tl.store(out_ptr + rows * N + cols, cur - prev, mask=rows < M)


@pytest.fixture(params=[False, True], ids=["plain", "bounds_checked"])
def checked(request):
    if request.param and os.environ.get("TRITON_SPIRV_PROGRAM") == "spirv":
        pytest.skip("bounds-checked kernels are built from OpenCL C only")
    return request.param


def _assert_checked_as_asked(compiled, checked):
    assert ("bounds_report" in compiled.asm["cl"]) == checked


def test_unique_flags_read_the_element_before(checked):
    n = 100
    x = torch.randint(0, 5, (n,), dtype=torch.int32).sort().values
    out = torch.full((n,), 7, dtype=torch.int32)
    compiled = unique_flags_kernel[(1,)](x, out, n, BLOCK=128, bounds_check=checked)
    _assert_checked_as_asked(compiled, checked)
    expected = torch.ones(n, dtype=torch.int32)
    expected[1:] = (x[1:] != x[:-1]).to(torch.int32)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("dynamic_start", [False, True])
def test_store_to_the_element_before(checked, dynamic_start):
    n = 50
    x = torch.randn(n)
    out = torch.full((n,), 9.0)
    compiled = shift_store_kernel[(1,)](x, out, n, 3, BLOCK=64, DYNAMIC_START=dynamic_start,
                                  bounds_check=checked)
    _assert_checked_as_asked(compiled, checked)
    low = 3 if dynamic_start else 1
    expected = torch.full((n,), 9.0)
    expected[low - 1:n - 1] = x[low:] * 3
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_2d_tile_starting_a_row_before(checked):
    M, N = 13, 16
    x = torch.randn(M, N)
    out = torch.zeros(M, N)
    compiled = previous_row_kernel[(1,)](x, out, M, N=N, BM=16, bounds_check=checked)
    _assert_checked_as_asked(compiled, checked)
    expected = x.clone()
    expected[1:] -= x[:-1]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
