"""Quirk abs_of_int_min_poison (PoCL 3.1): OpenCL C's `abs` of the most negative
integer is defined (INT_MIN again, read back as an int), but PoCL's optimizer takes it
as undefined: `int v = abs(x); v > 0` stores v == INT_MIN and yet computes the
comparison as true (fuzzer seed 44808: an int32 cumprod that wrapped to INT_MIN, then a
store masked by `tl.abs(v) > 0`). Right with -cl-opt-disable, on Intel's runtime and
under Oclgrind. Where the quirk applies, integer abs is `max(x, 0 - x)` in wrapping
arithmetic (memref_stage/integer_abs.py), which PoCL computes right. Not the select
`x < 0 ? 0 - x : x`: LLVM turns it back into `llvm.abs`, which Oclgrind 21.10 cannot run,
so kernels compiled for PoCL could not be replayed under Oclgrind (fuzzer seed 44900).

The reduced OpenCL C runs on every platform, and under Oclgrind: the plain form is wrong
exactly where the quirk applies, the workaround's form right everywhere. The Triton
kernel runs on the device in use, both shapes, against torch."""
import inspect
import shutil
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pytest
import torch
import triton
import triton.language as tl

from launcher.device import device_runtime
from triton_spirv.target import QUIRKS

QUIRK = "abs_of_int_min_poison"

REDUCED = """
__kernel void k(__global const int* x, __global int* o) {
  int i = get_global_id(0);
  int xi = x[i];
  int v = ABS(xi);
  o[i] = v > 0;
  o[i + 4] = v;
}
"""
PLAIN = "-D ABS(x)=abs(x)"
WORKAROUND = "-D ABS(x)=max((x),(int)((uint)0-(uint)(x)))"
INPUT = np.array([-2 ** 31, -5, 0, 7], np.int32)
EXPECTED = [0, 1, 0, 1, -2 ** 31, 5, 0, 7]


def _platforms():
    return [p for p in cl.get_platforms() if p.get_devices()]


def _run(platform, options):
    device = platform.get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    flags = cl.mem_flags
    x = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=INPUT)
    out = np.zeros(8, np.int32)
    o = cl.Buffer(context, flags.WRITE_ONLY, out.nbytes)
    cl.Program(context, REDUCED).build(options).k(queue, (4,), None, x, o)
    cl.enqueue_copy(queue, out, o)
    queue.finish()
    return out.tolist()


def _applies(platform) -> bool:
    device = platform.get_devices()[0]
    return QUIRKS[QUIRK].applies(*device_runtime(platform, device))


@pytest.mark.parametrize("platform", _platforms(), ids=lambda p: p.name)
def test_reduced_abs_of_int_min(platform):
    assert _run(platform, WORKAROUND) == EXPECTED
    assert _run(platform, PLAIN + " -cl-opt-disable") == EXPECTED
    plain = _run(platform, PLAIN)
    if _applies(platform):
        assert plain != EXPECTED and plain[4:] == EXPECTED[4:], plain   # v right, v > 0 wrong
    else:
        assert plain == EXPECTED


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
def test_workaround_form_runs_under_oclgrind():
    """Oclgrind (its only platform under `oclgrind`) builds and runs the workaround's
    form, which replays of kernels compiled for PoCL carry."""
    child = (f"import numpy as np, pyopencl as cl\nREDUCED = {REDUCED!r}\n"
             f"INPUT = np.array({INPUT.tolist()!r}, np.int32)\n{inspect.getsource(_run)}\n"
             f"print('OUT', _run(cl.get_platforms()[0], {WORKAROUND!r}))")
    proc = subprocess.run(["oclgrind", sys.executable, "-c", child], capture_output=True,
                          text=True, timeout=300)
    assert f"OUT {EXPECTED}" in proc.stdout, proc.stdout + proc.stderr[-2000:]


@triton.jit
def store_where_abs_positive(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.abs(tl.load(x + offs, mask=m, other=0))
    tl.store(out + offs, tl.full((BLOCK,), 1, tl.int32), mask=m & (v > 0))


@pytest.mark.parametrize("target", ["device", "gpu"])
def test_abs_of_int_min_in_a_mask(target):
    x = torch.tensor([-2 ** 31, -5, 0, 7, -2 ** 31 + 1, 2 ** 31 - 1] * 4, dtype=torch.int32)
    out = torch.zeros_like(x)
    store_where_abs_positive[(1,)](x, out, x.numel(), BLOCK=32, opencl_target=target)
    # torch's abs wraps INT_MIN to itself, as Triton's does: not positive, no store
    torch.testing.assert_close(out, (torch.abs(x) > 0).int())
