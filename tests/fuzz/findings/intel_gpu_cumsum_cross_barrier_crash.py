# ruff: noqa
"""Finding, open: Intel's OpenCL CPU runtime (2026.22.10), GPU shape, OpenCL C: its
compiler dies (SIGSEGV in its pass "sycl-kernel-reduce-cross-barrier-values") on this
kernel: a masked load whose mask reads another load, `tl.minimum`, a `tl.cumsum` over
rows (barriers in the GPU shape) and a `tl.where` of the cumsum. Built with
-cl-opt-disable it computes right (checked by hand); PoCL computes it right. No bitwise
not here, so quirk not_then_integer_max does not cover it. The process dies with the
compiler: Intel's builds are not isolated (only PoCL's, quirk build_may_abort). The
SPIR-V of the same kernel builds and computes right. Reduced by hand to
intel_gpu_fill_branch_barrier_crash.cl (beside this file): `x1`'s masked load, held in
a private array (one element per work-item), lives across the barriers that end the
partial tiles' fill branches of the next masked loads (`if (is_partial) { fill;
barrier }`), each followed by a loop of async work-group copies (one per row). It
builds with either barrier after its branch, with either copy loop a plain loop, or
without the kept value.

Fixed: quirk barrier_in_fill_branch keeps the barrier after a partial tile's fill out
of its branch on Intel's runtime (memref_stage/work_group_barriers.py,
_barriers_in_branches); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/intel_gpu_cumsum_cross_barrier_crash.py
"""
import os

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

if os.environ.get("TRITON_INTERPRET") == "1":
    from tests.fuzz.reference import libdevice, patch_interpreter  # noqa: F811

    patch_interpreter()


@triton.jit
def kernel(x0, x1, x2, x3, x4, x5, x6, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, sx4_0, sx4_1, sx5_0, sx5_1, sx6_0, sx6_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1.0)
    v3 = tl.where(tl.full((BM, BN), 1, tl.int1), v1, v1)
    v5 = tl.load(x1 + rm[:, None] * sx1_0 + rn[None, :] * sx1_1, mask=mm[:, None] & mn[None, :], other=1)
    v6 = tl.load(x2 + rm[:, None] * sx2_0 + rn[None, :] * sx2_1, mask=mm[:, None] & mn[None, :], other=0)
    v8 = tl.load(x4 + rm[:, None] * sx4_0 + rn[None, :] * sx4_1, mask=mm[:, None] & mn[None, :] & (v6 > 0), other=-1)
    v12 = tl.minimum(v3, v8.to(tl.float32))
    v13 = tl.cumsum(v12.to(tl.float32), axis=0)
    v14 = v6 > v6
    v15 = tl.where(v14, v3, v13)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v14.to(tl.int8), mask=mm[:, None] & mn[None, :] & (v5 > 0))
    tl.store(o1 + rm[:, None] * N + rn[None, :], v15, mask=mm[:, None] & mn[None, :])


SEED = 42650
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 2, 'BN': 16, 'BK': 4, 'T': 1, 'num_warps': 4}
SCALARS = {}
INPUTS = [
    ('x0', torch.float32, 'mn', 'strided'),
    ('x1', torch.int32, 'mn', 'contiguous'),
    ('x2', torch.int32, 'mn', 'transposed'),
    ('x3', torch.bfloat16, 'mn', 'transposed'),
    ('x4', torch.int16, 'mn', 'contiguous'),
    ('x5', torch.float16, 'mn', 'strided'),
    ('x6', torch.int8, 'tn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.int8, '2d', False),
    ('o1', torch.float32, '2d', False),
    ('o2', torch.float16, 'n', False)
]


def run(**options):
    # imported here: a reproducer run as a script finds its checkout only in its
    # __main__ block, and the processes that call run() have it on their path
    from tests.fuzz.reproducer import launch

    return launch(kernel, SEED, SIZES, SCALARS, INPUTS, OUTPUTS, **options)


# ---------------------------------------------------------------------------------
# Reproducer: runs the kernel under Triton's interpreter (the reference) and in the
# configuration below, each in its own process, and prints what differs
# (tests/fuzz/reproducer.py).
CONFIG = 'intel-gpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'opencl_target': 'gpu', 'program': 'source'}
FOUND = 'crash: crash: \nworker exited with -11\nPLEASE submit a bug report to https:priority-support and include the crash backtrace and instructions to reproduce the bug.\nStack dump:\n0.\tRunning pass "sycl-kernel-reduce-cross-barrier-values" on module "main"\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
