# ruff: noqa
"""Finding (unreduced, pocl-gpu only), fuzz seed 5029: wrong o2 sums after 'if v4 > 2: return' following a tl.min.
Computed right with POCL_WORK_GROUP_METHOD=loops set when the process starts: the class of
tests/test_pocl_early_return_store.py (PoCL's default loopvec work-group method).

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_early_return_after_min_sum_wrong.py
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
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=-1.0).to(tl.float32)
    v2 = tl.min(v1).to(tl.float32)
    v3 = tl.minimum(v2, v1)
    v4 = tl.load(x1 + pid_m * sx1_0, mask=(pid_m < M), other=1)
    if v4 > 2:
        return
    v5 = tl.sum(v3).to(tl.float32)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v3, mask=mm[:, None] & mn[None, :])
    tl.store(o1 + pid_m * gn + pid_n, v4)
    tl.store(o2 + pid_m * gn + pid_n, v5)


SEED = 5029
SIZES = {'M': 5, 'N': 29, 'K': 24, 'BM': 4, 'BN': 16, 'BK': 8, 'T': 2, 'num_warps': 4}
SCALARS = {}
INPUTS = [
    ('x0', torch.bfloat16, 'mn', 'contiguous'),
    ('x1', torch.int16, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False),
    ('o1', torch.int16, 's', False),
    ('o2', torch.float32, 's', False)
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
FOUND = 'mismatch: mismatch\no2 (fp32): 3 of 4 elements differ, first at (0, 1): got np.float32(-775.7031), expected np.float32(-245.0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
