# ruff: noqa
"""Finding: wrong values, intel-gpu-spirv only (GPU shape compiled to SPIR-V on Intel's
runtime): a masked store of a constant int8 tile never lands (the output keeps its
initial 7) with num_warps=1 (32 work-items for a 32x32 block: each work-item keeps its
column of the tile in a private `i8[32]` array, one element per round). num_warps=4 is
right, and so is the same kernel as OpenCL C on Intel and on PoCL. Cause (found): a fault of Intel's SPIR-V consumer, device quirk
i8_private_arrays (triton_spirv/target.py). spirv-val accepts the module and nothing in
it is undefined (the array is filled before it is read); the same module with the
private array of i16 or i32 (and a trunc at the load) computes right, and so does the
OpenCL C's `char` array. The stores of values loaded from the Function-storage i8 array
are lost. Worked around on Intel by private i8 tiles holding i32 in SPIR-V
(spirv/private_bytes.py). Test: tests/test_intel_quirks.py.

Run from the repository root: python3 tests/fuzz/findings/intel_gpu_spirv_int8_constant_store_lost.py
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
def kernel(x0, x1, x2, o0, o1, o2, o3, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    tl.store(o1 + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.int1).to(tl.int8), mask=mm[:, None] & mn[None, :])


SEED = 21
SIZES = {'M': 1, 'N': 2, 'K': 1, 'BM': 32, 'BN': 32, 'BK': 16, 'T': 1, 'num_warps': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.uint8, 'mn', 'contiguous'),
    ('x1', torch.float32, 'tn', 'transposed'),
    ('x2', torch.int32, 'mn', 'strided')
]
OUTPUTS = [
    ('o0', torch.float32, 'n', True),
    ('o1', torch.int8, '2d', False),
    ('o2', torch.float32, '2d', False),
    ('o3', torch.float32, '2d', False)
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
CONFIG = 'intel-gpu-spirv'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'opencl_target': 'gpu', 'program': 'spirv'}
FOUND = 'mismatch: mismatch\no1 (int8): 1736 of 1736 elements differ, first at (0, 0): got np.int8(7), expected np.int8(0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
