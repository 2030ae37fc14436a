# ruff: noqa
"""Finding (unreduced, pocl-gpu only), fuzz seed 5138: the worker dies with 'free(): invalid next size (fast)' (an early return and reductions).
Computed right with POCL_WORK_GROUP_METHOD=loops set when the process starts: the class of
tests/test_pocl_early_return_store.py (PoCL's default loopvec work-group method).

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_early_return_heap_corruption.py
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
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1)
    v2 = v1.to(tl.float32)
    v3 = tl.maximum(v2, v1.to(tl.float32))
    if pid_m == 2:
        return
    v4 = v2.to(tl.float32)
    v5 = -v4
    v6 = tl.cumsum(v5.to(tl.float32), axis=0)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v4, mask=mm[:, None] & mn[None, :])
    tl.store(o1 + rm[:, None] * N + rn[None, :], v5, mask=mm[:, None] & mn[None, :])
    tl.store(o2 + rm[:, None] * N + rn[None, :], v6.to(tl.bfloat16), mask=mm[:, None] & mn[None, :])


SEED = 5138
SIZES = {'M': 2, 'N': 18, 'K': 8, 'BM': 2, 'BN': 16, 'BK': 8, 'T': 2, 'num_warps': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.int64, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False),
    ('o1', torch.float32, '2d', False),
    ('o2', torch.bfloat16, '2d', False)
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
FOUND = 'crash: crash: \nworker exited with -6\nfree(): invalid next size (fast)\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
