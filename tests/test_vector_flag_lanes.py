"""Boolean lanes of vectors: a comparison of vectors gives lanes of 0 / -1, and a scalar
bool that joins them (`(x > 0) & row_ok`, with `row_ok` a program's condition) must
be broadcast as 0 / -1 too. It once was broadcast as 0 / 1, so `&` kept the low bit
only: a flag stored as int8 came out -1 where it is 1, and a select on it (which reads
the top bit) took the wrong side. Also the lanes' own indices (`r0_offset + arange`,
Inductor's looped-reduction masks) on vectors. Checked in both shapes on the active
device against torch."""
import pytest
import torch
import triton
import triton.language as tl

SHAPES = ["cpu", "gpu"]


@triton.jit
def flags_with_row_condition(x_ptr, i8_ptr, i32_ptr, f32_ptr, where_ptr, rows_ok,
                             R: tl.constexpr):
    row = tl.program_id(0)
    ok = row < rows_ok                      # a scalar bool
    cols = tl.arange(0, R)
    x = tl.load(x_ptr + row * R + cols)
    f = (x > 0) & ok
    tl.store(i8_ptr + row * R + cols, f.to(tl.int8))
    tl.store(i32_ptr + row * R + cols, f.to(tl.int32))
    tl.store(f32_ptr + row * R + cols, f.to(tl.float32))
    tl.store(where_ptr + row * R + cols, tl.where(f, x, -x))


@pytest.mark.parametrize("shape", SHAPES)
def test_scalar_bool_joins_vector_flags(shape):
    torch.manual_seed(0)
    rows, cols = 6, 64
    x = torch.randn(rows, cols)
    outs = [torch.full((rows, cols), 7, dtype=dtype)
            for dtype in (torch.int8, torch.int32, torch.float32, torch.float32)]
    flags_with_row_condition[(rows,)](x, *outs, 4, R=cols, opencl_target=shape)
    flag = (x > 0) & (torch.arange(rows)[:, None] < 4)
    assert torch.equal(outs[0], flag.to(torch.int8))
    assert torch.equal(outs[1], flag.to(torch.int32))
    assert torch.equal(outs[2], flag.to(torch.float32))
    assert torch.equal(outs[3], torch.where(flag, x, -x))


@triton.jit
def masked_row_sum_of_squares(x_ptr, out_ptr, rows, n, BLOCK: tl.constexpr):
    # Inductor's looped reduction: a where-accumulator over blocks of a row, masked by
    # the column index and by the row's own condition.
    row = tl.program_id(0)
    row_ok = row < rows
    base = tl.arange(0, BLOCK)[None, :]
    acc = tl.full([1, BLOCK], 0, tl.float32)
    for offset in range(0, n, BLOCK):
        index = offset + base
        mask = (index < n) & row_ok
        x = tl.load(x_ptr + row * n + index, mask, other=0.0)
        acc = tl.where(mask, acc + x * x, acc)
    tl.store(out_ptr + row + tl.arange(0, 1)[:, None], tl.sum(acc, 1)[:, None], row_ok)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [200, 256, 1000])
def test_lane_indices_in_looped_reduction(shape, n):
    torch.manual_seed(0)
    rows = 5
    x = torch.randn(rows + 1, n)
    out = torch.full((rows + 1,), float("nan"))
    masked_row_sum_of_squares[(rows + 1,)](x, out, rows, n, BLOCK=64, opencl_target=shape)
    torch.testing.assert_close(out[:rows], (x[:rows] * x[:rows]).sum(-1), rtol=1e-5, atol=1e-4)
    assert torch.isnan(out[rows])           # the masked row stores nothing
