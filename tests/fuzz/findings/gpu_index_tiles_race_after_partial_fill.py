# ruff: noqa
"""Finding, fixed, silent: GPU shape, every device that runs work-items out of order
(Intel's OpenCL CPU runtime, OpenCL C and SPIR-V; PoCL runs them in order and hid it;
Oclgrind reports the race): a masked fp16 store whose mask reads a loaded tensor (`& (v6
> 0)`) stored stale values in full 32x32 tiles. The barrier a partial tile's fill needs
goes to the end of the fill's `if (is_partial)` branch; the barrier analysis
(memref_stage/work_group_barriers.py) also counted the index tiles written before that
branch (`rm`, `rn`) as synchronized by it, so full tiles read them racing with their
writes (seed 44014, the same with int32 stores, also crashed the process: stale indices,
stores out of bounds). Fixed there; tests: tests/test_gpu_barrier_after_partial_fill.py
and FileCheck work_group_copy_barriers.mlir (@written_before_fill_in_branch).

Run from the repository root: python3 tests/fuzz/findings/gpu_index_tiles_race_after_partial_fill.py
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
def kernel(x0, x1, x2, x3, x4, x5, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, sx4_0, sx4_1, sx5_0, sx5_1, M, N, K, c0, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v6 = tl.load(x2 + rm[:, None] * sx2_0 + rn[None, :] * sx2_1, mask=mm[:, None] & mn[None, :], other=1)
    v10 = tl.load(x5 + rm[:, None] * sx5_0 + rn[None, :] * sx5_1, mask=mm[:, None] & mn[None, :], other=-1.0)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v10, mask=mm[:, None] & mn[None, :] & (v6 > 0))


SEED = 44069
SIZES = {'M': 46, 'N': 43, 'K': 1, 'BM': 32, 'BN': 32, 'BK': 16, 'T': 1, 'num_warps': 8}
SCALARS = {'c0': 0}
INPUTS = [
    ('x0', torch.int64, 'mn', 'strided'),
    ('x1', torch.bfloat16, 'mn', 'contiguous'),
    ('x2', torch.int64, 'mn', 'strided'),
    ('x3', torch.float16, 'mk', 'strided'),
    ('x4', torch.float16, 'kn', 'contiguous'),
    ('x5', torch.float16, 'mn', 'strided')
]
OUTPUTS = [
    ('o0', torch.float16, '2d', False),
    ('o1', torch.float32, 'm', False),
    ('o2', torch.int8, 'm', False)
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
FOUND = 'mismatch: mismatch\no0 (fp16): 59 of 4002 elements differ, first at (0, 0): got np.float16(-4.21), expected np.float16(7.0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
