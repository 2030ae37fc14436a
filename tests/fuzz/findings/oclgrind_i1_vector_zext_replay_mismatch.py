# ruff: noqa
"""Finding: replay mismatch under Oclgrind only (oclgrind-cpu and oclgrind-gpu; every
device configuration matches the interpreter): `(v7 < v8).to(tl.int8)` on 16-wide
vectors, printed as `convert_char16(-v9)` with `int16 v9 = a < b`, is 1 on PoCL and
Intel's runtime and -1 under Oclgrind 21.10. Oclgrind's bug, not ours: LLVM makes the
negated vector comparison a zero-extension of an i1 vector, which Oclgrind computes as
255; built with -cl-opt-disable it computes 1. The replay now rechecks a differing
recording unoptimized (launcher/replay.py --recheck-unoptimized), so this program
passes; tests/test_oclgrind.py::test_oclgrind_i1_vector_quirk holds the reduced kernel.

Run from the repository root: python3 tests/fuzz/findings/oclgrind_i1_vector_zext_replay_mismatch.py
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
def kernel(x0, o0, o1, o2, o3, sx0_0, sx0_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=0.0).to(tl.float32)
    v2 = tl.max(v1, axis=0).to(tl.float32)
    v3 = tl.floor(v1)
    v4 = tl.fma(v3, v1, v3)
    v5 = -v1
    v6 = v5 / (tl.abs(v5) + 1)
    tl.store(o0 + rm[:, None] * N + rn[None, :], v3, mask=mm[:, None] & mn[None, :])
    v7 = tl.floor(v3)
    v8 = -v7
    v9 = v7 < v8
    v10 = tl.where(v9, v8, v8)
    v11 = tl.ceil(v3)
    tl.store(o1 + rm[:, None] * N + rn[None, :], v9.to(tl.int8), mask=mm[:, None] & mn[None, :])
    tl.store(o2 + rm[:, None] * N + rn[None, :], v10, mask=mm[:, None] & mn[None, :])
    tl.store(o3 + rm[:, None] * N + rn[None, :], v11, mask=mm[:, None] & mn[None, :])


SEED = 40020
SIZES = {'M': 80, 'N': 14, 'K': 48, 'BM': 32, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 4}
SCALARS = {}
INPUTS = [
    ('x0', torch.bfloat16, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float32, '2d', False),
    ('o1', torch.int8, '2d', False),
    ('o2', torch.float32, '2d', False),
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
CONFIG = 'oclgrind-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {}
FOUND = 'mismatch: replay mismatch\n[{"name": "kernel_1-13555-00002", "kernel": "kernel_1", "ok": false, "problems": ["buffer of parameter(s) 2: 537 of 1120 elements differ (i8); first at element 2: got np.int8(-1), expected np.int8(1)"]}]'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
