"""Peers and references measured in the same run as our kernels."""
from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def environment() -> dict:
    import triton
    device = triton.runtime.driver.active.get_current_target()
    return {"python": platform.python_version(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "triton": triton.__version__,
            "device": str(device.arch), "cpus": os.cpu_count()}


def copy_bandwidth(quick=False) -> float:
    """GB/s of a large tensor copy (read + write): the memory-bandwidth reference."""
    from triton.testing import do_bench
    n = 2**22 if quick else 2**25
    src, dst = torch.rand(n), torch.empty(n)
    ms = do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")
    return 2 * n * 4 / (ms * 1e-3) / 1e9


def median_call_ms(fn, count: int) -> float:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def bare_opencl_launch_ms(count: int) -> float:
    """One work-item of an empty kernel enqueued with pyopencl and waited for, on the
    device our launcher uses: the floor any OpenCL launch from Python pays."""
    import pyopencl as cl

    from launcher import get_device

    dev = get_device()
    kernel = cl.Program(dev.context, "__kernel void tiny(__global float* x) { x[0] += 1.0f; }"
                        ).build().tiny
    buffer = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4)
    kernel.set_args(buffer)

    def launch():
        # Sizes as tuples: pyopencl's quickest form (numpy size arrays cost ~1.5 us more).
        cl.enqueue_nd_range_kernel(dev.queue, kernel, (1,), (1,))
        dev.queue.finish()

    launch()
    return median_call_ms(launch, count)


def run_json(args, env_extra, timeout=600) -> dict:
    env = dict(os.environ, **env_extra)
    # The child imports this checkout's packages too (see run.py).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(HERE), env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                         timeout=timeout, cwd=HERE)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def interpreter_ms(case: str, size, scale: float):
    """Triton's interpreter (TRITON_INTERPRET=1) on a smaller size, scaled to the full one."""
    try:
        result = run_json([os.path.join(HERE, "interpret.py"), case, str(size)],
                           {"TRITON_INTERPRET": "1"})
    except Exception as err:
        return f"failed: {err}"
    return result["ms"] * scale


def tinygrad_ms(case: str, size):
    """tinygrad's default kernels on the same OpenCL device (DEV=CL), if installed."""
    try:
        import importlib.util
        if importlib.util.find_spec("tinygrad") is None:
            return "not installed"
        result = run_json([os.path.join(HERE, "tinygrad_peer.py"), case, str(size)], {"DEV": "CL"})
    except Exception as err:
        return f"failed: {err}"
    return result["ms"]


def compile_latency_s():
    """(cold, warm, new_kernel, stages): seconds to compile-and-first-launch the matmul
    kernel in a new process, cold with an empty Triton cache, warm with the cache the cold
    run filled, and as a new kernel: its compiled files gone from the cache but what any
    earlier process left there for start-up kept (Triton's key, the device probe's
    binary: launcher/file_memo.py), as when a user compiles a kernel for the first time;
    and the cold compile's seconds per stage."""
    from launcher.file_memo import SUBDIRECTORY
    with tempfile.TemporaryDirectory() as cache:
        env = {"TRITON_CACHE_DIR": cache}
        cold = run_json([os.path.join(HERE, "first_launch.py")], env)
        warm = run_json([os.path.join(HERE, "first_launch.py")], env)["s"]
        for entry in os.listdir(cache):
            if entry != SUBDIRECTORY:
                shutil.rmtree(os.path.join(cache, entry))
        new_kernel = run_json([os.path.join(HERE, "first_launch.py")], env)["s"]
    return cold["s"], warm, new_kernel, cold.get("stages", {})
