# ruff: noqa
"""Finding: PoCL aborts the process (SIGABRT) when it loads the kernel: dlopen of the
kernel's .so fails with 'undefined symbol: _local_id_z' (pocl-cpu; the unreduced program
also crashed pocl-gpu). Intel's runtime builds the same OpenCL C.

It needs K == 1, which Triton specializes into a constant (with K = 5 or 16, the same
program passes): the K mask is then the constant `rk < 1`. The kernel: a `tl.dot` (BM=32, BK=16, fp32, input_precision="ieee") of a load masked along K
with K = 1 < BK and a constant operand, stored as bf16. The generated OpenCL C uses no
work-item ids, barriers or async copies (the CPU shape: a program loop, element loops of
16 and remainder loops `for (c = extent / 16 * 16; c < extent; ++c)`). Guess: a PoCL 3.1
code-generation bug in its work-group function generation (a reference to the z local
id survives in a kernel it decided needs no work-item loops), hit by the shape of our
loops around the masked-K contraction; a driver quirk (gated on PoCL) would be the fix
on our side once the triggering construct is known. Possibly related to the known
masked-K dot bug. Running this script crashes its child process, which it reports as
FAILED.

Run from the repository root: python3 tests/fuzz/findings/pocl_dot_masked_k_undefined_local_id_z.py
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
def kernel(x0, x1, x2, x3, x4, x5, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, sx3_0, sx3_1, sx4_0, sx4_1, sx5_0, sx5_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v8 = tl.load(x3 + rm[:, None] * sx3_0 + rk[None, :] * sx3_1, mask=mm[:, None] & (rk[None, :] < K), other=0)
    v10 = tl.dot(v8, tl.full((BK, BN), 1, tl.float32), input_precision="ieee")
    tl.store(o0 + rm[:, None] * N + rn[None, :], v10.to(tl.bfloat16), mask=mm[:, None] & mn[None, :])


SEED = 2181
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 32, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 8}
SCALARS = {}
INPUTS = [
    ('x0', torch.int8, 'mn', 'transposed'),
    ('x1', torch.int8, 'mk', 'contiguous'),
    ('x2', torch.int8, 'kn', 'transposed'),
    ('x3', torch.float32, 'mk', 'strided'),
    ('x4', torch.float32, 'kn', 'contiguous'),
    ('x5', torch.int8, 'mn', 'contiguous')
]
OUTPUTS = [
    ('o0', torch.bfloat16, '2d', False),
    ('o1', torch.int32, '2d', False),
    ('o2', torch.int8, '2d', False)
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
FOUND = 'crash: crash\nworker exited with -6\ndlopen("PATH") failed with \'PATH: undefined symbol: _local_id_z\'.\nnote: missing symbols in the kernel binary might be reported as \'file not found\' errors.\n'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
