# ruff: noqa
"""Finding: a masked scalar load of bf16 with `other` is rejected by the SPIR-V stage
(intel-cpu-spirv, intel-gpu-spirv; `program="spirv"`), while the same load of a block
(tensor pointer and mask) converts.

SpirvStageError: arith.constant at ...: a bf16 value here (other than a bf16 <-> f32
conversion of a loaded or stored element) has no SPIR-V lowering. The error's location
is the kernel's `@triton.jit` line, not the load's. OpenCL C configurations pass, and
`program="auto"` falls back to OpenCL C. Guess: for a scalar load the memref stage keeps
`other` as a bf16 `arith.constant` feeding a select on the loaded bf16 value (the block
case selects after the upcast, or folds `other` into the copy), so
spirv/half_types.py sees a bf16 value that is not a load/store conversion.

Run from the repository root: python3 tests/fuzz/findings/spirv_bf16_scalar_load_other.py
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
def kernel(x0, x1, x2, o0, o1, o2, o3, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v7 = tl.load(x2 + pid_m * sx2_0, mask=(pid_m < M), other=0.0).to(tl.float32)
    tl.store(o2 + pid_m * gn + pid_n, v7)


SEED = 7
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 8, 'BN': 4, 'BK': 8, 'T': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.bfloat16, 'mn', 'contiguous'),
    ('x1', torch.int8, 'mn', 'contiguous'),
    ('x2', torch.bfloat16, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False),
    ('o1', torch.int8, '2d', False),
    ('o2', torch.float32, 's', False),
    ('o3', torch.float32, '2d', False)
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
FOUND = "error: SpirvStageError: kernel 'kernel_N': arith.constant at PATH:N: a bfN value here (other than a bfN <-> fN conversion of a loaded or stored element) has no SPIR-V lowering\nSpirvStageError: kernel 'kernel_1': arith.constant at PATH:16: a bf16 value here (other than a bf16 <-> f32 conversion of a loaded or stored element) has no SPIR-V lowering"

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
