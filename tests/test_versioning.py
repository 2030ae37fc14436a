"""Kernel versioning on run-time guards (triton_spirv/ttir_to_linalg/versioning.py):
wrapped (`offs % M`, tutorial 03) and clamped (`tl.where(offs < M, offs, 0)`, tutorial 09)
offsets take the block path where the block does not wrap or clamp, the gather path for
the edge blocks. IR-in/IR-out tests of the conversion, then results against torch."""
import re

import pytest
import torch

import triton
import triton.language as tl

from triton_spirv.stages import ttir_to_linalg_text

# TTIR as Triton 3.9 prints it (locations dropped) for
#   offs = tl.program_id(0) * 4 + tl.arange(0, 4)
#   tl.store(out_ptr + offs, tl.load(x_ptr + <OFFSETS>), mask=offs < n)
COPY_TTIR = """
module {
  tt.func public @copy(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n: i32) {
    %cst = arith.constant dense<0> : tensor<4xi32>
    %c4 = arith.constant 4 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c4 : i32
    %range = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %starts = tt.splat %start : i32 -> tensor<4xi32>
    %offs = arith.addi %starts, %range : tensor<4xi32>
    %ns = tt.splat %n : i32 -> tensor<4xi32>
    %in_bounds = arith.cmpi slt, %offs, %ns : tensor<4xi32>
    %outs = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %out_ptrs = tt.addptr %outs, %offs : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
    OFFSETS
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %x_ptrs = tt.addptr %xs, %read : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
    %x = tt.load %x_ptrs : tensor<4x!tt.ptr<f32>>
    tt.store %out_ptrs, %x, %in_bounds : tensor<4x!tt.ptr<f32>>
    tt.return
  }
}
"""
WRAPPED = "%read = arith.remsi %offs, %ns : tensor<4xi32>"
CLAMPED = "%read = arith.select %in_bounds, %offs, %cst : tensor<4xi1>, tensor<4xi32>"


def _branches(linalg: str):
    """(text before the scf.if, its then branch, its else branch)."""
    before, _, rest = linalg.partition("scf.if")
    then_branch, _, else_branch = rest.partition("} else {")
    return before, then_branch, else_branch


def _block_load_of_x(text: str) -> bool:
    return re.search(r"memref.reinterpret_cast %arg0", text) is not None


def _gather_load_of_x(text: str) -> bool:
    return re.search(r"memref.load %arg0\[", text) is not None


def test_wrapped_offsets_are_a_block_behind_an_in_range_guard():
    linalg = ttir_to_linalg_text(COPY_TTIR.replace("OFFSETS", WRAPPED))
    assert linalg.count("scf.if") == 1
    before, then_branch, else_branch = _branches(linalg)
    # the guard: the block's first element >= 0 and its last (start + 3) < n
    assert "arith.cmpi sge" in before and "arith.cmpi slt" in before
    assert re.search(r"arith.addi %\w+, %c3", before)
    assert _block_load_of_x(then_branch) and not _gather_load_of_x(then_branch)
    assert _gather_load_of_x(else_branch) and not _block_load_of_x(else_branch)
    # each branch runs to the kernel's end; the one return follows the scf.if
    assert "return" not in then_branch and linalg.count("return") == 1


def test_clamped_offsets_are_a_block_behind_a_full_mask_guard():
    linalg = ttir_to_linalg_text(COPY_TTIR.replace("OFFSETS", CLAMPED))
    assert linalg.count("scf.if") == 1
    before, then_branch, else_branch = _branches(linalg)
    # the guard: the mask `offs < n` holds on the whole tile: n - start >= 4
    assert re.search(r"arith.cmpi sge, %\w+, %c4", before)
    assert _block_load_of_x(then_branch) and not _gather_load_of_x(then_branch)
    assert _gather_load_of_x(else_branch)


def test_remainder_that_reaches_no_pointer_is_not_versioned():
    unused = WRAPPED.replace("%read", "%wrapped") + "\n    %read = arith.addi %offs, %cst : tensor<4xi32>"
    linalg = ttir_to_linalg_text(COPY_TTIR.replace("OFFSETS", unused))
    assert "scf.if" not in linalg
    assert _block_load_of_x(linalg)


def test_remainder_by_a_varying_tensor_is_not_versioned():
    varying = "%read = arith.remsi %offs, %offs : tensor<4xi32>"
    linalg = ttir_to_linalg_text(COPY_TTIR.replace("OFFSETS", varying))
    assert "scf.if" not in linalg
    assert _gather_load_of_x(linalg)


# ---------------------------------------------------------------------------------------
# Results against torch


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, CLAMP: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if CLAMP:  # tutorial 09
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
    else:  # tutorial 03
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# M, N, K: multiples of the blocks (every block on the block path), ragged edges (the
# last row and column of blocks wrap or clamp), and matrices smaller than one block.
@pytest.mark.parametrize("clamp", [False, True], ids=["wrapped", "clamped"])
@pytest.mark.parametrize("M, N, K", [(64, 64, 32), (70, 45, 33), (3, 5, 7), (1, 1, 1)])
def test_matmul_with_wrapped_or_clamped_offsets_matches_torch(M, N, K, clamp):
    torch.manual_seed(0)
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.full((M, N), float("nan"))
    compiled = _matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, CLAMP=clamp)
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
    # the block path is there: whole rows copied, the dot register-blocked
    # (rows of 16 elements or more as vectors, shorter ones as one async copy)
    assert "vstore16(vload16(0, a_ptr" in compiled.asm["cl"] or \
        "async_work_group_copy(a_tile" in compiled.asm["cl"]
    assert " = fma(" in compiled.asm["cl"]  # the dot: one fma per row of a block


@triton.jit
def _gather_copy_kernel(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr, CLAMP: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    read = tl.where(offs < m, offs, 0) if CLAMP else offs % m
    tl.store(out_ptr + offs, tl.load(x_ptr + read), mask=offs < n)


@pytest.mark.parametrize("clamp", [False, True], ids=["wrapped", "clamped"])
@pytest.mark.parametrize("n, m", [(64, 64), (64, 10), (30, 7), (5, 1)])
def test_wrapped_or_clamped_reads_match_torch(n, m, clamp):
    x = torch.randn(m)
    out = torch.full((n,), float("nan"))
    _gather_copy_kernel[(triton.cdiv(n, 16),)](x, out, n, m, BLOCK=16, CLAMP=clamp)
    index = torch.arange(n)
    expected = x[torch.where(index < m, index, 0)] if clamp else x[index % m]
    torch.testing.assert_close(out, expected, atol=0, rtol=0)
