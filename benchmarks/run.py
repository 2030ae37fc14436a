"""The benchmark suite: our kernels next to peers measured in the same run.

    python3 benchmarks/run.py                 # every case whose dependencies are present
    python3 benchmarks/run.py --cases vector_add,matmul_fp32 --json results.json

Each case prints the median time over repeated runs after warm-up (Triton's `do_bench`
through our driver), the throughput, and the ratio to each peer measured in this run:
torch eager on the CPU (same thread count), a memory-bandwidth reference (a large copy),
Triton's interpreter (`TRITON_INTERPRET=1`, on a smaller size, scaled), tinygrad on the
same OpenCL device (`DEV=CL`) and XLA on the CPU (JAX) where installed. A second table times
the CPU-shaped and GPU-shaped versions of three kernels on the same device (shapes.py;
`--no-shapes` skips it). The compiled-model cases (compiled_models.py) time torch.compile
through our backend next to Inductor's C++ backend and eager, with each backend's cold
compile time; `autotune_compile` times a 32-config GEMM autotune's compiles
(autotune_gemm.py). Nothing here is a test: CI does not time anything.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# This checkout's packages before an installed copy (an editable install may point at
# another checkout): the suite measures the code it sits in.
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import autotune_gemm  # noqa: E402
import cases  # noqa: E402
import compiled_models  # noqa: E402
import peers  # noqa: E402
import shapes  # noqa: E402

# The kernels' cases, the compiled models' (ours, Inductor's C++ backend and eager, with
# each backend's compile time) and the compile time of a 32-config GEMM autotune.
CASES = {**cases.CASES, **compiled_models.CASES, "autotune_compile": autotune_gemm.compile_case}


def _format_row(result: dict) -> str:
    ours = result["ours"]
    cells = [f"{result['case']:<24}", f"{ours['ms']:>9.3f} ms", f"{ours['rate']:>9.1f} {result['unit']}"]
    for peer, measured in result["peers"].items():
        if measured.get("ms"):
            ratio = measured["ms"] / ours["ms"]
            cells.append(f"{peer}: {measured['rate']:.1f} {result['unit']} (ours {ratio:.2f}x)")
        else:
            cells.append(f"{peer}: {measured.get('skipped', 'n/a')}")
    if "launcher_only_us" in result:  # launch overhead: our launcher without Triton's dispatch
        cells.append(f"launcher alone (CompiledKernel.run): {result['launcher_only_us']:.1f} us")
        cells.append(f"Triton's dispatch alone (warmup=True): {result['dispatch_only_us']:.1f} us")
    if "compile_s" in result:  # compiled models: each backend's cold compile
        ours_s, cpp_s = result["compile_s"]["triton"], result["compile_s"]["cpp"]
        cells.append(f"compile: ours {ours_s:.2f} s, inductor cpp {cpp_s:.2f} s (ours/cpp {ours_s / cpp_s:.2f})")
    if "per_config_s" in result:  # autotune compile: per config and per stage
        stages = ", ".join(f"{stage} {s:.2f}" for stage, s in result["stage_seconds"].items())
        cells.append(f"per config {result['per_config_s']:.2f} s; stages summed (s): {stages}")
    if "warm_s" in result:  # compile latency: the cold compile is the row, then the warm start
        cells.append(f"warm start (new process, cache hit): {result['warm_s']:.2f} s")
        cells.append(f"new kernel (start-up memos kept): {result['new_kernel_s']:.2f} s")
        stages = ", ".join(f"{stage} {s:.2f}" for stage, s in result.get("stage_seconds", {}).items())
        if stages:
            cells.append(f"cold stages (s): {stages}")
    return "  ".join(cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--json", default=os.path.join(HERE, "results.json"))
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    parser.add_argument("--no-shapes", dest="shapes", action="store_false",
                        help="skip the second table: CPU-shaped vs GPU-shaped kernels (shapes.py)")
    args = parser.parse_args(argv)
    wanted = [c for c in args.cases.split(",") if c] or list(CASES)
    unknown = set(wanted) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s) {sorted(unknown)}; known: {sorted(CASES)}")
    results = {"environment": peers.environment(), "cases": []}
    bandwidth = peers.copy_bandwidth(quick=args.quick)
    results["copy_bandwidth_gbps"] = bandwidth
    print(f"copy bandwidth reference: {bandwidth:.1f} GB/s")
    for name in wanted:
        try:
            result = CASES[name](quick=args.quick)
        except Exception as err:  # one broken case must not hide the others
            print(f"{name:<24}  failed: {type(err).__name__}: {str(err).splitlines()[0]}")
            results["cases"].append({"case": name, "error": f"{type(err).__name__}: {err}"})
            continue
        if result["unit"] == "GB/s":
            result["fraction_of_copy_bandwidth"] = result["ours"]["rate"] / bandwidth
        print(_format_row(result))
        results["cases"].append(result)
    if args.shapes:
        results["shapes"] = shapes.table(quick=args.quick)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
