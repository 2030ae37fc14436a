# ruff: noqa
"""Finding (most likely the known 'PoCL GPU shape with early return + barriers' bug, with a
new detail): pocl-gpu only. An early `return` that no program takes (pid_m == 2 in a
grid of one program) followed by a work-group sum and a cumprod (barriers in the GPU
shape): the scalar store between them never happens (o1 keeps its initial 7, expected
256). Without the `if ...: return` the kernel is right; intel-gpu, the CPU shapes and
SPIR-V are right. Guess: the lifted early-exit region puts barriers under control flow
that PoCL's work-group loops handle differently (or the store is attributed to the
exiting path), so the fix of the known bug should be checked against this program.

Fixed: on devices with the quirk barrier_in_uniform_branch no barrier stays inside a
branch (memref_stage/branch_barrier_splitting.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/pocl_gpu_untaken_return_skips_store.py
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
def kernel(x0, o0, o1, o2, o3, o4, sx0_0, sx0_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v1 = tl.load(x0 + rm[:, None] * sx0_0 + rn[None, :] * sx0_1, mask=mm[:, None] & mn[None, :], other=1)
    v2 = v1 + v1
    if pid_m == 2:
        return
    v4 = v1 > tl.full((BM, BN), 1, tl.int8)
    v5 = tl.where(v4, v2, tl.full((BM, BN), 1, tl.int8))
    v9 = tl.sum(tl.full((BM, BN), 1, tl.int8)).to(tl.int32)
    v11 = tl.where(tl.full((), 1, tl.int1), v9, v9)
    tl.store(o1 + pid_m * gn + pid_n, v11)
    v12 = tl.cumprod(v5.to(tl.int32), axis=0)
    tl.store(o2 + rm[:, None] * N + rn[None, :], v12, mask=mm[:, None] & mn[None, :])


SEED = 1019
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 16, 'BN': 16, 'BK': 16, 'T': 1, 'num_warps': 1}
SCALARS = {}
INPUTS = [
    ('x0', torch.int8, 'mn', 'transposed')
]
OUTPUTS = [
    ('o0', torch.int8, '2d', False),
    ('o1', torch.int32, 's', False),
    ('o2', torch.int32, '2d', False),
    ('o3', torch.int8, '2d', False),
    ('o4', torch.int32, '2d', False)
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
                 BM=SIZES["BM"], BN=SIZES["BN"], BK=SIZES["BK"], T=SIZES["T"],
                 num_warps=SIZES.get("num_warps", 4), **options)
    return {name: t.float().numpy() if t.dtype.itemsize == 1 and t.dtype.is_floating_point
            else t.to(torch.float64).numpy() if t.dtype == torch.bfloat16 else t.numpy()
            for (name, *_), t in zip(OUTPUTS, outs)}


# ---------------------------------------------------------------------------------
# Reproducer: runs the kernel under Triton's interpreter (the reference) and in the
# configuration below, each in its own process, and prints what differs
# (tests/fuzz/reproducer.py).
CONFIG = 'pocl-gpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {'opencl_target': 'gpu'}
FOUND = 'mismatch: mismatch\no1 (int32): 2 of 2 elements differ, first at (0, 0): got np.int32(7), expected np.int32(0)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
