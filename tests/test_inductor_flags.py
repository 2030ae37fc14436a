"""Reductions of i1 flags by a bitwise combine (Inductor's `any` before softmax,
`tl.reduce` with `&`/`^`) run on bytes (ttir_to_linalg/reductions.py): on CPU shapes
the reduction loops take `uchar16`/`char16` vectors and the flags stored for them are
computed 16 at a time (memref_stage/elementwise_vectors.py). Results against torch,
with NaN/inf in some rows and not others."""
import re

import pytest
import torch

import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers

from triton_spirv.target import current_target

CPU_SHAPE = current_target().is_cpu


@triton.jit
def _and_combine(a, b):
    return a & b


@triton.jit
def _xor_combine(a, b):
    return a ^ b


@triton.jit
def _row_flags(x_ptr, any_ptr, all_ptr, odd_ptr, R: tl.constexpr, XBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + rows * R + cols)
    bad = ((x == x) & (tl.abs(x) != float("inf"))) == 0
    positive = x > 0
    tl.store(any_ptr + rows, triton_helpers.any(bad, 1)[:, None].to(tl.int32))
    tl.store(all_ptr + rows, tl.reduce(positive, 1, _and_combine)[:, None].to(tl.int32))
    tl.store(odd_ptr + rows, tl.reduce(positive, 1, _xor_combine)[:, None].to(tl.int32))


@pytest.mark.parametrize("R", [256, 1024])
def test_any_all_xor_of_row_flags(R):
    torch.manual_seed(0)
    rows = 16
    x = torch.randn(rows, R)
    x[1, 3] = float("nan")
    x[2, R - 1] = float("inf")
    x[5, 0] = float("-inf")
    x[3, :] = torch.rand(R) + 0.5      # every element positive: `all` holds
    x[4, : R // 2] = 1.0               # an even count positive: xor 0
    x[4, R // 2:] = -1.0
    any_, all_, odd = (torch.full((rows,), -1, dtype=torch.int32) for _ in range(3))
    compiled = _row_flags[(rows // 8,)](x, any_, all_, odd, R=R, XBLOCK=8)
    bad = ~torch.isfinite(x)
    positive = x > 0
    torch.testing.assert_close(any_, bad.any(1).to(torch.int32))
    torch.testing.assert_close(all_, positive.all(1).to(torch.int32))
    torch.testing.assert_close(odd, (positive.sum(1) % 2).to(torch.int32))
    if CPU_SHAPE:
        cl = compiled.asm["cl"]
        # the flags computed 16 at a time and stored as bytes, reduced in byte vectors
        assert re.search(r"char16 \w+ = convert_u?char16\(-\w+\);", cl)
        assert re.search(r"char16 \w+ = \w+ \| \w+;", cl)
        assert re.search(r"char16 \w+ = \w+ & \w+;", cl)
        assert re.search(r"char16 \w+ = \w+ \^ \w+;", cl)
