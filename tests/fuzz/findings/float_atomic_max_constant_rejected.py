# ruff: noqa
"""Finding: a compile error, every configuration (not a wrong result): tl.atomic_max of a
constant float32 block (tl.full((BN,), 1, tl.float32), BN=1) fails with "ConversionError:
reinterpreting a f32 buffer as i32 elements is not supported". Triton lowers float
atomic_max through integer pointers; ttir_to_linalg/elementwise.py (pointer_bitcast)
allows that only when the reinterpreted pointer's users are all atomics, and with a
constant value Triton's lowering leaves it another user. Guess, not checked.

Run from the repository root: python3 tests/fuzz/findings/float_atomic_max_constant_rejected.py
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
def kernel(x0, x1, x2, o0, o1, o2, o3, o4, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, M, N, K, c0, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    tl.atomic_max(o1 + rn, tl.full((BN,), 1, tl.float32), mask=mn)


SEED = 3268
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 4, 'BN': 1, 'BK': 8, 'T': 1, 'num_warps': 4}
SCALARS = {'c0': 0}
INPUTS = [
    ('x0', torch.float8_e4m3fn, 'mn', 'strided'),
    ('x1', torch.float16, 'mn', 'contiguous'),
    ('x2', torch.float8_e5m2, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float32, 'n', True),
    ('o1', torch.float32, 'n', True),
    ('o2', torch.float32, '2d', False),
    ('o3', torch.float32, '2d', False),
    ('o4', torch.float32, '2d', False)
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
CONFIG = 'intel-gpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'opencl_target': 'gpu', 'program': 'source'}
FOUND = 'error: ConversionError: reinterpreting a fN buffer as iN elements is not supported\nConversionError: reinterpreting a f32 buffer as i32 elements is not supported\n  op: tt.bitcast\n  kernel: kernel\n  at: seed3268.py:33'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
