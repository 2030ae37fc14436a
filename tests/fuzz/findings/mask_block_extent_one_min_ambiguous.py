# ruff: noqa
"""Finding (a new trigger of the known 'call to min/max is ambiguous' bug): a masked store
whose block has extent 1 along a dimension (BN = 1), no scalar condition written by the user.

All OpenCL C configurations (pocl-cpu, pocl-gpu, intel-cpu, intel-gpu) fail to build:
`long extent = min(max(min(mask_bound, ...), 0L), 2L);` mixes int and long operands.
Guess: with BN = 1 the column mask `rn < N` is a one-element tensor that the mask
analysis treats as a scalar condition, which takes the same untyped min/max path as
`mask & (pid < c)`. SPIR-V configurations pass. The fix of the known bug should cover it;
this is its regression test.

Run from the repository root: python3 tests/fuzz/findings/mask_block_extent_one_min_ambiguous.py
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
def kernel(x0, o0, o1, o2, sx0_0, sx0_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    tl.store(o2 + rm[:, None] * N + rn[None, :], tl.full((BM, BN), 1, tl.float16), mask=mm[:, None] & mn[None, :])


SEED = 300
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 4, 'BN': 1, 'BK': 8, 'T': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.float16, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.float16, '2d', False),
    ('o1', torch.int8, '2d', False),
    ('o2', torch.float16, '2d', False)
]


def _input(gen, dtype, rows, cols, layout):
    shape = (cols, rows) if layout == "transposed" else (rows, 2 * cols if layout == "strided" else cols)
    if dtype.is_floating_point:
        base = (torch.randn(shape, generator=gen) * 2).to(dtype)
    elif dtype == torch.uint8:
        base = torch.randint(0, 40, shape, generator=gen).to(dtype)
    else:
        base = torch.randint(-20, 21, shape, generator=gen).to(dtype)
    if layout == "transposed":
        return base.t()
    if layout == "strided":
        return base[:, ::2]
    return base


def make_args():
    gen = torch.Generator().manual_seed(SEED)
    M, N, K = SIZES["M"], SIZES["N"], SIZES["K"]
    gm, gn = triton.cdiv(M, SIZES["BM"]), triton.cdiv(N, SIZES["BN"])
    dims = {"mn": (M, N), "mk": (M, K), "kn": (K, N), "tn": (SIZES["T"], N)}
    ins = [_input(gen, dtype, *dims[role], layout) for _, dtype, role, layout in INPUTS]
    out_dims = {"2d": (M, N), "m": (M, gn), "n": (gm, N), "s": (gm, gn)}
    outs = [torch.zeros(out_dims[kind], dtype=dtype) if atomic else torch.full(out_dims[kind], 7, dtype=dtype)
            for _, dtype, kind, atomic in OUTPUTS]
    strides = [s for t in ins for s in t.stride()]
    return ins, outs, strides


def run(**options):
    ins, outs, strides = make_args()
    grid = (triton.cdiv(SIZES["M"], SIZES["BM"]), triton.cdiv(SIZES["N"], SIZES["BN"]))
    kernel[grid](*ins, *outs, *strides, SIZES["M"], SIZES["N"], SIZES["K"], *SCALARS.values(),
                 BM=SIZES["BM"], BN=SIZES["BN"], BK=SIZES["BK"], T=SIZES["T"], **options)
    return {name: t.float().numpy() if t.dtype.itemsize == 1 and t.dtype.is_floating_point
            else t.to(torch.float64).numpy() if t.dtype == torch.bfloat16 else t.numpy()
            for (name, *_), t in zip(OUTPUTS, outs)}


# ---------------------------------------------------------------------------------
# Reproducer: runs the kernel under Triton's interpreter (the reference) and in the
# configuration below, each in its own process, and prints what differs
# (tests/fuzz/reproducer.py).
CONFIG = 'intel-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'program': 'source'}
FOUND = "error: OpenCLBuildError: error: call to 'min' is ambiguous\nOpenCLBuildError: OpenCL C build of kernel 'kernel_1' failed on Intel(R) OpenCL / AMD EPYC:\nclBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\nBuild on <pyopencl.Device 'AMD EPYC' on 'Intel(R) OpenCL' at 0x556dc502cd98>:\n\nCompilation started\n1:32:27: error: call to 'min' is ambiguous\n   32 |     long extent = min(max(min(mask_bound, (mn ? 4 : 0)), 0L), 4L);\n      |                           ^~~\nopencl-c.h:9695:20: note: candidate function\n 9695 | l"

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
