# ruff: noqa
"""Finding, open, silent: Intel's OpenCL CPU runtime (2026.22.10), CPU shape, OpenCL C:
the masked `tl.atomic_add` after an early return on `tl.max` is lost or wrong (o1 gets
-1 where the interpreter, PoCL and Oclgrind give 0). The same program with its input
transposed (intel_cpu_atomic_after_strided_copy_crash.py) crashes Intel's compiler
instead. Built by hand: right with the early return's branch removed, or with
`mem_fence(CLK_LOCAL_MEM_FENCE)` before it; wrong with the branch negated, the max
kept in a private variable, or the condition volatile. Reduced by hand to
intel_cpu_not_max_branch_crash.cl (beside this file: 30 lines, no atomics needed, a
plain store does it), which crashes Intel's compiler: __local int tiles summed in a
loop of two rounds, `~` of the sum, a max over the tile, then work in the else branch
of `if (max > 2)`; it builds and runs right with one round, without the `~`, without
the branch, or with the tiles private.

Fixed: quirk not_then_integer_max builds such kernels from OpenCL C with
-cl-opt-disable (memref_stage/unoptimized_builds.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/intel_cpu_atomic_after_early_return_lost.py
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
def kernel(x0, x1, x2, x3, o0, o1, o2, o3, o4, o5, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v2 = tl.zeros((BN,), tl.int32)
    p_v2 = x1 + rn * sx1_1
    for i in range(0, T):
        row_v2 = tl.load(p_v2, mask=mn, other=0).to(tl.int32)
        v2 = v2 + row_v2
        p_v2 += sx1_0
    v3 = ~v2
    if tl.max(v3) > 2:
        return
    tl.atomic_add(o1 + rn, v3, mask=mn)


SEED = 42425
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 2, 'BN': 8, 'BK': 1, 'T': 2, 'num_warps': 2}
SCALARS = {}
INPUTS = [
    ('x0', torch.float32, 'mn', 'contiguous'),
    ('x1', torch.int8, 'tn', 'contiguous'),
    ('x2', torch.int32, 'mn', 'contiguous'),
    ('x3', torch.float8_e5m2, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.int32, 'n', True),
    ('o1', torch.int32, 'n', True),
    ('o2', torch.float32, '2d', False),
    ('o3', torch.int32, 's', False),
    ('o4', torch.int32, 's', False),
    ('o5', torch.float32, '2d', False)
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
CONFIG = 'intel-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'program': 'source'}
FOUND = 'crash: crash: \nworker exited with -4\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
