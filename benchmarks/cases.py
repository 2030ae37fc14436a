"""Benchmark cases. Each returns {"case", "unit", "ours": {"ms", "rate"}, "peers": {...}}.

The `launch_*` functions are also what the Triton-interpreter peer runs (interpret.py),
so both run exactly the same kernel code.
"""
from __future__ import annotations

import torch
import triton
from triton.testing import do_bench

import kernels
import peers

# ---------------------------------------------------------------------------------------
# Launchers (shared with the interpreter peer)


def launch_vector_add(x, y, out, block=1024, **options):
    n = x.numel()
    kernels.add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, **options)


def launch_softmax(x, out):
    rows, cols = x.shape
    kernels.softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols,
                                    BLOCK=triton.next_power_of_2(cols))


# 128x64 tiles with BLOCK_K=64: the best of the 32..256 tiles tried on PoCL's CPU device
# after register blocking (median of 4 rounds: 128x64x64 97 GFLOP/s, 128x128x64 94,
# 64x128x64 84, 64x64x32 64), as a Triton user would pick by autotuning for this device.
def launch_matmul(a, b, c, block=(128, 64, 64)):
    M, K = a.shape
    _, N = b.shape
    bm, bn, bk = block
    return kernels.matmul_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)


def launch_layer_norm(x, w, b, y, eps=1e-5):
    rows, cols = x.shape
    kernels.layer_norm_fwd_kernel[(rows,)](x, y, w, b, x.stride(0), cols, eps,
                                           BLOCK=triton.next_power_of_2(cols))


def make_inputs(case: str, size):
    """Inputs of `case` at `size` (a number of elements, rows, or a matrix side)."""
    torch.manual_seed(0)
    if case == "vector_add":
        x, y = torch.rand(size), torch.rand(size)
        return (x, y, torch.empty_like(x))
    if case == "softmax":
        x = torch.randn(size, 4096)
        return (x, torch.empty_like(x))
    if case.startswith("matmul"):
        dtype = torch.float16 if case == "matmul_fp16" else torch.float32
        a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
        return (a, b, torch.empty(size, size))
    if case == "layer_norm":
        x = torch.randn(size, 4096)
        return (x, torch.rand(4096), torch.rand(4096), torch.empty_like(x))
    raise KeyError(case)


LAUNCH = {"vector_add": launch_vector_add, "softmax": launch_softmax,
          "matmul_fp32": launch_matmul, "matmul_fp16": launch_matmul,
          "layer_norm": launch_layer_norm}


# ---------------------------------------------------------------------------------------
# Cases


def _bench(fn) -> float:
    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def _result(case, unit, ours_ms, amount, peer_ms: dict):
    rate = lambda ms: amount / (ms * 1e-3) / 1e9  # noqa: E731 (GB/s or GFLOP/s)
    return {"case": case, "unit": unit, "ours": {"ms": ours_ms, "rate": rate(ours_ms)},
            "peers": {name: ({"ms": ms, "rate": rate(ms)} if isinstance(ms, float) else {"skipped": ms})
                      for name, ms in peer_ms.items()}}


def _check(actual, expected, case, atol=1e-3, rtol=1e-3):
    if not torch.allclose(actual.float(), expected.float(), atol=atol, rtol=rtol):
        diff = (actual.float() - expected.float()).abs().max().item()
        raise AssertionError(f"{case}: result differs from torch by {diff}")


def vector_add(quick=False):
    n = 2**20 if quick else 2**25
    x, y, out = make_inputs("vector_add", n)
    launch_vector_add(x, y, out)
    _check(out, x + y, "vector_add", 0, 0)
    expected = torch.empty_like(out)
    peer_ms = {"torch": _bench(lambda: torch.add(x, y, out=expected)),
               "interpreter": peers.interpreter_ms("vector_add", 2**16, scale=n / 2**16),
               "tinygrad": peers.tinygrad_ms("vector_add", n)}
    return _result("vector_add 2^%d fp32" % (n.bit_length() - 1), "GB/s",
                   _bench(lambda: launch_vector_add(x, y, out)), 3 * n * 4, peer_ms)


def vector_add_large_blocks(quick=False):
    """The same kernel with BLOCK=16384: 16x fewer programs, so PoCL's cost per
    work-group (which BLOCK=1024 pays 32768 times) drops out; next to torch."""
    n = 2**20 if quick else 2**25
    x, y, out = make_inputs("vector_add", n)
    launch_vector_add(x, y, out, 16384)
    _check(out, x + y, "vector_add_large_blocks", 0, 0)
    expected = torch.empty_like(out)
    peer_ms = {"torch": _bench(lambda: torch.add(x, y, out=expected))}
    return _result("vector_add BLOCK=16384", "GB/s",
                   _bench(lambda: launch_vector_add(x, y, out, 16384)), 3 * n * 4, peer_ms)


def vector_add_one_program_per_group(quick=False):
    """The same kernel with program loops off (`program_loops=False`): one work-group
    per program, as on GPUs; next to torch and to the default, whose work-groups on CPU
    devices run several programs each (memref_stage/program_loops.py)."""
    n = 2**20 if quick else 2**25
    x, y, out = make_inputs("vector_add", n)
    launch_vector_add(x, y, out, program_loops=False)
    _check(out, x + y, "vector_add_one_program_per_group", 0, 0)
    expected = torch.empty_like(out)
    peer_ms = {"torch": _bench(lambda: torch.add(x, y, out=expected)),
               "program loops": _bench(lambda: launch_vector_add(x, y, out))}
    return _result("vector_add one program/group", "GB/s",
                   _bench(lambda: launch_vector_add(x, y, out, program_loops=False)), 3 * n * 4, peer_ms)


