# ruff: noqa
"""Finding: pocl-gpu only, a hang. A row's maximum (a reduction: barriers in the GPU
shape), then Triton's float `atomic_max`, which is a masked integer max and a masked
integer umin on the bit patterns: two compare-exchange loops, each under its mask, in
work-item 0's section (`if (lid_x == 0) { if (m1) {loop} if (m2) {loop} }`). After the
reduction's final loop, which every work-item runs alike, PoCL 3.1 runs the inner
branches on every work-item; here its optimizer proved the loops' exits unreachable
and they spin forever. With counting atomics the same form counts once per work-item.

Fixed: quirk uniform_branches_in_work_item_branch (triton_spirv/target.py): a
single-work-item section's conditional writes are sections of their own, guarded by
`lid == 0 & condition`; reduced reproducer tests/test_pocl_work_item_branch.py.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_float_atomic_max_after_max_hangs.py
"""
import os

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _max_with_index(a, ia, b, ib):
    """Inductor's maximum_with_index: a NaN is the greatest, ties to the smaller index."""
    mask = (a > b) | ((a != a) & (b == b))
    equal = (a == b) | ((a != a) & (b != b))
    mask = mask | (equal & (ia < ib))
    return tl.where(mask, a, b), tl.where(mask, ia, ib)


@triton.jit
def _min_with_index(a, ia, b, ib):
    """Inductor's minimum_with_index: a NaN is the least, ties to the smaller index."""
    mask = (a < b) | ((a != a) & (b == b))
    equal = (a == b) | ((a != a) & (b != b))
    mask = mask | (equal & (ia < ib))
    return tl.where(mask, a, b), tl.where(mask, ia, ib)

if os.environ.get("TRITON_INTERPRET") == "1":
    from tests.fuzz.reference import libdevice, patch_interpreter  # noqa: F811

    patch_interpreter()


@triton.jit
def kernel(x0, x1, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, M, N, K, c0, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :] & (rm[:, None] * 0 + pid_m < c0), other=0.0).to(tl.float32)
    v2 = v1 / (tl.abs(v1) + 1)
    v3 = tl.load(x1 + rm * sx1_0, mask=mm, other=0.0)
    v4 = tl.reshape(tl.reshape(v2, (BM * BN,)), (BM, BN))
    if pid_m == 1:
        return
    v5 = tl.abs(v4)
    v6 = tl.max(v2).to(tl.float32)
    tl.atomic_max(o0 + pid_n, v6)
    tl.store(o1 + rm[:, None] * N + rn[None, :], v4, mask=mm[:, None] & mn[None, :])
    tl.store(o2 + rm[:, None] * N + rn[None, :], v5.to(tl.float8e5), mask=mm[:, None] & mn[None, :])


SEED = 72002
SIZES = {'M': 2, 'N': 1, 'K': 1, 'BM': 8, 'BN': 1, 'BK': 2, 'T': 5, 'num_warps': 8}
SCALARS = {'c0': 1}
INPUTS = [
    ('x0', torch.bfloat16, 'mn', 'contiguous'),
    ('x1', torch.float16, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float32, 's', True),
    ('o1', torch.float32, '2d', False),
    ('o2', torch.float8_e5m2, '2d', False)
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
FOUND = 'hang: hang\nno result after 120 s'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
