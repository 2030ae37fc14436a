# ruff: noqa
"""Finding: wrong values, intel-gpu (GPU shape, OpenCL C): a masked 2-D load of bf16
(transposed input, upcast to f32) whose values also feed a cumsum along axis 0: the
elementwise result -asinh(x) is stored as -0.0 (x read as 0) for the one in-bounds
element (M = N = 1, block 8 x 2, num_warps=8: 256 work-items for 16 elements). The CPU
shapes are right. Cause (found): not the bf16 load nor the scan. A fault of Intel's CPU runtime, device
quirk fneg_across_barrier (triton_spirv/target.py): the negation's result, kept in a
private tile across the scan's (reduction's) barriers, is kept once per work-group, so
every work-item reads one work-item's value after the barrier. Worked around on Intel
by emitting the negation as fma(x, -1, -0) in kernels with barriers
(memref_stage/barrier_negations.py); reduced: intel_gpu_shape_reduced_opencl_c.py.

Run from the repository root: python3 tests/fuzz/findings/gpu_bf16_load_with_scan_reads_zero.py
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
def kernel(x0, o0, o1, o2, sx0_0, sx0_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1.0).to(tl.float32)
    v2 = libdevice.asinh(v1)
    v3 = tl.maximum(v2, v2)
    v4 = tl.cumsum(v3.to(tl.float32), axis=0)
    v7 = -v2
    v8 = v4 + v4
    tl.store(o1 + rm[:, None] * N + rn[None, :], v7, mask=mm[:, None] & mn[None, :])
    tl.store(o2 + rm[:, None] * N + rn[None, :], v8, mask=mm[:, None] & mn[None, :])


SEED = 2425
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 8, 'BN': 2, 'BK': 2, 'T': 1, 'num_warps': 8}
SCALARS = {}
INPUTS = [
    ('x0', torch.bfloat16, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False),
    ('o1', torch.float32, '2d', False),
    ('o2', torch.float32, '2d', False)
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
FOUND = 'mismatch: mismatch\no1 (fp32): 53 of 57 elements differ, first at (0, 0): got np.float32(-0.0), expected np.float32(-0.41206726)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
