"""SPIR-V against OpenCL C, in one run on a device that takes SPIR-V.

    PYOPENCL_NO_CACHE=1 TRITON_OPENCL_DEVICE=intel python3 benchmarks/spirv.py

(pyopencl keeps OpenCL C builds in a disk cache, which would make the `build C` column
a cache hit; SPIR-V builds are not cached.)

1. Compile time per kernel family (the kernel families of tests/test_spirv.py): the `spv`
   stage (memref stage -> SPIR-V binary, triton_spirv/spirv) against the `cl` stage
   (memref stage -> OpenCL C, emitter_opencl), each on the same memref-stage text, median
   of 5; and the driver's build of each (clCreateProgramWithIL + build against
   clCreateProgramWithSource + build), median of 3.
2. Run time of the same kernels compiled both ways, launched alternately in this
   process on larger inputs: median of 20 launches after 3 warm-up launches.

Nothing here is a test: CI does not time anything.
"""
from __future__ import annotations

import glob
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, REPO)


def _median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def memref_stages_of_families() -> dict:
    """{family: [(kernel name, memref text)]}: each family of test_spirv run once with
    SPIR-V forced, its stages dumped."""
    import test_spirv
    found = {}
    for family, run in test_spirv.FAMILIES.items():
        dump = tempfile.mkdtemp(prefix="spirv-bench-")
        os.environ.update(TRITON_SPIRV_PROGRAM="spirv", TRITON_ALWAYS_COMPILE="1", TRITON_SPIRV_DUMP_DIR=dump)
        test_spirv._forget_compiled_kernels()
        if hasattr(run, "hlo_path"):
            found[family] = _hlo_memref_stages(run.hlo_path)
        else:
            run()
            found[family] = [(os.path.basename(os.path.dirname(p)), open(p).read())
                             for p in sorted(glob.glob(os.path.join(dump, "*", "*.memref")))]
    for key in ("TRITON_ALWAYS_COMPILE", "TRITON_SPIRV_DUMP_DIR"):
        os.environ.pop(key, None)
    return found


def _hlo_memref_stages(path: str) -> list:
    from triton_spirv.hlo.reader import read_hlo_file
    from triton_spirv.hlo.runtime import ModuleRunner
    fusions = ModuleRunner(read_hlo_file(path), keep_stages=True).compile_all()
    return [(k.name, k.stages["memref"]) for f in fusions for k in f.kernels]


def compile_times(stages: dict) -> list:
    from launcher import get_device
    from launcher.il import build_il
    from launcher.program import _build_from_source
    from triton_spirv.stages import memref_to_opencl, memref_to_spirv
    device = get_device()
    rows = []
    for family, kernels in stages.items():
        cl = spv = cl_build = spv_build = 0.0
        for name, text in kernels:
            cl += _median_seconds(lambda: memref_to_opencl(text), 5)
            spv += _median_seconds(lambda: memref_to_spirv(text, name), 5)
            source = memref_to_opencl(text).source
            binary = memref_to_spirv(text, name).binary
            cl_build += _median_seconds(lambda: _build_from_source(device, source, (), name), 3)
            spv_build += _median_seconds(lambda: build_il(device, binary, name), 3)
        rows.append((family, len(kernels), cl, spv, cl_build, spv_build))
    return rows


def run_times() -> list:
    import torch
    import ttir_kernels as tk
    from test_tutorials import load_tutorial

    x, y = torch.rand(1 << 22), torch.rand(1 << 22)
    out = torch.empty_like(x)
    s = torch.randn(4096, 1024)
    s_out = torch.empty_like(s)
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    c = torch.empty(512, 512, dtype=torch.float16)
    ln_x, ln_w, ln_b = torch.randn(4096, 1024), torch.rand(1024), torch.rand(1024)
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 512, 64, generator=gen).to(torch.float16) for _ in range(3))
    tutorials = {mode: (load_tutorial("05-layer-norm.py"), load_tutorial("06-fused-attention.py"))
                 for mode in ("source", "spirv")}

    def with_mode(mode, fn):
        def run():
            os.environ["TRITON_SPIRV_PROGRAM"] = mode
            fn(mode)
        return run

    cases = {
        "vector add (4M fp32)": lambda m: tk.vector_add[(4096,)](x, y, out, 1 << 22, BLOCK=1024, program=m),
        "softmax (4096x1024)": lambda m: tk.softmax[(1024,)](s, s_out, 1024, 1024, ROWS=4, BLOCK=1024,
                                                             program=m),
        "matmul (512^3)": lambda m: tk.matmul[(16, 16)](a, b, c, 512, 512, 512, 512, 512, 512,
                                                        BM=32, BN=32, BK=32, program=m),
        "layer norm (4096x1024)": lambda m: tutorials[m][0].layer_norm(ln_x, (1024,), ln_w, ln_b, 1e-5),
        "attention (4x512x64 fp16)": lambda m: tutorials[m][1].attention(q, k, v, True, 0.125),
    }
    rows = []
    for name, case in cases.items():
        times = {}
        for mode in ("source", "spirv"):
            run = with_mode(mode, case)
            for _ in range(3):
                run()
            times[mode] = _median_seconds(run, 20)
        rows.append((name, times["source"], times["spirv"]))
    os.environ.pop("TRITON_SPIRV_PROGRAM", None)
    return rows


def main() -> int:
    from launcher import get_device
    from launcher.il import spirv_versions
    device = get_device()
    if not spirv_versions(device):
        print(f"{device.name} takes no SPIR-V; select such a device (TRITON_OPENCL_DEVICE=intel)")
        return 1
    print(f"device: {device.name} ({' '.join(spirv_versions(device))})\n")
    print("compile time per family (sum over its kernels; stage: median of 5, driver build: median of 3)")
    print(f"{'family':<26}{'kernels':>8}{'cl stage':>11}{'spv stage':>11}{'build C':>10}{'build IL':>10}")
    for family, n, cl, spv, cl_build, spv_build in compile_times(memref_stages_of_families()):
        print(f"{family:<26}{n:>8}{cl * 1e3:>9.1f}ms{spv * 1e3:>9.1f}ms{cl_build * 1e3:>8.1f}ms"
              f"{spv_build * 1e3:>8.1f}ms")
    print("\nrun time (median of 20 launches, same process)")
    print(f"{'kernel':<28}{'OpenCL C':>11}{'SPIR-V':>11}{'SPIR-V/C':>10}")
    for name, c_time, s_time in run_times():
        print(f"{name:<28}{c_time * 1e3:>9.3f}ms{s_time * 1e3:>9.3f}ms{s_time / c_time:>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
