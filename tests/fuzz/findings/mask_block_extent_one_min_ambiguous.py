# ruff: noqa
"""Finding (a new trigger of the known 'call to min/max is ambiguous' bug): a masked store
whose block has extent 1 along a dimension (BN = 1), no scalar condition written by the user.

All OpenCL C configurations (pocl-cpu, pocl-gpu, intel-cpu, intel-gpu) fail to build:
`long extent = min(max(min(mask_bound, ...), 0L), 2L);` mixes int and long operands.
Guess: with BN = 1 the column mask `rn < N` is a one-element tensor that the mask
analysis treats as a scalar condition, which takes the same untyped min/max path as
`mask & (pid < c)`. SPIR-V configurations pass. The fix of the known bug should cover it;
this is its regression test.

Run from the repository root: python3 tests/fuzz/findings/mask_block_extent_one_min_ambiguous.py
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
    tl.store(o2 + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.float16), mask=mm[:, None] & mn[None, :])


SEED = 300
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 4, 'BN': 1, 'BK': 8, 'T': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.float16, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float16, '2d', False),
    ('o1', torch.int8, '2d', False),
    ('o2', torch.float16, '2d', False)
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
CONFIG = 'intel-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'program': 'source'}
FOUND = "error: OpenCLBuildError: error: call to 'min' is ambiguous\nOpenCLBuildError: OpenCL C build of kernel 'kernel_1' failed on Intel(R) OpenCL / AMD EPYC:\nclBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\nBuild on <pyopencl.Device 'AMD EPYC' on 'Intel(R) OpenCL' at 0x556dc502cd98>:\n\nCompilation started\n1:32:27: error: call to 'min' is ambiguous\n   32 |     long extent = min(max(min(mask_bound, (mn ? 4 : 0)), 0L), 4L);\n      |                           ^~~\nopencl-c.h:9695:20: note: candidate function\n 9695 | l"

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
