"""CPU-shaped vs GPU-shaped kernels on the device in use, measured in the same run.

    python3 benchmarks/shapes.py        # PoCL (the default device); also the second table of run.py
    TRITON_OPENCL_DEVICE=intel python3 benchmarks/shapes.py

Each kernel is compiled for `opencl_target="cpu"` (one work-item per program) and
`opencl_target="gpu"` (the work-group shares the program: triton_spirv/memref_stage/work_group_sharing.py)
and timed with Triton's `do_bench`; results are checked against torch first.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


def vector_add(target, quick=False):
    n = 1 << (20 if quick else 24)
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    run = lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024,  # noqa: E731
                                                      opencl_target=target)
    return run, lambda: torch.equal(out, x + y), 3 * 4 * n / 1e9, "GB/s"


def softmax(target, quick=False):
    rows, cols = (512 if quick else 4096), 1024
    x, out = torch.randn(rows, cols), torch.empty(rows, cols)
    run = lambda: softmax_kernel[(rows,)](out, x, cols, BLOCK=1024, opencl_target=target)  # noqa: E731
    return run, lambda: torch.allclose(out, torch.softmax(x, 1), atol=1e-6), \
        2 * 4 * rows * cols / 1e9, "GB/s"


def matmul(target, quick=False):
    m = n = k = 256 if quick else 512
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    run = lambda: matmul_kernel[(m // 64, n // 64)](a, b, c, m, n, k, BM=64, BN=64, BK=32,  # noqa: E731
                                                    opencl_target=target)
    return run, lambda: torch.allclose(c, a @ b, atol=1e-3, rtol=1e-4), 2 * m * n * k / 1e9, "GFLOP/s"


def table(quick=False) -> list[dict]:
    """The second table of benchmarks/run.py: each case in both shapes, same process, same
    inputs; results are checked against torch before timing."""
    from launcher import get_device
    print(f"CPU shape vs GPU shape on {get_device().name} (opencl_target=cpu|gpu):")
    rows = []
    for case in (vector_add, softmax, matmul):
        row = {"case": case.__name__}
        for target in ("cpu", "gpu"):
            run, check, amount, unit = case(target, quick)
            run()
            assert check(), f"{case.__name__} ({target} shape) does not match torch"
            ms = triton.testing.do_bench(run, warmup=20 if quick else 50, rep=100 if quick else 300)
            row[target] = {"ms": ms, "rate": amount / ms * 1e3, "unit": unit}
        cells = [f"{t} shape {row[t]['ms']:8.3f} ms {row[t]['rate']:8.1f} {row[t]['unit']}"
                 for t in ("cpu", "gpu")]
        print(f"  {case.__name__:<12} " + "   ".join(cells) +
              f"   gpu/cpu time {row['gpu']['ms'] / row['cpu']['ms']:.2f}x")
        rows.append(row)
    return rows


if __name__ == "__main__":
    table()
