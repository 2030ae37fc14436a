# ruff: noqa
"""Finding, fixed, silent: PoCL 3.1, CPU and GPU shapes: an int32 cumprod that wraps
to INT_MIN, then a store masked by `tl.abs(v2) > 0`, stored where the interpreter does
not. PoCL's optimizer takes OpenCL C's abs of INT_MIN as undefined and folds
`abs(x) > 0` to true although the value is INT_MIN. Quirk abs_of_int_min_poison
(memref_stage/integer_abs.py) prints integer abs as a select there; tests:
tests/test_pocl_int_min_abs.py, FileCheck integer_abs_as_select.mlir.

Run from the repository root: python3 tests/fuzz/findings/pocl_abs_of_int_min_in_mask.py
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
def kernel(x0, x1, x2, x3, x4, o0, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, sx4_0, sx4_1, M, N, K, c0, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=0)
    v2 = tl.cumprod(v1.to(tl.int32), axis=0)
    v3 = tl.abs(v2)
    tl.store(o0 + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.float32), mask=mm[:, None] & mn[None, :] & (v3 > 0))


SEED = 44808
SIZES = {'M': 36, 'N': 19, 'K': 1, 'BM': 32, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 1}
SCALARS = {'c0': 1}
INPUTS = [
    ('x0', torch.uint8, 'mn', 'contiguous'),
    ('x1', torch.int32, 'tn', 'contiguous'),
    ('x2', torch.float8_e4m3fn, 'mn', 'strided'),
    ('x3', torch.float16, 'mk', 'contiguous'),
    ('x4', torch.float16, 'kn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False)
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
CONFIG = 'pocl-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {}
FOUND = 'mismatch: mismatch\no0 (fp32): 12 of 1404 elements differ, first at (26, 29): got np.float32(11.540053), expected np.float32(7.0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
