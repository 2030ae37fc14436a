# ruff: noqa
"""Finding, open: Intel's OpenCL CPU runtime (2026.22.10) dies compiling this kernel's
OpenCL C (CPU shape, `program="source"`; an LLVM crash, "PLEASE submit a bug report",
SIGILL) at its first launch: the program builds, the kernel's code is compiled when it
is first enqueued, so the isolated build (launcher/isolated_build.py) does not catch it.
PoCL computes it right. The kernel: an int32 column sum in a loop over rows read by
`async_work_group_strided_copy`, `~`, an early return on `tl.max`, then a masked
`tl.atomic_add`. Built by hand, the same OpenCL C with the strided copy replaced by
`async_work_group_copy` runs (but leaves the atomic's target 0, where -1 is right: the
atomic is lost there) and with the atomic made a plain add runs right.

Fixed: quirk not_then_integer_max builds such kernels from OpenCL C with
-cl-opt-disable (memref_stage/unoptimized_builds.py); this program now computes right.

Run from the repository root: python3 tests/fuzz/findings/intel_cpu_atomic_after_strided_copy_crash.py
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
    ('x1', torch.int8, 'tn', 'transposed'),
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
