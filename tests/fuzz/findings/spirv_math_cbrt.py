# ruff: noqa
"""Finding: libdevice.cbrt cannot be compiled to SPIR-V (intel-cpu-spirv, intel-gpu-spirv).

SpirvStageError: conversion to the SPIR-V dialect failed: failed to legalize operation
'math.cbrt'. The OpenCL C path (cbrt) passes, and `program="auto"` presumably falls back
to it. Guess: the memref stage keeps `math.cbrt` (not an `opencl.call`), and upstream
math-to-spirv has no pattern for it, so the error is the generic legalization failure
rather than spirv/calls.py's "calls X, which SPIR-V has no instruction for"; a lowering to
OpenCL.std's cbrt, or routing it through the call path, would fix or clarify it.

Run from the repository root: python3 tests/fuzz/findings/spirv_math_cbrt.py
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
def kernel(x0, x1, o0, o1, o2, o3, sx0_0, sx0_1, sx1_0, sx1_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v5 = libdevice.cbrt(tl.full((BN,), 1, tl.float16).to(tl.float32))
    tl.store(o2 + pid_m * N + rn, v5.to(tl.bfloat16), mask=mn)


SEED = 321
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 2, 'BN': 4, 'BK': 8, 'T': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.float8_e4m3fn, 'mn', 'transposed'),
    ('x1', torch.float16, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float16, '2d', False),
    ('o1', torch.float8_e4m3fn, 'n', False),
    ('o2', torch.bfloat16, 'n', False),
    ('o3', torch.float16, 'n', False)
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
FOUND = 'error: SpirvStageError: kernel \'kernel_N\': conversion to the SPIR-V dialect failed: loc("vN"("PATH":N:N)): failed to legalize operation \'math.cbrt\'\nSpirvStageError: kernel \'kernel_1\': conversion to the SPIR-V dialect failed: loc("v5"("PATH":30:10)): failed to legalize operation \'math.cbrt\''

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
