# ruff: noqa
"""Finding, fixed, silent: Intel's OpenCL CPU runtime, programs built from SPIR-V (the
default form there), CPU and GPU shapes: an int32 cumprod that wraps to INT_MIN, then
`%`: INT_MIN % 3 gave 2, not -2, so the mask `v8 > 0` let stores through. Upstream's
OpenCL pattern for arith.remsi tests the dividend's sign as `a == s_abs(a)`, which
INT_MIN passes. Fixed by the SPIR-V stage's step spirv-expand-signed-remainders
(spirv/casts.py); tests: tests/test_integer_remainders.py, FileCheck
spirv_expand_signed_remainders.mlir.

Run from the repository root: python3 tests/fuzz/findings/spirv_remainder_of_int_min.py
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
def kernel(x0, x1, x2, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1)
    v6 = tl.cumprod(v1.to(tl.int32), axis=0)
    v8 = v6 % ((v1.to(tl.int32) & 7) + 1)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v6, mask=mm[:, None] & mn[None, :] & (v8 > 0))


SEED = 44471
SIZES = {'M': 45, 'N': 13, 'K': 1, 'BM': 32, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 8}
SCALARS = {}
INPUTS = [
    ('x0', torch.int8, 'mn', 'contiguous'),
    ('x1', torch.int8, 'mk', 'strided'),
    ('x2', torch.int8, 'kn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.int32, '2d', False),
    ('o1', torch.int32, '2d', False),
    ('o2', torch.int32, '2d', False)
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
CONFIG = 'intel-cpu-spirv'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'program': 'spirv'}
FOUND = 'mismatch: mismatch\no0 (int32): 7 of 1215 elements differ, first at (24, 17): got np.int32(-2147483648), expected np.int32(7); o2 (int32): 7 of 1215 elements differ, first at (24, 17): got np.int32(3), expected np.int32(-3)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
