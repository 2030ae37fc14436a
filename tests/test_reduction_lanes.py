"""Reductions in lanes (triton_spirv/ttir_to_linalg/reductions.py): a tt.reduce along a
contiguous last axis with an associative, commutative combine first reduces into 16
lanes (a vectorizable loop), then the lanes; other reductions stay sequential.
IR-in/IR-out tests of the conversion, then results against torch."""
import pytest
import torch

import triton
import triton.language as tl

from triton_spirv.stages import ttir_to_linalg_text

# TTIR as Triton 3.9 prints it for `tl.store(out_ptr, tl.reduce(x, 0, combine))` over a
# loaded tensor of SHAPE.
REDUCE_TTIR = """
module {
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %p = tt.addptr %xs, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %x = tt.load %p : tensor<64x!tt.ptr<f32>>
    %0 = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %1 = COMBINE %a, %b : f32
      tt.reduce.return %1 : f32
    }) : (tensor<64xf32>) -> f32
    tt.store %out_ptr, %0 : !tt.ptr<f32>
    tt.return
  }
}
"""


def _linalg(combine: str, length: int = 64, lane_reductions: bool = True) -> str:
    text = REDUCE_TTIR.replace("COMBINE", combine)
    return ttir_to_linalg_text(text.replace("64", str(length)),
                               lane_reductions=lane_reductions)


@pytest.mark.parametrize("combine", ["arith.addf", "arith.maxnumf", "arith.minimumf"])
def test_commutative_reduction_runs_in_lanes(combine):
    linalg = _linalg(combine)
    # 64 -> 4 rows of 16 lanes; the first row starts the lanes, the other 3 fold in,
    # then lane 0 starts the total and lanes 1..15 fold in
    assert "tensor.expand_shape" in linalg and "tensor<4x16xf32>" in linalg
    assert "tensor<3x16xf32>" in linalg and "tensor<15xf32>" in linalg
    assert linalg.count('"reduction"') == 2
    assert linalg.count(combine) == 2


def test_gpu_shapes_reduce_along_the_axis_itself():
    # the work-items of a GPU-shaped program reduce the 63 remaining elements as a tree
    linalg = _linalg("arith.addf", lane_reductions=False)
    assert "tensor.expand_shape" not in linalg and "tensor<63xf32>" in linalg
    assert linalg.count('"reduction"') == 1


def test_non_commutative_reduction_stays_in_order():
    linalg = _linalg("arith.subf")
    assert "tensor.expand_shape" not in linalg
    assert linalg.count('"reduction"') == 1 and "tensor<63xf32>" in linalg


@pytest.mark.parametrize("length", [16, 40])
def test_short_or_ragged_axis_stays_in_order(length):
    linalg = _linalg("arith.addf", length)
    assert "tensor.expand_shape" not in linalg


# ---------------------------------------------------------------------------------------
# Results against torch


@triton.jit
def _row_reductions_kernel(x_ptr, sum_ptr, max_ptr, min_ptr, xor_ptr, stride,
                           N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * stride + tl.arange(0, N))
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    tl.store(max_ptr + row, tl.max(x, axis=0))
    tl.store(min_ptr + row, tl.min(x, axis=0))
    bits = x.to(tl.int32, bitcast=True)
    tl.store(xor_ptr + row, tl.xor_sum(bits, axis=0))


@pytest.mark.parametrize("N", [32, 256, 4096])
def test_row_reductions_in_lanes_match_torch(N):
    torch.manual_seed(0)
    x = torch.randn(5, N) * 100
    x[1, N // 3] = 1e6     # a maximum in the middle of a lane
    x[2, -1] = -1e6        # a minimum in the last lane
    sums, maxs, mins = (torch.empty(5) for _ in range(3))
    xors = torch.empty(5, dtype=torch.int32)
    _row_reductions_kernel[(5,)](x, sums, maxs, mins, xors, x.stride(0), N=N)
    torch.testing.assert_close(sums, x.double().sum(1).float(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(maxs, x.max(1).values, rtol=0, atol=0)
    torch.testing.assert_close(mins, x.min(1).values, rtol=0, atol=0)
    expected_xor = x.view(torch.int32)[:, 0].clone()
    for column in range(1, N):
        expected_xor ^= x.view(torch.int32)[:, column]
    torch.testing.assert_close(xors, expected_xor, rtol=0, atol=0)


@triton.jit
def _column_block_sum_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    # 2-D: rows reduced along the last axis (lanes), then the row sums along axis 0
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    row_sums = tl.sum(x, axis=1)
    tl.store(out_ptr + tl.arange(0, M), row_sums)
    tl.store(out_ptr + M, tl.sum(row_sums, axis=0))


def test_2d_reduction_along_last_axis_matches_torch():
    x = torch.randn(8, 64)
    out = torch.empty(9)
    _column_block_sum_kernel[(1,)](x, out, M=8, N=64)
    torch.testing.assert_close(out[:8], x.sum(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out[8], x.sum(), rtol=1e-5, atol=1e-5)
