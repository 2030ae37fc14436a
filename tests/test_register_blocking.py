"""Register blocking of contraction nests (triton_spirv/memref_stage/register_blocking.py): which
affine nests it rewrites, which it must leave alone, and that rewritten kernels still
compute what torch computes."""
import re

import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from mlir import ir

from triton_spirv.memref_stage.register_blocking import (block_contractions,
                                                         block_contractions_exactly)
from triton_spirv.stages import memref_to_opencl, new_context
from triton_spirv.memref_stage import passes
from test_lang_dot_shapes import matmul_kernel

MATMUL_NEST = """
func.func @k(%lhs_arg: memref<?xf32>) {
  %acc = memref.alloc() : memref<{M}x{N}xf32>
  %lhs = memref.alloc() : memref<{M}x{K}xf32>
  %rhs = memref.alloc() : memref<{K}x{N}xf32>
  affine.for %j = 0 to {M} {
    affine.for %k = 0 to {K} {
      affine.for %l = 0 to {N} {
        %a = affine.load %lhs[%j, %k] : memref<{M}x{K}xf32>
        %b = affine.load %rhs[%k, %l] : memref<{K}x{N}xf32>
        %c = affine.load %acc[{ACC_INDEX}] : memref<{M}x{N}xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[{STORE_INDEX}] : memref<{M}x{N}xf32>
      }
    }
  }
  return
}
"""


def _rewrite(text: str) -> tuple[int, str]:
    with new_context():
        module = ir.Module.parse(text)
        count = block_contractions(module)
        module.operation.verify()
        return count, str(module)


def _nest(M=32, N=32, K=8, acc_index="%j, %l", store_index="%j, %l"):
    return (MATMUL_NEST.replace("{M}", str(M)).replace("{N}", str(N)).replace("{K}", str(K))
            .replace("{ACC_INDEX}", acc_index).replace("{STORE_INDEX}", store_index))


def test_matmul_nest_keeps_accumulators_in_vectors():
    count, text = _rewrite(_nest())
    assert count == 1
    # 32 rows: five blocks of six rows, then one block of the last two; 16 columns each,
    # carried through the k loop and stored once after it
    assert "0 to 30 step 6" in text and "30 to 32 step 2" in text and "step 16" in text
    assert text.count("affine.vector_load %alloc[") == 6 + 2
    assert text.count("affine.vector_store") == 6 + 2
    assert "iter_args" in text and "vector.broadcast" in text
    # the product and the sum are one fma per row
    assert text.count("math.fma") == 6 + 2 and "arith.mulf" not in text and "arith.addf" not in text


@pytest.mark.parametrize("M,N,blocks,width", [
    (16, 8, ["0 to 12 step 6", "12 to 16 step 4"], 8),
    (6, 4, ["0 to 6 step 6"], 4),
    (3, 16, ["0 to 3 step 3"], 16)])
def test_block_shape_follows_the_extents(M, N, blocks, width):
    count, text = _rewrite(_nest(M=M, N=N))
    assert count == 1
    assert f"vector<{width}xf32>" in text
    for block in blocks:
        assert f"affine.for %arg1 = {block} " in text
    assert text.count("affine.vector_store") == sum(int(b.split()[-1]) for b in blocks)


# Blocks that work-items share divide the extents and are as many as the work-items
# where the tile allows it (register_blocking.gpu_block): as large as that leaves them,
# at most 64 elements, float8 rows first.
@pytest.mark.parametrize("M,N,work_items,rows,width", [
    (64, 64, 128, 4, 8),        # 128 blocks of 32 elements: one per work-item
    (64, 64, 256, 2, 8),
    (128, 128, 128, 8, 8),      # 256 blocks: capped at 64 elements
    (64, 32, 32, 8, 8),
    (16, 16, 128, 1, 2),        # 2 elements each: rows of float2
    (16, 8, 128, 1, 2),         # fewer elements than work-items: the smallest blocks
    (6, 4, 2, 2, 4),
    (3, 16, 4, 1, 8)])
def test_blocks_shared_by_work_items_divide_the_rows(M, N, work_items, rows, width):
    with new_context():
        module = ir.Module.parse(_nest(M=M, N=N))
        assert block_contractions_exactly(module, work_items) == 1
        module.operation.verify()
        text = str(module)
    step = f" step {rows}" if rows > 1 else ""  # step 1 is not printed
    assert f"0 to {M}{step} {{" in text and f"vector<{width}xf32>" in text
    assert text.count("affine.vector_store") == rows


def test_product_used_twice_is_not_fused():
    # the product is also stored: one mulf feeds both, no fma absorbs it
    text = _nest().replace("affine.store %s, %acc[%j, %l] : memref<32x32xf32>",
                           "affine.store %s, %acc[%j, %l] : memref<32x32xf32>\n"
                           "        %t = arith.addf %s, %p : f32")
    count, text = _rewrite(text)
    assert count == 1
    assert "math.fma" not in text and "arith.mulf" in text


