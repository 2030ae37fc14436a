# ruff: noqa
"""Finding: PoCL aborts the process while compiling a GPU-shaped kernel (pocl-gpu only;
SIGABRT): ./lib/llvmopencl/ParallelRegion.cc:399: pocl::ParallelRegion::Verify():
Assertion `0 && "Incoming edges to non-entry block!"' failed ("suspicious block:
for.cond.cleanup...").

The kernel: a loop over T rows with a tensor carry (tl.maximum) and a pointer carry, then
a cumsum of the carried vector (a work-group scan: barriers) and a store; num_warps=1
(32 work-items), BN=16. intel-gpu, the CPU shapes and SPIR-V are right. Guess: a barrier
of the scan lands right after the exit block of the carried loop (T = 2, a constexpr),
a CFG shape PoCL 3.1's parallel
region formation cannot handle; a PoCL-gated quirk (e.g. a barrier or an empty block
between the loop exit and the scan) would avoid it. Running this script crashes its
child process, which it reports as FAILED.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_loop_then_cumsum_parallel_region_assert.py
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
def kernel(x0, x1, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v2 = tl.zeros((BN,), tl.float32)
    p_v2 = x1 + rn * sx1_1
    for i in range(0, T):
        row_v2 = tl.load(p_v2, mask=mn, other=0).to(tl.float32)
        v2 = tl.maximum(v2, row_v2)
        p_v2 += sx1_0
    v3 = -v2
    v4 = tl.cumsum(v3.to(tl.float32), axis=0)
    tl.store(o1 + pid_m * N + rn, v4, mask=mn)


SEED = 2193
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 2, 'BN': 16, 'BK': 4, 'T': 2, 'num_warps': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.float32, 'mn', 'transposed'),
    ('x1', torch.float16, 'tn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float32, 'n', False),
    ('o1', torch.float32, 'n', False),
    ('o2', torch.float8_e5m2, 'n', False)
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
CONFIG = 'pocl-gpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {'opencl_target': 'gpu'}
FOUND = 'crash: crash: pythonN: .PATH:N: bool pocl::ParallelRegion::Verify(): Assertion `N && "Incoming edges to non-entry block!"\' failed.\nworker exited with -6\nsuspicious block: for.cond.cleanup76.thread\nthe entry is: for.body77.preheader\npython3: ./lib/llvmopencl/ParallelRegion.cc:399: bool pocl::ParallelRegion::Verify(): Assertion `0 && "Incoming edges to non-entry block!"\' failed.\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
