# ruff: noqa
"""Finding: an integer converted to fp16 and then to fp8 fails to compile in every
configuration (pocl-cpu, pocl-gpu, intel-cpu, intel-gpu, intel-cpu-spirv, intel-gpu-spirv):

OpenCLEmitError: arith.sitofp at ...: arith.sitofp from i8 to f8E5M2 is not supported.

The program never asks for an int -> fp8 conversion (`x_i8.to(tl.float16).to(tl.float8e5)`).
Guess: TTIR has `arith.sitofp i8 -> f16` then `tt.fp_to_fp f16 -> f8E5M2`; once the latter is
an `arith.truncf`, upstream arith canonicalization folds truncf(sitofp x) into one
sitofp to f8E5M2 (the i8 values are exact in f16), which the emitter's conversion table
(emitter_opencl/casts.py) does not have. Either the emitter converts int -> fp8 through
f32/f16, or the fp8 truncation is kept out of that fold.

Run from the repository root: python3 tests/fuzz/findings/int_to_fp8_sitofp_unsupported.py
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
def kernel(x0, x1, x2, o0, o1, o2, sx0_0, sx0_1, sx1_0, sx1_1, sx2_0, sx2_1, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gn = tl.num_programs(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    v2 = tl.load(x1 + pid_m * sx1_0, mask=(pid_m < M), other=-1)
    v5 = v2.to(tl.float16)
    tl.store(o1 + pid_m * gn + pid_n, v5.to(tl.float8e5))


SEED = 2074
SIZES = {'M': 1, 'N': 1, 'K': 1, 'BM': 4, 'BN': 32, 'BK': 2, 'T': 1, 'num_warps': 4}
SCALARS = {}
INPUTS = [
    ('x0', torch.float16, 'mn', 'strided'),
    ('x1', torch.int8, 'mn', 'contiguous'),
    ('x2', torch.int8, 'mn', 'strided')
]
OUTPUTS = [
    ('o0', torch.int8, '2d', False),
    ('o1', torch.float8_e5m2, 's', False),
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
CONFIG = 'pocl-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'pocl'}
OPTIONS = {}
FOUND = 'error: OpenCLEmitError: arith.sitofp at PATH:N: arith.sitofp from iN to fNENMN is not supported\nOpenCLEmitError: arith.sitofp at PATH:32: arith.sitofp from i8 to f8E5M2 is not supported\n/fuzz/worker.py", line 42, in main\n    _run(request, index)\n  File "PATH", line 34, in _run\n    outputs = module.run(**request["options"])\n              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "PATH", line 82, in run\n    kernel[grid](*ins, *outs, *strides, SIZES["M"], SIZES["N"], SIZES["K"], *SCALARS.values(),\n  File "PATH", line 375, in <lambda>\n    return lambda *args, **kwargs: self.run(grid=grid, warmup=Fal'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
