# ruff: noqa
"""Finding: pocl-gpu only (found in the oclgrind-gpu configuration, whose run is PoCL's;
intel-gpu and the CPU shapes compute it right): an early return after a two-level tl.max
(`if tl.max(tl.max(v1, axis=1)) > 9: return`, taken by no program here; num_warps=1),
then masked stores: o0 is never written (keeps its initial 7). The fuzzer's worker
crashed (signal 11) on this program once; run alone it gives the wrong values. Most
likely the class of pocl_gpu_untaken_return_skips_store.py (PoCL's work-group compiler
and an early-exit region holding barriers).

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_early_return_after_max_store_lost.py
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
def kernel(x0, o0, o1, o2, sx0_0, sx0_1, M, N, K, c0, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :] & (rm[:, None] * 0 + pid_n < c0), other=1)
    v2 = v1.to(tl.float16)
    if tl.max(tl.max(v1, axis=1)) > 9:
        return
    tl.store(o0 + rm[:, None] * N + rn[None, :], v2, mask=mm[:, None] & mn[None, :] & (v1 > 0))
    v3 = tl.max(v2, axis=0).to(tl.float16)
    tl.store(o1 + rm[:, None] * N + rn[None, :], v1, mask=mm[:, None] & mn[None, :])
    tl.store(o2 + pid_m * N + rn, v3, mask=mn)


SEED = 3260
SIZES = {'M': 5, 'N': 15, 'K': 3, 'BM': 2, 'BN': 8, 'BK': 1, 'T': 3, 'num_warps': 1}
SCALARS = {'c0': 0}
INPUTS = [
    ('x0', torch.int16, 'mn', 'strided')
]
OUTPUTS = [
    ('o0', torch.float16, '2d', False),
    ('o1', torch.int16, '2d', False),
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
CONFIG = 'pocl-gpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {'opencl_target': 'gpu'}
FOUND = 'crash: crash: \nworker exited with -11\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
