# ruff: noqa
"""Finding (most likely the known 'PoCL GPU shape with early return + barriers' bug, with a
new detail): pocl-gpu only. An early `return` that no program takes (pid_m == 2 in a
grid of one program) followed by a work-group sum and a cumprod (barriers in the GPU
shape): the scalar store between them never happens (o1 keeps its initial 7, expected
256). Without the `if ...: return` the kernel is right; intel-gpu, the CPU shapes and
SPIR-V are right. Guess: the lifted early-exit region puts barriers under control flow
that PoCL's work-group loops handle differently (or the store is attributed to the
exiting path), so the fix of the known bug should be checked against this program.

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_untaken_return_skips_store.py
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
def kernel(x0, o0, o1, o2, o3, o4, sx0_0, sx0_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1)
    v2 = v1 + v1
    if pid_m == 2:
        return
    v4 = v1 > tl.full((BM, BN), 1, tl.int8)
    v5 = tl.where(v4, v2, tl.full((BM, BN), 1, tl.int8))
    v9 = tl.sum(tl.full((BM, BN), 1, tl.int8)).to(tl.int32)
    v11 = tl.where(tl.full((), 1, tl.int1), v9, v9)
    tl.store(o1 + pid_m * gn + pid_n, v11)
    v12 = tl.cumprod(v5.to(tl.int32), axis=0)
    tl.store(o2 + rm[:, None] * N + rn[None, :], v12, mask=mm[:, None] & mn[None, :])


SEED = 1019
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 16, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.int8, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.int8, '2d', False),
    ('o1', torch.int32, 's', False),
    ('o2', torch.int32, '2d', False),
    ('o3', torch.int8, '2d', False),
    ('o4', torch.int32, '2d', False)
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
FOUND = 'mismatch: mismatch\no1 (int32): 2 of 2 elements differ, first at (0, 0): got np.int32(7), expected np.int32(0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
