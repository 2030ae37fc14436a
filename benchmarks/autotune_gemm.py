"""A 32-config autotune of a GEMM (tutorial 03's matmul, as a fused MoE kernel or a
library autotunes it): compile time of every config, the figure Inductor's and the
libraries' autotuning pays before the first result.

    python3 benchmarks/autotune_gemm.py [--size N] [--configs K] [--profile out.prof]

Prints {"s": wall seconds of the autotuned first call (every config compiled, loaded
and timed), "configs": K, "stage_seconds": {stage: wall seconds summed over the
configs}, "stage_cpu_seconds": the same in CPU seconds of the compiling thread, "cpu_s":
the process's CPU seconds}.
Run it with an empty TRITON_CACHE_DIR for the cold figure (compile_cases.py does).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def autotune_configs(count: int = 32) -> list[triton.Config]:
    """`count` configs over BLOCK_M/N/K, num_warps and num_stages (2 x 2 x 2 x 2 x 2 = 32)."""
    grid = itertools.product((32, 64), (32, 64), (16, 32), (1, 4), (2, 3))
    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                             num_warps=w, num_stages=s) for m, n, k, w, s in grid]
    return configs[:count]


def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % group_m)
    pid_n = (pid % group) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = tl.maximum(acc, 0.0)  # a fused epilogue, as MoE and Inductor's GEMMs carry
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(cm[:, None] < M) & (cn[None, :] < N))


def autotuned(count: int):
    return triton.autotune(configs=autotune_configs(count), key=["M", "N", "K"])(triton.jit(matmul_kernel))


STAGE_CPU: dict[str, float] = {}  # stage -> CPU seconds of the compiling thread, summed


def clock_stage_cpu() -> None:
    """Adds each compiler stage's CPU seconds (of the thread that runs it) into
    STAGE_CPU: on a machine shared with other work the stages' wall seconds
    (`stage_seconds`) count the waits for a core too."""
    from triton_spirv.compiler import OpenCLBackend
    add_stages = OpenCLBackend.add_stages

    def timed(ext, stage):
        def run_stage(src, metadata):
            start = time.thread_time()
            try:
                return stage(src, metadata)
            finally:
                STAGE_CPU[ext] = STAGE_CPU.get(ext, 0.0) + time.thread_time() - start
        return run_stage

    def clocked(self, stages, options, language):
        add_stages(self, stages, options, language)
        for ext in list(stages):
            stages[ext] = timed(ext, stages[ext])

    OpenCLBackend.add_stages = clocked


def run(size: int, count: int):
    """(seconds of the autotuned first call, the kernel, a, b, c)."""
    kernel = autotuned(count)
    a, b = torch.randn(size, size), torch.randn(size, size)
    c = torch.empty(size, size)
    grid = lambda meta: (triton.cdiv(size, meta["BLOCK_M"]) * triton.cdiv(size, meta["BLOCK_N"]),)  # noqa: E731
    start = time.perf_counter()
    kernel[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 c.stride(0), c.stride(1))
    seconds = time.perf_counter() - start
    torch.testing.assert_close(c, torch.relu(a @ b), atol=1e-3, rtol=1e-3)
    return seconds, kernel


def stage_seconds(kernel) -> dict:
    """Each stage's seconds summed over the configs the autotuner compiled."""
    total: dict[str, float] = {}
    for compiled in compiled_kernels(kernel):
        for stage, s in compiled.metadata._asdict().get("stage_seconds", {}).items():
            total[stage] = total.get(stage, 0.0) + s
    return total


def compiled_kernels(kernel):
    jit = kernel.fn
    for per_device in jit.device_caches.values():
        yield from per_device[0].values()


def compile_case(quick=False) -> dict:
    """run.py's case: the autotuned first call in a new process with an empty Triton
    cache (32 configs; 4 when `quick`), and each stage's seconds summed over them."""
    import tempfile

    import peers
    count = 4 if quick else 32
    with tempfile.TemporaryDirectory() as cache:
        measured = peers.run_json([os.path.abspath(__file__), "--configs", str(count)],
                                   {"TRITON_CACHE_DIR": cache}, timeout=1800)
    return {"case": f"GEMM autotune compile, {count} configs", "unit": "s",
            "ours": {"ms": measured["s"] * 1e3, "rate": measured["s"]}, "peers": {},
            "per_config_s": measured["s"] / count, "stage_seconds": measured["stage_seconds"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--configs", type=int, default=32)
    parser.add_argument("--profile", default="", help="write a cProfile of the autotuned call here")
    args = parser.parse_args(argv)
    clock_stage_cpu()
    cpu_start = time.process_time()
    if args.profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
        seconds, kernel = run(args.size, args.configs)
        profiler.disable()
        profiler.dump_stats(args.profile)
    else:
        seconds, kernel = run(args.size, args.configs)
    print(json.dumps({"s": seconds, "configs": args.configs, "stage_seconds": stage_seconds(kernel),
                      "stage_cpu_seconds": STAGE_CPU, "cpu_s": time.process_time() - cpu_start}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
