# ruff: noqa
"""Finding: a `tl.dot` whose K mask is `rk < K` with K == 1 gives wrong values (intel-cpu
here; the same program on PoCL CPU shape also differs, and with other operands PoCL
aborts, see pocl_dot_masked_k_undefined_local_id_z.py). With K = 5 (also a partial mask
of BK = 16) the same program is right, so this is not only the known masked-K bug:
Triton specializes an integer argument equal to 1 into a constant, the mask becomes the
constant `rk < 1`, and the contraction seems to read rows k >= 1 of the (K x N) operand
(past the buffer: got 98 where 0 is expected). Guess: the masked-K handling in
ttir_to_linalg (analysis.py mask boxes / memory.py) treats a constant bound of 1 as a
whole-block load or loses it in the dot's operand tiles (register_blocking's full-tile
copies).

Run from the repository root: python3 tests/fuzz/findings/dot_k_equal_one_wrong_values.py
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
    v6 = tl.load(x2 + rk[:, None] * sx2_0 + rn[None, :] * sx2_1, mask=(rk[:, None] < K) & mn[None, :], other=0)
    v7 = tl.dot(tl.full((BM, BK), 1, tl.int8), v6)
    v11 = v7 << (v7 & 3)
    tl.store(o1 + rm[:, None] * N + rn[None, :], v11, mask=mm[:, None] & mn[None, :])


SEED = 2181
SIZES = {'M': 1, 'N': 23, 'K': 1, 'BM': 32, 'BN': 16, 'BK': 16, 'T': 3, 'num_warps': 8}
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
CONFIG = 'intel-cpu'
ENVIRONMENT = {'TRITON_OPENCL_DEVICE': 'intel'}
OPTIONS = {'program': 'source'}
FOUND = 'mismatch: mismatch\no0 (bf16): 18 of 207 elements differ, first at (0, 4): got np.float64(nan), expected np.float64(-3.25)'

if __name__ == "__main__":
    import sys

    root = os.path.dirname(os.path.abspath(__file__))  # the checkout this file is in, else the current folder
    while root != "/" and not os.path.isdir(os.path.join(root, "triton_spirv")):
        root = os.path.dirname(root)
    sys.path.insert(0, root if root != "/" else os.getcwd())
    from tests.fuzz.reproducer import main

    main(__file__, run, CONFIG, ENVIRONMENT, OPTIONS)
