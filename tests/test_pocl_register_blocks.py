"""Quirk register_blocks_beside_private_loops (PoCL 3.1): a work-group-shared loop of
register blocks of 64 floats (4 rows of float16, or 8 rows of float8), followed before
the next barrier by loops over private arrays, computes wrong sums. Found on a plain
tiled matmul (`tl.dot` in a K loop with pointer tensors advanced after it, the kernel
of tutorial 03) in the GPU shape: 64x64x32 blocks, num_warps 4, wrong by up to 110 at
every size; Intel's runtime and Oclgrind (--data-races --uninitialized, clean) compute
the same OpenCL C right, and so does PoCL with -cl-opt-disable, with blocks of 32
floats, with a barrier between the blocks' loop and the private loops, or with either
private loop alone.

Workaround where the quirk applies: the blocks' loop stands alone between two barriers
(memref_stage/work_group_barriers.py, _isolate_register_blocks)."""
import re

import numpy as np
import pyopencl as cl
import pytest
import torch
import triton
import triton.language as tl

from launcher.device import device_runtime
from triton_spirv.target import QUIRKS, TARGET_ENV, resolve_target

QUIRK = "register_blocks_beside_private_loops"
BARRIER = r"barrier\(CLK_LOCAL_MEM_FENCE\);"

# The reduced kernel: one work-group of 128 work-items computes a 64x64 block of
# a @ b in K steps of 32 through __local tiles, in blocks of 4 rows by 16 floats; the
# private offsets' loops stand for the pointer tensors a matmul advances after each
# step. ISOLATED: the quirk's form, a barrier after the blocks' loop.
REDUCED = """
#define CAT(a, b) a##b
#define VEC(n) CAT(float, n)
#define VLOAD(n) CAT(vload, n)
#define VSTORE(n) CAT(vstore, n)
#define BLOCKS (64 / W)
__attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void k(__global const float* a, __global const float* b, __global float* c, int K) {
  __local float acc_tile[64 * 64];
  __local float a_tile[64 * 33];
  __local float b_tile[32 * 65];
  long a_offsets[16], b_offsets[16];
  long lid = get_local_id(0);
  for (long i = 0; i < 16; ++i) { a_offsets[i] = i; b_offsets[i] = i; }
  for (long i = lid; i < 64 * 64; i += 128) acc_tile[i] = 0.0f;
  for (int step = 0; step < K / 32; ++step) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long e = lid; e < 64 * 32; e += 128)
      a_tile[(e / 32) * 33 + e % 32] = a[(e / 32) * K + step * 32 + e % 32];
    for (long e = lid; e < 32 * 64; e += 128)
      b_tile[(e / 64) * 65 + e % 64] = b[(step * 32 + e / 64) * 64 + e % 64];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid; j < 16 * BLOCKS; j += 128) {
      long r = (j / BLOCKS) * 4, col = (j % BLOCKS) * W;
      VEC(W) acc0 = VLOAD(W)(0, acc_tile + r * 64 + col);
      VEC(W) acc1 = VLOAD(W)(0, acc_tile + (r + 1) * 64 + col);
      VEC(W) acc2 = VLOAD(W)(0, acc_tile + (r + 2) * 64 + col);
      VEC(W) acc3 = VLOAD(W)(0, acc_tile + (r + 3) * 64 + col);
      for (long k = 0; k < 32; ++k) {
        VEC(W) bv = VLOAD(W)(0, b_tile + k * 65 + col);
        acc0 = fma((VEC(W))(a_tile[r * 33 + k]), bv, acc0);
        acc1 = fma((VEC(W))(a_tile[(r + 1) * 33 + k]), bv, acc1);
        acc2 = fma((VEC(W))(a_tile[(r + 2) * 33 + k]), bv, acc2);
        acc3 = fma((VEC(W))(a_tile[(r + 3) * 33 + k]), bv, acc3);
      }
      VSTORE(W)(acc0, 0, acc_tile + r * 64 + col);
      VSTORE(W)(acc1, 0, acc_tile + (r + 1) * 64 + col);
      VSTORE(W)(acc2, 0, acc_tile + (r + 2) * 64 + col);
      VSTORE(W)(acc3, 0, acc_tile + (r + 3) * 64 + col);
    }
#ifdef ISOLATED
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (long i = 0; i < 4; ++i) for (long m = 0; m < 4; ++m) a_offsets[i * 4 + m] += 32;
    for (long i = 0; i < 4; ++i) for (long m = 0; m < 4; ++m) b_offsets[i * 4 + m] += 64 * 32;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long e = lid; e < 64 * 64; e += 128) c[e] = acc_tile[e];
  if (K < 0) c[lid] = a_offsets[lid % 16] + b_offsets[lid % 16];  /* keeps the offsets */
}
"""


def _platforms():
    try:
        platforms = [p for p in cl.get_platforms() if p.get_devices()]
    except cl.Error:   # no OpenCL driver installed
        platforms = []
    return [pytest.param(p, id=device_runtime(p, p.get_devices()[0])[0]) for p in platforms]


def _reduced_error(platform, options: str, k: int = 64) -> float:
    device = platform.get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, REDUCED).build(options=options)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, k)).astype(np.float32)
    b = rng.standard_normal((k, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    flags = cl.mem_flags
    buffers = [cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a),
               cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=b),
               cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=c)]
    program.k(queue, (128,), (128,), *buffers, np.int32(k))
    cl.enqueue_copy(queue, c, buffers[2])
    return float(np.abs(c - a.astype(np.float64) @ b).max())


@pytest.mark.parametrize("platform", _platforms())
def test_the_quirk_form_is_right_everywhere(platform):
    assert _reduced_error(platform, "-DW=16 -DISOLATED") < 1e-3


@pytest.mark.parametrize("platform", _platforms())
def test_the_plain_form_is_wrong_only_where_the_quirk_applies(platform):
    """A release that computes it right gets `fixed_in` in the quirk's record."""
    error = _reduced_error(platform, "-DW=16")
    if QUIRKS[QUIRK].applies(*device_runtime(platform, platform.get_devices()[0])):
        assert error > 1.0
    else:
        assert error < 1e-3


@triton.jit
def tiled_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    cm = tl.program_id(0) * BM + tl.arange(0, BM)
    cn = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * N + cn[None, :], acc, mask=(cm[:, None] < M) & (cn[None, :] < N))


# The configs the plain form computed wrong on PoCL (of 24 tried), and one it got right.
@pytest.mark.parametrize("bm, bn, bk, num_warps", [(32, 32, 16, 1), (32, 32, 32, 1),
                                                   (64, 64, 32, 4), (32, 64, 16, 4)])
def test_tiled_matmul_gpu_shape(bm, bn, bk, num_warps, monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    torch.manual_seed(0)
    m, n, k = 96, 160, 80
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.full((m, n), 7.0)
    compiled = tiled_matmul[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
        a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=num_warps, opencl_target="gpu")
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    source = compiled.asm["cl"]
    blocks = source[source.index("fma("):]
    blocks = blocks[:blocks.index("vstore")]   # the register blocks' k loop
    isolated = re.search(BARRIER + r"\s*(//.*\s*)*for \(long \w+ = lid_x", source) and \
        re.search(r"vstore\d+\(\w+, 0, \w+ \+ [^;]*\);\s*}\s*" + BARRIER, source)
    assert bool(isolated) == resolve_target("gpu").has_quirk(QUIRK), blocks
