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
from test_tutorials import load_tutorial

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


# The same copy inside a persistent loop over tiles (tutorial 09's tile loop):
#   for tile in range(pid, tiles, 2):
#       offs = tile * 4 + tl.arange(0, 4)
#       tl.store(out_ptr + offs, tl.load(x_ptr + <OFFSETS>), mask=offs < n)
#       done += 1          (a scalar the loop carries)
LOOP_TTIR = COPY_TTIR.replace("%n: i32)", "%n: i32, %tiles: i32)").replace(
    "%start = arith.muli %pid, %c4 : i32", """%c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %done = scf.for %tile = %pid to %tiles step %c2_i32 iter_args(%count = %c0_i32) -> (i32) : i32 {
    %start = arith.muli %tile, %c4 : i32""").replace("    tt.return", """    %next = arith.addi %count, %c1_i32 : i32
    scf.yield %next : i32
    }
    tt.return""")


def _loop_body(linalg: str) -> str:
    """The text of the (one) scf.for's body."""
    body = linalg[linalg.index("scf.for"):]
    return body[:body.rindex("scf.yield")]


@pytest.mark.parametrize("offsets", [WRAPPED, CLAMPED], ids=["wrapped", "clamped"])
def test_offsets_in_a_loop_body_version_the_rest_of_the_body(offsets):
    linalg = ttir_to_linalg_text(LOOP_TTIR.replace("OFFSETS", offsets))
    assert linalg.count("scf.for") == 1 and linalg.count("scf.if") == 1
    body = _loop_body(linalg)
    # the versions sit inside the loop and yield the loop's next count
    assert re.search(r"%(\w+) = scf.if %\w+ -> \(i32\)", body)
    before, then_branch, else_branch = _branches(body)
    assert not _block_load_of_x(before) and not _gather_load_of_x(before)
    assert _block_load_of_x(then_branch) and not _gather_load_of_x(then_branch)
    assert _gather_load_of_x(else_branch) and not _block_load_of_x(else_branch)
    # each branch yields its own count to the scf.if, the body yields the scf.if's result
    if_result = re.search(r"%(\w+) = scf.if", body).group(1)
    assert then_branch.count("scf.yield") == 1 and else_branch.count("scf.yield") == 1
    assert re.search(rf"scf.yield %{if_result} : i32", linalg)
    assert linalg.count("return") == 1


def test_two_guards_in_a_loop_body_nest_in_order_with_none_in_the_fallback():
    # x read clamped (first), then x read again wrapped (second)
    offsets = CLAMPED + """
      %ys = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
      %wrapped = arith.remsi %offs, %ns : tensor<4xi32>
      %y_ptrs = tt.addptr %ys, %wrapped : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
      %y = tt.load %y_ptrs : tensor<4x!tt.ptr<f32>>
      tt.store %out_ptrs, %y, %in_bounds : tensor<4x!tt.ptr<f32>>"""
    linalg = ttir_to_linalg_text(LOOP_TTIR.replace("OFFSETS", offsets))
    body = _loop_body(linalg)
    assert body.count("scf.if") == 2
    # the outer scf.if sits in the loop body (6 spaces), the inner one in its then branch
    before, _, outer = body.partition("scf.if")
    outer_then, _, outer_else = outer.partition("\n      } else {")
    inner_guard, _, inner = outer_then.partition("scf.if")
    inner_then, _, inner_else = inner.partition("\n        } else {")
    assert re.search(r"arith.cmpi sge, %\w+, %c4", before)  # the clamp's full mask
    assert re.search(r"arith.addi %\w+, %c3", inner_guard)  # the remainder's range
    # both reads of x are blocks where both guards hold; the else branches gather
    assert inner_then.count("memref.reinterpret_cast %arg0") == 2
    assert not _gather_load_of_x(inner_then)
    assert inner_else.count("memref.reinterpret_cast %arg0") == 1 and _gather_load_of_x(inner_else)
    assert "scf.if" not in outer_else
    assert _gather_load_of_x(outer_else) and not _block_load_of_x(outer_else)


def test_guard_in_a_loop_body_that_reaches_no_pointer_is_not_versioned():
    unused = WRAPPED.replace("%read", "%wrapped") + "\n      %read = arith.addi %offs, %cst : tensor<4xi32>"
    linalg = ttir_to_linalg_text(LOOP_TTIR.replace("OFFSETS", unused))
    assert "scf.if" not in linalg and _block_load_of_x(linalg)


def test_loop_that_carries_a_tensor_is_not_versioned():
    carried = LOOP_TTIR.replace(
        "iter_args(%count = %c0_i32) -> (i32)", "iter_args(%count = %cst) -> (tensor<4xi32>)"
    ).replace("%next = arith.addi %count, %c1_i32 : i32", "%next = arith.addi %count, %offs : tensor<4xi32>"
              ).replace("scf.yield %next : i32", "scf.yield %next : tensor<4xi32>")
    linalg = ttir_to_linalg_text(carried.replace("OFFSETS", CLAMPED))
    assert "scf.if" not in linalg
    assert _gather_load_of_x(linalg)


def test_loop_without_a_guard_converts_as_without_versioning():
    plain = LOOP_TTIR.replace("OFFSETS", "%read = arith.addi %offs, %cst : tensor<4xi32>")
    linalg = ttir_to_linalg_text(plain)
    assert "scf.if" not in linalg and _block_load_of_x(linalg)
    assert linalg == ttir_to_linalg_text(plain, versioning_allowed=False)


