"""Quirk register_blocks_for_every_work_item (PoCL 3.1): a loop of exactly two vector
copies between private arrays (float16 over 32 floats, float8 over 16) in the same
barrier region as a store to `__local` memory by some of the work-items only: that store
never lands. PoCL gives the same wrong result in every run, and the right one with
-cl-opt-disable; Intel's runtime and Oclgrind (--data-races --uninitialized, clean)
compute the kernel right.

Found on GPU-shaped tutorial 06 attention (float16, 128 x 64, num_warps 4), reduced
from its OpenCL C: with register blocks as many as the work-items, the accumulator of
`tl.dot(p, v, acc)` is a private 4 x float8 block per work-item (32 floats), copied into
the loop-carried private array by `for (j = 0; j < 32; j += 16) vstore16(...)` right
after `l_i = l_i * alpha + l_ij`, which 16 of the 128 work-items store to a `__local`
tile; that update was lost and every row's sum came out wrong. The private copy itself
is right. The same kernel is right on PoCL with the copy unrolled by hand, in float8 or
narrower vectors (four or more iterations), with arrays of 24, 48, 64 or 128 floats,
with the copy before the store, or with every work-item storing.

Workaround where the quirk applies (GPU shape): the copy lowering makes a row between
two private arrays of at most four vectors straight-line vector copies, no loop
(memref_stage/copy_lowering.py, `unroll_private_rows`), so the attention's accumulator
copy is two float16 copies one after the other; the register blocks follow the
work-group as on every other device.
"""
import itertools

import numpy as np
import pyopencl as cl
import pytest

from launcher.device import device_runtime
from triton_spirv.target import QUIRKS

QUIRK = "register_blocks_for_every_work_item"

# The reduced kernel: `sums`, a __local row of 64 sums that work-items 0..63 advance by
# one per step through `next_sums`, next to each work-item's private accumulator of N
# floats (`acc`) copied into the loop-carried private array (`acc_copy`) in vectors of
# W floats. Plain form: N = 2 W (N = 32: the attention's 4 x float8 blocks). `start` is
# new at each launch: where the stores are lost, `next_sums` holds what an earlier
# launch left in that __local memory, which with a fixed start was at times the
# expected value. With UNROLLED (N = 2 W only), the workaround's form: the two vector
# copies one after the other, no loop.
REDUCED = """
#define CAT(a, b) a##b
#define VLOAD(n) CAT(vload, n)
#define VSTORE(n) CAT(vstore, n)
__attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void k(__global float* out, float start, int steps) {
  __local float sums[64], next_sums[64];
  float acc[N], acc_copy[N];
  long lid = get_local_id(0);
  if (lid < 64) sums[lid] = start + lid;
  for (long i = 0; i < N; ++i) acc_copy[i] = (float)i;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 0; step < steps; ++step) {
    for (long i = 0; i < N; ++i) acc[i] = acc_copy[i] + 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 64) next_sums[lid] = sums[lid] + 1.0f;
#ifdef UNROLLED
    VSTORE(W)(VLOAD(W)(0, acc), 0, acc_copy);
    VSTORE(W)(VLOAD(W)(0, acc + W), 0, acc_copy + W);
#else
    for (long i = 0; i < N; i += W) VSTORE(W)(VLOAD(W)(0, acc + i), 0, acc_copy + i);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 64) sums[lid] = next_sums[lid];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 64) out[lid] = sums[lid];
  for (long i = 0; i < N; ++i) out[64 + lid * N + i] = acc_copy[i];
}
"""
WORK_ITEMS = 128
STEPS = 3
_starts = itertools.count(1000, 1000)


def _platforms():
    try:
        platforms = [p for p in cl.get_platforms() if p.get_devices()]
    except cl.Error:   # no OpenCL driver installed
        platforms = []
    return [pytest.param(p, id=device_runtime(p, p.get_devices()[0])[0]) for p in platforms]


def _reduced_errors(platform, floats: int, width: int,
                    unrolled: bool = False) -> tuple[float, float]:
    """(error of the __local sums, error of the private copies) of the reduced kernel,
    its copy `unrolled` (N = 2 W) or a loop."""
    device = platform.get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    options = f"-DN={floats} -DW={width}" + (" -DUNROLLED" if unrolled else "")
    program = cl.Program(context, REDUCED).build(options=options)
    out = np.zeros(64 + WORK_ITEMS * floats, np.float32)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    start = next(_starts)
    program.k(queue, (WORK_ITEMS,), (WORK_ITEMS,), buffer, np.float32(start), np.int32(STEPS))
    cl.enqueue_copy(queue, out, buffer)
    sums, copies = out[:64], out[64:].reshape(WORK_ITEMS, floats)
    expected_copies = np.arange(floats, dtype=np.float32) + STEPS
    expected_sums = start + np.arange(64, dtype=np.float32) + STEPS
    return (float(np.abs(sums - expected_sums).max()),
            float(np.abs(copies - expected_copies).max()))


@pytest.mark.parametrize("floats, width", [(32, 16), (16, 8)])
@pytest.mark.parametrize("platform", _platforms())
def test_the_workaround_form_is_right_everywhere(platform, floats, width):
    """The plain form's copies unrolled (the copy lowering's form under the quirk):
    (32, 16) is the attention's 4 x float8 accumulator as two float16 copies."""
    assert _reduced_errors(platform, floats, width, unrolled=True) == (0.0, 0.0)


@pytest.mark.parametrize("floats, width", [(64, 16), (32, 8)])
@pytest.mark.parametrize("platform", _platforms())
def test_loops_of_four_vectors_are_right_everywhere(platform, floats, width):
    """Outside the pattern: (64, 16), a loop of four float16 copies (the accumulator of
    the older 4 x float16 blocks); (32, 8), the same 32 floats in four float8 vectors."""
    assert _reduced_errors(platform, floats, width) == (0.0, 0.0)


@pytest.mark.parametrize("floats, width", [(32, 16), (16, 8)])
@pytest.mark.parametrize("platform", _platforms())
def test_the_plain_form_is_wrong_only_where_the_quirk_applies(platform, floats, width):
    """The __local sums never advance where the quirk applies; the private copies are
    right everywhere. A release that computes it right gets `fixed_in` in the record."""
    sums_error, copies_error = _reduced_errors(platform, floats, width)
    assert copies_error == 0.0
    if QUIRKS[QUIRK].applies(*device_runtime(platform, platform.get_devices()[0])):
        assert sums_error >= 1.0   # sums copied from next_sums that were never stored
    else:
        assert sums_error == 0.0