def softmax(quick=False):
    rows = 512 if quick else 4096
    x, out = make_inputs("softmax", rows)
    launch_softmax(x, out)
    _check(out, torch.softmax(x, dim=1), "softmax", 1e-5, 1e-4)
    peer_ms = {"torch": _bench(lambda: torch.softmax(x, dim=1)),
               "interpreter": peers.interpreter_ms("softmax", 16, scale=rows / 16),
               "tinygrad": peers.tinygrad_ms("softmax", rows)}
    return _result(f"softmax {rows}x4096 fp32", "GB/s", _bench(lambda: launch_softmax(x, out)),
                   2 * x.numel() * 4, peer_ms)


def _matmul(case, quick):
    n = 256 if quick else 1024
    a, b, c = make_inputs(case, n)
    launch_matmul(a, b, c)
    _check(c, a.float() @ b.float(), case, 1e-2, 1e-3)
    af, bf = a.float(), b.float()
    peer_ms = {"torch": _bench(lambda: torch.matmul(af, bf)),
               "interpreter": peers.interpreter_ms(case, 64, scale=(n / 64) ** 3),
               "tinygrad": peers.tinygrad_ms("matmul", n) if case == "matmul_fp32" else "fp32 only"}
    return _result(f"{case} {n}^3", "GFLOP/s", _bench(lambda: launch_matmul(a, b, c)),
                   2 * n ** 3, peer_ms)


def matmul_fp32(quick=False):
    return _matmul("matmul_fp32", quick)


def matmul_fp16(quick=False):
    return _matmul("matmul_fp16", quick)


def layer_norm(quick=False):
    rows = 512 if quick else 4096
    x, w, b, y = make_inputs("layer_norm", rows)
    launch_layer_norm(x, w, b, y)
    expected = torch.nn.functional.layer_norm(x, (4096,), w, b, 1e-5)
    _check(y, expected, "layer_norm", 1e-4, 1e-4)
    peer_ms = {"torch": _bench(lambda: torch.nn.functional.layer_norm(x, (4096,), w, b, 1e-5)),
               "interpreter": peers.interpreter_ms("layer_norm", 16, scale=rows / 16)}
    return _result(f"layer_norm {rows}x4096 fp32", "GB/s",
                   _bench(lambda: launch_layer_norm(x, w, b, y)), 2 * x.numel() * 4, peer_ms)


def launch_overhead(quick=False):
    x = torch.zeros(1)
    launch = lambda: kernels.tiny_kernel[(1,)](x)  # noqa: E731
    compiled = launch()
    count = 200 if quick else 1000
    ms = peers.median_call_ms(launch, count)
    # Our launcher called the way CompiledKernel calls it, without Triton's dispatch
    # (JITFunction.run: binding, specialization, cache key, launch metadata).
    launcher_ms = peers.median_call_ms(
        lambda: compiled.run(1, 1, 1, 0, compiled.function, compiled.packed_metadata, None, None, None, x), count)
    # Triton's dispatch without the launch: JITFunction.run up to the kernel lookup
    # (binding, specialization, cache key), as `warmup=True` stops there.
    dispatch_ms = peers.median_call_ms(lambda: kernels.tiny_kernel.run(x, grid=(1,), warmup=True), count)
    torch_ms = peers.median_call_ms(lambda: torch.add(x, 1.0), 1000)
    bare_ms = peers.bare_opencl_launch_ms(count)
    return {"case": "launch overhead (tiny kernel)", "unit": "us", "ours": {"ms": ms, "rate": ms * 1e3},
            "peers": {"torch.add (1 element)": {"ms": torch_ms, "rate": torch_ms * 1e3},
                      "bare pyopencl enqueue+finish": {"ms": bare_ms, "rate": bare_ms * 1e3}},
            "launcher_only_us": launcher_ms * 1e3, "dispatch_only_us": dispatch_ms * 1e3}


def compile_latency(quick=False):
    cold, warm, new_kernel, stages = peers.compile_latency_s()
    return {"case": "matmul compile latency", "unit": "s", "ours": {"ms": cold * 1e3, "rate": cold},
            "peers": {}, "cold_s": cold, "warm_s": warm, "new_kernel_s": new_kernel, "stage_seconds": stages}


from hlo_cases import hlo_gelu, hlo_row_reduction, hlo_transpose  # noqa: E402

CASES = {
    "vector_add": vector_add,
    "vector_add_large_blocks": vector_add_large_blocks,
    "vector_add_one_program_per_group": vector_add_one_program_per_group,
    "softmax": softmax,
    "matmul_fp32": matmul_fp32,
    "matmul_fp16": matmul_fp16,
    "layer_norm": layer_norm,
    "hlo_gelu": hlo_gelu,
    "hlo_transpose": hlo_transpose,
    "hlo_row_reduction": hlo_row_reduction,
    "launch_overhead": launch_overhead,
    "compile_latency": compile_latency,
}