# ---------------------------------------------------------------------------------------
# Results against torch


@triton.jit
def _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, pid_m, pid_n, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, CLAMP: tl.constexpr):
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


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, CLAMP: tl.constexpr):
    _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, tl.program_id(0), tl.program_id(1),
                 BLOCK_M, BLOCK_N, BLOCK_K, CLAMP)


@triton.jit
def _persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                              stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              CLAMP: tl.constexpr, PROGRAMS: tl.constexpr):
    """Tutorial 09's persistent loop: PROGRAMS programs walk all output tiles."""
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * tiles_n, PROGRAMS):
        _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                     stride_cm, stride_cn, tile // tiles_n, tile % tiles_n,
                     BLOCK_M, BLOCK_N, BLOCK_K, CLAMP)


# M, N, K: multiples of the blocks (every block on the block path), ragged edges (the
# last row and column of blocks wrap or clamp), and matrices smaller than one block.
def _assert_block_path(source: str):
    """The block path is there: whole rows copied, the dot register-blocked (rows of 16
    elements or more as vectors, shorter ones as one async copy)."""
    assert "vload16(0, a_ptr" in source or "async_work_group_copy(a_tile" in source
    assert " = fma(" in source  # the dot: one fma per row of a block


@pytest.mark.parametrize("persistent", [False, True], ids=["grid", "persistent"])
@pytest.mark.parametrize("clamp", [False, True], ids=["wrapped", "clamped"])
@pytest.mark.parametrize("M, N, K", [(64, 64, 32), (70, 45, 33), (3, 5, 7), (1, 1, 1)])
def test_matmul_with_wrapped_or_clamped_offsets_matches_torch(M, N, K, clamp, persistent):
    torch.manual_seed(0)
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.full((M, N), float("nan"))
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))
    # versions are made for the CPU shape (one work-item per program)
    blocks = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, CLAMP=clamp, opencl_target="cpu")
    if persistent:  # two programs for up to 6 tiles: the offsets are built in the tile loop
        compiled = _persistent_matmul_kernel[(2,)](*args, **blocks, PROGRAMS=2)
    else:
        compiled = _matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](*args, **blocks)
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
    _assert_block_path(compiled.asm["cl"])


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


@triton.jit
def _persistent_gather_copy_kernel(x_ptr, out_ptr, tiles_done_ptr, n, m, BLOCK: tl.constexpr,
                                   CLAMP: tl.constexpr, PROGRAMS: tl.constexpr):
    """Each program copies every PROGRAMS-th block and counts its blocks: the count is
    carried by the tile loop through the versions."""
    done = 0
    for tile in range(tl.program_id(0), tl.cdiv(n, BLOCK), PROGRAMS):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        read = tl.where(offs < m, offs, 0) if CLAMP else offs % m
        tl.store(out_ptr + offs, tl.load(x_ptr + read), mask=offs < n)
        done += 1
    tl.store(tiles_done_ptr + tl.program_id(0), done)


@pytest.mark.parametrize("clamp", [False, True], ids=["wrapped", "clamped"])
@pytest.mark.parametrize("n, m", [(64, 64), (80, 40), (30, 7), (5, 3)])
def test_wrapped_or_clamped_reads_in_a_tile_loop_match_torch(n, m, clamp):
    x = torch.randn(m)
    out = torch.full((n,), float("nan"))
    tiles_done = torch.full((3,), -1, dtype=torch.int32)
    compiled = _persistent_gather_copy_kernel[(3,)](x, out, tiles_done, n, m, BLOCK=16,
                                                    CLAMP=clamp, PROGRAMS=3,
                                                    opencl_target="cpu")
    index = torch.arange(n)
    expected = x[torch.where(index < m, index, 0)] if clamp else x[index % m]
    torch.testing.assert_close(out, expected, atol=0, rtol=0)
    tiles = triton.cdiv(n, 16)
    assert tiles_done.tolist() == [len(range(p, tiles, 3)) for p in range(3)]
    source = compiled.asm["cl"]
    assert "read_is_block" in source  # the tile loop is versioned
    # what the versions yield is the loop's count, and its C variable says so
    assert re.search(r"int done_\d+;\n\s*if \(read_is_block\)", source)


def test_tutorial_09_tile_loop_takes_the_block_path():
    """Tutorial 09's persistent kernel: M and N not multiples of the 64 x 64 tiles, so the
    last row and column of tiles clamp (the gather path) and the others copy blocks."""
    kernel = load_tutorial("09-persistent-matmul.py").matmul_kernel_persistent.fn
    torch.manual_seed(0)
    M, N, K = 96, 160, 64
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.full((M, N), float("nan"), dtype=torch.float16)
    compiled = kernel[(2,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1), BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                            BLOCK_SIZE_K=32, GROUP_SIZE_M=8, NUM_SMS=2, opencl_target="cpu")
    torch.testing.assert_close(c.float(), (a.float() @ b.float()).half().float(),
                               atol=2e-2, rtol=1e-2)
    source = compiled.asm["cl"]
    tile_loop = source[re.search(r"for \(int \w+ = start_pid", source).start():]
    assert "offs_am_is_block" in tile_loop and "offs_bn_is_block" in tile_loop
    assert "vload_half16(0, a_ptr" in tile_loop  # rows of A copied as vectors
