# ruff: noqa
"""Finding: wrong values, pocl-gpu only (found in the oclgrind-gpu configuration, whose
run is PoCL's; intel-gpu computes it right): two early returns (`if tl.max(v3) > 8:
return`, taken by no program here, and `if pid_m == 0: return`, taken by program 0),
the first after a work-group argmin (barriers in the GPU shape), then a store of a row
of int8 (o0) that the programs that do not return never make (o0 keeps its initial 7).
Left unreduced (the reducer kept all 16 statements). Most likely the class of
pocl_gpu_untaken_return_skips_store.py (PoCL's work-group compiler and early-exit regions
holding barriers), which the quirk barrier_in_uniform_branch does not cover here.

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_early_returns_after_argmin_store_lost.py
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
def kernel(x0, x1, x2, x3, o0, o1, o2, o3, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=0)
    v2 = tl.load(x1 + rm[:, None] * sx1_0 + rn[None, :] * sx1_1, mask=mm[:, None] & mn[None, :], other=1.0)
    v3 = tl.argmin(v1, axis=0).to(tl.int32)
    v4 = v3.to(tl.int16)
    v5 = v2 * v4[None, :].to(tl.float16)
    if tl.max(v3) > 8:
        return
    v6 = tl.zeros((BN,), tl.float32)
    p_v6 = x2 + rn * sx2_1
    for i in range(0, T):
        row_v6 = tl.load(p_v6, mask=mn, other=0).to(tl.float32)
        v6 = v6 + row_v6
        p_v6 += sx2_0
    v7 = tl.load(x3 + rn * sx3_1, mask=mn, other=0)
    if pid_m == 0:
        return
    tl.store(o0 + pid_m * N + rn, v7, mask=mn)
    v8 = ~v1
    v9 = ~v8
    v10 = (rm * 1 - pid_n).to(tl.float32)
    tl.store(o1 + rm[:, None] * N + rn[None, :], v8, mask=mm[:, None] & mn[None, :])
    tl.store(o2 + rm[:, None] * N + rn[None, :], v9, mask=mm[:, None] & mn[None, :] & (v9 > 0))
    tl.store(o3 + rm * gn + pid_n, v10, mask=mm)


SEED = 3050
SIZES = {'M': 10, 'N': 16, 'K': 16, 'BM': 4, 'BN': 16, 'BK': 8, 'T': 2, 'num_warps': 8}
SCALARS = {}
INPUTS = [
    ('x0', torch.int32, 'mn', 'contiguous'),
    ('x1', torch.float16, 'mn', 'contiguous'),
    ('x2', torch.int8, 'tn', 'strided'),
    ('x3', torch.int8, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.int8, 'n', False),
    ('o1', torch.int32, '2d', False),
    ('o2', torch.int32, '2d', False),
    ('o3', torch.float32, 'm', False)
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
FOUND = 'mismatch: mismatch\no0 (int8): 30 of 48 elements differ, first at (1, 0): got np.int8(7), expected np.int8(6)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
