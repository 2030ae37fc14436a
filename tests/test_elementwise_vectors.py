"""Explicit vectors for elementwise loops (triton_spirv/memref_stage/elementwise_vectors.py): which
affine loops it rewrites, which it must leave alone, and that kernels still compute what
torch computes."""
import pytest
import torch

import triton
import triton.language as tl
from mlir import ir

from triton_spirv.memref_stage.elementwise_vectors import (
    vectorize_elementwise, vectorize_elementwise_per_work_item)
from triton_spirv.stages import new_context

LOOP = """
func.func @k(%m: f32) {
  %x = memref.alloc() : memref<{N}x{T}>
  %y = memref.alloc() : memref<{N}x{T}>
  affine.for %i = 0 to {N} {
    %a = affine.load %x[{LOAD}] : memref<{N}x{T}>
    %d = {OP}
    affine.store %d, %y[%i] : memref<{N}x{T}>
  }
  return
}
"""


def _rewrite(N=64, T="f32", load="%i", op="arith.subf %a, %m : f32", store_to="%y",
             rewrite=vectorize_elementwise):
    text = (LOOP.replace("{N}", str(N)).replace("{T}", T).replace("{LOAD}", load)
            .replace("{OP}", op).replace("%y[%i]", f"{store_to}[%i]"))
    with new_context():
        module = ir.Module.parse(text)
        count = rewrite(module)
        module.operation.verify()
        return count, str(module)


def test_loop_steps_by_16_on_vectors():
    count, text = _rewrite()
    assert count == 1
    assert "step 16" in text
    assert "affine.vector_load %alloc[%arg1] : memref<64xf32>, vector<16xf32>" in text
    assert "affine.vector_store" in text and "vector<16xf32>" in text
    # the loop-invariant scalar is broadcast once, before the loop
    assert text.index("vector.broadcast %arg0") < text.index("affine.for")
    assert "arith.subf" in text and "affine.load" not in text


def test_gpu_shapes_get_float4_per_work_item():
    # work_group_sharing.py then hands one float4 to each work-item per iteration
    count, text = _rewrite(N=8, rewrite=vectorize_elementwise_per_work_item)
    assert count == 1 and "step 4" in text
    assert "vector<4xf32>" in text and "vector<16xf32>" not in text


def test_invariant_values_stored_along_the_loop_are_broadcast():
    # y[i] = x[0] - m: the load and the subtraction stay scalar, their result fills a
    # vector per iteration (a row's statistic written along the row, or a fill).
    count, text = _rewrite(load="0")
    assert count == 1 and "step 16" in text
    assert "affine.load %alloc[0]" in text and "arith.subf %0, %arg0 : f32" in text
    assert "vector.broadcast %1 : f32 to vector<16xf32>" in text
    assert "affine.vector_store %2" in text


def test_math_ops_become_vector_math():
    count, text = _rewrite(op="math.exp %a : f32")
    assert count == 1 and "math.exp %0 : vector<16xf32>" in text.replace("%1", "%0")


@pytest.mark.parametrize("case", [
    dict(N=40),                                         # not a multiple of 16
    dict(N=8),                                          # shorter than a vector
    dict(T="i32", op="arith.addi %a, %a : i32"),        # not f32
    dict(op="math.sin %a : f32"),                       # an op outside the list
    dict(load="%i + 1", store_to="%x"),                 # reads what the next iteration writes
])
def test_loops_that_are_not_elementwise_stay(case):
    count, text = _rewrite(**case)
    assert count == 0 and "vector" not in text


@triton.jit
def _elementwise_kernel(x_ptr, y_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.exp(x - m) / (1.0 + tl.sqrt(tl.abs(x))) + tl.maximum(x, 0.5)
    tl.store(y_ptr + offs, y, mask=mask)


@pytest.mark.parametrize("n", [1024, 1000, 5])
def test_vectorized_elementwise_kernel_matches_torch(n):
    # 1024: every block whole (direct global path); 1000 and 5: a partial last block
    # (tile path)
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    compiled = _elementwise_kernel[(triton.cdiv(n, 64),)](x, y, n, 0.25, BLOCK=64)
    expected = torch.exp(x - 0.25) / (1.0 + torch.sqrt(x.abs())) + torch.clamp(x, min=0.5)
    torch.testing.assert_close(y, expected, rtol=1e-6, atol=1e-6)
    assert "vload16" in compiled.asm["cl"] and "exp(" in compiled.asm["cl"]