@pytest.mark.parametrize("case", [
    dict(N=3),                                          # no vector width divides 3
    dict(acc_index="%l, %j", store_index="%l, %j", M=32, N=32),  # columns not last
    dict(acc_index="%j, %k", store_index="%j, %k"),     # accumulator indexed by k
    dict(acc_index="%j, %l", store_index="%j, 0"),      # read and write differ
])
def test_nests_that_are_not_contractions_stay(case):
    count, text = _rewrite(_nest(**case))
    assert count == 0
    assert "vector" not in text


def test_accumulator_that_is_a_kernel_argument_stays():
    # a global buffer may alias the operands: only work-group tiles are blocked
    text = _nest().replace("%acc = memref.alloc() : memref<32x32xf32>",
                           "%acc = memref.reinterpret_cast %lhs_arg to offset: [0], "
                           "sizes: [32, 32], strides: [32, 1] : memref<?xf32> to "
                           "memref<32x32xf32, strided<[32, 1]>>")
    text = text.replace("memref<32x32xf32>\n        %p", "memref<32x32xf32, strided<[32, 1]>>\n        %p")
    text = text.replace("%acc[%j, %l] : memref<32x32xf32>\n      }",
                        "%acc[%j, %l] : memref<32x32xf32, strided<[32, 1]>>\n      }")
    count, _ = _rewrite(text)
    assert count == 0


def test_rewritten_nest_prints_as_vector_opencl():
    with new_context():
        module = ir.Module.parse(_nest().replace("func.func @k(%lhs_arg: memref<?xf32>)",
                                                 "func.func @k(%lhs_arg: memref<?xf32>) "
                                                 "attributes {opencl.arg_names = [\"x\"]}"))
        block_contractions(module)
        passes.run_upstream(module, ("lower-affine", "canonicalize", "cse"))
        source = memref_to_opencl(str(module)).source
    assert "float16 " in source and "vload16(0, " in source and "vstore16(" in source


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b) + tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("M,N,K,dtype", [
    (64, 64, 32, torch.float32), (16, 32, 16, torch.float16), (32, 16, 64, torch.int8)])
def test_blocked_dot_matches_torch(M, N, K, dtype):
    torch.manual_seed(0)
    if dtype.is_floating_point:
        a, b = torch.randn(M, K).to(dtype), torch.randn(K, N).to(dtype)
        c = torch.randn(M, N)
        expected = c + a.double() @ b.double()
    else:
        a, b = torch.randint(-100, 100, (M, K), dtype=dtype), torch.randint(-100, 100, (K, N), dtype=dtype)
        c = torch.randint(-1000, 1000, (M, N), dtype=torch.int32)
        expected = c + a.int() @ b.int()
    compiled = _dot_kernel[(1,)](a, b, c, M=M, N=N, K=K)
    assert "vload16(0, " in compiled.asm["cl"] or "vload8(0, " in compiled.asm["cl"]
    if dtype.is_floating_point:
        np.testing.assert_allclose(c.double().numpy(), expected.numpy(), rtol=1e-4, atol=1e-3)
    else:
        assert torch.equal(c, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_operand_tiles_copied_whole_or_in_part_match_torch(dtype):
    """Blocks of 32x32x16 over 40x48x40: inside programs copy whole operand tiles (the
    version with constant extents, full_tile_copies.py), edge programs and the last k
    step the masked parts; both in one launch."""
    cl = _matmul_32x32x16_matches_torch(40, 48, 40, dtype)
    assert "if (is_full)" in cl


def _matmul_32x32x16_matches_torch(M, N, K, dtype) -> str:
    """Runs test_lang_dot_shapes' matmul kernel in 32x32x16 blocks on the 2x2 grid of
    programs, checks its result against torch in double; returns its OpenCL C."""
    torch.manual_seed(0)
    a, b = torch.randn(M, K).to(dtype), torch.randn(K, N).to(dtype)
    c = torch.empty(M, N)
    compiled = matmul_kernel[(2, 2)](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
                                     BM=32, BN=32, BK=16, PRECISION="ieee", ACC_INT=False,
                                     opencl_target="cpu")
    expected = a.double() @ b.double()
    np.testing.assert_allclose(c.double().numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
    return compiled.asm["cl"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_next_k_blocks_prefetched_during_the_row_blocks(dtype):
    """The blocks of the next k step are prefetched, a share of their rows in each row
    block of the contraction (next_block_prefetch.py), one call per 64-byte line of a
    row; the hint changes no result, the last k step's partial blocks included."""
    cl = _matmul_32x32x16_matches_torch(64, 64, 72, dtype)
    assert "static inline void prefetch_line(const __global void* p)" in cl
    assert cl.count("prefetch_line(a_ptr + ") == 1 and cl.count("prefetch_line(b_ptr + ") == 1
    # 32 rows: five row blocks of six (and one of two) prefetch 7 rows of A and 4 of B each
    assert "prefetch_from = row_block * 4;" in cl and "prefetch_from_1 = row_block * 7;" in cl
    # B's rows of 32 elements: two lines of f32 (a loop over them), one line of f16
    two_lines = r"for \(long (\w+) = 0; \1 < 32; \1 \+= 16\) \{\s*prefetch_line\(b_ptr"
    one_line = r"prefetch_line\(b_ptr \+ \(\w+ \+ \w+ \* \w+\)\);"
    assert re.search(two_lines if dtype == torch.float32 else one_line, cl)
