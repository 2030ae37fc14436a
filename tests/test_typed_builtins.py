"""OpenCL C builtins are overloaded on one operand type: `min(long, int)` and
`max((c ? 1 : 0), 0L)` do not compile on any device ("call to 'max' is ambiguous").
Kernels whose masks are scalar conditions (`m & keep`, Inductor's persistent reductions
with XBLOCK=1, its constant masks `tl.full([XBLOCK], True, tl.int1)[:, None]`) and
min/max/where of mixed integer widths, checked against torch; the emitter's own
typing of min/max/select operands, built on every OpenCL device present.

Run in the CPU shape (default) and the GPU shape (TRITON_SPIRV_TARGET=gpu, .ci/run)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyopencl as cl
import triton
import triton.language as tl
from mlir import ir

from emitter_opencl import emit_opencl

# ---------------------------------------------------------------------------
# Masks with a scalar condition
# ---------------------------------------------------------------------------


@triton.jit
def keep_store_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    keep = flag > 0
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x * 2, mask=m & keep)


@pytest.mark.parametrize("flag", [5, -5])
def test_store_mask_and_scalar_condition(flag):
    n = 100
    x = torch.randn(n)
    out = torch.full((n,), 7.0)
    keep_store_kernel[(triton.cdiv(n, 32),)](x, out, n, flag, BLOCK=32)
    expected = x * 2 if flag > 0 else torch.full((n,), 7.0)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@triton.jit
def persistent_softmax_kernel(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
                              R0_BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
    # Inductor's persistent reduction without an x dimension (no_x_dim: XBLOCK=1):
    # the row mask is one condition.
    xoffset = tl.program_id(0) * XBLOCK
    xindex = tl.full([1], xoffset, tl.int32)
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[:]
    r0_mask = r0_index < r0_numel
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + r0_numel * x0), r0_mask & xmask, other=0.0)
    if CAUSAL:
        # an attention block's causal mask: row x sees columns r <= x % r0_numel
        keep = r0_1 <= (x0 % r0_numel)
        tmp0 = tl.where(keep, tmp0, float("-inf"))
    tmp3 = tl.where(r0_mask & xmask, tmp0, float("-inf"))
    tmp4 = tl.max(tmp3, 0)
    tmp5 = tmp0 - tmp4
    tmp6 = tl.exp(tmp5)
    tmp8 = tl.where(r0_mask & xmask, tmp6, 0)
    tmp9 = tl.sum(tmp8, 0)
    tmp10 = tmp6 / tmp9
    tl.store(out_ptr0 + (r0_1 + r0_numel * x0), tmp10, r0_mask & xmask)


@pytest.mark.parametrize("causal", [False, True])
def test_persistent_reduction_with_a_scalar_row_mask(causal):
    rows, cols = 9, 50
    x = torch.randn(rows, cols)
    out = torch.full_like(x, 3.0)
    persistent_softmax_kernel[(rows,)](x, out, rows, cols, XBLOCK=1, R0_BLOCK=64,
                                       CAUSAL=causal)
    if causal:
        seen = torch.arange(cols)[None, :] <= (torch.arange(rows) % cols)[:, None]
        x = x.masked_fill(~seen, float("-inf"))
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@triton.jit
def row_mask_2d_kernel(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
                       R0_BLOCK: tl.constexpr, CONSTANT_XMASK: tl.constexpr):
    # Inductor's 2-D persistent reduction: x rows by r columns; with XBLOCK=1 the row
    # mask is one condition broadcast along the row. Where XBLOCK divides xnumel,
    # Inductor prints a constant mask.
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    if CONSTANT_XMASK:
        xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    else:
        xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_index + r0_numel * x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(r0_mask & xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None]
    tl.store(out_ptr0 + (r0_index + r0_numel * x0), tmp0 - tmp4 / r0_numel,
             r0_mask & xmask)


@pytest.mark.parametrize("xblock,constant", [(1, False), (1, True), (4, True)])
def test_2d_row_mask_and_constant_mask(xblock, constant):
    rows, cols = 8, 37
    x = torch.randn(rows, cols)
    out = torch.full_like(x, 3.0)
    row_mask_2d_kernel[(rows // xblock,)](x, out, rows, cols, XBLOCK=xblock, R0_BLOCK=64,
                                          CONSTANT_XMASK=constant)
    torch.testing.assert_close(out, x - x.mean(dim=1, keepdim=True), rtol=1e-5, atol=1e-5)


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, M, N, stride, ignore_index,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The 2-D mask is the rows' and columns' bounds and the row's target condition.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    target = tl.load(target_ptr + tl.program_id(0))
    valid = target != ignore_index
    mask = (rows < M) & (cols < N) & valid
    logits = tl.load(logits_ptr + rows * stride + cols, mask=mask, other=float("-inf"))
    top = tl.max(logits, 1)[:, None]
    lse = tl.log(tl.sum(tl.where(mask, tl.exp(logits - top), 0.0), 1)) + tl.sum(top, 1)
    picked = tl.sum(tl.where(cols == target, logits, 0.0), 1)
    out_rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(loss_ptr + out_rows, tl.where(valid, lse - picked, 0.0), mask=out_rows < M)


def test_cross_entropy_with_a_row_condition_in_the_2d_mask():
    M, N = 6, 200
    logits = torch.randn(M, N)
    target = torch.randint(0, N, (M,), dtype=torch.int64)
    target[2] = -100
    loss = torch.full((M,), 9.0)
    cross_entropy_kernel[(M,)](logits, target, loss, M, N, logits.stride(0), -100,
                               BLOCK_M=1, BLOCK_N=256)
    expected = torch.nn.functional.cross_entropy(logits, target, reduction="none",
                                                 ignore_index=-100)
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-5)


@triton.jit
def scan_row_kernel(in_ptr0, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr,
                    R0_BLOCK: tl.constexpr):
    # Inductor's cumsum / cumprod of a row: a persistent scan with a scalar row mask.
    xoffset = tl.program_id(0) * XBLOCK
    xindex = tl.full([1], xoffset, tl.int32)
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[:]
    r0_mask = r0_index < r0_numel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_index + r0_numel * x0), r0_mask & xmask, other=0.0)
    tmp2 = tl.cumsum(tl.where(r0_mask & xmask, tmp0, 0.0), 0)
    tmp3 = tl.cumprod(tl.where(r0_mask & xmask, tmp0, 1.0), 0)
    tl.store(out_ptr0 + (r0_index + r0_numel * x0), tmp2, r0_mask & xmask)
    tl.store(out_ptr1 + (r0_index + r0_numel * x0), tmp3, r0_mask & xmask)


def test_cumsum_and_cumprod_rows_with_a_scalar_mask():
    rows, cols = 5, 20
    x = torch.rand(rows, cols) + 0.5
    sums, products = torch.zeros_like(x), torch.zeros_like(x)
    scan_row_kernel[(rows,)](x, sums, products, rows, cols, XBLOCK=1, R0_BLOCK=32)
    torch.testing.assert_close(sums, torch.cumsum(x, dim=1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(products, torch.cumprod(x, dim=1), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# min / max / where of mixed integer widths
# ---------------------------------------------------------------------------


@triton.jit
def mixed_width_kernel(a_ptr, b_ptr, min_ptr, max_ptr, where_ptr, n, limit,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)   # int32
    b = tl.load(b_ptr + offs, mask=mask, other=0)   # int64
    tl.store(min_ptr + offs, tl.minimum(a, b), mask=mask)
    # a scalar bound of another width, and the block's index (int32) against an int64
    tl.store(max_ptr + offs, tl.maximum(tl.maximum(a, limit), offs.to(tl.int64)), mask=mask)
    tl.store(where_ptr + offs, tl.where(a > 0, a, b), mask=mask)


def test_min_max_where_of_mixed_int_widths():
    n = 70
    a = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32)
    b = torch.randint(-2**40, 2**40, (n,), dtype=torch.int64)
    got = [torch.zeros(n, dtype=torch.int64) for _ in range(3)]
    limit = 2**33 + 3   # an int64 argument
    mixed_width_kernel[(triton.cdiv(n, 32),)](a, b, *got, n, limit, BLOCK=32)
    offs = torch.arange(n, dtype=torch.int64)
    torch.testing.assert_close(got[0], torch.minimum(a.to(torch.int64), b))
    torch.testing.assert_close(got[1], torch.maximum(torch.clamp(a.to(torch.int64), min=limit),
                                                     offs))
    torch.testing.assert_close(got[2], torch.where(a > 0, a.to(torch.int64), b))


@triton.jit
def scalar_select_kernel(out_ptr, n, flag, BLOCK: tl.constexpr):
    # Scalar conditions choosing int64 and int32 values, then min/max of them.
    offs = tl.arange(0, BLOCK)
    wide = tl.where(flag > 0, 1, 0).to(tl.int64)
    narrow = tl.where(flag > 1, 3, -3)
    bound = tl.minimum(tl.maximum(wide, n.to(tl.int64) - 2**33), narrow.to(tl.int64) + wide)
    tl.store(out_ptr + offs, offs + bound, mask=offs < n)


@pytest.mark.parametrize("flag", [-4, 4])
def test_scalar_selects_feed_min_and_max(flag):
    n = 20
    out = torch.zeros(32, dtype=torch.int64)
    scalar_select_kernel[(1,)](out, n, flag, BLOCK=32)
    wide = 1 if flag > 0 else 0
    narrow = 3 if flag > 1 else -3
    bound = min(max(wide, n - 2**33), narrow + wide)
    expected = torch.zeros(32, dtype=torch.int64)
    expected[:n] = torch.arange(n) + bound
    torch.testing.assert_close(out, expected)


# ---------------------------------------------------------------------------
# The emitter: min/max/select operands of one C type, built on every device
# ---------------------------------------------------------------------------

# Every integer min/max of a value of each printed form: a literal (spelled `int` when
# not typed), a select of literals and an unsigned op (both inlined: C types them `int`
# and `uint`/`ulong`), and i1 (bool has no min/max overload).
_TYPED_MODULE = """
func.func @typed(%out: memref<?xi64>, %n: i32, %w: i64, %c: i1)
    attributes {opencl.arg_names = ["out", "n", "w", "c"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %i0 = arith.constant 0 : index
  %i32 = arith.constant 32 : index
  %sel = arith.select %c, %i32, %i0 : index
  %nidx = arith.index_cast %n : i32 to index
  %m0 = arith.minsi %nidx, %sel : index
  %m1 = arith.maxsi %m0, %c0 : index
  %r0 = arith.index_cast %m1 : index to i64
  memref.store %r0, %out[%c0] : memref<?xi64>
  %k7 = arith.constant 7 : i32
  %k1 = arith.constant 1 : i32
  %s32 = arith.select %c, %k7, %k1 : i32
  %sh = arith.shrui %n, %k1 : i32
  %m2 = arith.maxsi %sh, %s32 : i32
  %r1 = arith.extsi %m2 : i32 to i64
  memref.store %r1, %out[%c1] : memref<?xi64>
  %k9 = arith.constant 9 : i64
  %dv = arith.divui %w, %k9 : i64
  %m3 = arith.minui %dv, %k9 : i64
  memref.store %m3, %out[%c2] : memref<?xi64>
  %b5 = arith.constant 5 : i8
  %n8 = arith.trunci %n : i32 to i8
  %m4 = arith.maxsi %n8, %b5 : i8
  %r4 = arith.extsi %m4 : i8 to i64
  memref.store %r4, %out[%c3] : memref<?xi64>
  %f = arith.constant false
  %m5 = arith.maxsi %c, %f : i1
  %m6 = arith.maxui %c, %f : i1
  %r5 = arith.extui %m5 : i1 to i64
  %r6 = arith.extui %m6 : i1 to i64
  memref.store %r5, %out[%c4] : memref<?xi64>
  memref.store %r6, %out[%c5] : memref<?xi64>
  %sw = arith.select %c, %k9, %w : i64
  %m7 = arith.minsi %sw, %k9 : i64
  memref.store %m7, %out[%c6] : memref<?xi64>
  return
}
"""


def _expected(n: int, w: int, c: bool) -> list[int]:
    sel = 32 if c else 0
    byte = ((n + 128) % 256) - 128
    return [max(min(n, sel), 0), max((n % 2**32) >> 1, 7 if c else 1), min(w // 9, 9),
            max(byte, 5), 0, int(c), min(9 if c else w, 9)]


def _devices() -> list[cl.Device]:
    return [d for p in cl.get_platforms() for d in p.get_devices()]


@pytest.mark.parametrize("device", _devices(), ids=lambda d: d.platform.name.split()[0])
@pytest.mark.parametrize("c", [False, True])
def test_emitted_min_max_select_build_and_compute(device, c):
    kernel = emit_opencl(ir.Module.parse(_TYPED_MODULE, ir.Context()))
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, kernel.source).build()
    out = np.zeros(7, dtype=np.int64)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                       hostbuf=out)
    n, w = 77, 2**40 + 5
    getattr(program, kernel.name)(queue, (1,), (1,), buffer, np.int32(n), np.int64(w),
                                  np.uint8(c))
    cl.enqueue_copy(queue, out, buffer)
    queue.finish()
    assert out.tolist() == _expected(n, w, c), kernel.source
