"""Launches from several threads, concurrent compiles into one cache, corrupted cache entries."""

import glob
import os
import subprocess
import sys
import threading
import warnings

import pytest
import torch

import triton

from launcher import ClbinFormatError, OpenCLLauncher, unpack_clbin
from reliability_kernels import run_add, run_gather, run_reductions, run_softmax

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)


def _in_threads(jobs, n_threads, repeats):
    errors = []
    barrier = threading.Barrier(n_threads)

    def worker(i):
        try:
            barrier.wait()
            for r in range(repeats):
                jobs[(i + r) % len(jobs)]()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a launch thread hung"
    if errors:
        raise errors[0]


def test_same_kernel_from_several_threads():
    run_add(1000, 256)  # compiled once up front
    _in_threads([lambda: run_add(1000, 256, seed=threading.get_ident() % 1000)], n_threads=6, repeats=15)


def test_different_kernels_from_several_threads():
    jobs = [lambda: run_add(700, 128), run_gather, run_reductions, run_softmax]
    for job in jobs:
        job()
    _in_threads(jobs, n_threads=4, repeats=12)


def test_first_compile_from_several_threads(tmp_path, monkeypatch):
    """Threads that hit a kernel nobody has compiled yet all get a correct result."""
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    _in_threads([lambda: run_add(333, 64, torch.int32)], n_threads=3, repeats=2)


_COMPILE_SCRIPT = """
import sys, torch, triton, triton.language as tl
@triton.jit
def concurrent_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0 + 1.0, mask=mask)
x = torch.rand(1000)
out = torch.empty_like(x)
concurrent_kernel[(8,)](x, out, 1000, BLOCK=128)
torch.testing.assert_close(out, x * 3.0 + 1.0)
print("OK")
"""


def test_two_processes_compile_the_same_kernel_into_one_cache(tmp_path):
    script = tmp_path / "concurrent_compile.py"
    script.write_text(_COMPILE_SCRIPT)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=REPO_ROOT)
    procs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, cwd=str(tmp_path)) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0 and "OK" in out, err[-3000:]
    assert glob.glob(str(tmp_path / "cache" / "*" / "concurrent_kernel.clbin"))


# ---------------------------------------------------------------------------------------
# Corrupted cache entries


def _cached_kernel(x_ptr, out_ptr, n, BLOCK: triton.language.constexpr):
    offs = triton.language.program_id(0) * BLOCK + triton.language.arange(0, BLOCK)
    mask = offs < n
    triton.language.store(out_ptr + offs, triton.language.load(x_ptr + offs, mask=mask) - 2.0, mask=mask)


def _run_cached():
    """A new JITFunction each time: no in-memory cache, so the kernel comes from disk."""
    kernel = triton.jit(_cached_kernel)
    x = torch.rand(300)
    out = torch.empty_like(x)
    kernel[(3,)](x, out, 300, BLOCK=128)
    torch.testing.assert_close(out, x - 2.0)


def _corrupt(data):
    return {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "garbage": b"\x7fELF\x00\x01garbage" * 10,
        "wrong format": data.replace(b"triton-spirv-clbin-1", b"triton-spirv-clbin-0"),
    }


@pytest.fixture
def cached_entry(tmp_path, monkeypatch):
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    _run_cached()
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "_cached_kernel.clbin"))
    with open(path, "rb") as f:
        return path, f.read()


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "wrong format"])
def test_corrupted_clbin_is_detected_and_rebuilt(cached_entry, how):
    path, good = cached_entry
    with pytest.raises(ClbinFormatError):
        unpack_clbin(_corrupt(good)[how])
    with open(path, "wb") as f:
        f.write(_corrupt(good)[how])
    with pytest.warns(RuntimeWarning, match="was corrupted.*rebuilt it"):
        _run_cached()
    with open(path, "rb") as f:
        unpack_clbin(f.read())  # the entry was healed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run_cached()


def test_garbage_device_binary_falls_back_to_the_source(cached_entry):
    import base64
    import json
    import launcher
    path, good = cached_entry
    document = json.loads(good)
    document["binary"] = base64.b64encode(b"not a device binary" * 20).decode()
    with open(path, "w") as f:
        json.dump(document, f)
    launcher.get_device().programs.clear()  # so that the binary is tried again
    _run_cached()


def test_a_corrupted_binary_is_rebuilt_only_from_the_cache_entry_announced_for_it(tmp_path):
    """The loader takes the files Triton's kernel_load_start_hook named for this kernel;
    an announcement for another kernel, or none, leaves nothing to rebuild from."""
    import json
    import numpy as np
    from launcher import load_binary
    from launcher.cache_repair import expect_load
    source = ("__kernel void twice(__global const float* x, __global float* out) {\n"
              "  out[get_global_id(0)] = 2.0f * x[get_global_id(0)];\n}\n")
    files = {"twice.cl": tmp_path / "twice.cl", "twice.json": tmp_path / "twice.json",
             "twice.clbin": tmp_path / "twice.clbin"}
    files["twice.cl"].write_text(source)
    files["twice.json"].write_text(json.dumps({"name": "twice", "arg_types": ["__global float*"] * 2,
                                               "local_size": [1, 1, 1], "shared": 0}))
    files["twice.clbin"].write_bytes(b"garbage")
    for announced in (None, "other_kernel"):
        if announced:
            expect_load(announced, {k: str(v) for k, v in files.items()})
        with pytest.raises(ClbinFormatError, match="not at hand to rebuild it"):
            load_binary("twice", b"garbage")
    expect_load("twice", {k: str(v) for k, v in files.items()})
    with pytest.warns(RuntimeWarning, match="was corrupted.*rebuilt it"):
        _module, handle, *_ = load_binary("twice", b"garbage")
    assert unpack_clbin(files["twice.clbin"].read_bytes())["source"] == source
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    run = OpenCLLauncher.for_parameters("twice", [("x", "*fp32"), ("out", "*fp32")], {})
    run(8, 1, 1, None, handle, None, None, None, None, x, out)
    np.testing.assert_array_equal(out, 2 * x)
