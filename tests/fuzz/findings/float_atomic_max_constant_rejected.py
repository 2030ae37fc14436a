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
